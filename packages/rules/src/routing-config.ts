import { z } from 'zod';
import { assertStorableInput, BadRequest, httpUrl, parseInput } from '@switchyard/core';

// A routing config: saved in control-plane (`/v2/configs`) or sent inline in the
// `<prefix>config` header. One schema serves both, so a config that saves is a config the
// gateway can run.

/** Limits that keep a config cheap to evaluate on the hot path. */
export const ROUTING_LIMITS = {
  maxDepth: 5,
  maxTargets: 50,
  maxConditions: 100,
  maxRetryAttempts: 10,
  maxRequestTimeoutMs: 3_600_000,
  maxConfigBytes: 65_536,
} as const;

export const STRATEGY_MODES = ['single', 'fallback', 'loadbalance', 'conditional'] as const;
export type StrategyMode = (typeof STRATEGY_MODES)[number];

/** Statuses retried when `retry.on_status_codes` is not given. */
export const DEFAULT_RETRY_STATUS_CODES: readonly number[] = [429, 500, 502, 503, 504];

const statusCodes = z.array(z.number().int().min(100).max(599)).min(1).max(100);
const slugText = z.string().min(1).max(256);

export const retrySchema = z.strictObject({
  attempts: z.number().int().min(0).max(ROUTING_LIMITS.maxRetryAttempts),
  on_status_codes: statusCodes.optional(),
  /** Wait as long as the provider's `retry-after` asks (bounded by the request timeout). */
  use_retry_after_headers: z.boolean().optional(),
});
export type RetrySettings = z.output<typeof retrySchema>;

/** Comparison operators a condition may use on one field. */
const scalar = z.union([z.string().max(1024), z.number(), z.boolean(), z.null()]);
const operatorSchema = z
  .strictObject({
    $eq: scalar.optional(),
    $ne: scalar.optional(),
    $in: z.array(scalar).max(1000).optional(),
    $nin: z.array(scalar).max(1000).optional(),
    $gt: z.number().optional(),
    $gte: z.number().optional(),
    $lt: z.number().optional(),
    $lte: z.number().optional(),
    $exists: z.boolean().optional(),
  })
  .refine(
    (o) => Object.keys(o).length > 0,
    'an operator ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists) is required',
  );
export type ConditionOperators = z.output<typeof operatorSchema>;

/**
 * A query on the request: keys are `metadata.<key>` or `params.<path>` (the request body),
 * values an operator object or a scalar (shorthand for `$eq`); `$and` / `$or` combine queries.
 */
export type ConditionQuery = {
  $and?: ConditionQuery[];
  $or?: ConditionQuery[];
} & { [field: string]: ConditionOperators | string | number | boolean | null | ConditionQuery[] | undefined };

const FIELD = /^(metadata|params)\.[\w.-]{1,256}$/;

const querySchema: z.ZodType<ConditionQuery> = z.lazy(
  () =>
    z.record(z.string(), z.unknown()).superRefine((query, ctx) => {
      const keys = Object.keys(query);
      if (keys.length === 0) ctx.addIssue({ code: 'custom', message: 'a query needs at least one field' });
      for (const key of keys) {
        const value = query[key];
        if (key === '$and' || key === '$or') {
          const parsed = z.array(querySchema).min(1).max(ROUTING_LIMITS.maxConditions).safeParse(value);
          if (!parsed.success) {
            for (const issue of parsed.error.issues)
              ctx.addIssue({ ...issue, path: [key, ...issue.path] } as never);
          }
          continue;
        }
        if (!FIELD.test(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: 'a condition field is "metadata.<key>" or "params.<field>"',
          });
          continue;
        }
        const parsed = z.union([scalar, operatorSchema]).safeParse(value);
        if (!parsed.success) {
          ctx.addIssue({ code: 'custom', path: [key], message: 'expected a value or an operator object' });
        }
      }
    }) as z.ZodType<ConditionQuery>,
);

export const conditionSchema = z.strictObject({
  query: querySchema,
  /** The `name` of the target this condition routes to. */
  then: slugText,
});

export const strategySchema = z.strictObject({
  mode: z.enum(STRATEGY_MODES),
  /** Fallback: the statuses that move on to the next target (default: any failure). */
  on_status_codes: statusCodes.optional(),
  conditions: z.array(conditionSchema).min(1).max(ROUTING_LIMITS.maxConditions).optional(),
  /** Conditional: the target `name` used when no condition matches. */
  default: slugText.optional(),
});
export type StrategySettings = z.output<typeof strategySchema>;

/** A node of the routing tree: a leaf names where to send the request, a branch has targets. */
export interface RoutingTarget {
  name?: string | undefined;
  /** `@integration-slug` (a saved integration) or a provider kind such as `openai`. */
  provider?: string | undefined;
  /** A saved integration's slug, without the `@`. */
  virtual_key?: string | undefined;
  /** The provider key for a provider chosen by kind (inline configs only). */
  api_key?: string | undefined;
  custom_host?: string | undefined;
  weight?: number | undefined;
  override_params?: Record<string, unknown> | undefined;
  retry?: RetrySettings | undefined;
  /** Milliseconds until the provider must have answered; otherwise 408. */
  request_timeout?: number | undefined;
  strategy?: StrategySettings | undefined;
  targets?: RoutingTarget[] | undefined;
}

const targetFields = {
  name: slugText.optional(),
  provider: z.string().min(1).max(256).optional(),
  virtual_key: z
    .string()
    .regex(/^[a-zA-Z0-9_-]{1,63}$/, 'expected an integration slug')
    .optional(),
  api_key: z.string().min(1).max(4096).optional(),
  custom_host: httpUrl().max(2048).optional(),
  weight: z.number().min(0).max(1_000_000).optional(),
  override_params: z.record(z.string(), z.unknown()).optional(),
  retry: retrySchema.optional(),
  request_timeout: z.number().int().min(1).max(ROUTING_LIMITS.maxRequestTimeoutMs).optional(),
  strategy: strategySchema.optional(),
};

const targetSchema: z.ZodType<RoutingTarget> = z.lazy(() =>
  z.strictObject({
    ...targetFields,
    targets: z.array(targetSchema).min(1).max(ROUTING_LIMITS.maxTargets).optional(),
  }),
);

export const routingConfigSchema = z.strictObject({
  ...targetFields,
  targets: z.array(targetSchema).min(1).max(ROUTING_LIMITS.maxTargets).optional(),
  cache: z
    .strictObject({
      mode: z.enum(['simple', 'disabled']),
      /** Seconds. */
      max_age: z
        .number()
        .int()
        .min(1)
        .max(90 * 24 * 3600)
        .optional(),
    })
    .optional(),
  input_guardrails: z.array(slugText).max(50).optional(),
  output_guardrails: z.array(slugText).max(50).optional(),
  /** GET /v1/models answers from the integrated catalog even when a provider is chosen. */
  fetch_integrated_models: z.boolean().optional(),
});
export type RoutingConfig = z.output<typeof routingConfigSchema>;

/** The guardrails a config names, each with where it names it (`input_guardrails[0]`). */
export function namedGuardrails(config: RoutingConfig): Array<{ slug: string; field: string }> {
  const named: Array<{ slug: string; field: string }> = [];
  for (const list of ['input_guardrails', 'output_guardrails'] as const) {
    config[list]?.forEach((slug, i) => named.push({ slug, field: `${list}[${i}]` }));
  }
  return named;
}

/** Where a node sits in the tree, as response headers and errors name it: `config.targets[1]`. */
export function nodePath(parent: string, index: number): string {
  return `${parent}.targets[${index}]`;
}

/**
 * Rules the schema alone cannot say: strategies need targets and targets need a strategy;
 * conditional names must exist; a node either routes (provider) or branches (targets);
 * provider keys and custom hosts go only with a provider chosen by kind; depth is bounded.
 */
function checkNode(node: RoutingTarget, path: string, depth: number): void {
  const fail = (message: string, field?: string) => {
    throw new BadRequest(message, { param: field ? `${path}.${field}` : path, code: 'invalid_config' });
  };
  if (depth > ROUTING_LIMITS.maxDepth)
    fail(`Targets may nest at most ${ROUTING_LIMITS.maxDepth} levels deep.`);
  const byIntegration = node.virtual_key !== undefined || node.provider?.startsWith('@') === true;
  if (node.virtual_key !== undefined && node.provider !== undefined && !node.provider.startsWith('@')) {
    fail('Give either a provider kind or an integration (virtual_key), not both.', 'virtual_key');
  }
  if (node.provider?.startsWith('@') && !/^@[a-zA-Z0-9_-]{1,63}$/.test(node.provider)) {
    fail('An integration is named "@<integration-slug>".', 'provider');
  }
  if (byIntegration && node.api_key !== undefined) {
    fail('A saved integration carries its own key; api_key goes only with a provider kind.', 'api_key');
  }
  if (byIntegration && node.custom_host !== undefined) {
    fail('A custom host goes only with a provider kind, not with an integration.', 'custom_host');
  }
  const routes = node.provider !== undefined || node.virtual_key !== undefined;
  if (node.targets) {
    if (!node.strategy) fail('A config with targets needs a strategy.', 'strategy');
    if (routes) fail('A node either names a provider or has targets, not both.', 'targets');
    const names = new Set<string>();
    node.targets.forEach((target, i) => {
      if (target.name !== undefined) {
        if (names.has(target.name)) fail(`Target name '${target.name}' is used twice.`, `targets[${i}].name`);
        names.add(target.name);
      }
      checkNode(target, nodePath(path, i), depth + 1);
    });
    const strategy = node.strategy!;
    if (strategy.mode === 'loadbalance' && !node.targets.some((t) => (t.weight ?? 1) > 0)) {
      fail('A load-balanced config needs a target with a weight above 0.', 'targets');
    }
    if (strategy.mode === 'conditional') {
      if (!strategy.conditions) fail('A conditional strategy needs conditions.', 'strategy.conditions');
      strategy.conditions!.forEach((condition, i) => {
        if (!names.has(condition.then)) {
          fail(`No target is named '${condition.then}'.`, `strategy.conditions[${i}].then`);
        }
      });
      if (strategy.default !== undefined && !names.has(strategy.default)) {
        fail(`No target is named '${strategy.default}'.`, 'strategy.default');
      }
    } else {
      if (strategy.conditions)
        fail('Conditions apply only to the conditional strategy.', 'strategy.conditions');
      if (strategy.default !== undefined)
        fail('A default applies only to the conditional strategy.', 'strategy.default');
    }
    if (strategy.on_status_codes && strategy.mode !== 'fallback') {
      fail('on_status_codes applies only to the fallback strategy.', 'strategy.on_status_codes');
    }
  } else if (node.strategy) {
    fail('A strategy needs targets.', 'targets');
  }
}

/**
 * Validates a routing config (already JSON-decoded). Problems are 400s whose `param` names
 * the field, under `root` (e.g. `x-vendor-config.targets[1].weight` or `config.retry`).
 */
export function parseRoutingConfig(input: unknown, root = 'config'): RoutingConfig {
  // Bounds the recursion of every check that follows: a deep document is a 400, not a stack overflow.
  assertStorableInput(input, 'config', root);
  const config = parseInput(routingConfigSchema, input, 'config', root);
  checkNode(config, root, 0);
  return config;
}

/** Every integration slug a config routes to, e.g. for checks on save or catalog filters. */
export function integrationSlugs(node: RoutingTarget): string[] {
  const own = node.virtual_key ?? (node.provider?.startsWith('@') ? node.provider.slice(1) : undefined);
  return [...(own ? [own] : []), ...(node.targets ?? []).flatMap(integrationSlugs)];
}

/** Provider kinds a config names directly (not through an integration). */
export function providerKinds(node: RoutingTarget): string[] {
  const own = node.provider !== undefined && !node.provider.startsWith('@') ? [node.provider] : [];
  return [...own, ...(node.targets ?? []).flatMap(providerKinds)];
}

/** True when a config itself chooses a provider (a leaf or any target names one). */
export function configSelectsProvider(node: RoutingTarget): boolean {
  return node.provider !== undefined || node.virtual_key !== undefined || (node.targets?.length ?? 0) > 0;
}
