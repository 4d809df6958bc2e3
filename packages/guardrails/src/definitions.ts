import { parseInput } from '@switchyard/core';
import { z } from 'zod';
import { PARAMETER_SCHEMAS, webhookParameters } from './parameters.ts';

/**
 * What a guardrail is made of, as the management API takes it and the gateway runs it: a
 * list of checks and the actions taken when one fails. Shapes follow the public reference
 * description of guardrails (`checks[].id`, `parameters`, `actions.deny`, …), with what this
 * gateway adds: `redact`, and a time budget and failure mode per check.
 */

/** Every check this gateway runs. */
export const GUARDRAIL_CHECK_IDS = [
  'default.regexMatch',
  'default.contains',
  'default.wordCount',
  'default.sentenceCount',
  'default.characterCount',
  'default.validJson',
  'default.jsonSchema',
  'default.jsonKeys',
  'default.modelWhitelist',
  'default.requiredMetadataKeys',
  'default.pii',
  'default.promptInjection',
  'default.webhook',
] as const;
export type GuardrailCheckId = (typeof GUARDRAIL_CHECK_IDS)[number];

/** How long a check may take by default (ms), and at most. */
export const DEFAULT_CHECK_TIMEOUT_MS = 100;
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 3_000;
export const MAX_CHECK_TIMEOUT_MS = 30_000;

/** A check that errors, or a webhook that does not answer in time: `closed` counts it as failed, `open` as passed (recorded either way). */
export type CheckFailureMode = 'open' | 'closed';

export interface GuardrailCheck {
  id: GuardrailCheckId;
  /** A name for this check instance, shown in verdicts. */
  name?: string | undefined;
  is_enabled: boolean;
  parameters: Record<string, unknown>;
  timeout_ms: number;
  failure_mode: CheckFailureMode;
}

export interface GuardrailActions {
  /** A failed check refuses the request (446); false: it proceeds and the verdicts are recorded (warn). */
  deny: boolean;
  /** Run after the answer, off the request's path (verdicts recorded only). */
  async: boolean;
  /** Replace what checks matched (PII, regex, words) instead of refusing, where a check can say what matched. */
  redact: boolean;
  on_success?: { feedback: { value: number; weight: number; metadata: string } } | undefined;
  on_fail?: { feedback: { value: number; weight: number; metadata: string } } | undefined;
}

const checkSchema = z.strictObject({
  id: z.enum(GUARDRAIL_CHECK_IDS),
  name: z.string().min(1).max(200).optional(),
  is_enabled: z.boolean().default(true),
  parameters: z.record(z.string(), z.unknown()).default({}),
  timeout_ms: z.number().int().min(1).max(MAX_CHECK_TIMEOUT_MS).optional(),
  failure_mode: z.enum(['open', 'closed']).optional(),
});

const feedbackSchema = z.strictObject({
  feedback: z.strictObject({
    value: z.number().min(-10).max(10),
    weight: z.number().min(0).max(1),
    metadata: z.string().max(10_000).default(''),
  }),
});

const actionsSchema = z.strictObject({
  deny: z.boolean().default(false),
  async: z.boolean().default(false),
  redact: z.boolean().default(false),
  on_success: feedbackSchema.optional(),
  on_fail: feedbackSchema.optional(),
});

/** The most checks one guardrail holds. */
export const MAX_CHECKS = 50;

export interface ParseChecksOptions {
  /** The gateway's header prefix (HEADER_PREFIX), refused in webhook headers as `x-vendor-` is. */
  headerPrefix?: string;
}

/** The parameter schema of a check id (the webhook's refuses the gateway's header prefix). */
export function parameterSchema(id: GuardrailCheckId, options: ParseChecksOptions = {}) {
  if (id === 'default.webhook' && options.headerPrefix !== undefined)
    return webhookParameters(options.headerPrefix);
  return PARAMETER_SCHEMAS[id];
}

/**
 * Validates a guardrail's `checks`: every check known, its parameters valid for its kind
 * (strict: an unknown parameter is refused; defaults filled in; regexes and JSON schemas must
 * compile). Throws a 400 naming the offending parameter (e.g. `checks[1].parameters.rule`).
 */
export function parseGuardrailChecks(
  value: unknown,
  param = 'checks',
  options: ParseChecksOptions = {},
): GuardrailCheck[] {
  const checks = parseInput(z.array(checkSchema).min(1).max(MAX_CHECKS), value, 'body', param);
  return checks.map((check, i) => {
    const parameters = parseInput(
      parameterSchema(check.id, options),
      check.parameters,
      'body',
      `${param}[${i}].parameters`,
    ) as Record<string, unknown>;
    const failOnError = parameters.failOnError;
    return {
      ...check,
      parameters,
      timeout_ms:
        check.timeout_ms ??
        (check.id === 'default.webhook' ? DEFAULT_WEBHOOK_TIMEOUT_MS : DEFAULT_CHECK_TIMEOUT_MS),
      failure_mode:
        check.failure_mode ?? (typeof failOnError === 'boolean' && !failOnError ? 'open' : 'closed'),
    };
  });
}

/** Validates a guardrail's `actions`; absent fields take their defaults. Throws a 400 naming the parameter. */
export function parseGuardrailActions(value: unknown, param = 'actions'): GuardrailActions {
  return parseInput(actionsSchema, value ?? {}, 'body', param);
}
