import type {
  PeriodicReset,
  PolicyTarget,
  RateLimitType,
  UsageLimitType,
  UsageLimitPolicy,
} from '../store/policy.entities.ts';

/*
 * The rules of rate-limit and usage-limit policies that need no storage: which condition and
 * group-by keys a target takes, which types a kind takes, and how usage periods run. The
 * policy service counts by the same periods (see the design in policy.proto).
 */

const METADATA_KEY = /^metadata\.[A-Za-z0-9_.:-]{1,128}$/;

const CONDITION_KEYS: Record<PolicyTarget, readonly string[]> = {
  llm: ['api_key', 'workspace_id', 'organisation_id', 'user_id', 'model', 'provider'],
  mcp_tools: ['api_key', 'workspace_id', 'organisation_id', 'user_id', 'mcp_server', 'tool_name'],
};

export const GROUP_BY_KEYS = ['api_key', 'workspace_id', 'organisation_id', 'user_id'] as const;

export function isMetadataKey(key: string): boolean {
  return METADATA_KEY.test(key);
}

/** Whether `key` may be a condition of a policy of `target`. */
export function isConditionKey(target: PolicyTarget, key: string): boolean {
  return CONDITION_KEYS[target].includes(key) || isMetadataKey(key);
}

export function conditionKeysOf(target: PolicyTarget): string {
  return [...CONDITION_KEYS[target], 'metadata.<name>'].join(', ');
}

export function isGroupByKey(key: string): boolean {
  return (GROUP_BY_KEYS as readonly string[]).includes(key) || isMetadataKey(key);
}

/** MCP tool calls carry neither tokens nor cost: they are only counted. */
export function typesFor<T extends RateLimitType | UsageLimitType>(
  target: PolicyTarget,
  types: readonly T[],
): readonly T[] {
  return target === 'mcp_tools' ? types.filter((type) => type === 'requests') : types;
}

const DAY_MS = 86_400_000;

/** The UTC midnight at or before `at`. */
export function utcMidnight(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

type Periods = Pick<UsageLimitPolicy, 'periodicReset' | 'periodicResetDays' | 'resetAnchorAt'>;

/**
 * The current period of a usage limit at `now`, as [start, end): monthly from the 1st 00:00
 * UTC, weekly from Monday 00:00 UTC, every N days from the reset anchor; null when cumulative.
 */
export function currentPeriod(policy: Periods, now: Date): { start: Date; end: Date } | null {
  if (policy.periodicReset) return calendarPeriod(policy.periodicReset, now);
  if (policy.periodicResetDays) {
    const length = policy.periodicResetDays * DAY_MS;
    const anchor = policy.resetAnchorAt.getTime();
    const start = anchor + Math.floor((now.getTime() - anchor) / length) * length;
    return { start: new Date(start), end: new Date(start + length) };
  }
  return null;
}

function calendarPeriod(reset: PeriodicReset, now: Date): { start: Date; end: Date } {
  if (reset === 'monthly') {
    const year = now.getUTCFullYear();
    const month = now.getUTCMonth();
    return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
  }
  const today = utcMidnight(now).getTime();
  // getUTCDay: 0 is Sunday; weeks begin on Monday.
  const start = today - ((now.getUTCDay() + 6) % 7) * DAY_MS;
  return { start: new Date(start), end: new Date(start + 7 * DAY_MS) };
}

/**
 * When usage was last reset: the start of the current period if the policy existed then, or
 * the last reset by hand if later; null if never.
 */
export function lastResetAt(
  policy: Periods & Pick<UsageLimitPolicy, 'createdAt' | 'lastResetAt'>,
  now: Date,
) {
  const period = currentPeriod(policy, now);
  const periodStart = period && period.start > policy.createdAt ? period.start : null;
  if (!periodStart) return policy.lastResetAt;
  if (!policy.lastResetAt) return periodStart;
  return policy.lastResetAt > periodStart ? policy.lastResetAt : periodStart;
}
