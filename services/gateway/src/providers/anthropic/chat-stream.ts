import { UpstreamError } from '@switchyard/core';
import { chunkEncoder, type UpstreamEvent } from '../openai-format.ts';
import { finishReason, stopSequenceOf, usageOf } from './chat-response.ts';
import type { MessagesUsage, StreamEvent } from './wire.ts';

interface OpenBlock {
  /** Position among the tool calls, for `tool_calls[].index`. */
  toolIndex?: number;
  /** Position in `content_blocks` (thinking and text blocks), as the non-streamed response has it. */
  blockIndex?: number;
}

/**
 * Anthropic's stream events as chat completion chunks: the role first, then text as content,
 * tool input as tool-call argument deltas (id and name on the first), thinking as
 * `content_blocks` deltas, the finish reason, and the usage when asked for. An upstream `error`
 * event is thrown as an UpstreamError, to be sent as an error event.
 */
export async function* chunksFromEvents(
  events: AsyncIterable<UpstreamEvent>,
  options: { created: number; includeUsage: boolean },
): AsyncGenerator<Uint8Array> {
  let encode: ReturnType<typeof chunkEncoder> | undefined;
  let usage: MessagesUsage = {};
  const blocks = new Map<number, OpenBlock>();
  let tools = 0;
  let contentBlocks = 0;
  let stopped = false;

  for await (const { data } of events) {
    const event = JSON.parse(data) as StreamEvent;
    if (event.type === 'error') {
      throw new UpstreamError(502, `anthropic error: ${event.error.message}`, { code: event.error.type });
    }
    if (event.type === 'message_start') {
      encode = chunkEncoder({ id: event.message.id, created: options.created, model: event.message.model });
      usage = { ...event.message.usage };
      yield encode.delta(0, { role: 'assistant', content: '' });
      continue;
    }
    if (!encode) continue;
    switch (event.type) {
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'tool_use') {
          const toolIndex = tools++;
          blocks.set(event.index, { toolIndex });
          yield encode.delta(0, {
            tool_calls: [
              {
                index: toolIndex,
                id: block.id,
                type: 'function',
                function: { name: block.name, arguments: '' },
              },
            ],
          });
          break;
        }
        if (block.type !== 'text' && block.type !== 'thinking' && block.type !== 'redacted_thinking') break;
        const blockIndex = contentBlocks++;
        blocks.set(event.index, { blockIndex });
        if (block.type === 'text' && block.text) yield encode.delta(0, { content: block.text });
        if (block.type === 'thinking' && block.thinking) {
          yield encode.delta(0, {
            content_blocks: [{ index: blockIndex, type: 'thinking', thinking: block.thinking }],
          });
        }
        // Redacted thinking arrives whole here, with no deltas.
        if (block.type === 'redacted_thinking') {
          yield encode.delta(0, {
            content_blocks: [{ index: blockIndex, type: 'redacted_thinking', data: block.data }],
          });
        }
        break;
      }
      case 'content_block_delta': {
        const open = blocks.get(event.index);
        const delta = event.delta;
        if (delta.type === 'text_delta' && delta.text) yield encode.delta(0, { content: delta.text });
        if (delta.type === 'input_json_delta' && delta.partial_json && open?.toolIndex !== undefined) {
          yield encode.delta(0, {
            tool_calls: [{ index: open.toolIndex, function: { arguments: delta.partial_json } }],
          });
        }
        if (delta.type === 'thinking_delta' && delta.thinking && open?.blockIndex !== undefined) {
          yield encode.delta(0, {
            content_blocks: [{ index: open.blockIndex, type: 'thinking', thinking: delta.thinking }],
          });
        }
        if (delta.type === 'signature_delta' && open?.blockIndex !== undefined) {
          yield encode.delta(0, {
            content_blocks: [
              { index: open.blockIndex, type: 'thinking', thinking: '', signature: delta.signature },
            ],
          });
        }
        break;
      }
      case 'message_delta':
        // Usage counts here are running totals: the last value stands.
        usage = { ...usage, ...definedFields(event.usage ?? {}) };
        if (event.delta.stop_reason) {
          const { stop_reason: reason, stop_sequence: sequence } = event.delta;
          yield encode.finish(0, finishReason(reason), stopSequenceOf(reason, sequence));
        }
        break;
      case 'message_stop':
        stopped = true;
        break;
    }
    if (stopped) break;
  }
  if (!encode || !stopped) {
    throw new UpstreamError(502, 'anthropic: the stream ended before the message was complete.', {
      code: 'upstream_stream_incomplete',
    });
  }
  if (options.includeUsage) yield encode.usage(usageOf(usage));
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined && v !== null),
  ) as Partial<T>;
}
