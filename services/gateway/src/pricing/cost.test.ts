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

  test('a multiplier of 0 makes that token type free', () => {
    close(costOf('openai', 'gpt-4o', tokens(1_000_000, 1_000_000), { requestToken: 0 }), 10);
  });
});
