import type { Period } from '@switchyard/rules';

/*
 * Windows and periods are the shared rules' (`periodAt` in @switchyard/rules); here is only how
 * the policy service tells them on the wire.
 */

/** When the period ends, as the wire carries it: 0 for a limit that never resets. */
export function resetAtMs(period: Period): number {
  return Number.isFinite(period.endMs) ? period.endMs : 0;
}

/** Whole seconds until the period ends (at least 1 while it runs); 0 when it never does. */
export function secondsUntil(period: Period, nowMs: number): number {
  if (!Number.isFinite(period.endMs)) return 0;
  return Math.max(1, Math.ceil((period.endMs - nowMs) / 1000));
}
