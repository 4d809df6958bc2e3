import type { RateUnit, Schedule } from './limit-policy.ts';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
export const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, the first Monday of the Unix epoch: weeks run from Monday 00:00 UTC. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

export const WINDOW_MS: Record<RateUnit, number> = { rpm: MINUTE_MS, rph: HOUR_MS, rpd: DAY_MS };

/** One window or period: [startMs, endMs). A cumulative limit has one period, [0, ∞). */
export interface Period {
  startMs: number;
  endMs: number;
}

/** The UTC midnight at or before the instant. */
export function utcMidnight(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
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

/** When the period ends, as the wire carries it: 0 for a limit that never resets. */
export function resetAtMs(period: Period): number {
  return Number.isFinite(period.endMs) ? period.endMs : 0;
}

/** Whole seconds until the period ends (at least 1 while it runs); 0 when it never does. */
export function secondsUntil(period: Period, nowMs: number): number {
  if (!Number.isFinite(period.endMs)) return 0;
  return Math.max(1, Math.ceil((period.endMs - nowMs) / 1000));
}
