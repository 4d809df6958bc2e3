import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { periodAt } from '@switchyard/rules';
import { resetAtMs, secondsUntil } from './periods.ts';

// 1950 to 2150: the arithmetic must hold before the epoch too.
const instant = fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2150, 0, 1) });

describe('periods on the wire', () => {
  test('a cumulative limit has one period that never ends: reset 0, retry-after 0', () => {
    const period = periodAt({ kind: 'cumulative' }, Date.now());
    assert.equal(resetAtMs(period), 0);
    assert.equal(secondsUntil(period, Date.now()), 0);
  });

  test('a period that ends resets at its end', () => {
    fc.assert(
      fc.property(instant, (now) => {
        const period = periodAt({ kind: 'monthly' }, now);
        assert.equal(resetAtMs(period), period.endMs);
      }),
    );
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
