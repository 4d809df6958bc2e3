import type { Counter, PreparedCheck, StreamPlan } from './checks.ts';
import type { GuardrailCheck } from './definitions.ts';
import {
  type CheckVerdict,
  checkVerdict,
  decideGuardrail,
  evaluateCheck,
  type Guardrail,
  type GuardrailVerdict,
  preparedCheck,
  type RunOptions,
  runGuardrail,
} from './evaluate.ts';
import { advance, mergeSpans, placeholder, type ScanState, type Span } from './scan.ts';

/**
 * Checking a model's output as it streams, without leaking what a guardrail refuses: text is
 * released only once every check that fails on spans (regex, contains, pii) has decided it,
 * so no character of a match is sent before the match is found. Each check says how it runs
 * on a stream (`streamMode`).
 */

/**
 * How a check runs on a stream:
 * - `request`: decided by the request alone (model, metadata), before any text;
 * - `window`: fails on matches at most `window` characters long (lookarounds included), so
 *   the stream holds back at most `window - 1` characters, and less where no match can begin;
 * - `end`: decided on the whole text (minimum counts, JSON, prompt injection, a regex without
 *   `maxMatchLength`, the webhook). `failsEarly`: a maximum count fails as soon as it is passed.
 *   A regex rule without `maxMatchLength` that forbids its matches holds the stream to its end.
 */
export type StreamMode =
  { mode: 'request' } | { mode: 'window'; window: number } | { mode: 'end'; failsEarly?: true };

/** How `check` runs on a stream (a check that cannot run: `end`, where it errors). */
export function streamMode(check: GuardrailCheck): StreamMode {
  let plan: StreamPlan;
  try {
    plan = preparedCheck(check).stream;
  } catch {
    return { mode: 'end' };
  }
  if (plan.mode === 'window') {
    const window = Math.max(...plan.scanners.map((scanner) => scanner.span));
    return Number.isFinite(window) ? { mode: 'window', window } : { mode: 'end' };
  }
  if (plan.mode === 'count') return { mode: 'end', failsEarly: true };
  return plan;
}

export interface StreamStep {
  /** Text to send on now: checked, and redacted where the guardrail redacts. */
  text: string;
  /** Set once the guardrail refused the answer: nothing more is released. */
  denied?: GuardrailVerdict;
}

export interface StreamEnd extends StreamStep {
  /** The guardrail's verdict on the whole text. */
  verdict: GuardrailVerdict;
}

/** The request a streamed answer belongs to, as checks read it. */
export interface StreamRequest {
  model?: string | undefined;
  metadata?: Readonly<Record<string, unknown>> | undefined;
}

interface WindowCheck {
  /** The check's index in the guardrail's `checks`. */
  index: number;
  check: GuardrailCheck;
  prepared: PreparedCheck & { stream: { mode: 'window' } };
  states: ScanState[];
  /** Every span found so far, in the order found. */
  spans: Span[];
}

interface CountCheck {
  check: GuardrailCheck;
  max: number;
  unit: string;
  counter: Counter;
  passed: boolean;
}

/** Characters kept before what a stream still needs: the lookbehinds of its patterns read them. */
const CONTEXT = 16;

/**
 * Checks one guardrail on a model's output as it streams. `feed` each chunk and send on the
 * text it answers; `finish` once the output is complete, for the rest and the verdict.
 *
 * - deny: a failed check stops the stream (`denied`): nothing more is released;
 * - redact: matched spans are replaced by placeholders as they are released, so the released
 *   text, put together, is the redacted whole text; a failed check that cannot redact falls
 *   back to deny or warn;
 * - warn (neither): text is released as it comes, the verdict comes with `finish`.
 *
 * Checks decided on the whole text (`end`) decide in `finish`: text released before then is
 * not recalled. A gateway that must not release anything such a check would refuse holds the
 * answer until `finish`.
 */
export class StreamGuard {
  readonly #guardrail: Guardrail;
  readonly #request: StreamRequest;
  /** Whether text is held back while checks decide: deny or redact. */
  readonly #holds: boolean;
  readonly #windows: WindowCheck[] = [];
  readonly #counts: CountCheck[] = [];
  /** Failures found while streaming that are not spans (request checks, counts, checks that cannot run). */
  readonly #failures: CheckVerdict[] = [];
  /** The whole text so far, as it came. */
  readonly #chunks: string[] = [];
  /** The text from `#offset` on: what is not yet released or decided, and some context before it. */
  #buffer = '';
  #offset = 0;
  /** How much of the text has been released (as is or as a placeholder). */
  #released = 0;
  #denied: GuardrailVerdict | undefined;
  #end: StreamEnd | undefined;

  constructor(guardrail: Guardrail, request: StreamRequest = {}) {
    this.#guardrail = guardrail;
    this.#request = request;
    const { deny, redact } = guardrail.actions;
    this.#holds = deny || redact;
    guardrail.checks.forEach((check, index) => {
      if (!check.is_enabled) return;
      let prepared: PreparedCheck;
      try {
        prepared = preparedCheck(check);
      } catch (error) {
        const verdict = checkVerdict(check, { error }, 0);
        if (!verdict.passed) this.#fail(verdict);
        return;
      }
      const plan = prepared.stream;
      if (plan.mode === 'request') {
        const verdict = evaluateCheck(check, { text: '', ...request, phase: 'output' });
        if (!verdict.passed) this.#fail(verdict);
      } else if (this.#holds && plan.mode === 'window') {
        this.#windows.push({
          index,
          check,
          prepared: prepared as WindowCheck['prepared'],
          states: plan.scanners.map(() => ({ from: 0 })),
          spans: [],
        });
      } else if (this.#holds && plan.mode === 'count') {
        this.#counts.push({ check, max: plan.max, unit: plan.unit, counter: plan.counter(), passed: true });
      }
    });
  }

  /** The whole text fed so far, as it came. */
  get text(): string {
    return this.#chunks.join('');
  }

  /** The verdict that stopped the stream, if one did. */
  get denied(): GuardrailVerdict | undefined {
    return this.#denied;
  }

  /** Takes the next chunk of output; answers the text that may be sent on now. */
  feed(chunk: string): StreamStep {
    if (this.#end !== undefined) throw new Error('the stream has finished');
    if (this.#denied !== undefined) return { text: '', denied: this.#denied };
    this.#chunks.push(chunk);
    this.#buffer += chunk;
    return this.#step(false);
  }

  /**
   * The output is complete: runs the checks decided on the whole text and releases the rest
   * (nothing if the guardrail denies). `options` carries verdicts the gateway decided itself
   * (the webhook's), as for `runGuardrail`.
   */
  finish(options: RunOptions = {}): StreamEnd {
    if (this.#end !== undefined) return this.#end;
    const step = this.#denied === undefined ? this.#step(true) : { text: '' };
    if (this.#denied !== undefined) {
      this.#end = { text: '', denied: this.#denied, verdict: this.#denied };
      return this.#end;
    }
    const text = this.#chunks.join('');
    let verdict = runGuardrail(this.#guardrail, { text, ...this.#request, phase: 'output' }, options);
    verdict = this.#crossCheck(verdict, text);
    this.#end =
      verdict.action === 'deny' ? { text: '', denied: verdict, verdict } : { text: step.text, verdict };
    return this.#end;
  }

  /** Records a failure that is not a span; with deny, it stops the stream. */
  #fail(verdict: CheckVerdict): void {
    this.#failures.push(verdict);
    if (this.#guardrail.actions.deny && this.#denied === undefined) {
      this.#denied = decideGuardrail(this.#guardrail.actions, this.#chunks.join(''), [...this.#failures]);
    }
  }

  #step(final: boolean): StreamStep {
    const buffer = this.#buffer;
    const offset = this.#offset;
    const n = offset + buffer.length;
    if (!this.#holds) {
      const text = buffer.slice(this.#released - offset);
      this.#released = n;
      this.#trim(n);
      return { text };
    }
    for (const count of this.#counts) {
      const seen = count.counter.advance(buffer, final, offset);
      if (seen > count.max && count.passed) {
        count.passed = false;
        const outcome = { passed: false, explanation: `the text has more than ${count.max} ${count.unit}s` };
        this.#fail(checkVerdict(count.check, outcome, 0));
      }
    }
    if (this.#denied !== undefined) return { text: '', denied: this.#denied };
    let frontier = n;
    for (const window of this.#windows) {
      window.prepared.stream.scanners.forEach((scanner, i) => {
        frontier = Math.min(
          frontier,
          advance(scanner, window.states[i]!, buffer, final, window.spans, offset),
        );
      });
    }
    if (!this.#guardrail.actions.redact) {
      const failed = this.#windows.filter((window) => window.spans.length > 0);
      if (failed.length > 0) {
        const verdicts = failed.map((window) =>
          checkVerdict(window.check, window.prepared.stream.explain(window.spans), 0),
        );
        this.#denied = decideGuardrail(this.#guardrail.actions, this.#chunks.join(''), [
          ...this.#failures,
          ...verdicts,
        ]);
        return { text: '', denied: this.#denied };
      }
      const text = buffer.slice(this.#released - offset, frontier - offset);
      this.#released = Math.max(this.#released, frontier);
      this.#trim(frontier);
      return { text };
    }
    // Redact: release up to the frontier, each stretch of matched text as one placeholder once
    // no match still undecided can overlap it.
    let text = '';
    let at = this.#released;
    let limit = frontier;
    const pending = mergeSpans(
      this.#windows.flatMap((window) => window.spans.filter((span) => span.end > at)),
    );
    for (const group of pending) {
      if (group.start >= limit) break;
      if (group.end > limit) {
        limit = group.start;
        break;
      }
      text += buffer.slice(at - offset, group.start - offset) + placeholder(group.label);
      at = group.end;
    }
    if (at < limit) {
      text += buffer.slice(at - offset, limit - offset);
      at = limit;
    }
    this.#released = at;
    this.#trim(Math.min(at, frontier));
    return { text };
  }

  /** Drops buffered text no check needs any more (all before `needed`, but some context). */
  #trim(needed: number): void {
    const keepFrom = Math.max(this.#offset, Math.min(needed, this.#released) - CONTEXT);
    const drop = keepFrom - this.#offset;
    if (drop > 0 && drop * 2 >= this.#buffer.length) {
      this.#buffer = this.#buffer.slice(drop);
      this.#offset = keepFrom;
    }
  }

  /**
   * The stream found, for each span check, exactly the spans the whole text holds: if not, a
   * pattern matched more than its window said (a regex's `maxMatchLength`), text may have
   * left before its match was found, and the check fails with an error saying so.
   */
  #crossCheck(verdict: GuardrailVerdict, text: string): GuardrailVerdict {
    if (this.#windows.length === 0) return verdict;
    const key = (spans: readonly Span[]) =>
      mergeSpans(spans)
        .map((span) => `${span.start}-${span.end}`)
        .join(',');
    // The verdicts are those of the enabled checks, in order.
    const enabled = this.#guardrail.checks.flatMap((check, index) => (check.is_enabled ? [index] : []));
    let changed = false;
    const verdicts = verdict.verdicts.map((checked, k) => {
      const window = this.#windows.find((w) => w.index === enabled[k]);
      if (
        window === undefined ||
        checked.error !== undefined ||
        key(window.spans) === key(checked.matches ?? [])
      ) {
        return checked;
      }
      changed = true;
      const error =
        'a match was longer than the check’s window (maxMatchLength): part of it may have been released before it was found';
      return { ...checked, passed: false, error, explanation: `${checked.explanation}; ${error}` };
    });
    return changed ? decideGuardrail(this.#guardrail.actions, text, verdicts, verdict.durationMs) : verdict;
  }
}
