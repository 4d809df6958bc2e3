import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { windowOf } from '../clients/local-limiter.ts';
import { addRateLimitHeaders, estimateChat, estimateOperation, openAiDuration } from './policy.ts';

describe('openAiDuration', () => {
  test('writes durations as OpenAI does in x-ratelimit-reset-*', () => {
    assert.equal(openAiDuration(250), '250ms');
    assert.equal(openAiDuration(17_000), '17s');
    assert.equal(openAiDuration(16_001), '17s');
    assert.equal(openAiDuration(360_000), '6m0s');
    assert.equal(openAiDuration(3_723_000), '1h2m3s');
    assert.equal(openAiDuration(-5), '0s');
  });
});

describe('addRateLimitHeaders', () => {
  test('takes the first (tightest) limit of each type', () => {
    const headers = addRateLimitHeaders(
      {},
      [
        { type: 'tokens', limit: 1000, remaining: 10.6, resetAtMs: 61_000 },
        { type: 'tokens', limit: 5, remaining: 5, resetAtMs: 2_000 },
        { type: 'requests', limit: 60, remaining: -1, resetAtMs: 31_000 },
      ],
      1_000,
    );
    assert.deepEqual(headers, {
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': '10',
      'x-ratelimit-reset-tokens': '1m0s',
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '30s',
    });
  });
});

describe('estimates', () => {
  test('a chat request: text of the messages (parts and tool call arguments too) / 4, and its output limit', () => {
    const body = {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'abcd' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{"a":1}' } }] },
      ],
    };
    assert.deepEqual(estimateChat(body, 100), { promptTokens: 3, completionTokens: 100 });
    assert.equal(estimateChat({ ...body, max_tokens: 7 }, 100).completionTokens, 7);
    assert.equal(estimateChat({ ...body, max_tokens: 7, max_completion_tokens: 9 }, 100).completionTokens, 9);
    assert.equal(estimateChat({ ...body, max_tokens: null }, 100).completionTokens, 100);
  });

  test('a forwarded operation: its input, and no completion for embeddings', () => {
    assert.deepEqual(estimateOperation('/embeddings', { input: ['abcd', 'efgh'] }, 100), {
      promptTokens: 2,
      completionTokens: 0,
    });
    assert.deepEqual(estimateOperation('/responses', { input: 'abcdefgh', max_output_tokens: 5 }, 100), {
      promptTokens: 2,
      completionTokens: 5,
    });
    assert.deepEqual(estimateOperation('/files', undefined, 100), { promptTokens: 0, completionTokens: 0 });
  });
});

describe('windowOf', () => {
  test('the window a rate limit counts in, from the end of the window seen', () => {
    const day = Date.UTC(2026, 0, 2);
    assert.equal(windowOf(day + 60_000, day + 30_000), 60_000);
    assert.equal(windowOf(day + 3_600_000, day + 600_000), 3_600_000);
    assert.equal(windowOf(day, day - 7_200_000), 86_400_000);
  });
});
