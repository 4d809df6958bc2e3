import type { ChatCompletion, ContentBlock, FinishReason, ToolCall, Usage } from '../openai-format.ts';
import type { Message, MessagesUsage, ResponseBlock } from './wire.ts';

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // The turn is incomplete; the caller resends it to continue.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function finishReason(stopReason: string | null | undefined): FinishReason {
  return FINISH_REASONS[stopReason ?? ''] ?? 'stop';
}

/** Anthropic counts cache reads and writes apart from `input_tokens`; OpenAI's prompt count includes them. */
export function usageOf(usage: MessagesUsage): Usage {
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + cacheWrite + cacheRead;
  const completion = usage.output_tokens ?? 0;
  const thinking = usage.output_tokens_details?.thinking_tokens;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: {
      cached_tokens: cacheRead,
      ...(cacheWrite > 0 ? { cache_creation_tokens: cacheWrite } : {}),
    },
    ...(thinking !== undefined ? { completion_tokens_details: { reasoning_tokens: thinking } } : {}),
  };
}

/**
 * The stop sequence that ended the answer, as the choice's `stop_reason` (as vLLM names it):
 * a chat finish reason `stop` does not tell it from the end of the turn.
 */
export function stopSequenceOf(
  stopReason: string | null | undefined,
  stopSequence: string | null | undefined,
): { stop_reason?: string } {
  return stopReason === 'stop_sequence' && typeof stopSequence === 'string'
    ? { stop_reason: stopSequence }
    : {};
}

export function isThinking(block: ResponseBlock): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/** A Messages API response as a chat completion. */
export function fromMessage(message: Message, created: number): ChatCompletion {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const blocks: ContentBlock[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        blocks.push({ type: 'text', text: block.text });
        break;
      case 'thinking':
        blocks.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
        break;
      case 'redacted_thinking':
        blocks.push({ type: 'redacted_thinking', data: block.data });
        break;
      case 'tool_use':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
        });
        break;
    }
  }
  return {
    id: message.id,
    object: 'chat.completion',
    created,
    model: message.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: texts.length ? texts.join('') : null,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          ...(message.content.some(isThinking) ? { content_blocks: blocks } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(message.stop_reason),
        ...stopSequenceOf(message.stop_reason, message.stop_sequence),
      },
    ],
    usage: usageOf(message.usage ?? {}),
  };
}
