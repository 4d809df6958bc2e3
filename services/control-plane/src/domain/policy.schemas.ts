import {
  groupByKeysOf,
  isAnyGroupByKey,
  isGroupByKey,
  LIMIT_TARGETS,
  MAX_PERIODIC_RESET_DAYS,
  PERIODIC_RESETS,
  RATE_LIMIT_TYPES,
  RATE_UNITS,
  USAGE_LIMIT_TYPES,
} from '@switchyard/rules';
import { z } from 'zod';

/*
 * The wire form of rate-limit and usage-limit policy requests (snake_case, as the API spells
 * them): the one definition of what the routes accept and of the domain inputs derived from
 * them (see policy.service.ts). Which condition keys a policy takes depends on its target, so
 * the service checks them, against the stored target on an update.
 */

const policyName = z.string().trim().min(1).max(255);
const policyDescription = z.string().max(500).nullable();
const target = z.enum(LIMIT_TARGETS);
const rateLimitType = z.enum(RATE_LIMIT_TYPES);
const rateLimitUnit = z.enum(RATE_UNITS);
const usageLimitType = z.enum(USAGE_LIMIT_TYPES);
const status = z.enum(['active', 'archived']);

const condition = z.strictObject({
  key: z.string().min(1).max(200),
  value: z.string().trim().min(1).max(255),
  excludes: z.boolean().default(false),
});

/** All must hold; keys are checked against the policy's target by the service. */
const conditions = z.array(condition).min(1).max(50);

const groupBy = z
  .array(
    z.strictObject({
      key: z.string().refine(isAnyGroupByKey, {
        error:
          'expected api_key, workspace_id, organisation_id, user_id, mcp_server, tool_name or metadata.<name>',
      }),
    }),
  )
  .min(1)
  .max(10)
  .superRefine((entries, ctx) => {
    const seen = new Set<string>();
    entries.forEach(({ key }, index) => {
      if (seen.has(key))
        ctx.addIssue({ code: 'custom', path: [index, 'key'], message: `'${key}' is given twice` });
      seen.add(key);
    });
  });

/** Whole units per window: a positive integer. */
const rateValue = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
const creditLimit = z.number().min(0).max(1e15);
const alertThreshold = z.number().min(0).max(1e15).nullable();
const periodicReset = z.enum(PERIODIC_RESETS).nullable();
const periodicResetDays = z.int().min(1).max(MAX_PERIODIC_RESET_DAYS).nullable();
const instant = z.iso.datetime({ offset: true }).transform((v) => new Date(v));

/**
 * A workspace id or slug; null or '' asks for an organisation-wide policy (an organisation
 * admin key's alone). Absent: a workspace key's own workspace, else organisation-wide.
 */
const workspaceReference = z
  .string()
  .max(255)
  .nullable()
  .transform((value) => (value === '' ? null : value));

type Check = {
  type?: string | undefined;
  target?: string | undefined;
  group_by?: ReadonlyArray<{ key: string }> | undefined;
};

/** A policy counts only by keys its target has: tool calls per server or tool, model calls not. */
function groupByOfTarget(body: Check, ctx: z.RefinementCtx): void {
  const target = body.target ?? 'llm';
  if (!(LIMIT_TARGETS as readonly string[]).includes(target)) return;
  const of = target as (typeof LIMIT_TARGETS)[number];
  body.group_by?.forEach(({ key }, index) => {
    if (!isGroupByKey(of, key)) {
      ctx.addIssue({
        code: 'custom',
        path: ['group_by', index, 'key'],
        message: `a policy of target '${of}' takes the group_by keys ${groupByKeysOf(of)}`,
      });
    }
  });
}

/** MCP tool calls are only counted: their policies take type `requests`. */
function requestsOnlyForTools(body: Check, ctx: z.RefinementCtx): void {
  if (body.target === 'mcp_tools' && body.type !== 'requests') {
    ctx.addIssue({
      code: 'custom',
      path: ['type'],
      message: "a policy of target 'mcp_tools' takes type 'requests'",
    });
  }
}

type PeriodCheck = {
  periodic_reset?: string | null | undefined;
  periodic_reset_days?: number | null | undefined;
};

function onePeriod(body: PeriodCheck, ctx: z.RefinementCtx): void {
  if (body.periodic_reset != null && body.periodic_reset_days != null) {
    ctx.addIssue({
      code: 'custom',
      path: ['periodic_reset_days'],
      message: 'periodic_reset and periodic_reset_days are mutually exclusive: give one',
    });
  }
}

const atLeastOne = (names: string) => ({ error: `give at least one of ${names}` });
const someGiven = (body: Record<string, unknown>) => Object.values(body).some((value) => value !== undefined);

export const createRateLimitBody = z
  .strictObject({
    name: policyName.optional(),
    description: policyDescription.optional(),
    conditions,
    group_by: groupBy,
    type: rateLimitType,
    unit: rateLimitUnit,
    value: rateValue,
    target: target.default('llm'),
    workspace_id: workspaceReference.optional(),
  })
  .superRefine((body, ctx) => {
    requestsOnlyForTools(body, ctx);
    groupByOfTarget(body, ctx);
  });

export const updateRateLimitBody = z
  .strictObject({
    name: policyName.optional(),
    description: policyDescription.optional(),
    conditions: conditions.optional(),
    unit: rateLimitUnit.optional(),
    value: rateValue.optional(),
  })
  .refine(someGiven, atLeastOne('name, description, conditions, unit or value'));

export const createUsageLimitBody = z
  .strictObject({
    name: policyName.optional(),
    description: policyDescription.optional(),
    conditions,
    group_by: groupBy,
    type: usageLimitType,
    credit_limit: creditLimit,
    alert_threshold: alertThreshold.optional(),
    periodic_reset: periodicReset.optional(),
    periodic_reset_days: periodicResetDays.optional(),
    next_usage_reset_at: instant.nullable().optional(),
    target: target.default('llm'),
    workspace_id: workspaceReference.optional(),
  })
  .superRefine((body, ctx) => {
    requestsOnlyForTools(body, ctx);
    groupByOfTarget(body, ctx);
    onePeriod(body, ctx);
    if (body.alert_threshold != null && body.alert_threshold >= body.credit_limit) {
      ctx.addIssue({ code: 'custom', path: ['alert_threshold'], message: 'must be less than credit_limit' });
    }
  });

/** Null removes: periodic_reset, periodic_reset_days (cumulative when both are null), alert_threshold, description. */
export const updateUsageLimitBody = z
  .strictObject({
    name: policyName.optional(),
    description: policyDescription.optional(),
    conditions: conditions.optional(),
    credit_limit: creditLimit.optional(),
    alert_threshold: alertThreshold.optional(),
    periodic_reset: periodicReset.optional(),
    periodic_reset_days: periodicResetDays.optional(),
    next_usage_reset_at: instant.nullable().optional(),
    /** A counted entity's value_key (or its id): its usage in the current period starts again from 0. */
    reset_usage_for_value: z.string().min(1).max(1024).optional(),
  })
  .refine(someGiven, atLeastOne('the fields of a usage limit policy'))
  .superRefine(onePeriod);

const search = z.string().max(255).optional();

export const listRateLimitsQuery = z.object({
  workspace_id: z.string().min(1).max(255).optional(),
  target: target.optional(),
  type: rateLimitType.optional(),
  unit: rateLimitUnit.optional(),
  status: status.default('active'),
  search,
});

export const listUsageLimitsQuery = z.object({
  workspace_id: z.string().min(1).max(255).optional(),
  target: target.optional(),
  type: usageLimitType.optional(),
  status: status.default('active'),
  search,
});

export const getRateLimitQuery = z.object({ status: status.default('active') });

export const getUsageLimitQuery = z.object({
  status: status.default('active'),
  include_usage: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

/** An integer given as query text. */
const queryInt = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, 'expected an integer')
    .transform(Number)
    .pipe(z.int().min(min).max(max))
    .default(fallback);

export const listEntitiesQuery = z.object({
  status: z.enum(['active', 'exhausted']).optional(),
  search,
  page_size: queryInt(1, 100, 100),
  current_page: queryInt(0, 1_000_000, 0),
});
