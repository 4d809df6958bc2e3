import { BadRequest } from '@switchyard/core';
import { providerDescriptor } from '@switchyard/rules';
import type { ContentBlock } from '../providers/openai-format.ts';
import type { ChatBody } from '../providers/types.ts';

// A model's reasoning on the translated Responses API: the thinking blocks chat answers carry
// (`content_blocks`, or `reasoning_content`) as `reasoning` output items, and back again.

/** A thinking block as chat answers carry it: thinking text (signed, where the provider signs it), or redacted. */
export type ReasoningBlock = Extract<ContentBlock, { type: 'thinking' | 'redacted_thinking' }>;

export interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: Array<{ type: 'summary_text'; text: string }>;
  /** What the provider needs back to go on from this reasoning; absent when it needs nothing. */
  encrypted_content?: string;
}

/** Whether a chat answer's content block is a well-formed thinking block. */
export function isReasoningBlock(block: Record<string, unknown> | null | undefined): block is ReasoningBlock {
  if (block?.type === 'redacted_thinking') return typeof block.data === 'string';
  return (
    block?.type === 'thinking' &&
    typeof block.thinking === 'string' &&
    (block.signature === undefined || typeof block.signature === 'string')
  );
}

/** Marks encrypted content the gateway made, apart from any other provider's. */
const ENCRYPTED_TYPE = 'switchyard.reasoning.v1';

/**
 * A reasoning item for a run of thinking blocks: each block's text a summary part; the blocks
 * themselves, when the provider signed or redacted any (it wants those back unchanged, as
 * Anthropic does for tool use with thinking), as `encrypted_content`.
 */
export function reasoningItem(id: string, blocks: ReasoningBlock[]): ReasoningItem {
  const summary = blocks.flatMap((block) =>
    block.type === 'thinking' && block.thinking !== ''
      ? [{ type: 'summary_text' as const, text: block.thinking }]
      : [],
  );
  const item: ReasoningItem = { id, type: 'reasoning', summary };
  const encrypted = encryptedContentOf(blocks);
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** The blocks as opaque `encrypted_content`; undefined when the provider needs none of them back. */
export function encryptedContentOf(blocks: ReasoningBlock[]): string | undefined {
  const needed = blocks.some((b) => b.type === 'redacted_thinking' || (b.signature ?? '') !== '');
  if (!needed) return undefined;
  const kept = blocks.map((b) =>
    b.type === 'redacted_thinking'
      ? { type: b.type, data: b.data }
      : { type: b.type, thinking: b.thinking, ...(b.signature ? { signature: b.signature } : {}) },
  );
  return Buffer.from(JSON.stringify({ type: ENCRYPTED_TYPE, blocks: kept })).toString('base64url');
}

/**
 * The thinking blocks of a reasoning input item's `encrypted_content`: none when it has none,
 * or when another provider made it (which no provider the gateway translates for can read).
 * Content the gateway made but that was altered is a 400.
 */
export function blocksOfEncryptedContent(value: unknown, param: string): ReasoningBlock[] {
  if (typeof value !== 'string' || value === '') return [];
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    return [];
  }
  const payload = decoded as { type?: unknown; blocks?: unknown } | null;
  if (!payload || typeof payload !== 'object' || payload.type !== ENCRYPTED_TYPE) return [];
  const invalid = () =>
    new BadRequest('The encrypted_content of a reasoning item must be sent back as the gateway gave it.', {
      param,
      code: 'invalid_encrypted_content',
    });
  if (!Array.isArray(payload.blocks)) throw invalid();
  return payload.blocks.map((raw: unknown): ReasoningBlock => {
    const b = (raw ?? {}) as Record<string, unknown>;
    if (b.type === 'redacted_thinking' && typeof b.data === 'string') return { type: b.type, data: b.data };
    if (
      b.type === 'thinking' &&
      typeof b.thinking === 'string' &&
      (b.signature === undefined || typeof b.signature === 'string')
    ) {
      return { type: b.type, thinking: b.thinking, ...(b.signature ? { signature: b.signature } : {}) };
    }
    throw invalid();
  });
}

/** `reasoning.effort` as the Responses API names it, and the thinking budget each stands for. */
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
 * A translated request's body as it goes to `provider`: `reasoning_effort` stays for providers
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
