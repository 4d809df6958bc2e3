import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Schedule } from './limit-policy.ts';
import { DAY_MS, periodAt, resetAtMs, secondsUntil, utcMidnight, WEEK_MS, WINDOW_MS } from './periods.ts';

// 1950 to 2150: the arithmetic must hold before the epoch too.
const instant = fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2150, 0, 1) });
const schedule: fc.Arbitrary<Schedule> = fc.oneof(
  fc.constantFrom('rpm', 'rph', 'rpd').map((unit) => ({ kind: 'window', unit }) as Schedule),
  fc.constant<Schedule>({ kind: 'monthly' }),
  fc.constant<Schedule>({ kind: 'weekly' }),
  fc
    .tuple(fc.integer({ min: 1, max: 365 }), instant)
    .map(([days, anchorMs]) => ({ kind: 'days', days, anchorMs }) as Schedule),
);

describe('periodAt', () => {
  test('every instant falls in its period, and the next period starts where it ends', () => {
    fc.assert(
      fc.property(schedule, instant, (s, now) => {
        const period = periodAt(s, now);
        assert.ok(period.startMs <= now && now < period.endMs);
        assert.equal(periodAt(s, period.endMs).startMs, period.endMs);
        assert.deepEqual(periodAt(s, period.endMs - 1), period);
        assert.deepEqual(periodAt(s, period.startMs), period);
      }),
    );
  });

  test('rate windows are fixed and aligned to the Unix epoch', () => {
    fc.assert(
      fc.property(fc.constantFrom('rpm', 'rph', 'rpd' as const), instant, (unit, now) => {
        const { startMs, endMs } = periodAt({ kind: 'window', unit }, now);
        assert.ok(startMs % WINDOW_MS[unit] === 0);
        assert.equal(endMs - startMs, WINDOW_MS[unit]);
      }),
    );
  });

  test('weeks run from Monday 00:00 UTC', () => {
    fc.assert(
      fc.property(instant, (now) => {
        const { startMs, endMs } = periodAt({ kind: 'weekly' }, now);
        const start = new Date(startMs);
        assert.equal(start.getUTCDay(), 1);
        assert.equal(startMs, utcMidnight(startMs));
        assert.equal(endMs - startMs, WEEK_MS);
      }),
    );
  });

  test('months run from the 1st 00:00 UTC to the next 1st, whatever their length', () => {
    fc.assert(
      fc.property(instant, (now) => {
        const { startMs, endMs } = periodAt({ kind: 'monthly' }, now);
        const start = new Date(startMs);
        const end = new Date(endMs);
        assert.equal(start.getUTCDate(), 1);
        assert.equal(startMs, utcMidnight(startMs));
        assert.equal(end.getUTCDate(), 1);
        assert.equal((end.getUTCMonth() - start.getUTCMonth() + 12) % 12, 1);
        assert.ok([28, 29, 30, 31].includes((endMs - startMs) / DAY_MS));
      }),
    );
  });

  test('February has 29 days in leap years only (2000 and 2028 yes, 1900, 2100 and 2026 no)', () => {
    const february = (year: number) => {
      const { startMs, endMs } = periodAt({ kind: 'monthly' }, Date.UTC(year, 1, 15));
      return (endMs - startMs) / DAY_MS;
    };
    assert.deepEqual([2000, 2028, 1900, 2100, 2026].map(february), [29, 29, 28, 28, 28]);
    assert.deepEqual(periodAt({ kind: 'monthly' }, Date.UTC(2028, 1, 29, 23, 59, 59, 999)), {
      startMs: Date.UTC(2028, 1, 1),
      endMs: Date.UTC(2028, 2, 1),
    });
    assert.deepEqual(periodAt({ kind: 'monthly' }, Date.UTC(2026, 11, 31, 23, 59)), {
      startMs: Date.UTC(2026, 11, 1),
      endMs: Date.UTC(2027, 0, 1),
    });
  });

  test('N-day periods are N days long and start at the anchor’s UTC midnight plus a multiple of N days', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 365 }), instant, instant, (days, anchorMs, now) => {
        const { startMs, endMs } = periodAt({ kind: 'days', days, anchorMs }, now);
        assert.equal(endMs - startMs, days * DAY_MS);
        assert.ok((startMs - utcMidnight(anchorMs)) % (days * DAY_MS) === 0);
      }),
    );
  });

  test('a cumulative limit has one period that never ends: reset 0, retry-after 0', () => {
    const period = periodAt({ kind: 'cumulative' }, Date.now());
    assert.equal(resetAtMs(period), 0);
    assert.equal(secondsUntil(period, Date.now()), 0);
  });

  test('retry-after rounds up to whole seconds and is at least 1 while the period runs', () => {
    fc.assert(
      fc.property(instant, (now) => {
        const period = periodAt({ kind: 'window', unit: 'rpm' }, now);
        const seconds = secondsUntil(period, now);
        assert.ok(seconds >= 1 && seconds <= 60);
        assert.ok(now + seconds * 1000 >= period.endMs);
      }),
    );
  });
});
