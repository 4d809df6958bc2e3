import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import type { ProviderTarget } from '../types.ts';
import { converseUrl, signedHeaders } from './api.ts';

const target = (overrides: Partial<ProviderTarget> = {}): ProviderTarget => ({
  provider: 'bedrock',
  apiKey: '',
  headers: {},
  settings: {
    aws_region: 'us-east-1',
    aws_access_key_id: 'AKIDEXAMPLE000000000',
    aws_secret_access_key: 'secret',
  },
  ...overrides,
});

describe('the Converse URL', () => {
  test('is the regional bedrock-runtime host, with the model id URL-encoded as one segment', () => {
    assert.equal(
      converseUrl(target(), 'anthropic.claude-3-haiku-20240307-v1:0', false).href,
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
    );
    assert.equal(
      converseUrl(
        target(),
        'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4',
        true,
      ).pathname,
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-sonnet-4/converse-stream',
    );
  });

  test('a custom host replaces the endpoint, keeping its path prefix', () => {
    assert.equal(
      converseUrl(target({ baseUrl: 'http://127.0.0.1:9000/bedrock/' }), 'm', true).href,
      'http://127.0.0.1:9000/bedrock/model/m/converse-stream',
    );
  });
});

describe('SigV4', () => {
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text).digest();

  test('signs the URL-encoded path encoded once more, as AWS computes the canonical request', async () => {
    const url = converseUrl(target(), 'anthropic.claude-3-haiku-20240307-v1:0', false);
    const body = '{"messages":[]}';
    const headers = await signedHeaders(
      target({ settings: { ...target().settings, aws_session_token: 'tok' } }),
      url,
      body,
      new Date('2025-01-01T00:00:00Z'),
    );
    const canonicalRequest = [
      'POST',
      '/model/anthropic.claude-3-haiku-20240307-v1%253A0/converse',
      '',
      'content-type:application/json',
      'host:bedrock-runtime.us-east-1.amazonaws.com',
      'x-amz-date:20250101T000000Z',
      'x-amz-security-token:tok',
      '',
      'content-type;host;x-amz-date;x-amz-security-token',
      sha256(body),
    ].join('\n');
    const stringToSign = [
      'AWS4-HMAC-SHA256',
      '20250101T000000Z',
      '20250101/us-east-1/bedrock/aws4_request',
      sha256(canonicalRequest),
    ].join('\n');
    let key = hmac('AWS4secret', '20250101');
    for (const part of ['us-east-1', 'bedrock', 'aws4_request']) key = hmac(key, part);
    const signature = createHmac('sha256', key).update(stringToSign).digest('hex');

    assert.equal(
      headers.authorization,
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE000000000/20250101/us-east-1/bedrock/aws4_request, ' +
        `SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=${signature}`,
    );
    assert.equal(headers['x-amz-date'], '20250101T000000Z');
    assert.equal(headers['x-amz-security-token'], 'tok');
  });

  test('the integration’s own headers are sent and signed', async () => {
    const headers = await signedHeaders(
      target({ headers: { 'x-team': 'search' } }),
      converseUrl(target(), 'm', false),
      '{}',
    );
    assert.equal(headers['x-team'], 'search');
    assert.match(headers.authorization!, /SignedHeaders=content-type;host;x-amz-date;x-team,/);
  });
});
