import { BadRequest, GuardrailDenied, ServiceUnavailable, type Logger } from '@switchyard/core';
import {
  redact,
  runGuardrail,
  type GuardrailAction,
  type GuardrailActions,
  type GuardrailCheck,
  type GuardrailVerdict,
  type Span,
} from '@switchyard/guardrails';
import { namedGuardrails, type RoutingConfig } from '@switchyard/rules';
import {
  holdsWebhook,
  runsOnProxy,
  webhookVerdicts,
  type WebhookContext,
  type WebhookEvent,
} from './guardrail-webhook.ts';
import type { AnswerUnit, TextPart } from './operation-texts.ts';

/**
 * Guardrails on a chat completion: the input guardrails a config names run on the request's
 * messages before the provider sees them, the output guardrails on the answer before the
 * client sees it. A failed guardrail denies (446 on input; on output the choice is withheld
 * with `finish_reason: content_filter`), warns (the request proceeds, the verdicts are
 * recorded) or redacts (what its checks matched is replaced).
 */

/** A guardrail as the gateway runs it. */
export interface LoadedGuardrail {
  id: string;
  slug: string;
  /** Empty for an organisation-level guardrail. */
  workspaceId: string;
  versionId: string;
  name: string;
  checks: GuardrailCheck[];
  actions: GuardrailActions;
}

export interface GuardrailSource {
  /** The guardrail by id or slug, as the caller's workspace may use it; a miss is looked for again (it may be new). */
  find(organisationId: string, workspaceId: string, reference: string): Promise<LoadedGuardrail | undefined>;
}

export interface RequestGuardrails {
  input: LoadedGuardrail[];
  output: LoadedGuardrail[];
}

/** What one guardrail did with a request, for its log and the 446 error. */
export interface GuardrailRun {
  phase: 'input' | 'output';
  guardrailId: string;
  slug: string;
  versionId: string;
  action: GuardrailAction;
  explanation: string;
  /** How many spans were replaced. */
  redactions: number;
  durationMs: number;
  checks: Array<{ id: string; name: string; passed: boolean; explanation: string; error?: string }>;
  /** The feedback the guardrail gives the request's trace: its `on_success` when it passed, else its `on_fail`. */
  feedback?: { value: number; weight: number; metadata: string } | undefined;
}

/** The organisation's default guardrail ids of each phase, as they apply to the caller's workspace. */
export interface GuardrailDefaults {
  input: string[];
  output: string[];
}

const NO_DEFAULTS: GuardrailDefaults = { input: [], output: [] };

/** A default that no longer exists is logged once a minute per organisation and guardrail, not on every request. */
const MISSING_DEFAULT_WARNING_MS = 60_000;
const missingDefaultWarnedAt = new Map<string, number>();

function warnMissingDefault(
  logger: Pick<Logger, 'warn'> | undefined,
  organisationId: string,
  phase: 'input' | 'output',
  guardrailId: string,
): void {
  const key = `${organisationId}:${guardrailId}`;
  const now = Date.now();
  if (now - (missingDefaultWarnedAt.get(key) ?? -Infinity) < MISSING_DEFAULT_WARNING_MS) return;
  if (missingDefaultWarnedAt.size >= 10_000) missingDefaultWarnedAt.clear();
  missingDefaultWarnedAt.set(key, now);
  logger?.warn('an organisation default guardrail no longer exists; requests run without it', {
    organisation_id: organisationId,
    phase,
    guardrail_id: guardrailId,
  });
}

/**
 * The guardrails of a request: the organisation's defaults of each phase first, then those
 * its config names, each guardrail once. A guardrail the config names that does not exist (or
 * belongs to another workspace) is a 400 naming where the config names it: a caller who asked
 * to be checked is never served unchecked. A default that no longer exists (it was valid when
 * chosen, and archived since) is skipped with a warning.
 */
export async function guardrailsOf(
  config: RoutingConfig | undefined,
  organisationId: string,
  workspaceId: string,
  source: GuardrailSource | undefined,
  defaults: GuardrailDefaults = NO_DEFAULTS,
  logger?: Pick<Logger, 'warn'>,
): Promise<RequestGuardrails | undefined> {
  const named = config ? namedGuardrails(config) : [];
  if (named.length === 0 && defaults.input.length === 0 && defaults.output.length === 0) return undefined;
  const lookUp = async (reference: string): Promise<LoadedGuardrail | undefined> => {
    try {
      return source ? await source.find(organisationId, workspaceId, reference) : undefined;
    } catch (err) {
      throw new ServiceUnavailable('Guardrails cannot be read right now; the request was not sent.', {
        cause: err,
        code: 'guardrails_unavailable',
      });
    }
  };
  const found: RequestGuardrails = { input: [], output: [] };
  const add = (phase: 'input' | 'output', guardrail: LoadedGuardrail) => {
    if (!found[phase].some((listed) => listed.id === guardrail.id)) found[phase].push(guardrail);
  };
  for (const phase of ['input', 'output'] as const) {
    for (const id of defaults[phase]) {
      const guardrail = await lookUp(id);
      if (!guardrail) {
        warnMissingDefault(logger, organisationId, phase, id);
        continue;
      }
      add(phase, guardrail);
    }
  }
  for (const { slug, field } of named) {
    const guardrail = await lookUp(slug);
    if (!guardrail) {
      throw new BadRequest(`Guardrail '${slug}' does not exist.`, {
        param: `config.${field}`,
        code: 'guardrail_not_found',
      });
    }
    add(field.startsWith('input') ? 'input' : 'output', guardrail);
  }
  return found;
}

/** Parts are joined with this between them, so that no match spans two messages. */
const SEPARATOR = '\n\n';

/** Replaces spans of the joined text in the parts they fall in. */
function redactParts(parts: TextPart[], spans: readonly Span[]): void {
  let offset = 0;
  for (const part of parts) {
    const end = offset + part.text.length;
    const local = spans
      .filter((span) => span.start < end && span.end > offset)
      .map((span) => ({
        ...span,
        start: Math.max(0, span.start - offset),
        end: Math.min(part.text.length, span.end - offset),
      }));
    if (local.length > 0) part.put(redact(part.text, local));
    offset = end + SEPARATOR.length;
  }
}

function runOf(
  phase: 'input' | 'output',
  guardrail: LoadedGuardrail,
  verdict: GuardrailVerdict,
): GuardrailRun {
  return {
    phase,
    guardrailId: guardrail.id,
    slug: guardrail.slug,
    versionId: guardrail.versionId,
    action: verdict.action,
    explanation: verdict.explanation,
    redactions: verdict.redactions.length,
    durationMs: verdict.durationMs,
    checks: verdict.verdicts.map((v) => ({
      id: v.id,
      name: v.name,
      passed: v.passed,
      explanation: v.explanation,
      ...(v.error === undefined ? {} : { error: v.error }),
    })),
    feedback: (verdict.action === 'allow' ? guardrail.actions.on_success : guardrail.actions.on_fail)
      ?.feedback,
  };
}

/** What an output guardrail did with one choice of a streamed answer, from the verdict its stream ended with. */
export function streamedRun(guardrail: LoadedGuardrail, verdict: GuardrailVerdict): GuardrailRun {
  return runOf('output', guardrail, verdict);
}

/** The verdicts as the 446 error carries them (`hook_results`). */
export function hookResults(runs: readonly GuardrailRun[]) {
  const shown = (phase: 'input' | 'output') =>
    runs
      .filter((run) => run.phase === phase)
      .map((run) => ({
        id: run.guardrailId,
        slug: run.slug,
        verdict: run.action === 'allow',
        action: run.action,
        explanation: run.explanation,
        checks: run.checks.map((check) => ({
          id: check.id,
          name: check.name,
          verdict: check.passed,
          explanation: check.explanation,
          ...(check.error === undefined ? {} : { error: check.error }),
        })),
        execution_time_ms: Math.round(run.durationMs * 1000) / 1000,
      }));
  return { before_request_hooks: shown('input'), after_request_hooks: shown('output') };
}

/** What the checks know of a request besides its texts. */
export interface CheckFacts {
  model: string;
  metadata: Readonly<Record<string, string>>;
  /** The operation, as webhooks are told it (`chat`, `completions`, …). */
  requestType: string;
  stream: boolean;
}

export interface InputChecked<B> {
  /** The body to send: the same object when nothing was redacted, else a redacted copy. */
  body: B;
  redacted: boolean;
}

/** Runs guardrails on one text, their webhook checks called at once first. */
async function runAll(
  guardrails: readonly LoadedGuardrail[],
  text: string,
  facts: CheckFacts,
  phase: 'input' | 'output',
  event: () => WebhookEvent,
  webhooks: WebhookContext | undefined,
): Promise<GuardrailVerdict[]> {
  const input = { text, model: facts.model, metadata: facts.metadata, phase };
  if (!guardrails.some(holdsWebhook)) return guardrails.map((guardrail) => runGuardrail(guardrail, input));
  const told = event();
  const external = await Promise.all(
    guardrails.map((guardrail) => webhookVerdicts(guardrail.checks, told, webhooks)),
  );
  return guardrails.map((guardrail, i) =>
    runGuardrail(guardrail, input, external[i] ? { external: external[i] } : {}),
  );
}

/**
 * Runs the input guardrails on a request's texts (`texts` reads them from a copy of `body`). A
 * guardrail that denies refuses the request (446, naming each failed check and why); one that
 * redacts replaces what its checks matched before the provider sees it; one that warns lets
 * it through. Webhook checks are called at once, with the request as the client sent it.
 */
export async function checkInput<B extends object>(
  guardrails: readonly LoadedGuardrail[],
  body: B,
  texts: (body: B) => TextPart[],
  facts: CheckFacts,
  /** Where each guardrail's run is recorded as it is decided, a denied request's too. */
  runs: GuardrailRun[],
  webhooks?: WebhookContext,
): Promise<InputChecked<B>> {
  if (guardrails.length === 0) return { body, redacted: false };
  const copy = structuredClone(body);
  const parts = texts(copy);
  const text = parts.map((part) => part.text).join(SEPARATOR);
  const verdicts = await runAll(
    guardrails,
    text,
    facts,
    'input',
    () => ({
      eventType: 'beforeRequestHook',
      requestType: facts.requestType,
      request: { json: body, text, isStreamingRequest: facts.stream },
      model: facts.model,
      metadata: facts.metadata,
    }),
    webhooks,
  );
  const own: GuardrailRun[] = [];
  const spans: Span[] = [];
  guardrails.forEach((guardrail, i) => {
    const verdict = verdicts[i]!;
    const run = runOf('input', guardrail, verdict);
    own.push(run);
    runs.push(run);
    if (verdict.action === 'redact') spans.push(...verdict.redactions);
  });
  const denied = own.filter((run) => run.action === 'deny');
  if (denied.length > 0) throw guardrailDenial(denied, own);
  if (spans.length === 0) return { body, redacted: false };
  redactParts(parts, spans);
  return { body: copy, redacted: true };
}

/** The 446 for guardrails that denied a request, with every run's verdicts. */
export function guardrailDenial(
  denied: readonly GuardrailRun[],
  runs: readonly GuardrailRun[],
): GuardrailDenied {
  const why = denied.map((run) => `guardrail '${run.slug}' denied it: ${run.explanation}`).join('; ');
  return new GuardrailDenied(`The request was denied by its guardrails: ${why}.`, {
    details: { hook_results: hookResults(runs) },
  });
}

export interface OutputChecked {
  body: Buffer;
  changed: boolean;
  runs: GuardrailRun[];
}

/**
 * Runs the output guardrails on a whole (non-streamed) answer, unit by unit (`units` reads a
 * chat completion's choices, a message, a response's outputs). A unit a guardrail denies is
 * withheld (for a chat completion: `content` empty, `finish_reason: content_filter`);
 * redaction replaces what the checks matched; a warning changes nothing. An answer that is
 * not JSON is passed as it is.
 */
export async function checkOutput(
  guardrails: readonly LoadedGuardrail[],
  answer: Buffer,
  units: (answer: Record<string, unknown>) => AnswerUnit[],
  facts: CheckFacts,
  status = 200,
  webhooks?: WebhookContext,
): Promise<OutputChecked> {
  if (guardrails.length === 0) return { body: answer, changed: false, runs: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.toString('utf8'));
  } catch {
    return { body: answer, changed: false, runs: [] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { body: answer, changed: false, runs: [] };
  const json = parsed as Record<string, unknown>;
  const runs: GuardrailRun[] = [];
  let changed = false;
  for (const unit of units(json)) {
    if (unit.parts.length === 0) continue;
    const text = unit.parts.map((part) => part.text).join(SEPARATOR);
    const verdicts = await runAll(
      guardrails,
      text,
      facts,
      'output',
      () => ({
        eventType: 'afterRequestHook',
        requestType: facts.requestType,
        request: { isStreamingRequest: facts.stream },
        response: { json: JSON.parse(answer.toString('utf8')) as unknown, text, statusCode: status },
        model: facts.model,
        metadata: facts.metadata,
      }),
      webhooks,
    );
    const spans: Span[] = [];
    let denied = false;
    guardrails.forEach((guardrail, i) => {
      const verdict = verdicts[i]!;
      runs.push(runOf('output', guardrail, verdict));
      if (verdict.action === 'deny') denied = true;
      else if (verdict.action === 'redact') spans.push(...verdict.redactions);
    });
    if (denied) {
      unit.withhold();
      changed = true;
    } else if (spans.length > 0) {
      redactParts(unit.parts, spans);
      changed = true;
    }
  }
  return { body: changed ? Buffer.from(JSON.stringify(json)) : answer, changed, runs };
}

/** Each guardrail as it runs on pass-through requests (null: it does not run there). */
const onProxy = new WeakMap<LoadedGuardrail, LoadedGuardrail | null>();

function proxyGuardrail(guardrail: LoadedGuardrail): LoadedGuardrail | null {
  let found = onProxy.get(guardrail);
  if (found === undefined) {
    const checks = guardrail.checks.filter(runsOnProxy);
    found = checks.length === 0 ? null : { ...guardrail, checks };
    onProxy.set(guardrail, found);
  }
  return found;
}

/**
 * Guardrails on a pass-through request, one whose text the gateway does not read (files,
 * images, any other `/v1` path): only their webhook checks with `executeOnProxy` run, told the
 * method, path and content type (and on output the answer's status and content type); a
 * guardrail without such a check does not apply. A denial is a 446, as on input.
 */
export async function checkProxy(
  guardrails: readonly LoadedGuardrail[],
  event: WebhookEvent,
  facts: Pick<CheckFacts, 'model' | 'metadata'>,
  runs: GuardrailRun[],
  webhooks: WebhookContext | undefined,
): Promise<void> {
  const applying = guardrails.map(proxyGuardrail).filter((guardrail) => guardrail !== null);
  if (applying.length === 0) return;
  const phase = event.eventType === 'beforeRequestHook' ? 'input' : 'output';
  const external = await Promise.all(
    applying.map((guardrail) => webhookVerdicts(guardrail.checks, event, webhooks)),
  );
  const input = { text: '', model: facts.model, metadata: facts.metadata, phase } as const;
  const own = applying.map((guardrail, i) =>
    runOf(phase, guardrail, runGuardrail(guardrail, input, { external: external[i]! })),
  );
  runs.push(...own);
  const denied = own.filter((run) => run.action === 'deny');
  if (denied.length > 0) throw guardrailDenial(denied, own);
}
