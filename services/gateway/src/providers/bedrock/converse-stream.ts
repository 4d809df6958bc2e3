import { EventStreamCodec, getChunkedStream, type Message } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { SSE_DONE, sseEvent, type ChatCompletionChunk } from '../openai-format.ts';
import { finishReasonOf, reasoningBlockOf, usageOf, type CompletionMeta } from './converse-response.ts';
import type { ConverseUsage, ReasoningContent } from './converse-types.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

interface StreamEvent {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId: string; name: string } };
  delta?: {
    text?: string;
    toolUse?: { input: string };
    reasoningContent?: ReasoningContent & { text?: string; signature?: string };
  };
  stopReason?: string;
  usage?: ConverseUsage;
  message?: string;
}

function header(message: Message, name: string): string | undefined {
  const value = message.headers[name];
  return value?.type === 'string' ? value.value : undefined;
}

function errorEvent(code: string, message: string): Uint8Array {
  return sseEvent({
    error: { message: `bedrock error: ${message}`, type: 'upstream_error', param: null, code },
  });
}

/**
 * Decodes ConverseStream's binary event frames (application/vnd.amazon.eventstream) and
 * re-emits them as OpenAI chunks. An exception frame mid-stream becomes an error event; the
 * stream always ends with `data: [DONE]`.
 */
export async function* converseStreamToSse(
  body: AsyncIterable<Uint8Array>,
  meta: CompletionMeta & { includeUsage: boolean },
): AsyncGenerator<Uint8Array> {
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const base = {
    id: meta.id,
    object: 'chat.completion.chunk' as const,
    created: meta.created,
    model: meta.model,
  };
  const chunk = (
    delta: Delta,
    finishReason: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
  ) => sseEvent({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] });
  // Converse numbers content blocks across text, reasoning and tools; OpenAI numbers tool calls alone.
  const toolIndexes = new Map<number, number>();
  let roleSent = false;
  const role = function* () {
    if (roleSent) return;
    roleSent = true;
    yield chunk({ role: 'assistant', content: '' });
  };

  try {
    for await (const frame of getChunkedStream(body)) {
      const message = codec.decode(frame);
      const messageType = header(message, ':message-type');
      if (messageType === 'error') {
        yield errorEvent(
          header(message, ':error-code') ?? 'upstream_error',
          header(message, ':error-message') ?? 'stream error',
        );
        break;
      }
      const payload = JSON.parse(toUtf8(message.body) || '{}') as StreamEvent;
      if (messageType === 'exception') {
        yield errorEvent(
          header(message, ':exception-type') ?? 'upstream_error',
          payload.message ?? 'stream error',
        );
        break;
      }
      const blockIndex = payload.contentBlockIndex ?? 0;
      switch (header(message, ':event-type')) {
        case 'messageStart':
          yield* role();
          break;
        case 'contentBlockStart': {
          const toolUse = payload.start?.toolUse;
          if (!toolUse) break;
          yield* role();
          const index = toolIndexes.size;
          toolIndexes.set(blockIndex, index);
          yield chunk({
            tool_calls: [
              {
                index,
                id: toolUse.toolUseId,
                type: 'function',
                function: { name: toolUse.name, arguments: '' },
              },
            ],
          });
          break;
        }
        case 'contentBlockDelta': {
          const delta = payload.delta ?? {};
          yield* role();
          if (delta.text !== undefined) {
            yield chunk({ content: delta.text });
          } else if (delta.toolUse) {
            const index = toolIndexes.get(blockIndex) ?? 0;
            yield chunk({ tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] });
          } else if (delta.reasoningContent) {
            const { text, signature, redactedContent } = delta.reasoningContent;
            const block =
              redactedContent !== undefined
                ? reasoningBlockOf({ redactedContent })
                : reasoningBlockOf({
                    reasoningText: { text: text ?? '', ...(signature !== undefined ? { signature } : {}) },
                  });
            if (block) yield chunk({ content_blocks: [{ ...block, index: blockIndex }] });
          }
          break;
        }
        case 'messageStop':
          yield* role();
          yield chunk({}, finishReasonOf(payload.stopReason));
          break;
        case 'metadata':
          if (meta.includeUsage && payload.usage) {
            yield sseEvent({ ...base, choices: [], usage: usageOf(payload.usage) });
          }
          break;
      }
    }
  } catch (err) {
    yield errorEvent('upstream_stream_error', `the event stream broke off (${(err as Error).message}).`);
  }
  yield SSE_DONE;
}
