import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromBinary } from '@bufbuild/protobuf';
import { MemoryEventBus, Topics, type Principal } from '@switchyard/platform';
import { events } from '@switchyard/proto';
import { publishRequestEvents, type CompletedRequest } from './request-events.ts';

const principal: Principal = {
  apiKeyId: 'key-1',
  organisationId: 'org-1',
  workspaceId: 'ws-1',
  workspaceSlug: 'ws',
  kind: 'workspace_service',
  scopes: [],
  expiresAt: null,
  userId: null,
  name: 'k',
  organisationCreatedAt: null,
};

function completed(overrides: Partial<CompletedRequest>): CompletedRequest {
  return {
    requestId: 'req-1',
    principal,
    headers: {
      provider: undefined,
      customHost: undefined,
      config: undefined,
      traceId: 'trace-1',
      spanId: undefined,
      parentSpanId: undefined,
      spanName: undefined,
      metadata: { team: 'blue' },
      cacheNamespace: undefined,
      cacheForceRefresh: undefined,
      modelsEndpoint: undefined,
    },
    method: 'POST',
    path: '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    integrationSlug: 'bench',
    status: 200,
    stream: false,
    createdAtMs: 1_700_000_000_000,
    latencyMs: 3.4,
    requestBody: '',
    responseBody: '',
    errorMessage: undefined,
    ...overrides,
  };
}

function published(done: CompletedRequest) {
  const bus = new MemoryEventBus({ retainAll: true });
  publishRequestEvents(bus, done);
  const log = bus.read(Topics.requestLogs, 0);
  const usage = bus.read(Topics.usage, 0);
  assert.ok(log, 'a request log was published');
  return {
    log: fromBinary(events.RequestLogEventSchema, log.value),
    usage: usage && fromBinary(events.UsageEventSchema, usage.value),
    key: log.key,
  };
}

const request = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"héllo 😀"}]}';
const response = JSON.stringify({
  id: 'c1',
  usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
});

describe('publishRequestEvents', () => {
  test('bodies given as bytes are logged exactly as text given as strings', () => {
    const fromBytes = published(
      completed({ requestBody: Buffer.from(request), responseBody: Buffer.from(response) }),
    );
    const fromText = published(completed({ requestBody: request, responseBody: response }));
    assert.deepEqual(fromBytes.log, fromText.log);
    assert.deepEqual({ ...fromBytes.usage, id: '' }, { ...fromText.usage, id: '' });
    assert.equal(fromBytes.log.requestBody, request);
    assert.equal(fromBytes.log.responseBody, response);
    assert.equal(fromBytes.log.usage?.totalTokens, 10);
    assert.equal(fromBytes.usage?.usage?.promptTokens, 7);
    assert.equal(fromBytes.key, 'ws-1');
    assert.deepEqual(fromBytes.log.metadata, { team: 'blue' });
    assert.equal(fromBytes.log.latencyMs, 3);
  });

  test('bytes that are not UTF-8 are logged as their decoded text, as before', () => {
    const invalid = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const { log } = published(completed({ requestBody: invalid }));
    assert.equal(log.requestBody, invalid.toString('utf8'));
  });

  test('a body over the cap is cut at 1,000,000 characters', () => {
    const big = Buffer.alloc(1_000_005, 'a');
    const { log } = published(completed({ requestBody: big, responseBody: 'x'.repeat(1_000_001) }));
    assert.equal(log.requestBody.length, 1_000_000);
    assert.equal(log.responseBody.length, 1_000_000);
  });

  test('a failed request has a log and no usage event', () => {
    const { log, usage } = published(completed({ status: 502, errorMessage: 'upstream failed' }));
    assert.equal(log.status, 502);
    assert.equal(log.errorMessage, 'upstream failed');
    assert.equal(usage, undefined);
  });
});
