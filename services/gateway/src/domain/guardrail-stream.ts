import { StreamGuard, streamMode, type StreamRequest } from '@switchyard/guardrails';
import { streamedRun, type GuardrailRun, type LoadedGuardrail } from './guardrails.ts';
import {
  holdsWebhook,
  webhookVerdicts,
  type WebhookContext,
  type WebhookEvent,
} from './guardrail-webhook.ts';
import { eventFields, relayCheckedEvents } from './sse-relay.ts';

/**
 * Output guardrails on a streamed chat completion (or text completion), checked as the answer
 * flows. Each choice's `delta.content` (a completion's: `text`) goes through one StreamGuard per guardrail, chained in the config's order:
 * each guardrail reads what the ones before it release, so the client gets only text every
 * guardrail has passed (a guardrail after one that redacts reads the placeholders, not what
 * they replace). Text is held back only as long as a match could still be forming, and
 * nothing of a match leaves before it is found.
 *
 * - deny: the stream ends at once with one chunk for the choice, an empty delta and
 *   `finish_reason: content_filter`, then `data: [DONE]`; the upstream read is stopped, which
 *   releases the provider's connection. Other choices end where they are.
 * - redact: the text goes on with what matched replaced by placeholders.
 * - warn: the text goes on as it comes; the verdicts are recorded.
 *
 * A guardrail that denies on a check decided only by the whole text (a minimum count, valid
 * JSON, prompt injection, a regex without `maxMatchLength`, the webhook) holds its choice's
 * text until the choice finishes, since nothing sent can be recalled. When a choice finishes,
 * the text still held is checked and sent in a chunk of its own before the finishing one.
 * Text still held when the stream ends without the choice finishing (an upstream failure, a
 * spent limit) was never checked as a whole answer and is not sent.
 *
 * Every other field (role, tool_calls, usage, ids) passes as it is; a chunk left with nothing
 * to say is dropped, unless it carries a finish_reason or usage. Where a guardrail holds text
 * back (deny or redact), `logprobs` are dropped: they spell out the text token by token. An
 * event that cannot be read as a chunk is dropped (its text could not be checked), but for
 * events that carry no text to check (errors, comments) and `data: [DONE]`.
 *
 * When the stream ends, however it ends, each guardrail's run on each choice is recorded.
 */

export interface GuardStreamOptions {
  /** The output guardrails, in the config's order. */
  guardrails: readonly LoadedGuardrail[];
  /** The request the answer belongs to, as checks (and webhooks) read it. */
  request: StreamRequest & { requestType?: string; stream?: boolean };
  /** Where each guardrail's run on each choice is recorded when the stream ends. */
  runs: GuardrailRun[];
  /** Calls webhook checks, with each choice's whole text when it finishes. */
  webhooks?: WebhookContext | undefined;
  /** The stream is of a text completion (`/v1/completions`): each choice's text is its `text`. */
  completions?: boolean;
}

/** Where a streamed choice carries its text, and the choices the guard writes itself. */
interface ChoiceShape {
  /** The object of a (copied) choice that holds its text, itself copied so it can be changed. */
  holder(choice: Json): Json | undefined;
  key: string;
  removeText(holder: Json): void;
  /** The holder says nothing but its text, so a choice left without text can be dropped. */
  saysNothingElse(holder: Json): boolean;
  /** A choice carrying text that was held back. */
  held(index: number, text: string): Json;
  /** The choice that ends a denied answer. */
  denied(index: number): Json;
}

/** Chat completion chunks: the text is `delta.content`. */
const CHAT_CHOICE: ChoiceShape = {
  holder(choice) {
    if (!isObject(choice.delta)) return undefined;
    const delta = { ...choice.delta };
    choice.delta = delta;
    return delta;
  },
  key: 'content',
  removeText: (delta) => {
    delete delta.content;
  },
  saysNothingElse: (delta) => Object.keys(delta).length === 1,
  held: (index, text) => ({ index, delta: { content: text }, finish_reason: null }),
  denied: (index) => ({ index, delta: {}, finish_reason: 'content_filter' }),
};

/** Text completion chunks: the text is the choice's `text`, always a string. */
const COMPLETION_CHOICE: ChoiceShape = {
  holder: (choice) => choice,
  key: 'text',
  removeText: (choice) => {
    choice.text = '';
  },
  saysNothingElse: () => true,
  held: (index, text) => ({ index, text, logprobs: null, finish_reason: null }),
  denied: (index) => ({ index, text: '', logprobs: null, finish_reason: 'content_filter' }),
};

const DONE = 'data: [DONE]\n\n';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const event = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

/** One guardrail in a choice's chain. */
interface Stage {
  guardrail: LoadedGuardrail;
  guard: StreamGuard;
  /** Denies on a check decided by the whole text: what it releases is held until the end. */
  holdsToEnd: boolean;
  held: string;
}

/** Whether a guardrail must hold its text to the end: it denies on a whole-text check. */
function holdsToEnd(guardrail: LoadedGuardrail): boolean {
  if (!guardrail.actions.deny) return false;
  return guardrail.checks.some((check) => {
    if (!check.is_enabled) return false;
    const mode = streamMode(check);
    return mode.mode === 'end' && mode.failsEarly !== true;
  });
}

/** The guardrails' chain on one choice. `feed` and `finish` answer the text to send, or `undefined` once denied. */
export class ChoiceGuard {
  readonly #stages: Stage[];
  #finished = false;

  constructor(
    guardrails: readonly LoadedGuardrail[],
    private readonly request: GuardStreamOptions['request'],
    private readonly webhooks: WebhookContext | undefined,
  ) {
    this.#stages = guardrails.map((guardrail) => ({
      guardrail,
      guard: new StreamGuard(guardrail, request),
      holdsToEnd: holdsToEnd(guardrail),
      held: '',
    }));
  }

  feed(chunk: string): string | undefined {
    // Text after the choice finished cannot be checked with it: it is not sent.
    if (this.#finished) return '';
    let text = chunk;
    for (const stage of this.#stages) {
      if (text === '') break;
      const step = stage.guard.feed(text);
      if (step.denied) return undefined;
      text = step.text;
      if (stage.holdsToEnd) {
        stage.held += text;
        text = '';
      }
    }
    return text;
  }

  /**
   * The choice finished: each guardrail decides on the whole text it read and releases the
   * rest; its webhook checks are called with that text first.
   */
  async finish(): Promise<string | undefined> {
    if (this.#finished) return '';
    this.#finished = true;
    let text = '';
    for (const stage of this.#stages) {
      let released = '';
      if (text !== '') {
        const step = stage.guard.feed(text);
        if (step.denied) return undefined;
        released = step.text;
      }
      const external =
        holdsWebhook(stage.guardrail) && stage.guard.denied === undefined
          ? await webhookVerdicts(stage.guardrail.checks, this.#event(stage.guard.text), this.webhooks)
          : undefined;
      const end = stage.guard.finish(external ? { external } : {});
      if (end.denied) return undefined;
      text = stage.held + released + end.text;
      stage.held = '';
    }
    return text;
  }

  #event(text: string): WebhookEvent {
    const { model, metadata, requestType = 'chat' } = this.request;
    return {
      eventType: 'afterRequestHook',
      requestType,
      request: { isStreamingRequest: true },
      response: { json: null, text, statusCode: 200 },
      ...(model === undefined ? {} : { model }),
      metadata: metadata ?? {},
    };
  }

  /** Each guardrail's run: its verdict on the text it read (a denial's, where one denied). */
  runs(): GuardrailRun[] {
    return this.#stages.map((stage) => streamedRun(stage.guardrail, stage.guard.finish().verdict));
  }
}

/**
 * The provider's event stream with the output guardrails applied to each choice's text (see
 * above). The bytes each upstream read completes are passed on as soon as they are checked.
 */
export function guardStream(
  body: AsyncIterable<Uint8Array>,
  options: GuardStreamOptions,
): AsyncIterable<Uint8Array> {
  const holds = options.guardrails.some((guardrail) => guardrail.actions.deny || guardrail.actions.redact);
  const shape = options.completions ? COMPLETION_CHOICE : CHAT_CHOICE;
  const choices = new Map<number, ChoiceGuard>();
  const choiceGuard = (index: number): ChoiceGuard => {
    let guard = choices.get(index);
    if (guard === undefined) {
      guard = new ChoiceGuard(options.guardrails, options.request, options.webhooks);
      choices.set(index, guard);
    }
    return guard;
  };

  /** The chunk's choices checked, as the events to send; a number: the choice index denied. */
  async function checkChunk(chunk: Json & { choices: unknown[] }): Promise<string[] | number> {
    const { choices: given, usage, ...envelope } = chunk;
    const before: Json[] = [];
    const kept: unknown[] = [];
    for (const [position, raw] of given.entries()) {
      if (!isObject(raw)) {
        kept.push(raw);
        continue;
      }
      const choice: Json = { ...raw };
      const index = typeof choice.index === 'number' ? choice.index : position;
      const guard = choiceGuard(index);
      const holder = shape.holder(choice);
      const content = holder?.[shape.key];
      let text = '';
      if (typeof content === 'string' && content !== '') {
        const released = guard.feed(content);
        if (released === undefined) return index;
        text = released;
      } else if (holder && content !== undefined && content !== null && typeof content !== 'string') {
        // Content in a shape the checks cannot read is not sent.
        shape.removeText(holder);
      }
      const finishing = choice.finish_reason !== undefined && choice.finish_reason !== null;
      if (finishing) {
        const rest = await guard.finish();
        if (rest === undefined) return index;
        text += rest;
      }
      if (holds && choice.logprobs !== undefined) choice.logprobs = null;
      if (finishing) {
        // What was held is sent before the choice finishes, in a chunk of its own.
        if (text !== '') before.push(shape.held(index, text));
        if (holder && typeof content === 'string' && content !== '') shape.removeText(holder);
      } else if (holder && typeof content === 'string') {
        holder[shape.key] = text;
        const nothingToSay = content !== '' && text === '' && shape.saysNothingElse(holder);
        if (nothingToSay) continue;
      }
      kept.push(choice);
    }
    const events: string[] = [];
    if (before.length > 0) events.push(event({ ...envelope, choices: before }));
    const carriesUsage = usage !== undefined && usage !== null;
    if (kept.length > 0 || given.length === 0 || carriesUsage) {
      events.push(event({ ...envelope, choices: kept, ...(usage === undefined ? {} : { usage }) }));
    }
    return events;
  }

  /** The events to send for one read from upstream; `denied`: the stream ends with them. */
  const check = async (raws: string[]): Promise<{ out: string; denied: boolean }> => {
    let out = '';
    for (const raw of raws) {
      const { data } = eventFields(raw);
      if (data === undefined || data === '[DONE]') {
        out += raw;
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      if (!isObject(chunk)) continue;
      if (!Array.isArray(chunk.choices)) {
        // An error or some other event without choices: no text of an answer to check.
        out += raw;
        continue;
      }
      const checked = await checkChunk(chunk as Json & { choices: unknown[] });
      if (typeof checked === 'number') {
        const { choices: _choices, usage: _usage, ...envelope } = chunk;
        out += event({
          ...envelope,
          choices: [shape.denied(checked)],
        });
        return { out: out + DONE, denied: true };
      }
      out += checked.join('');
    }
    return { out, denied: false };
  };
  return relayCheckedEvents(body, check, () => {
    for (const guard of choices.values()) options.runs.push(...guard.runs());
  });
}
