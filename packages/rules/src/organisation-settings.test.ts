import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BLOCK_INLINE_CONFIG_DEFAULT_ON_FROM, effectiveBlockInlineConfig } from './organisation-settings.ts';

const cutOver = Date.parse('2026-06-19T00:00:00Z');
const before = cutOver - 1;
const after = Date.parse('2026-11-21T08:00:00Z');

describe('effectiveBlockInlineConfig', () => {
  test('the cut-over is the first instant of 2026-06-19, UTC', () => {
    assert.equal(BLOCK_INLINE_CONFIG_DEFAULT_ON_FROM, cutOver);
  });

  test('without a choice, on for organisations created at or after the cut-over', () => {
    for (const organisationCreatedAt of [cutOver, after]) {
      assert.equal(
        effectiveBlockInlineConfig({ explicit: null, organisationCreatedAt, forced: false }),
        true,
      );
      assert.equal(
        effectiveBlockInlineConfig({ explicit: undefined, organisationCreatedAt, forced: false }),
        true,
      );
    }
  });

  test('without a choice, off for organisations created before the cut-over', () => {
    for (const organisationCreatedAt of [before, Date.parse('2024-01-01T00:00:00Z')]) {
      assert.equal(
        effectiveBlockInlineConfig({ explicit: null, organisationCreatedAt, forced: false }),
        false,
      );
    }
  });

  test('without a choice, off when the creation time is unknown', () => {
    assert.equal(
      effectiveBlockInlineConfig({ explicit: null, organisationCreatedAt: null, forced: false }),
      false,
    );
  });

  test('the organisation’s choice wins over the default either way', () => {
    assert.equal(
      effectiveBlockInlineConfig({ explicit: false, organisationCreatedAt: after, forced: false }),
      false,
    );
    assert.equal(
      effectiveBlockInlineConfig({ explicit: true, organisationCreatedAt: before, forced: false }),
      true,
    );
    assert.equal(
      effectiveBlockInlineConfig({ explicit: true, organisationCreatedAt: null, forced: false }),
      true,
    );
  });

  test('the BLOCK_INLINE_CONFIG switch wins over everything', () => {
    for (const explicit of [false, true, null]) {
      for (const organisationCreatedAt of [before, after, null]) {
        assert.equal(effectiveBlockInlineConfig({ explicit, organisationCreatedAt, forced: true }), true);
      }
    }
  });
});
