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

/**
 * The OpenAI-compatible family. Their responses differ from OpenAI's only by extra fields
 * (Groq `x_groq` and timing usage, DeepSeek `reasoning_content` and cache counts, OpenRouter
 * `reasoning`, `provider` and SSE comments, vLLM `stop_reason`), which pass through to the client.
 */
export const compatibleFamily: readonly CompatibleProvider[] = [
  { id: 'groq', defaultBaseUrl: 'https://api.groq.com/openai/v1' },
  {
    id: 'mistral-ai',
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    // Mistral names the sampling seed `random_seed`.
    adaptRequest(body) {
      if (body.seed === undefined) return undefined;
      const { seed, ...rest } = body;
      return { ...rest, random_seed: seed } as ChatBody;
    },
  },
  { id: 'together-ai', defaultBaseUrl: 'https://api.together.xyz/v1' },
  {
    id: 'deepseek',
    defaultBaseUrl: 'https://api.deepseek.com',
    // DeepSeek answers 400 when an earlier answer's reasoning_content is sent back in the messages.
    adaptRequest(body) {
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
  },
  { id: 'fireworks-ai', defaultBaseUrl: 'https://api.fireworks.ai/inference/v1' },
  { id: 'openrouter', defaultBaseUrl: 'https://openrouter.ai/api/v1' },
  { id: 'ollama', defaultBaseUrl: 'http://localhost:11434/v1' },
  { id: 'vllm', defaultBaseUrl: undefined },
  // Any other host of the format: only its custom_host says where it is.
  { id: 'openai-compatible', defaultBaseUrl: undefined },
];
