import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  DAY_MS,
  periodAt,
  type Schedule,
  usageSchedule,
  utcMidnight,
  WEEK_MS,
  WINDOW_MS,
} from './periods.ts';

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
const at = (iso: string) => Date.parse(iso);
const period = (start: string, end: string) => ({ startMs: at(start), endMs: at(end) });

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
    // 2026-03-15 is a Sunday, 2026-03-16 a Monday.
    assert.deepEqual(
      periodAt({ kind: 'weekly' }, at('2026-03-15T12:00:00Z')),
      period('2026-03-09T00:00:00Z', '2026-03-16T00:00:00Z'),
    );
    assert.equal(
      periodAt({ kind: 'weekly' }, at('2026-03-16T00:00:00Z')).startMs,
      at('2026-03-16T00:00:00Z'),
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

  test('N-day periods count from the anchor, before it as after it', () => {
    const tenDays: Schedule = { kind: 'days', days: 10, anchorMs: at('2026-05-20T00:00:00Z') };
    assert.deepEqual(
      periodAt(tenDays, at('2026-06-05T03:00:00Z')),
      period('2026-05-30T00:00:00Z', '2026-06-09T00:00:00Z'),
    );
    assert.deepEqual(
      periodAt(tenDays, at('2026-05-15T00:00:00Z')),
      period('2026-05-10T00:00:00Z', '2026-05-20T00:00:00Z'),
    );
  });

  test('a cumulative limit has one period that never ends', () => {
    assert.deepEqual(periodAt({ kind: 'cumulative' }, Date.now()), { startMs: 0, endMs: Infinity });
  });
});

describe('utcMidnight', () => {
  test('is the UTC midnight at or before the instant', () => {
    assert.equal(utcMidnight(at('2026-05-15T23:59:59.999Z')), at('2026-05-15T00:00:00Z'));
    assert.equal(utcMidnight(at('2026-05-15T00:00:00Z')), at('2026-05-15T00:00:00Z'));
    fc.assert(
      fc.property(instant, (now) => {
        const midnight = utcMidnight(now);
        assert.ok(midnight <= now && now - midnight < DAY_MS);
        assert.equal(new Date(midnight).toISOString().slice(10), 'T00:00:00.000Z');
      }),
    );
  });
});

describe('usageSchedule', () => {
  const anchorMs = at('2026-05-20T00:00:00Z');

  test('monthly or weekly, else every N days from the anchor, else cumulative', () => {
    assert.deepEqual(usageSchedule('monthly', null, anchorMs), { kind: 'monthly' });
    assert.deepEqual(usageSchedule('weekly', 0, anchorMs), { kind: 'weekly' });
    assert.deepEqual(usageSchedule(null, 10, anchorMs), { kind: 'days', days: 10, anchorMs });
    assert.deepEqual(usageSchedule('', 365, anchorMs), { kind: 'days', days: 365, anchorMs });
    assert.deepEqual(usageSchedule(null, null, anchorMs), { kind: 'cumulative' });
    assert.deepEqual(usageSchedule('', 0, anchorMs), { kind: 'cumulative' });
  });

  test('an unknown reset or more than 365 days is none', () => {
    assert.equal(usageSchedule('daily', null, anchorMs), null);
    assert.equal(usageSchedule(null, 366, anchorMs), null);
  });
});
