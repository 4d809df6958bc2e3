import type { TokenCounts } from '../pricing/cost.ts';
import type { AccrueVerdict, PolicyHold, UsageAmount } from './policy.ts';

/** Prices tokens for one request (its provider, model and integration's multiplier), in USD. */
export type TokenPricing = (tokens: TokenCounts) => number;

export interface StreamMeterOptions {
  hold: PolicyHold;
  /** The prompt estimate, counted until a chunk carries the upstream's usage. */
  promptTokens: number;
  price: TokenPricing;
  /** Told when a limit ran out and the stream was ended (before the error event is sent). */
  onExhausted?: (verdict: AccrueVerdict) => void;
  /** The stream's events: chat completion chunks (the default), or Anthropic's Messages events. */
  format?: 'chat' | 'messages' | undefined;
}

const LF = 0x0a;
const DONE = Buffer.from('data: [DONE]\n\n');

/** Characters of the completion text a chunk's deltas carry. */
function deltaChars(choices: unknown): number {
  if (!Array.isArray(choices)) return 0;
  let chars = 0;
  for (const choice of choices) {
    const delta = (choice as { delta?: Record<string, unknown> } | null)?.delta;
    if (!delta) continue;
    for (const field of ['content', 'reasoning_content', 'reasoning', 'refusal'] as const) {
      const text = delta[field];
      if (typeof text === 'string') chars += text.length;
    }
    const calls = delta.tool_calls;
    if (Array.isArray(calls)) {
      for (const call of calls) {
        const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
        if (typeof fn?.name === 'string') chars += fn.name.length;
        if (typeof fn?.arguments === 'string') chars += fn.arguments.length;
      }
    }
  }
  return chars;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * Counts what an event stream uses as its chunks go by: the upstream's usage when a chunk
 * carries it, else the prompt estimate and, for every chunk with completion text, its
 * characters / 4 rounded up (at least 1). An Anthropic Messages stream tells its prompt in
 * `message_start` and its completion in `message_delta`; each counts from where it is told.
 */
class StreamCount {
  private carry: Buffer | undefined;
  /** Whether the bytes passed on so far end inside an event. */
  midEvent = false;
  private estimatedCompletion = 0;
  private usage: TokenCounts | undefined;
  /** A Messages stream's prompt as `message_start` told it. */
  private prompt: Omit<TokenCounts, 'completionTokens' | 'reasoningTokens'> | undefined;

  constructor(
    private readonly promptEstimate: number,
    private readonly price: TokenPricing,
    private readonly format: 'chat' | 'messages',
  ) {}

  /**
   * Reads a chunk's complete lines; returns whether any carried completion text, and where in
   * the chunk the first event ends (-1: none does).
   */
  push(chunk: Buffer): { content: boolean; firstEventEnd: number } {
    const carried = this.carry?.length ?? 0;
    const data = carried > 0 ? Buffer.concat([this.carry!, chunk]) : chunk;
    this.carry = undefined;
    let content = false;
    let firstEventEnd = -1;
    let start = 0;
    let blank = !this.midEvent;
    for (let end = data.indexOf(LF, start); end !== -1; end = data.indexOf(LF, start)) {
      const lineEnd = end > start && data[end - 1] === 0x0d ? end - 1 : end;
      if (lineEnd === start) {
        // A blank line ends an event.
        if (!blank && firstEventEnd < 0) firstEventEnd = end + 1 - carried;
        blank = true;
      } else {
        blank = false;
        if (this.line(data, start, lineEnd)) content = true;
      }
      start = end + 1;
    }
    if (start < data.length) {
      this.carry = Buffer.from(data.subarray(start));
      blank = false;
    }
    this.midEvent = !blank;
    return { content, firstEventEnd };
  }

  /** One line: a `data: {...}` line is read for its usage or completion text. */
  private line(data: Buffer, start: number, end: number): boolean {
    // "data:" then an optional space, then a JSON object.
    if (end - start < 7 || data[start] !== 0x64 || data.toString('latin1', start, start + 5) !== 'data:') {
      return false;
    }
    let from = start + 5;
    if (data[from] === 0x20) from += 1;
    if (data[from] !== 0x7b) return false;
    let chunk: { usage?: Record<string, unknown> | null; choices?: unknown };
    try {
      chunk = JSON.parse(data.toString('utf8', from, end)) as typeof chunk;
    } catch {
      return false;
    }
    if (this.format === 'messages') return this.messagesEvent(chunk as Record<string, unknown>);
    const usage = chunk.usage;
    if (usage && typeof usage === 'object' && typeof usage.completion_tokens === 'number') {
      const promptDetails = usage.prompt_tokens_details as Record<string, unknown> | null | undefined;
      const completionDetails = usage.completion_tokens_details as Record<string, unknown> | null | undefined;
      this.usage = {
        promptTokens: count(usage.prompt_tokens),
        completionTokens: count(usage.completion_tokens),
        cachedTokens: count(promptDetails?.cached_tokens),
        cacheWriteTokens: count(promptDetails?.cache_creation_tokens),
        reasoningTokens: count(completionDetails?.reasoning_tokens),
      };
    }
    const chars = deltaChars(chunk.choices);
    if (chars === 0) return false;
    this.estimatedCompletion += Math.max(1, Math.ceil(chars / 4));
    return true;
  }

  /** One Anthropic Messages event: its usage, or the characters of the text a delta carries. */
  private messagesEvent(event: Record<string, unknown>): boolean {
    if (event.type === 'message_start') {
      const usage = (event.message as { usage?: Record<string, unknown> } | null)?.usage;
      if (usage && typeof usage === 'object') {
        // Anthropic counts cache reads and writes apart from input_tokens.
        const cachedTokens = count(usage.cache_read_input_tokens);
        const cacheWriteTokens = count(usage.cache_creation_input_tokens);
        this.prompt = {
          promptTokens: count(usage.input_tokens) + cachedTokens + cacheWriteTokens,
          cachedTokens,
          cacheWriteTokens,
        };
      }
      return false;
    }
    if (event.type === 'message_delta') {
      const usage = event.usage as Record<string, unknown> | null | undefined;
      if (usage && typeof usage.output_tokens === 'number') {
        this.usage = {
          promptTokens: this.promptEstimate,
          cachedTokens: 0,
          ...this.prompt,
          completionTokens: count(usage.output_tokens),
          reasoningTokens: 0,
        };
      }
      return false;
    }
    if (event.type !== 'content_block_delta') return false;
    const delta = event.delta as Record<string, unknown> | null | undefined;
    let chars = 0;
    for (const field of ['text', 'partial_json', 'thinking'] as const) {
      const text = delta?.[field];
      if (typeof text === 'string') chars += text.length;
    }
    if (chars === 0) return false;
    this.estimatedCompletion += Math.max(1, Math.ceil(chars / 4));
    return true;
  }

  /** Everything used so far. */
  used(): UsageAmount {
    const tokens = this.usage ?? {
      promptTokens: this.promptEstimate,
      cachedTokens: 0,
      ...this.prompt,
      completionTokens: this.estimatedCompletion,
      reasoningTokens: 0,
    };
    return { tokens: tokens.promptTokens + tokens.completionTokens, cost: this.price(tokens) };
  }
}

/** The events that end a stream a limit ran out on: the one error shape and `[DONE]`, or Anthropic's `error` event. */
function exhaustedEvents(verdict: AccrueVerdict, format: 'chat' | 'messages'): Buffer[] {
  const code = verdict.code || 'usage_limit_exceeded';
  const message =
    verdict.message || `The request used up the limit of policy ${verdict.policyId}; the stream was ended.`;
  const error = { message, type: 'rate_limit_error', param: null, code };
  if (format === 'messages') {
    return [Buffer.from(`event: error\ndata: ${JSON.stringify({ type: 'error', error })}\n\n`)];
  }
  return [Buffer.from(`data: ${JSON.stringify({ error })}\n\n`), DONE];
}

const asBuffer = (chunk: Uint8Array): Buffer =>
  Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);

/**
 * A provider's event stream, charged to the request's limits while it runs. Each chunk is
 * counted and passed on as it arrives; when the running total passes what the request holds,
 * the policy service is asked for more before the chunk goes on (once per block: what it
 * grants grows with use). When a limit has nothing left, the stream ends with an error event
 * in the one error shape and `data: [DONE]` (a Messages stream: with Anthropic's `error`
 * event, the same error inside), and the upstream read is stopped, which releases
 * the provider's connection: a stream overspends by at most one chunk. At the end, however it
 * ends, the hold is settled to the total.
 */
export function meterStream(
  body: AsyncIterable<Uint8Array>,
  options: StreamMeterOptions,
): AsyncIterable<Uint8Array> {
  const { hold } = options;
  const format = options.format ?? 'chat';
  const counted = new StreamCount(options.promptTokens, options.price, format);
  let tokenLimit = hold.heldTokens;
  let costLimit = hold.heldCost;
  async function* metered(): AsyncGenerator<Uint8Array> {
    const upstream = body[Symbol.asyncIterator]();
    let finished = false;
    try {
      for (;;) {
        const next = await upstream.next();
        if (next.done) {
          finished = true;
          return;
        }
        const chunk = asBuffer(next.value);
        const wasMidEvent = counted.midEvent;
        const { content, firstEventEnd } = counted.push(chunk);
        if (content) {
          const used = counted.used();
          if (used.tokens > tokenLimit || used.cost > costLimit) {
            const verdict = await hold.accrue(used);
            if (!verdict.allowed) {
              // An event begun in an earlier chunk is finished first, so the error event stands alone.
              if (wasMidEvent) {
                yield firstEventEnd >= 0 ? chunk.subarray(0, firstEventEnd) : Buffer.from('\n\n');
              }
              options.onExhausted?.(verdict);
              yield* exhaustedEvents(verdict, format);
              return;
            }
            // At least as much again as was needed, so the next question comes a block later.
            tokenLimit = Math.max(hold.heldTokens, 2 * used.tokens - tokenLimit);
            costLimit = Math.max(hold.heldCost, 2 * used.cost - costLimit);
          }
        }
        yield chunk;
      }
    } finally {
      if (!finished) {
        // Stops the upstream read: the provider's connection is closed, not left to run on.
        void Promise.resolve(upstream.return?.()).catch(() => undefined);
      }
      hold.settle(counted.used());
    }
  }
  return metered();
}
