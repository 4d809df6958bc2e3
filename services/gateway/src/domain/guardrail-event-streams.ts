import { ChoiceGuard, type GuardStreamOptions } from './guardrail-stream.ts';
import { eventFields, relayCheckedEvents } from './sse-relay.ts';
import { outputText } from './operation-texts.ts';

/**
 * Output guardrails on the two other streamed answers the gateway forwards: Anthropic Messages
 * and OpenAI Responses, both server-sent events with an `event:` name and a JSON `data:` of the
 * same `type`. As for chat completions (guardrail-stream.ts), each text goes through a
 * ChoiceGuard, the chain of one StreamGuard per guardrail: text is held back only as long as a
 * match could still be forming, nothing of a denied match leaves, and a redacted match leaves
 * as its placeholder.
 *
 * Anthropic Messages: each text block is checked on its own (one ChoiceGuard per block). A
 * block's held text must leave in a `content_block_delta` of that block before its
 * `content_block_stop`, and only the block's end decides that text: one guard over the joined
 * blocks could not release the end of a block before reading the next one, and would have to
 * hold the block's stop and every event after it (tool calls, thinking) until then. So a match
 * split across two text blocks is not found, and checks on the whole text judge each block.
 * Deltas that are not text (`input_json_delta`, `thinking_delta`, citations) pass as they are.
 * On deny the open blocks are stopped, then a `message_delta` with `stop_reason: refusal` and a
 * `message_stop` end the stream.
 *
 * OpenAI Responses: each `output_text` part (output_index, content_index) has its own guard.
 * The events that repeat a part's whole text (`response.output_text.done`,
 * `response.content_part.done`, `response.output_item.done`, and the response in
 * `response.completed`, `.incomplete` or `.failed`, with its `output_text`) carry exactly what
 * was released, never the provider's text; a part those events finish is checked as a whole
 * there, and what it still held leaves first in a `response.output_text.delta`. Where a
 * guardrail holds text back, `logprobs` are emptied: they spell the text token by token. On deny
 * the stream ends with `response.incomplete`: the response `response.created` announced, with
 * `status: incomplete`, `incomplete_details.reason: content_filter` and, as output, the items
 * finished before. Events are numbered again (`sequence_number`) where the stream numbers them,
 * since checked streams drop and add events. Refusal parts and reasoning summaries pass as they
 * are, as `delta.refusal` does on chat completions; so do annotations, whose offsets are the
 * provider's text's.
 *
 * Both: an event that carries no text passes as it is; an event whose data cannot be read is
 * dropped (its text could not be checked), but for events without data (comments). Text still
 * held when the stream ends before its block or part does was never checked as a whole and is
 * not sent. On deny the upstream read is stopped; however the stream ends, each guard's runs
 * are recorded.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One event as read: its text, its `event:` name and its data. */
interface ReadEvent {
  raw: string;
  name: string | undefined;
  data: Json;
}

/** A guardrail denied the answer: the stream ends. */
class Denied {}

/** How one format's events are checked. */
interface EventFormat {
  /** What to send for the event ('' drops it); throws `Denied` when a guardrail denies. */
  check(event: ReadEvent): Promise<string>;
  /** The events that end a denied answer. */
  denied(): string;
  /** Every guard made, for their runs. */
  guards(): Iterable<ChoiceGuard>;
}

const serialize = (name: string, data: unknown): string =>
  `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Whether text is held back while guardrails decide: one denies or redacts. */
const holdsText = (options: GuardStreamOptions): boolean =>
  options.guardrails.some((guardrail) => guardrail.actions.deny || guardrail.actions.redact);

const newGuard = (options: GuardStreamOptions): ChoiceGuard =>
  new ChoiceGuard(options.guardrails, options.request, options.webhooks);

/** The upstream events checked by `format`; the bytes each read completes are passed on once checked. */
function guardEvents(
  body: AsyncIterable<Uint8Array>,
  options: GuardStreamOptions,
  format: EventFormat,
): AsyncIterable<Uint8Array> {
  /** What to send for the events of one upstream read; `denied`: the stream ends with it. */
  const check = async (raws: string[]): Promise<{ out: string; denied: boolean }> => {
    let out = '';
    for (const raw of raws) {
      const { name, data } = eventFields(raw);
      if (data === undefined || data === '[DONE]') {
        out += raw;
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        continue;
      }
      if (!isObject(parsed)) continue;
      try {
        out += await format.check({ raw, name, data: parsed });
      } catch (error) {
        if (!(error instanceof Denied)) throw error;
        return { out: out + format.denied(), denied: true };
      }
    }
    return { out, denied: false };
  };

  return relayCheckedEvents(body, check, () => {
    for (const guard of format.guards()) options.runs.push(...guard.runs());
  });
}

/** A count, or undefined when `value` is not one. */
const indexOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** The text a guard released, or the stream ends. */
function released(text: string | undefined): string {
  if (text === undefined) throw new Denied();
  return text;
}

/**
 * An Anthropic Messages event stream with the output guardrails applied to each text block
 * (see above).
 */
export function guardMessagesStream(
  body: AsyncIterable<Uint8Array>,
  options: GuardStreamOptions,
): AsyncIterable<Uint8Array> {
  /** Each text block's guard, by the block's index. */
  const blocks = new Map<number, ChoiceGuard>();
  /** The blocks started and not yet stopped. */
  const open = new Set<number>();
  /** The output tokens last counted, for the `message_delta` that ends a denied answer. */
  let outputTokens = 0;

  const blockGuard = (index: number): ChoiceGuard => {
    let guard = blocks.get(index);
    if (guard === undefined) {
      guard = newGuard(options);
      blocks.set(index, guard);
    }
    return guard;
  };
  const countTokens = (usage: unknown) => {
    if (isObject(usage) && typeof usage.output_tokens === 'number') outputTokens = usage.output_tokens;
  };

  const format: EventFormat = {
    async check({ raw, name, data }) {
      const type = typeof data.type === 'string' ? data.type : name;
      const rewritten = (value: Json) => serialize(name ?? type ?? 'message', value);
      switch (type) {
        case 'message_start':
          if (isObject(data.message)) countTokens(data.message.usage);
          return raw;
        case 'message_delta':
          countTokens(data.usage);
          return raw;
        case 'content_block_start': {
          const index = indexOf(data.index);
          const block = data.content_block;
          if (index === undefined) return isObject(block) && block.type === 'text' ? '' : raw;
          open.add(index);
          if (!isObject(block) || block.type !== 'text') return raw;
          const guard = blockGuard(index);
          if (block.text === '' || block.text === undefined) return raw;
          if (typeof block.text !== 'string')
            return rewritten({ ...data, content_block: { ...block, text: '' } });
          return rewritten({ ...data, content_block: { ...block, text: released(guard.feed(block.text)) } });
        }
        case 'content_block_delta': {
          const delta = data.delta;
          if (!isObject(delta) || delta.type !== 'text_delta') return raw;
          const index = indexOf(data.index);
          // Text that cannot be told apart or read is not sent.
          if (index === undefined || typeof delta.text !== 'string') return '';
          if (delta.text === '') return raw;
          const text = released(blockGuard(index).feed(delta.text));
          return text === '' ? '' : rewritten({ ...data, delta: { ...delta, text } });
        }
        case 'content_block_stop': {
          const index = indexOf(data.index);
          const guard = index === undefined ? undefined : blocks.get(index);
          if (index === undefined || guard === undefined) {
            if (index !== undefined) open.delete(index);
            return raw;
          }
          // What the block still held leaves in a delta of its own before the block stops.
          const rest = released(await guard.finish());
          open.delete(index);
          const held =
            rest === ''
              ? ''
              : serialize('content_block_delta', {
                  type: 'content_block_delta',
                  index,
                  delta: { type: 'text_delta', text: rest },
                });
          return held + raw;
        }
        default:
          return raw;
      }
    },
    denied() {
      let out = '';
      for (const index of [...open].sort((a, b) => a - b)) {
        out += serialize('content_block_stop', { type: 'content_block_stop', index });
      }
      out += serialize('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'refusal', stop_sequence: null },
        usage: { output_tokens: outputTokens },
      });
      return out + serialize('message_stop', { type: 'message_stop' });
    },
    guards: () => blocks.values(),
  };
  return guardEvents(body, options, format);
}

/** One `output_text` part of a Responses answer. */
interface Part {
  guard: ChoiceGuard;
  /** All the text released so far. */
  released: string;
  finished: boolean;
}

/** The events that end a response, whose `response` repeats every text. */
const RESPONSE_ENDS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * An OpenAI Responses event stream with the output guardrails applied to each output text part
 * (see above).
 */
export function guardResponsesStream(
  body: AsyncIterable<Uint8Array>,
  options: GuardStreamOptions,
): AsyncIterable<Uint8Array> {
  const holds = holdsText(options);
  const parts = new Map<string, Part>();
  /** The output items finished, as sent, by their index. */
  const doneItems = new Map<number, Json>();
  /** The response `response.created` announced. */
  let created: Json | undefined;
  /** The next `sequence_number` to send, once the stream numbers its events. */
  let sequence: number | undefined;

  const key = (output: number, content: number) => `${output}:${content}`;
  const partOf = (output: number, content: number): Part => {
    let part = parts.get(key(output, content));
    if (part === undefined) {
      part = { guard: newGuard(options), released: '', finished: false };
      parts.set(key(output, content), part);
    }
    return part;
  };

  /** `data` numbered as the next event sent, where the stream numbers its events. */
  const numbered = (data: Json): Json => {
    if (sequence === undefined && typeof data.sequence_number === 'number') sequence = data.sequence_number;
    if (sequence === undefined) return data;
    const value = { ...data, sequence_number: sequence };
    sequence += 1;
    return value;
  };
  /** A new or rewritten event, named `name` (by default its type). */
  const emit = (data: Json, name?: string): string => {
    const value = numbered(data);
    return serialize(name ?? String(value.type), value);
  };
  /** An event sent as it came, numbered again if events before it were dropped or added. */
  const pass = (raw: string, data: Json, name: string | undefined): string => {
    if (typeof data.sequence_number !== 'number') return raw;
    if (sequence === undefined || data.sequence_number === sequence) {
      sequence = data.sequence_number + 1;
      return raw;
    }
    return emit(data, name);
  };

  /**
   * The part finishes: its whole released text. What it still held (all of it, if no delta
   * brought it) is added to `before` as a delta, to leave ahead of the event that finishes it.
   */
  async function settle(
    output: number,
    content: number,
    given: string,
    itemId: unknown,
    before: string[],
  ): Promise<string> {
    const fresh = !parts.has(key(output, content));
    const part = partOf(output, content);
    if (part.finished) return part.released;
    let text = fresh && given !== '' ? released(part.guard.feed(given)) : '';
    text += released(await part.guard.finish());
    part.finished = true;
    part.released += text;
    if (text !== '') {
      before.push(
        emit({
          type: 'response.output_text.delta',
          ...(itemId === undefined ? {} : { item_id: itemId }),
          output_index: output,
          content_index: content,
          delta: text,
          ...(holds ? { logprobs: [] } : {}),
        }),
      );
    }
    return part.released;
  }

  /**
   * A message item with each output text part's text replaced: by the part's whole released
   * text where `ends` (the part is finished with it), else by what was released so far.
   */
  async function rewriteItem(
    item: unknown,
    output: number,
    ends: boolean,
    before: string[],
  ): Promise<unknown> {
    if (!isObject(item) || item.type !== 'message' || !Array.isArray(item.content)) return item;
    const content: unknown[] = [];
    for (const [index, part] of item.content.entries()) {
      if (!isObject(part) || part.type !== 'output_text') {
        content.push(part);
        continue;
      }
      const given = typeof part.text === 'string' ? part.text : '';
      const text = ends
        ? await settle(output, index, given, item.id, before)
        : (parts.get(key(output, index))?.released ?? '');
      content.push({ ...part, text, ...(holds && Array.isArray(part.logprobs) ? { logprobs: [] } : {}) });
    }
    return { ...item, content };
  }

  /** A response with each text replaced (see `rewriteItem`), and its `output_text` with them. */
  async function rewriteResponse(response: Json, ends: boolean, before: string[]): Promise<Json> {
    if (!Array.isArray(response.output)) return response;
    const output: unknown[] = [];
    for (const [index, item] of response.output.entries()) {
      output.push(await rewriteItem(item, index, ends, before));
    }
    const rewritten: Json = { ...response, output };
    if (typeof response.output_text === 'string') rewritten.output_text = outputText(output);
    return rewritten;
  }

  const format: EventFormat = {
    async check({ raw, name, data }) {
      const type = typeof data.type === 'string' ? data.type : name;
      const before: string[] = [];
      const send = (value: Json) => before.join('') + emit(value, name);
      switch (type) {
        case 'response.output_text.delta': {
          const output = indexOf(data.output_index);
          const content = indexOf(data.content_index);
          // Text that cannot be told apart or read is not sent.
          if (output === undefined || content === undefined || typeof data.delta !== 'string') return '';
          if (data.delta === '') return pass(raw, data, name);
          const part = partOf(output, content);
          const text = released(part.guard.feed(data.delta));
          if (text === '') return '';
          part.released += text;
          return send({
            ...data,
            delta: text,
            ...(holds && Array.isArray(data.logprobs) ? { logprobs: [] } : {}),
          });
        }
        case 'response.output_text.done': {
          const output = indexOf(data.output_index);
          const content = indexOf(data.content_index);
          if (output === undefined || content === undefined) return '';
          const given = typeof data.text === 'string' ? data.text : '';
          const text = await settle(output, content, given, data.item_id, before);
          return send({ ...data, text, ...(holds && Array.isArray(data.logprobs) ? { logprobs: [] } : {}) });
        }
        case 'response.content_part.added':
        case 'response.content_part.done': {
          const part = data.part;
          if (!isObject(part) || part.type !== 'output_text') return pass(raw, data, name);
          const output = indexOf(data.output_index);
          const content = indexOf(data.content_index);
          if (output === undefined || content === undefined) return '';
          const given = typeof part.text === 'string' ? part.text : '';
          const text =
            type === 'response.content_part.done'
              ? await settle(output, content, given, data.item_id, before)
              : (parts.get(key(output, content))?.released ?? '');
          if (text === given && before.length === 0) return pass(raw, data, name);
          return send({
            ...data,
            part: { ...part, text, ...(holds && Array.isArray(part.logprobs) ? { logprobs: [] } : {}) },
          });
        }
        case 'response.output_item.added':
        case 'response.output_item.done': {
          const output = indexOf(data.output_index);
          const item = data.item;
          if (!isObject(item) || item.type !== 'message') return pass(raw, data, name);
          if (output === undefined) return '';
          const ends = type === 'response.output_item.done';
          const rewritten = await rewriteItem(item, output, ends, before);
          if (ends && isObject(rewritten)) doneItems.set(output, rewritten);
          return send({ ...data, item: rewritten });
        }
        default: {
          const response = data.response;
          if (!isObject(response)) return pass(raw, data, name);
          if (type === 'response.created') created = response;
          const ends = type !== undefined && RESPONSE_ENDS.has(type);
          if (!ends && (!Array.isArray(response.output) || response.output.length === 0)) {
            return pass(raw, data, name);
          }
          return send({ ...data, response: await rewriteResponse(response, ends, before) });
        }
      }
    },
    denied() {
      const output = [...doneItems.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
      const response: Json = {
        ...(created ?? { object: 'response' }),
        status: 'incomplete',
        incomplete_details: { reason: 'content_filter' },
        output,
      };
      if (created !== undefined && 'output_text' in created) response.output_text = outputText(output);
      return emit({ type: 'response.incomplete', response });
    },
    guards: () => [...parts.values()].map((part) => part.guard),
  };
  return guardEvents(body, options, format);
}
