import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextRotationAfter, rotationSchedule } from './api-keys.ts';

const now = new Date('2026-05-01T12:00:00.000Z');

test('a new policy with a period is first due one period from now', () => {
  assert.deepEqual(rotationSchedule({ periodDays: 30, nextRotationAt: null }, now), {
    rotationPeriodDays: 30,
    nextRotationAt: new Date('2026-05-31T12:00:00.000Z'),
  });
});

test('a new policy keeps its own next_rotation_at, with or without a period', () => {
  const next = new Date('2026-05-03T00:00:00.000Z');
  assert.deepEqual(rotationSchedule({ periodDays: 7, nextRotationAt: next }, now), {
    rotationPeriodDays: 7,
    nextRotationAt: next,
  });
  assert.deepEqual(rotationSchedule({ periodDays: null, nextRotationAt: next }, now), {
    rotationPeriodDays: null,
    nextRotationAt: next,
  });
});

test('after a rotation the key is due one period later; a one-off date is used up', () => {
  assert.deepEqual(nextRotationAfter({ rotationPeriodDays: 7 }, now), new Date('2026-05-08T12:00:00.000Z'));
  assert.equal(nextRotationAfter({ rotationPeriodDays: null }, now), null);
});
