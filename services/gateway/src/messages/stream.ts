import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ChatCompletionChunk, Usage } from '../providers/openai-format.ts';
import { messageId, messageUsage, stopReasonOf, stopSequenceOf, type ChatChoiceExtras } from './from-chat.ts';

type Delta = ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string | null };

/** The Anthropic content block being streamed: what chat deltas continue it. */
type OpenBlock =
  | { kind: 'text'; index: number }
  | { kind: 'thinking'; index: number; source: number | 'reasoning' }
  | { kind: 'tool'; index: number; tool: number };

const encoder = new TextEncoder();

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** The Anthropic error types a chat stream's error event may name as its code (the anthropic adapter does). */
const KNOWN_ERROR_TYPES = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
  'timeout_error',
]);

/**
 * A chat completion event stream (OpenAI's chunks, as every adapter gives them) as Anthropic's
 * Messages stream, translated chunk by chunk as it is pushed: `message_start` with the first
 * chunk, one content block per run of text, thinking or one tool call's arguments
 * (`content_block_start` / `_delta` / `_stop`), then `message_delta` with the stop reason and
 * usage and `message_stop` once the chat stream ends. A chat error event becomes an `error`
 * event, the stream's last.
 */
export class MessagesStreamTranslator {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private out = '';
  private started = false;
  /** message_stop or an error went out: nothing more is sent. */
  private ended = false;
  private nextIndex = 0;
  private open: OpenBlock | undefined;
  /** Anthropic block index of each chat tool call, for arguments that come after another block began. */
  private readonly tools = new Map<number, number>();
  private finish: string | null | undefined;
  private stopSequence: string | null = null;
  private usage: Usage | undefined;

  constructor() {
    this.parser = createParser({ onEvent: (message) => this.onData(message.data) });
  }

  /** The Anthropic events (SSE text) the chunk completes; empty when it completes none. */
  push(chunk: Uint8Array): Uint8Array {
    this.parser.feed(this.decoder.decode(chunk, { stream: true }));
    return this.take();
  }

  /** The chat stream ended: the message's last events, or an error event if it ended unfinished. */
  end(): Uint8Array {
    this.parser.feed(this.decoder.decode());
    if (!this.ended) {
      if (this.finish !== undefined) this.finishMessage();
      else this.error('api_error', 'The stream ended before the message was complete.');
    }
    return this.take();
  }

  /** The chat stream failed: an `error` event ends the message (nothing, if it has ended). */
  fail(type: string, message: string): Uint8Array {
    if (!this.ended) this.error(type, message);
    return this.take();
  }

  private take(): Uint8Array {
    const text = this.out;
    this.out = '';
    return encoder.encode(text);
  }

  private onData(data: string): void {
    if (this.ended) return;
    if (data.trim() === '[DONE]') {
      this.finishMessage();
      return;
    }
    let chunk: (Partial<ChatCompletionChunk> & { error?: unknown }) | undefined;
    try {
      chunk = JSON.parse(data) as Partial<ChatCompletionChunk> & { error?: unknown };
    } catch {
      return;
    }
    if (!chunk || typeof chunk !== 'object') return;
    if (chunk.error !== undefined) {
      const error = (chunk.error ?? {}) as { message?: unknown; code?: unknown };
      const type =
        typeof error.code === 'string' && KNOWN_ERROR_TYPES.has(error.code) ? error.code : 'api_error';
      this.error(type, typeof error.message === 'string' ? error.message : 'The upstream stream failed.');
      return;
    }
    this.start(chunk);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => c.index === 0);
    if (!choice) return;
    const delta = (choice.delta ?? {}) as Delta;
    if (delta.reasoning_content) this.thinking('reasoning', delta.reasoning_content, undefined);
    for (const block of delta.content_blocks ?? []) {
      if (block.type === 'thinking') this.thinking(block.index, block.thinking, block.signature);
      else if (block.type === 'redacted_thinking') this.redacted(block.data);
      else if (block.text) this.text(block.text);
    }
    if (delta.content) this.text(delta.content);
    for (const call of delta.tool_calls ?? []) this.toolCall(call);
    if (choice.finish_reason) {
      this.finish = choice.finish_reason;
      const stopSequence = stopSequenceOf(choice as ChatChoiceExtras);
      if (stopSequence !== null) this.stopSequence = stopSequence;
      this.close();
    }
  }

  private start(chunk: Partial<ChatCompletionChunk>): void {
    if (this.started) return;
    this.started = true;
    this.out += event('message_start', {
      message: {
        id: messageId(chunk.id),
        type: 'message',
        role: 'assistant',
        model: chunk.model ?? '',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: messageUsage(undefined),
      },
    });
    this.out += event('ping', {});
  }

  private begin(block: OpenBlock, contentBlock: Record<string, unknown>): void {
    this.close();
    this.open = block;
    this.nextIndex++;
    this.out += event('content_block_start', { index: block.index, content_block: contentBlock });
  }

  private close(): void {
    if (!this.open) return;
    this.out += event('content_block_stop', { index: this.open.index });
    this.open = undefined;
  }

  private delta(index: number, delta: Record<string, unknown>): void {
    this.out += event('content_block_delta', { index, delta });
  }

  private text(text: string): void {
    if (this.open?.kind !== 'text')
      this.begin({ kind: 'text', index: this.nextIndex }, { type: 'text', text: '' });
    this.delta(this.open!.index, { type: 'text_delta', text });
  }

  private thinking(source: number | 'reasoning', thinking: string, signature: string | undefined): void {
    if (this.open?.kind !== 'thinking' || this.open.source !== source) {
      this.begin(
        { kind: 'thinking', index: this.nextIndex, source },
        { type: 'thinking', thinking: '', signature: '' },
      );
    }
    const index = this.open!.index;
    if (thinking) this.delta(index, { type: 'thinking_delta', thinking });
    if (signature) this.delta(index, { type: 'signature_delta', signature });
  }

  /** Redacted thinking comes whole: a block with no deltas. */
  private redacted(data: string): void {
    this.begin({ kind: 'text', index: this.nextIndex }, { type: 'redacted_thinking', data });
    this.close();
  }

  private toolCall(call: NonNullable<Delta['tool_calls']>[number]): void {
    let index = this.tools.get(call.index);
    if (index === undefined) {
      index = this.nextIndex;
      this.tools.set(call.index, index);
      this.begin(
        { kind: 'tool', index, tool: call.index },
        { type: 'tool_use', id: call.id ?? `toolu_${index}`, name: call.function?.name ?? '', input: {} },
      );
    }
    const args = call.function?.arguments;
    if (args) this.delta(index, { type: 'input_json_delta', partial_json: args });
  }

  private finishMessage(): void {
    if (this.ended) return;
    this.start({});
    this.close();
    const usage = messageUsage(this.usage);
    this.out += event('message_delta', {
      delta: {
        stop_reason: stopReasonOf(this.finish, this.stopSequence) ?? 'end_turn',
        stop_sequence: this.stopSequence,
      },
      usage,
    });
    this.out += event('message_stop', {});
    this.ended = true;
  }

  private error(type: string, message: string): void {
    this.close();
    this.out += event('error', { error: { type, message } });
    this.ended = true;
  }
}
