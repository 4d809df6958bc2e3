import { periodAt, usageSchedule, utcMidnight as utcMidnightMs } from '@switchyard/rules';
import type { UsageLimitPolicy } from '../store/policy.entities.ts';

/*
 * A usage limit's periods as control-plane presents them, in Dates. The keys, types and periods
 * themselves are the shared rules of @switchyard/rules, by which the policy service counts too.
 */

/** The UTC midnight at or before `at`. */
export function utcMidnight(at: Date): Date {
  return new Date(utcMidnightMs(at.getTime()));
}

type Periods = Pick<UsageLimitPolicy, 'periodicReset' | 'periodicResetDays' | 'resetAnchorAt'>;

/**
 * The current period of a usage limit at `now`, as [start, end): monthly from the 1st 00:00
 * UTC, weekly from Monday 00:00 UTC, every N days from the reset anchor; null when cumulative.
 */
export function currentPeriod(policy: Periods, now: Date): { start: Date; end: Date } | null {
  const schedule = usageSchedule(
    policy.periodicReset,
    policy.periodicResetDays,
    policy.resetAnchorAt.getTime(),
  );
  if (!schedule || schedule.kind === 'cumulative') return null;
  const { startMs, endMs } = periodAt(schedule, now.getTime());
  return { start: new Date(startMs), end: new Date(endMs) };
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
