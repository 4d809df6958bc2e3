import { MAX_PERIODIC_RESET_DAYS, type RateUnit } from './keys.ts';

/*
 * How the counters of limit policies run, in epoch milliseconds: rate limits in fixed windows
 * aligned to the Unix epoch, usage limits in calendar months, weeks from Monday, N days from a
 * reset anchor, or never reset. Control-plane presents a usage limit's periods by these rules
 * and the policy service counts in them, so the two cannot disagree.
 */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, the first Monday of the Unix epoch: weeks run from Monday 00:00 UTC. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

export const WINDOW_MS: Record<RateUnit, number> = { rpm: MINUTE_MS, rph: HOUR_MS, rpd: DAY_MS };

/** How a policy's counters run: fixed windows, calendar periods, N-day periods, or never reset. */
export type Schedule =
  | { kind: 'window'; unit: RateUnit }
  | { kind: 'monthly' }
  | { kind: 'weekly' }
  | { kind: 'days'; days: number; anchorMs: number }
  | { kind: 'cumulative' };

/** One window or period: [startMs, endMs). A cumulative limit has one period, [0, ∞). */
export interface Period {
  startMs: number;
  endMs: number;
}

/** The UTC midnight at or before the instant. */
export function utcMidnight(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/**
 * The schedule of a usage limit: `periodicReset` monthly or weekly, else every
 * `periodicResetDays` days from the anchor's UTC midnight, else cumulative. Null when the
 * policy names a reset no one knows or more days than allowed.
 */
export function usageSchedule(
  periodicReset: string | null | undefined,
  periodicResetDays: number | null | undefined,
  anchorMs: number,
): Schedule | null {
  if (periodicReset === 'monthly' || periodicReset === 'weekly') return { kind: periodicReset };
  if (periodicReset) return null;
  if (periodicResetDays && periodicResetDays > 0) {
    if (periodicResetDays > MAX_PERIODIC_RESET_DAYS) return null;
    return { kind: 'days', days: periodicResetDays, anchorMs };
  }
  return { kind: 'cumulative' };
}

function aligned(nowMs: number, lengthMs: number, originMs: number): Period {
  const startMs = originMs + Math.floor((nowMs - originMs) / lengthMs) * lengthMs;
  return { startMs, endMs: startMs + lengthMs };
}

/** The window or period the instant falls in. */
export function periodAt(schedule: Schedule, nowMs: number): Period {
  switch (schedule.kind) {
    case 'window':
      return aligned(nowMs, WINDOW_MS[schedule.unit], 0);
    case 'weekly':
      return aligned(nowMs, WEEK_MS, FIRST_MONDAY_MS);
    case 'days':
      return aligned(nowMs, schedule.days * DAY_MS, utcMidnight(schedule.anchorMs));
    case 'monthly': {
      const now = new Date(nowMs);
      const year = now.getUTCFullYear();
      const month = now.getUTCMonth();
      return { startMs: Date.UTC(year, month, 1), endMs: Date.UTC(year, month + 1, 1) };
    }
    case 'cumulative':
      return { startMs: 0, endMs: Infinity };
  }
}
