import { providerDescriptor } from '@switchyard/rules';
import type { ChatBody } from '../providers/types.ts';

// A reasoning effort (chat's `reasoning_effort`, the Responses API's `reasoning.effort`) for
// providers that think by a token budget instead.

/** The efforts as the OpenAI APIs name them, and the thinking budget each stands for. */
const EFFORT_BUDGETS: Record<string, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
};

export const REASONING_EFFORTS = ['none', ...Object.keys(EFFORT_BUDGETS)];

/** Families whose adapters think by the chat body's `thinking` (a budget), not `reasoning_effort`. */
const THINKING_FAMILIES = new Set(['anthropic', 'google', 'bedrock']);

/**
 * A chat body as it goes to `provider`: `reasoning_effort` stays for providers
 * that take it (the OpenAI format), and becomes `thinking` for those that think by a budget
 * (Anthropic, Gemini, Bedrock): `none` turns thinking off, the others a budget from `minimal`'s
 * 1024 tokens to `xhigh`'s 32768, kept under the request's output limit. Unchanged, the same object.
 */
export function reasoningForProvider(body: ChatBody, provider: string): ChatBody {
  const effort = body.reasoning_effort;
  const family = providerDescriptor(provider)?.family;
  if (typeof effort !== 'string' || !family || !THINKING_FAMILIES.has(family)) return body;
  const { reasoning_effort: _effort, ...rest } = body;
  const chat = rest as ChatBody;
  // A `thinking` the request already has (a config's override_params) wins.
  if (chat.thinking != null) return chat;
  if (effort === 'none') return { ...chat, thinking: { type: 'disabled' } };
  const budget = EFFORT_BUDGETS[effort];
  if (budget === undefined) return chat;
  const limit = body.max_completion_tokens ?? body.max_tokens;
  const fits = limit != null ? Math.max(1, Math.min(budget, limit - 1)) : budget;
  return { ...chat, thinking: { type: 'enabled', budget_tokens: fits } };
}
