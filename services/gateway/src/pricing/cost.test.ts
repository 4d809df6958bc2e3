import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { costOf } from './cost.ts';
import { priceOf } from './prices.ts';

const tokens = (promptTokens: number, completionTokens: number, cachedTokens = 0, reasoningTokens = 0) => ({
  promptTokens,
  completionTokens,
  cachedTokens,
  reasoningTokens,
});

const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} != ${expected}`);

describe('model prices', () => {
  test('a dated model prices as its family, by the longest matching prefix', () => {
    assert.deepEqual(priceOf('openai', 'gpt-4o-2024-08-06'), priceOf('openai', 'gpt-4o'));
    assert.deepEqual(priceOf('openai', 'gpt-4o-mini-2024-07-18'), priceOf('openai', 'gpt-4o-mini'));
    assert.notDeepEqual(priceOf('openai', 'gpt-4o-mini'), priceOf('openai', 'gpt-4o'));
  });

  test('a name that merely starts like a listed model does not match it', () => {
    assert.equal(priceOf('openai', 'gpt-4omega'), undefined);
  });

  test('Bedrock model ids price as the Anthropic model they run, with or without a region prefix', () => {
    assert.deepEqual(
      priceOf('bedrock', 'anthropic.claude-3-5-sonnet-20241022-v2:0'),
      priceOf('anthropic', 'claude-3-5-sonnet'),
    );
    assert.deepEqual(
      priceOf('bedrock', 'us.anthropic.claude-3-5-sonnet-20241022-v2:0'),
      priceOf('anthropic', 'claude-3-5-sonnet'),
    );
  });
});

describe('request cost', () => {
  test('is input and output tokens at their prices per million', () => {
    close(costOf('openai', 'gpt-4o', tokens(1_000_000, 1_000_000)), 2.5 + 10);
  });

  test('prices cached prompt tokens at the cached-input price', () => {
    close(costOf('openai', 'gpt-4o', tokens(1_000_000, 0, 400_000)), 0.6 * 2.5 + 0.4 * 1.25);
  });

  test('reasoning tokens are part of the completion and priced as output', () => {
    close(costOf('openai', 'o3-mini', tokens(0, 1_000_000, 0, 800_000)), 4.4);
  });

  test('an unknown model costs nothing rather than a guess', () => {
    assert.equal(costOf('openai', 'my-finetune', tokens(1000, 1000)), 0);
    assert.equal(costOf('groq', 'llama-3', tokens(1000, 1000)), 0);
  });

  test('the default multiplier scales every token type', () => {
    close(costOf('openai', 'gpt-4o', tokens(1_000_000, 1_000_000), { default: 0.8 }), (2.5 + 10) * 0.8);
  });

  test('a specific multiplier wins over the default for its token type only', () => {
    close(
      costOf('openai', 'gpt-4o', tokens(1_000_000, 1_000_000), { default: 0.5, responseToken: 2 }),
      2.5 * 0.5 + 10 * 2,
    );
  });

  test('cache writes are priced at the cache-write price, apart from the other prompt tokens', () => {
    // claude-3-5-sonnet: $3 input, $0.30 cached input, $3.75 cache write, $15 output per million.
    close(
      costOf('anthropic', 'claude-3-5-sonnet', {
        ...tokens(1_000_000, 0, 200_000),
        cacheWriteTokens: 300_000,
      }),
      0.5 * 3 + 0.2 * 0.3 + 0.3 * 3.75,
    );
  });

  /** One million tokens of each kind: what the kind costs at list price. */
  const everyKind = { ...tokens(4_000_000, 2_000_000, 1_000_000, 1_000_000), cacheWriteTokens: 1_000_000 };
  const listed = {
    requestToken: 2 * 3,
    cacheReadInputToken: 0.3,
    cacheWriteInputToken: 3.75,
    responseToken: 15,
    reasoningToken: 15,
  } as const;
  const listTotal = Object.values(listed).reduce((a, b) => a + b, 0);

  test('each multiplier applies to its own token kind and to no other', () => {
    for (const [kind, cost] of Object.entries(listed)) {
      close(costOf('anthropic', 'claude-3-5-sonnet', everyKind, { [kind]: 3 }), listTotal - cost + cost * 3);
    }
  });

  test('the kinds left unset inherit default, reasoning tokens included', () => {
    for (const [kind, cost] of Object.entries(listed)) {
      close(
        costOf('anthropic', 'claude-3-5-sonnet', everyKind, { default: 0.5, [kind]: 2 }),
        (listTotal - cost) * 0.5 + cost * 2,
      );
    }
  });

  test('a multiplier of 0 makes that token type free', () => {
    close(costOf('openai', 'gpt-4o', tokens(1_000_000, 1_000_000), { requestToken: 0 }), 10);
  });
});
