import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { everyService } from '../testing/services.ts';

const upstreamKey = 'sk-cache-upstream-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: everyService,
  });
  const created = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'f',
      slug: 'fake',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(created.status, 200);
});
after(async () => {
  await h?.close();
  await fake?.close();
});

let counter = 0;
const unique = () => `question ${++counter} ${Date.now()}`;
const body = (content: string, extra: Record<string, unknown> = {}) => ({
  model: '@fake/gpt-x',
  messages: [{ role: 'user', content }],
  ...extra,
});

async function chat(json: unknown, headers: Record<string, string> = {}, key = h.workspaceKey) {
  const before = fake.requests.length;
  const res = await h.request('POST', '/v1/chat/completions', { key, json, headers });
  return {
    res,
    status: res.headers.get('x-vendor-cache-status'),
    upstreamCalls: fake.requests.length - before,
  };
}

const simple = { 'x-vendor-cache': 'simple' };

describe('the response cache', () => {
  test('is off unless asked for, and says so', async () => {
    const q = unique();
    const first = await chat(body(q));
    const second = await chat(body(q));
    assert.equal(first.status, 'DISABLED');
    assert.equal(second.upstreamCalls, 1);
  });

  test('answers a repeated request from the cache without calling the provider', async () => {
    const q = unique();
    const first = await chat(body(q), simple);
    const second = await chat(body(q), simple);
    assert.equal(first.status, 'MISS');
    assert.equal(first.upstreamCalls, 1);
    assert.equal(second.status, 'HIT');
    assert.equal(second.upstreamCalls, 0);
    assert.equal(second.res.text, first.res.text);
  });

  test('treats requests that differ only in key order as the same request', async () => {
    const q = unique();
    await chat({ model: '@fake/gpt-x', messages: [{ role: 'user', content: q }], temperature: 0.5 }, simple);
    const reordered = await chat(
      { temperature: 0.5, messages: [{ content: q, role: 'user' }], model: '@fake/gpt-x' },
      simple,
    );
    assert.equal(reordered.status, 'HIT');
  });

  test('keeps namespaces apart', async () => {
    const q = unique();
    await chat(body(q), { ...simple, 'x-vendor-cache-namespace': 'team-a' });
    const otherNamespace = await chat(body(q), { ...simple, 'x-vendor-cache-namespace': 'team-b' });
    const sameNamespace = await chat(body(q), { ...simple, 'x-vendor-cache-namespace': 'team-a' });
    assert.equal(otherNamespace.status, 'MISS');
    assert.equal(sameNamespace.status, 'HIT');
  });

  test('keeps workspaces apart', async () => {
    const workspace = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Other team' },
    });
    const key = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'other', workspace_id: workspace.body.id },
    });
    const q = unique();
    await chat(body(q), simple);
    const other = await chat(body(q), simple, key.body.key);
    assert.equal(other.status, 'MISS');
    assert.equal(other.upstreamCalls, 1);
  });

  test('force-refresh calls the provider and replaces the cached answer', async () => {
    const q = unique();
    const first = await chat(body(q), simple);
    const refreshed = await chat(body(q), { ...simple, 'x-vendor-cache-force-refresh': 'true' });
    const after = await chat(body(q), simple);
    assert.equal(refreshed.status, 'REFRESH');
    assert.equal(refreshed.upstreamCalls, 1);
    assert.notEqual(refreshed.res.body.id, first.res.body.id);
    assert.equal(after.status, 'HIT');
    assert.equal(after.res.body.id, refreshed.res.body.id);
  });

  test('an entry expires after its max-age', async () => {
    const q = unique();
    await chat(body(q), { ...simple, 'x-vendor-cache-max-age': '1' });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const later = await chat(body(q), simple);
    assert.equal(later.status, 'MISS');
  });

  test('a streamed answer is cached and replayed as a stream of events', async () => {
    const q = unique();
    const streamed = body(q, { stream: true });
    const first = await chat(streamed, simple);
    const second = await chat(streamed, simple);
    assert.equal(first.status, 'MISS');
    assert.equal(second.status, 'HIT');
    assert.equal(second.upstreamCalls, 0);
    assert.match(second.res.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(second.res.text, first.res.text);
    const events = second.res.text.split('\n\n').filter(Boolean);
    assert.ok(events.length > 3);
    assert.equal(events.at(-1), 'data: [DONE]');
    const plain = await chat(body(q), simple);
    assert.equal(plain.status, 'MISS', 'a non-streamed request must not get the streamed answer');
  });

  test('errors are not cached', async () => {
    const failing = { model: '@fake/error-500', messages: [{ role: 'user', content: unique() }] };
    const first = await chat(failing, simple);
    const second = await chat(failing, simple);
    assert.equal(first.res.status, 500);
    assert.equal(second.status, 'MISS');
    assert.equal(second.upstreamCalls, 1);
  });

  for (const [header, value] of [
    ['x-vendor-cache', 'semantic'],
    ['x-vendor-cache-max-age', '-5'],
    ['x-vendor-cache-force-refresh', 'maybe'],
  ] as const) {
    test(`a bad ${header} is a 400 naming it`, async () => {
      const { res, upstreamCalls } = await chat(body(unique()), { ...simple, [header]: value });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.param, header);
      assert.equal(upstreamCalls, 0);
    });
  }

  test('the request log records a cache hit', async () => {
    const q = unique();
    await chat(body(q), simple);
    const { res } = await chat(body(q), simple);
    const id = res.headers.get('x-request-id')!;
    let log;
    for (let i = 0; i < 200; i++) {
      log = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
      if (log.status === 200) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(log?.body.cache_status, 'HIT');
  });
});
