import {
  type CheckOutcome,
  checkLabel,
  type GuardrailInput,
  type PreparedCheck,
  prepareCheck,
} from './checks.ts';
import type { GuardrailActions, GuardrailCheck } from './definitions.ts';
import { mergeSpans, redact, type Span } from './scan.ts';

/**
 * Running guardrails on a text: each enabled check answers a verdict, and the guardrail's
 * actions turn the failed ones into what the gateway does (allow, warn, redact or deny).
 * Everything here is synchronous and pure but the webhook check, which the gateway calls
 * itself and whose verdict it passes in.
 */

/** One check's answer, as recorded and as the 446 error shows it. */
export interface CheckVerdict {
  id: GuardrailCheck['id'];
  /** The check's name, or its id. */
  name: string;
  passed: boolean;
  /** Which check and why, in plain words. */
  explanation: string;
  /** What made the check fail, where it can say (regex, contains, pii): these spans can be redacted. */
  matches?: Span[];
  durationMs: number;
  /** Set when the check could not run: `passed` is then its failure mode's (open: passed, closed: failed). */
  error?: string;
  /** The check ran longer than its `timeout_ms`. A synchronous check cannot be stopped midway: its answer stands. */
  overBudget?: true;
}

/** A guardrail as the gateway runs it. */
export interface Guardrail {
  checks: readonly GuardrailCheck[];
  actions: GuardrailActions;
}

/** What the gateway does with a text after a guardrail: `warn` proceeds with the verdicts recorded. */
export type GuardrailAction = 'allow' | 'warn' | 'redact' | 'deny';

export interface GuardrailVerdict {
  /** Every enabled check passed. */
  passed: boolean;
  action: GuardrailAction;
  /** The verdicts of the enabled checks, in the guardrail's order. */
  verdicts: CheckVerdict[];
  /** Why the guardrail failed (each failed check and why), or that it passed. */
  explanation: string;
  /** The text to go on with: with `redact`, what the failed span checks matched is replaced. */
  text: string;
  /** The spans replaced in `text`, merged. */
  redactions: Span[];
  /** Failed checks that cannot say what they matched (counts, JSON, …), so redaction cannot fix them. */
  unredactable: string[];
  durationMs: number;
}

export interface RunOptions {
  /**
   * Verdicts the gateway decided itself, by the check's index in `checks`: the webhook's
   * (build one with `checkVerdict`). A webhook check without one errors, by its failure mode.
   */
  external?: ReadonlyMap<number, CheckVerdict>;
}

const prepared = new WeakMap<GuardrailCheck, PreparedCheck | Error>();

/**
 * A check ready to run, prepared once per check object (the gateway keeps the guardrails it
 * loads, so each is parsed and compiled once). Throws an Error if it cannot run.
 */
export function preparedCheck(check: GuardrailCheck): PreparedCheck {
  let entry = prepared.get(check);
  if (entry === undefined) {
    try {
      entry = prepareCheck(check);
    } catch (error) {
      entry = error instanceof Error ? error : new Error(String(error));
    }
    prepared.set(check, entry);
  }
  if (entry instanceof Error) throw entry;
  return entry;
}

/**
 * A check's verdict from its outcome, or from the error it raised: an erroring check never
 * silently passes; its failure mode decides (open: passed, closed: failed), and the verdict
 * says so.
 */
export function checkVerdict(
  check: GuardrailCheck,
  result: CheckOutcome | { error: unknown },
  durationMs: number,
): CheckVerdict {
  const label = checkLabel(check);
  const base = { id: check.id, name: check.name ?? check.id, durationMs };
  const overBudget = durationMs > check.timeout_ms ? ({ overBudget: true } as const) : {};
  if ('error' in result) {
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    const passed = check.failure_mode === 'open';
    return {
      ...base,
      passed,
      explanation: `${label}: the check could not run (${message}); its failure mode is ${check.failure_mode}, so it counts as ${passed ? 'passed' : 'failed'}`,
      error: message,
      ...overBudget,
    };
  }
  return {
    ...base,
    passed: result.passed,
    explanation: `${label}: ${result.explanation}`,
    ...(result.matches !== undefined && result.matches.length > 0 ? { matches: result.matches } : {}),
    ...overBudget,
  };
}

/** Runs one check on `input`. Never throws: a check that errors answers by its failure mode. */
export function evaluateCheck(check: GuardrailCheck, input: GuardrailInput): CheckVerdict {
  const started = performance.now();
  let result: CheckOutcome | { error: unknown };
  try {
    result = preparedCheck(check).evaluate(input);
  } catch (error) {
    result = { error };
  }
  return checkVerdict(check, result, performance.now() - started);
}

/** Whether a failed verdict can be fixed by redacting what it matched. */
export function redactable(verdict: CheckVerdict): boolean {
  return !verdict.passed && verdict.error === undefined && (verdict.matches?.length ?? 0) > 0;
}

/**
 * The guardrail's verdict from its checks' verdicts: passed when all passed. A failed
 * guardrail denies (`deny`) or warns; with `redact`, what the failed span checks matched is
 * replaced in the text, and the guardrail redacts instead of denying or warning, unless a
 * check that cannot say what it matched failed too (then it falls back to deny or warn, with
 * what could be redacted redacted).
 */
export function decideGuardrail(
  actions: GuardrailActions,
  text: string,
  verdicts: CheckVerdict[],
  durationMs = verdicts.reduce((sum, verdict) => sum + verdict.durationMs, 0),
): GuardrailVerdict {
  const failed = verdicts.filter((verdict) => !verdict.passed);
  if (failed.length === 0) {
    return {
      passed: true,
      action: 'allow',
      verdicts,
      explanation: `all ${verdicts.length} checks passed`,
      text,
      redactions: [],
      unredactable: [],
      durationMs,
    };
  }
  const fallback: GuardrailAction = actions.deny ? 'deny' : 'warn';
  let explanation = failed.map((verdict) => verdict.explanation).join('; ');
  if (!actions.redact) {
    return {
      passed: false,
      action: fallback,
      verdicts,
      explanation,
      text,
      redactions: [],
      unredactable: [],
      durationMs,
    };
  }
  const redactions = mergeSpans(failed.filter(redactable).flatMap((verdict) => verdict.matches!));
  const unredactable = failed.filter((verdict) => !redactable(verdict)).map((verdict) => verdict.name);
  if (unredactable.length > 0) {
    explanation += `; redaction cannot fix ${unredactable.map((name) => `'${name}'`).join(', ')}: ${unredactable.length === 1 ? 'it does' : 'they do'} not say what ${unredactable.length === 1 ? 'it' : 'they'} matched`;
  }
  return {
    passed: false,
    action: unredactable.length > 0 ? fallback : 'redact',
    verdicts,
    explanation,
    text: redact(text, redactions),
    redactions,
    unredactable,
    durationMs,
  };
}

/** Runs every enabled check of a guardrail on `input` and decides what the gateway does. */
export function runGuardrail(
  guardrail: Guardrail,
  input: GuardrailInput,
  options: RunOptions = {},
): GuardrailVerdict {
  const started = performance.now();
  const verdicts: CheckVerdict[] = [];
  guardrail.checks.forEach((check, i) => {
    if (!check.is_enabled) return;
    verdicts.push(options.external?.get(i) ?? evaluateCheck(check, input));
  });
  return decideGuardrail(guardrail.actions, input.text, verdicts, performance.now() - started);
}
