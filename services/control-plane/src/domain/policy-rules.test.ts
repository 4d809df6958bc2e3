import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { currentPeriod, lastResetAt, utcMidnight } from './policy-rules.ts';

// The periods themselves are tested with the shared rules (packages/rules/src/limits); here,
// how control-plane presents them.
const at = (iso: string) => new Date(iso);
const none = { periodicReset: null, periodicResetDays: null, resetAnchorAt: at('2026-01-01T00:00:00Z') };

describe('usage periods', () => {
  test('monthly periods run from the 1st 00:00 UTC', () => {
    assert.deepEqual(currentPeriod({ ...none, periodicReset: 'monthly' }, at('2026-12-31T23:59:59Z')), {
      start: at('2026-12-01T00:00:00Z'),
      end: at('2027-01-01T00:00:00Z'),
    });
  });

  test('weekly periods run from Monday 00:00 UTC', () => {
    // 2026-03-15 is a Sunday, 2026-03-16 a Monday.
    assert.deepEqual(currentPeriod({ ...none, periodicReset: 'weekly' }, at('2026-03-15T12:00:00Z')), {
      start: at('2026-03-09T00:00:00Z'),
      end: at('2026-03-16T00:00:00Z'),
    });
    assert.equal(
      currentPeriod({ ...none, periodicReset: 'weekly' }, at('2026-03-16T00:00:00Z'))!.start.toISOString(),
      '2026-03-16T00:00:00.000Z',
    );
  });

  test('periods of N days count from the anchor, before it as after it', () => {
    const policy = { ...none, periodicResetDays: 10, resetAnchorAt: at('2026-05-20T00:00:00Z') };
    assert.deepEqual(currentPeriod(policy, at('2026-06-05T03:00:00Z')), {
      start: at('2026-05-30T00:00:00Z'),
      end: at('2026-06-09T00:00:00Z'),
    });
    assert.deepEqual(currentPeriod(policy, at('2026-05-15T00:00:00Z')), {
      start: at('2026-05-10T00:00:00Z'),
      end: at('2026-05-20T00:00:00Z'),
    });
  });

  test('a cumulative limit has no period', () => {
    assert.equal(currentPeriod(none, at('2026-05-15T00:00:00Z')), null);
  });

  test('the anchor is normalised down to UTC midnight', () => {
    assert.equal(utcMidnight(at('2026-05-15T23:59:59.999Z')).toISOString(), '2026-05-15T00:00:00.000Z');
  });

  test('last reset: the period start once the policy lived through one, or a later reset by hand', () => {
    const monthly = { ...none, periodicReset: 'monthly' as const };
    const now = at('2026-07-10T00:00:00Z');
    const createdInPeriod = { ...monthly, createdAt: at('2026-07-02T00:00:00Z'), lastResetAt: null };
    assert.equal(lastResetAt(createdInPeriod, now), null);
    const older = {
      ...monthly,
      createdAt: at('2026-05-02T00:00:00Z'),
      lastResetAt: at('2026-06-20T00:00:00Z'),
    };
    assert.deepEqual(lastResetAt(older, now), at('2026-07-01T00:00:00Z'));
    assert.deepEqual(
      lastResetAt({ ...older, lastResetAt: at('2026-07-05T00:00:00Z') }, now),
      at('2026-07-05T00:00:00Z'),
    );
    assert.deepEqual(lastResetAt({ ...none, createdAt: older.createdAt, lastResetAt: null }, now), null);
  });
});
