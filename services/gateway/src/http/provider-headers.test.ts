import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamError } from '@switchyard/core';
import { upstreamErrorFrom, upstreamHeadersOf } from '../upstream/http-client.ts';
import { providerHeaders } from './provider-headers.ts';

const PREFIX = 'x-vendor-';

describe('providerHeaders', () => {
  test("gives OpenAI's request id under the prefix and its rate limits as they are", () => {
    const out = providerHeaders(
      {
        'x-request-id': 'req_abc',
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-limit-tokens': '30000',
        'x-ratelimit-remaining-requests': '499',
        'x-ratelimit-remaining-tokens': '29950',
        'x-ratelimit-reset-requests': '120ms',
        'x-ratelimit-reset-tokens': '100ms',
        'openai-organization': 'org-1',
        'openai-processing-ms': '12',
        'content-type': 'application/json',
      },
      PREFIX,
      { 'x-vendor-trace-id': 't' },
    );
    assert.deepEqual(out, {
      'x-vendor-provider-request-id': 'req_abc',
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-limit-tokens': '30000',
      'x-ratelimit-remaining-requests': '499',
      'x-ratelimit-remaining-tokens': '29950',
      'x-ratelimit-reset-requests': '120ms',
      'x-ratelimit-reset-tokens': '100ms',
    });
  });

  test("gives Anthropic's request id both as it is and under the prefix, with its rate limits", () => {
    const out = providerHeaders(
      {
        'request-id': 'req_011',
        'anthropic-organization-id': 'org-uuid',
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-requests-reset': '2026-11-27T00:00:01Z',
        'anthropic-ratelimit-input-tokens-remaining': '39000',
        'retry-after': '6',
      },
      PREFIX,
      {},
    );
    assert.deepEqual(out, {
      'x-vendor-provider-request-id': 'req_011',
      'request-id': 'req_011',
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': '2026-11-27T00:00:01Z',
      'anthropic-ratelimit-input-tokens-remaining': '39000',
      'retry-after': '6',
    });
  });

  test("names Bedrock's and Google's request ids under the prefix only", () => {
    assert.deepEqual(providerHeaders({ 'x-amzn-requestid': 'a-b-c' }, PREFIX, {}), {
      'x-vendor-provider-request-id': 'a-b-c',
    });
    assert.deepEqual(providerHeaders({ 'x-goog-request-id': 'g1' }, PREFIX, {}), {
      'x-vendor-provider-request-id': 'g1',
    });
    assert.deepEqual(providerHeaders({ 'content-type': 'application/json' }, PREFIX, {}), {});
  });

  test("moves a header the gateway sets itself under the prefix, and follows the prefix's setting", () => {
    const gateway = { 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '99' };
    const upstream = {
      'x-request-id': 'req_1',
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-remaining-requests': '12',
      'x-ratelimit-limit-tokens': '30000',
    };
    assert.deepEqual(providerHeaders(upstream, 'x-portkey-', gateway), {
      'x-portkey-provider-request-id': 'req_1',
      'x-portkey-provider-x-ratelimit-limit-requests': '500',
      'x-portkey-provider-x-ratelimit-remaining-requests': '12',
      'x-ratelimit-limit-tokens': '30000',
    });
  });

  test('never passes cookies, framing, server internals or the x-request-id name itself', () => {
    const out = providerHeaders(
      {
        'set-cookie': ['__cf_bm=1; path=/'],
        'content-length': '120',
        'transfer-encoding': 'chunked',
        connection: 'keep-alive',
        server: 'cloudflare',
        'cf-ray': '8a1b',
        'x-envoy-upstream-service-time': '80',
        'x-request-id': 'req_2',
      },
      PREFIX,
      {},
    );
    assert.deepEqual(out, { 'x-vendor-provider-request-id': 'req_2' });
  });

  test('drops values that are too long, repeated, empty or not one printable line, and bounds the count', () => {
    const out = providerHeaders(
      {
        'x-request-id': 'r'.repeat(257),
        'request-id': ['one', 'two'],
        'x-ratelimit-limit-requests': '',
        'x-ratelimit-limit-tokens': 'a\r\nset-cookie: x=1',
        'x-ratelimit-remaining-tokens': 'r'.repeat(256),
        'X-RateLimit-Reset-Tokens': '1s',
      },
      PREFIX,
      {},
    );
    assert.deepEqual(out, { 'x-ratelimit-remaining-tokens': 'r'.repeat(256) });

    const many: Record<string, string> = {};
    for (let i = 0; i < 40; i += 1) many[`x-ratelimit-extra-${i}`] = String(i);
    assert.equal(Object.keys(providerHeaders(many, PREFIX, {})).length, 24);
  });

  test('gives nothing for an answer without a provider head (a cached one)', () => {
    assert.deepEqual(providerHeaders(undefined, PREFIX, {}), {});
  });
});

describe('upstreamHeadersOf', () => {
  test("keeps the head of a provider's error answer with the error made from it", async () => {
    const head = { 'x-request-id': 'req_e', 'retry-after': '2', 'content-type': 'application/json' };
    const error = await upstreamErrorFrom('openai', {
      statusCode: 429,
      headers: head,
      body: Buffer.from('{"error":{"message":"Slow down.","type":"rate_limit_error"}}'),
    });
    assert.equal(error.status, 429);
    assert.equal(upstreamHeadersOf(error), head);
    assert.deepEqual(providerHeaders(upstreamHeadersOf(error), PREFIX, {}), {
      'x-vendor-provider-request-id': 'req_e',
      'retry-after': '2',
    });
    assert.equal(upstreamHeadersOf(new UpstreamError(502, 'unreachable')), undefined);
    assert.equal(upstreamHeadersOf('not an error'), undefined);
  });
});
