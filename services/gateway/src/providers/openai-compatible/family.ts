import { providerRegistry, type RegisteredProvider } from '@switchyard/rules';
import type { ChatBody } from '../types.ts';

/** A host that speaks OpenAI's chat-completions format with a Bearer key. */
export interface CompatibleProvider {
  /** The provider id integrations name. */
  id: string;
  /** Where requests go unless the integration sets a custom_host; none: a custom_host is required. */
  defaultBaseUrl: string | undefined;
  /**
   * For a host that takes a parameter under another name or rejects one OpenAI accepts: the body
   * to send instead, or undefined when the client's request needs no change.
   */
  adaptRequest?(body: ChatBody): ChatBody | undefined;
}

type CompatibleId = Extract<RegisteredProvider, { family: 'openai-compatible' }>['id'];

/** What members of the family need changed in a request; the others take the client's as it is. */
const adaptations: Partial<Record<CompatibleId, (body: ChatBody) => ChatBody | undefined>> = {
  // Mistral names the sampling seed `random_seed`.
  'mistral-ai'(body) {
    if (body.seed === undefined) return undefined;
    const { seed, ...rest } = body;
    return { ...rest, random_seed: seed } as ChatBody;
  },
  // DeepSeek answers 400 when an earlier answer's reasoning_content is sent back in the messages.
  deepseek(body) {
    if (!body.messages.some((m) => 'reasoning_content' in m)) return undefined;
    return {
      ...body,
      messages: body.messages.map((message) => {
        if (!('reasoning_content' in message)) return message;
        const { reasoning_content: _dropped, ...rest } = message;
        return rest as typeof message;
      }),
    };
  },
};

/** A registered provider of the family, with its request changes. */
export function compatibleMember(
  provider: Pick<RegisteredProvider, 'id' | 'defaultBaseUrl'>,
): CompatibleProvider {
  const adaptRequest = adaptations[provider.id as CompatibleId];
  return {
    id: provider.id,
    defaultBaseUrl: provider.defaultBaseUrl,
    ...(adaptRequest ? { adaptRequest } : {}),
  };
}

/**
 * The OpenAI-compatible family: the registered providers whose family it is. Their responses
 * differ from OpenAI's only by extra fields (Groq `x_groq` and timing usage, DeepSeek
 * `reasoning_content` and cache counts, OpenRouter `reasoning`, `provider` and SSE comments,
 * vLLM `stop_reason`), which pass through to the client.
 */
export const compatibleFamily: readonly CompatibleProvider[] = providerRegistry
  .filter((provider) => provider.family === 'openai-compatible')
  .map(compatibleMember);
