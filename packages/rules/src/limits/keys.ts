/*
 * What a rate-limit or usage-limit policy may be written with: its targets, types and units,
 * and which condition and group-by keys a target takes. Control-plane validates policies by
 * these rules and the policy service enforces them by the same ones.
 */

export const LIMIT_TARGETS = ['llm', 'mcp_tools'] as const;
export type LimitTarget = (typeof LIMIT_TARGETS)[number];

export const RATE_LIMIT_TYPES = ['requests', 'tokens'] as const;
export type RateLimitType = (typeof RATE_LIMIT_TYPES)[number];

export const USAGE_LIMIT_TYPES = ['cost', 'tokens', 'requests'] as const;
export type UsageLimitType = (typeof USAGE_LIMIT_TYPES)[number];

export type LimitType = RateLimitType | UsageLimitType;

/**
 * What a request (or, with fewer facts, an API key) tells about itself: all that conditions
 * and group_by can read.
 */
export interface RequestFacts {
  organisationId: string;
  workspaceId: string;
  apiKeyId: string;
  userId: string;
  provider: string;
  model: string;
  metadata: Readonly<Record<string, string>>;
  /** A tool call (target mcp_tools): the MCP server's slug and the tool called. */
  mcpServer?: string;
  toolName?: string;
}

/** Fixed windows aligned to the Unix epoch: a minute, an hour, a day. */
export const RATE_UNITS = ['rpm', 'rph', 'rpd'] as const;
export type RateUnit = (typeof RATE_UNITS)[number];

export const PERIODIC_RESETS = ['monthly', 'weekly'] as const;
export type PeriodicReset = (typeof PERIODIC_RESETS)[number];

/** `periodic_reset_days` runs from 1 to this. */
export const MAX_PERIODIC_RESET_DAYS = 365;

const METADATA_KEY = /^metadata\.[A-Za-z0-9_.:-]{1,128}$/;

/** Who calls: the condition keys an API key alone decides (every request of a key has the same values). */
export const CALLER_KEYS = ['api_key', 'workspace_id', 'organisation_id', 'user_id'] as const;

/**
 * What group_by counts by, besides `metadata.<name>`: who calls, and for tool calls also the
 * server and the tool called ("per tool, server, key or workspace"); never the model.
 */
const GROUP_BY: Record<LimitTarget, readonly string[]> = {
  llm: CALLER_KEYS,
  mcp_tools: [...CALLER_KEYS, 'mcp_server', 'tool_name'],
};

/** The group_by keys every target takes. */
export const GROUP_BY_KEYS = CALLER_KEYS;

const CONDITION_KEYS: Record<LimitTarget, readonly string[]> = {
  llm: [...CALLER_KEYS, 'model', 'provider'],
  mcp_tools: [...CALLER_KEYS, 'mcp_server', 'tool_name'],
};

export function isMetadataKey(key: string): boolean {
  return METADATA_KEY.test(key);
}

/** Whether `key` may be a condition of a policy of `target`. */
export function isConditionKey(target: LimitTarget, key: string): boolean {
  return CONDITION_KEYS[target].includes(key) || isMetadataKey(key);
}

/** The condition keys of `target`, to name in an error. */
export function conditionKeysOf(target: LimitTarget): string {
  return [...CONDITION_KEYS[target], 'metadata.<name>'].join(', ');
}

/** Whether a policy of `target` may count by `key`. */
export function isGroupByKey(target: LimitTarget, key: string): boolean {
  return GROUP_BY[target].includes(key) || isMetadataKey(key);
}

/** Whether some target's policies may count by `key`. */
export function isAnyGroupByKey(key: string): boolean {
  return LIMIT_TARGETS.some((target) => isGroupByKey(target, key));
}

/** The group_by keys of `target`, to name in an error. */
export function groupByKeysOf(target: LimitTarget): string {
  return [...GROUP_BY[target], 'metadata.<name>'].join(', ');
}
