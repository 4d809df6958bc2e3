import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { scopesForKind } from '@switchyard/access';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { keyMaterialOf, IdentityRepository } from '@switchyard/control-plane/testing';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import {
  eventually,
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

const upstreamKey = 'sk-upstream-secret-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
  });
  await createIntegration('fake', { key: upstreamKey, configurations: { custom_host: fake.baseUrl } });
});
after(async () => {
  await h.close();
  await fake.close();
});

async function createIntegration(slug: string, body: Record<string, unknown>) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: slug, slug, ai_provider_id: 'openai', ...body },
  });
  assert.equal(res.status, 200, res.text);
}

const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Hello there' }],
  ...extra,
});

function chat(body: unknown, options: { headers?: Record<string, string>; key?: string | null } = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key: options.key === null ? undefined : (options.key ?? h.workspaceKey),
    ...(typeof body === 'string'
      ? { body, headers: { 'content-type': 'application/json' } }
      : { json: body }),
    ...(options.headers ? { headers: { 'content-type': 'application/json', ...options.headers } } : {}),
  });
}

function lastUpstreamRequest() {
  const request = fake.requests.at(-1);
  assert.ok(request, 'the upstream received no request');
  return request;
}

/** Opens a streaming request and records when each piece of the body arrives. */
async function openStream(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  const started = performance.now();
  const response = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.workspaceKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const received: Array<{ at: number; text: string }> = [];
  return {
    response,
    started,
    received,
    async next(): Promise<string | undefined> {
      const { value, done } = await reader.read();
      if (done) return undefined;
      const text = decoder.decode(value, { stream: true });
      received.push({ at: performance.now(), text });
      return text;
    },
    async rest(): Promise<string> {
      while ((await this.next()) !== undefined);
      return received.map((r) => r.text).join('');
    },
  };
}

function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
}

function contentOf(data: string[]): string {
  return data
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as { choices: Array<{ delta?: { content?: string } }> })
    .map((chunk) => chunk.choices[0]?.delta?.content ?? '')
    .join('');
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function decoded<S extends Parameters<typeof fromBinary>[0]>(topic: string, schema: S) {
  return h.bus.log(topic).map((message) => fromBinary(schema, message.value));
}

describe('routing through a saved integration', () => {
  test('a model of the form @slug/model reaches the upstream with its key and the bare model', async () => {
    const res = await chat(chatBody('@fake/gpt-x'));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'chat.completion');
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello there');
    assert.equal(res.headers.get('x-vendor-provider'), 'openai');

    const upstream = lastUpstreamRequest();
    assert.equal(upstream.path, '/v1/chat/completions');
    assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
    assert.deepEqual(JSON.parse(upstream.body), chatBody('gpt-x'));
    assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey), 'the gateway key went upstream');
  });

  test('the header x-vendor-provider: @slug forwards the client’s bytes unchanged', async () => {
    const raw =
      '{ "messages" : [ {"role":"user","content":"Caf\\u00e9?"} ],\n  "model":"gpt-x",  "temperature": 0.50 }';
    const res = await chat(raw, { headers: { 'x-vendor-provider': '@fake' } });
    assert.equal(res.status, 200, res.text);
    const upstream = lastUpstreamRequest();
    assert.equal(upstream.body, raw);
    assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
  });

  test('unknown fields, top-level and nested, reach the upstream when the model is rewritten', async () => {
    const body = {
      ...chatBody('@fake/gpt-x'),
      messages: [{ role: 'user', content: 'hi', vendor_hint: { cache: true } }],
      reasoning_effort: 'low',
    };
    const res = await chat(body);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(JSON.parse(lastUpstreamRequest().body), { ...body, model: 'gpt-x' });
  });

  test('a request that breaks the interface never reaches the upstream', async () => {
    const before = fake.requests.length;
    const res = await chat(chatBody('@fake/gpt-x', { n: 200 }));
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'n');
    assert.equal(fake.requests.length, before);
  });

  test('sends the integration’s own headers upstream', async () => {
    await createIntegration('with-headers', {
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl, headers: { 'OpenAI-Organization': 'org-123' } },
    });
    const res = await chat(chatBody('@with-headers/gpt-x'));
    assert.equal(res.status, 200);
    assert.equal(lastUpstreamRequest().headers['openai-organization'], 'org-123');
  });

  test('an unknown integration is a 404', async () => {
    for (const [model, headers] of [
      ['@missing/gpt-x', {}],
      ['gpt-x', { 'x-vendor-provider': '@missing' }],
    ] as const) {
      const res = await chat(chatBody(model), { headers });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'integration_not_found');
      assert.match(res.body.error.message, /missing/);
    }
  });

  test('deleting an integration makes the next request through it a 404 at once', async () => {
    await createIntegration('revocable', { key: upstreamKey, configurations: { custom_host: fake.baseUrl } });
    assert.equal((await chat(chatBody('@revocable/gpt-x'))).status, 200);

    const deleted = await h.request('DELETE', '/admin/v2/integrations/revocable', { key: h.adminKey });
    assert.deepEqual(deleted.body, {});

    const upstreamCalls = fake.requests.length;
    const res = await chat(chatBody('@revocable/gpt-x'));
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'integration_not_found');
    assert.equal(fake.requests.length, upstreamCalls);
  });

  test('an integration of another organisation is not found', async () => {
    const repo = new IdentityRepository(h.db('control-plane').manager);
    const organisation = await repo.createOrganisation('Other Inc', 'other-inc');
    const workspace = await repo.createWorkspace({
      organisationId: organisation.id,
      name: 'Other default',
      slug: 'default',
      description: null,
    });
    const otherKey = 'sy-workspace-key-of-another-organisation';
    await repo.insertApiKey({
      organisationId: organisation.id,
      workspaceId: workspace.id,
      kind: 'workspace_service',
      name: 'Other workspace key',
      description: null,
      scopes: [...scopesForKind('workspace_service')],
      userId: null,
      expiresAt: null,
      ...keyMaterialOf(otherKey, 'sy-'),
    });
    const upstreamCalls = fake.requests.length;
    const res = await chat(chatBody('@fake/gpt-x'), { key: otherKey });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'integration_not_found');
    assert.equal(fake.requests.length, upstreamCalls);
  });

  test('an integration created right after a miss is usable at once', async () => {
    assert.equal((await chat(chatBody('@late/gpt-x'))).status, 404);
    await createIntegration('late', { key: upstreamKey, configurations: { custom_host: fake.baseUrl } });
    const res = await chat(chatBody('@late/gpt-x'));
    assert.equal(res.status, 200, res.text);
  });
});

describe('streaming', () => {
  test('forwards SSE chunks as they come, ending in data: [DONE]', async () => {
    const stream = await openStream(
      chatBody('@fake/slow-stream', {
        stream: true,
        messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
      }),
    );
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get('content-type') ?? '', /^text\/event-stream/);

    const first = await stream.next();
    const firstAt = performance.now();
    assert.ok(first?.startsWith('data: '));
    assert.ok(!first?.includes('[DONE]'), 'the whole stream arrived in one piece');
    const text = await stream.rest();
    const doneAt = stream.received.at(-1)!.at;

    // The upstream spaces its chunks 50 ms apart: buffering would deliver everything at the end.
    assert.ok(
      doneAt - firstAt > 200,
      `first chunk ${firstAt - stream.started} ms, last ${doneAt - stream.started} ms`,
    );
    const data = sseData(text);
    assert.equal(data.at(-1), '[DONE]');
    assert.equal(contentOf(data), 'Echo: one two three four five six seven eight');
    for (const chunk of data.slice(0, -1)) assert.equal(JSON.parse(chunk).object, 'chat.completion.chunk');
  });

  test('a client that disconnects mid-stream makes the upstream connection close', async () => {
    const before = fake.aborted;
    const controller = new AbortController();
    const stream = await openStream(
      chatBody('@fake/slow-stream', {
        stream: true,
        messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p q r s t u v w x y z' }],
      }),
      {},
      controller.signal,
    );
    await stream.next();
    controller.abort();
    await eventually(() => (fake.aborted > before ? true : undefined), {
      what: 'the upstream to see the abort',
    });
  });

  test('a client that gives up while the upstream is silent makes the upstream connection close', async () => {
    const before = fake.aborted;
    const seen = fake.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.workspaceKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('@fake/hang')),
      signal: controller.signal,
    });
    await eventually(() => (fake.requests.length > seen ? true : undefined), {
      what: 'the upstream request',
    });
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await eventually(() => (fake.aborted > before ? true : undefined), {
      what: 'the upstream to see the abort',
    });
  });

  test('forwards stream_options.include_usage to the upstream', async () => {
    const stream = await openStream(
      chatBody('@fake/gpt-x', { stream: true, stream_options: { include_usage: true } }),
    );
    const data = sseData(await stream.rest());
    const usage = data
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d))
      .find((c) => c.usage);
    assert.deepEqual(usage?.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });
});

describe('upstream failures', () => {
  for (const status of [429, 500, 503]) {
    test(`an upstream ${status} becomes the error body with that status, naming the provider`, async () => {
      const res = await chat(chatBody(`@fake/error-${status}`));
      assert.equal(res.status, status);
      assert.deepEqual(res.body, {
        error: {
          message: `openai error: Simulated error ${status}.`,
          type: 'upstream_error',
          param: null,
          code: `simulated_${status}`,
        },
      });
    });
  }

  test("an upstream 429 passes the provider's retry-after on to the client", async () => {
    const res = await chat(chatBody('@fake/error-429'));
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '2');
  });

  test('an upstream that rejects the key is reported with its status', async () => {
    await createIntegration('wrong-key', { key: 'sk-wrong', configurations: { custom_host: fake.baseUrl } });
    const res = await chat(chatBody('@wrong-key/gpt-x'));
    assert.equal(res.status, 401);
    assert.equal(res.body.error.type, 'upstream_error');
    assert.match(res.body.error.message, /^openai error: Incorrect API key/);
  });

  test('an unreachable upstream is a 502 naming the provider', async () => {
    const port = await unusedPort();
    await createIntegration('unreachable', {
      key: upstreamKey,
      configurations: { custom_host: `http://127.0.0.1:${port}/v1` },
    });
    const res = await chat(chatBody('@unreachable/gpt-x'));
    assert.equal(res.status, 502);
    assert.equal(res.body.error.code, 'upstream_unreachable');
    assert.equal(res.body.error.type, 'upstream_error');
    assert.match(res.body.error.message, /^openai: could not reach the upstream/);
  });
});

describe('the mock provider', () => {
  const mock = { 'x-vendor-provider': 'mock' };

  test('answers the same request with the same body', async () => {
    const first = await chat(chatBody('mock-1'), { headers: mock });
    const second = await chat(chatBody('mock-1'), { headers: mock });
    assert.equal(first.status, 200);
    assert.equal(second.text, first.text);
    assert.equal(first.body.choices[0].message.content, 'Mock response to: Hello there');
    assert.equal(first.body.model, 'mock-1');

    const other = await chat(
      chatBody('mock-1', { messages: [{ role: 'user', content: 'Something else' }] }),
      {
        headers: mock,
      },
    );
    assert.notEqual(other.body.id, first.body.id);
  });

  test('streams and adds a usage chunk only when stream_options.include_usage is set', async () => {
    const withUsage = sseData(
      await (
        await openStream(chatBody('mock-1', { stream: true, stream_options: { include_usage: true } }), mock)
      ).rest(),
    );
    const without = sseData(await (await openStream(chatBody('mock-1', { stream: true }), mock)).rest());

    for (const data of [withUsage, without]) {
      assert.equal(data.at(-1), '[DONE]');
      assert.equal(contentOf(data), 'Mock response to: Hello there');
    }
    const usageChunks = (data: string[]) =>
      data
        .filter((d) => d !== '[DONE]')
        .map((d) => JSON.parse(d))
        .filter((c) => c.usage);
    assert.equal(usageChunks(without).length, 0);
    const [usage] = usageChunks(withUsage);
    assert.deepEqual(usage.choices, []);
    assert.deepEqual(usage.usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
  });

  test('a direct provider takes the gateway key from x-vendor-api-key, leaving Authorization for the provider', async () => {
    const res = await chat(chatBody('mock-1'), {
      key: null,
      headers: { ...mock, 'x-vendor-api-key': h.workspaceKey, authorization: 'Bearer sk-provider-key' },
    });
    assert.equal(res.status, 200, res.text);
  });
});

describe('request checks', () => {
  test('no provider is a 400 naming x-vendor-provider', async () => {
    const res = await chat(chatBody('gpt-x'));
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'x-vendor-provider');
    assert.equal(res.body.error.code, 'provider_required');
  });

  test('an unknown provider is a 400 naming x-vendor-provider', async () => {
    const res = await chat(chatBody('gpt-x'), { headers: { 'x-vendor-provider': 'no-such-provider' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'x-vendor-provider');
  });

  test('an organisation admin key is a 403', async () => {
    const res = await chat(chatBody('mock-1'), { key: h.adminKey, headers: { 'x-vendor-provider': 'mock' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'workspace_key_required');
  });

  test('a revoked workspace key is refused at once', async () => {
    const created = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Soon revoked', workspace_id: h.workspaceId },
    });
    const { id, key } = created.body as { id: string; key: string };
    const headers = { 'x-vendor-provider': 'mock' };
    assert.equal((await chat(chatBody('mock-1'), { key, headers })).status, 200);
    assert.equal((await h.request('DELETE', `/v2/api-keys/${id}`, { key: h.adminKey })).status, 200);
    assert.equal((await chat(chatBody('mock-1'), { key, headers })).status, 401);
  });

  test('a missing or unknown key is a 401', async () => {
    for (const key of [null, 'sy-not-a-key']) {
      const res = await chat(chatBody('mock-1'), { key, headers: { 'x-vendor-provider': 'mock' } });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.type, 'authentication_error');
    }
  });

  test('malformed x-vendor-metadata is a 400 naming the header', async () => {
    for (const metadata of ['not json', '["a"]', '{"n":1}']) {
      const res = await chat(chatBody('mock-1'), {
        headers: { 'x-vendor-provider': 'mock', 'x-vendor-metadata': metadata },
      });
      assert.equal(res.status, 400, metadata);
      assert.equal(res.body.error.param, 'x-vendor-metadata');
    }
  });

  test('text no store can hold, nesting over 64 levels or bytes that are not UTF-8 are a 400 that never reaches the upstream', async () => {
    const before = fake.requests.length;
    const messages = (third: string) =>
      `[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"${third}"}]`;
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const cases: Array<[string | Buffer, string | null, string]> = [
      [`{"model":"@fake/gpt-x","messages":${messages('x\\u0000y')}}`, 'messages[2].content', 'invalid_text'],
      [`{"model":"@fake/gpt-x","messages":${messages('\\ud83d')}}`, 'messages[2].content', 'invalid_text'],
      [`{"model":"@fake/gpt-x","messages":${messages('ok')},"user\\u0000":"u"}`, null, 'invalid_text'],
      [
        `{"model":"@fake/gpt-x","messages":${messages('ok')},"response_format":${deep}}`,
        'response_format',
        'too_deeply_nested',
      ],
      [
        Buffer.concat([
          Buffer.from(`{"model":"@fake/gpt-x","messages":${messages('')}`),
          Buffer.from([0xc3, 0x28, 0x7d]),
        ]),
        null,
        'invalid_text',
      ],
    ];
    for (const [body, param, code] of cases) {
      const res = await h.request('POST', '/v1/chat/completions', {
        key: h.workspaceKey,
        headers: { 'content-type': 'application/json' },
        body,
      });
      const what = String(body).slice(0, 120);
      assert.equal(res.status, 400, `${what}: ${res.text}`);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type'], what);
      assert.equal(res.body.error.param, param, what);
      assert.equal(res.body.error.code, code, what);
    }
    assert.equal(fake.requests.length, before);
  });

  test('x-vendor-metadata holding text no store can hold is a 400 naming the entry', async () => {
    for (const metadata of ['{"team":"a\\u0000"}', '{"team":"\\udc00"}']) {
      const res = await chat(chatBody('mock-1'), {
        headers: { 'x-vendor-provider': 'mock', 'x-vendor-metadata': metadata },
      });
      assert.equal(res.status, 400, metadata);
      assert.equal(res.body.error.param, 'x-vendor-metadata.team', metadata);
      assert.equal(res.body.error.code, 'invalid_text', metadata);
    }
  });

  test('a body that is not JSON, or lacks messages, is a 400', async () => {
    const notJson = await chat('{"model": ', { headers: { 'x-vendor-provider': 'mock' } });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.error.code, 'invalid_json');
    const noMessages = await chat({ model: 'mock-1' }, { headers: { 'x-vendor-provider': 'mock' } });
    assert.equal(noMessages.status, 400);
    assert.equal(noMessages.body.error.param, 'messages');
  });

  test('echoes the trace id it was given, and makes one up otherwise', async () => {
    const given = await chat(chatBody('mock-1'), {
      headers: { 'x-vendor-provider': 'mock', 'x-vendor-trace-id': 'trace-from-client-42' },
    });
    assert.equal(given.headers.get('x-vendor-trace-id'), 'trace-from-client-42');
    const made = await chat(chatBody('mock-1'), { headers: { 'x-vendor-provider': 'mock' } });
    assert.match(made.headers.get('x-vendor-trace-id') ?? '', /^[0-9a-f-]{36}$/);
    const failed = await chat(chatBody('gpt-x'), { headers: { 'x-vendor-trace-id': 'trace-of-a-failure' } });
    assert.equal(failed.status, 400);
    assert.equal(failed.headers.get('x-vendor-trace-id'), 'trace-of-a-failure');
  });
});

describe('events after a request', () => {
  test('a request log and a usage event are published with the workspace, status and usage', async () => {
    const res = await chat(chatBody('@fake/gpt-events'), {
      headers: { 'x-vendor-trace-id': 'trace-events-1', 'x-vendor-metadata': '{"team":"search"}' },
    });
    assert.equal(res.status, 200);
    const requestId = res.headers.get('x-request-id')!;

    const log = await eventually(
      () => decoded(Topics.requestLogs, events.RequestLogEventSchema).find((e) => e.id === requestId),
      {
        what: 'the request log event',
      },
    );
    assert.equal(log.organisationId, h.organisationId);
    assert.equal(log.workspaceId, h.workspaceId);
    assert.equal(log.status, 200);
    assert.equal(log.provider, 'openai');
    assert.equal(log.model, 'gpt-events');
    assert.equal(log.integrationSlug, 'fake');
    assert.equal(log.traceId, 'trace-events-1');
    assert.deepEqual(log.metadata, { team: 'search' });
    assert.equal(log.path, '/v1/chat/completions');
    assert.equal(log.usage?.totalTokens, 12);
    assert.equal(JSON.parse(log.responseBody).choices[0].message.content, 'Echo: Hello there');

    const usage = await eventually(
      () => decoded(Topics.usage, events.UsageEventSchema).find((e) => e.model === 'gpt-events'),
      { what: 'the usage event' },
    );
    assert.equal(usage.apiKeyId, log.apiKeyId);
    assert.equal(usage.workspaceId, h.workspaceId);
    assert.equal(usage.provider, 'openai');
    assert.deepEqual(
      {
        prompt: usage.usage?.promptTokens,
        completion: usage.usage?.completionTokens,
        total: usage.usage?.totalTokens,
      },
      { prompt: 9, completion: 3, total: 12 },
    );

    const stored = await eventually(
      async () => {
        const found = await h.request('GET', `/v1/logs/${requestId}`, { key: h.workspaceKey });
        return found.status === 200 ? found : undefined;
      },
      { what: 'the stored log' },
    );
    assert.equal(stored.body.status, 200);
    assert.equal(stored.body.trace_id, 'trace-events-1');
  });

  test('usage of a streamed answer is taken from its usage chunk', async () => {
    const stream = await openStream(
      chatBody('@fake/gpt-stream-events', { stream: true, stream_options: { include_usage: true } }),
    );
    await stream.rest();
    const requestId = stream.response.headers.get('x-request-id')!;
    const log = await eventually(
      () => decoded(Topics.requestLogs, events.RequestLogEventSchema).find((e) => e.id === requestId),
      {
        what: 'the request log event',
      },
    );
    assert.equal(log.stream, true);
    assert.equal(log.usage?.totalTokens, 12);
  });

  test('a failed request is logged with its status and message, and counts no usage', async () => {
    const res = await chat(chatBody('@fake/error-500'));
    assert.equal(res.status, 500);
    const requestId = res.headers.get('x-request-id')!;
    const log = await eventually(
      () => decoded(Topics.requestLogs, events.RequestLogEventSchema).find((e) => e.id === requestId),
      {
        what: 'the request log event',
      },
    );
    assert.equal(log.status, 500);
    assert.equal(log.errorMessage, 'openai error: Simulated error 500.');
    await h.bus.flush();
    assert.ok(!decoded(Topics.usage, events.UsageEventSchema).some((e) => e.model === 'error-500'));
  });

  test('two requests sent with the same x-request-id are both logged', async () => {
    const requestId = `client-chosen-${Date.now()}`;
    for (const traceId of ['first-of-two', 'second-of-two']) {
      const res = await chat(chatBody('mock-1'), {
        headers: { 'x-vendor-provider': 'mock', 'x-request-id': requestId, 'x-vendor-trace-id': traceId },
      });
      assert.notEqual(res.headers.get('x-request-id'), requestId);
    }
    await eventually(
      async () => {
        const [row] = await h
          .db('log-export')
          .query(`SELECT count(*)::int AS n FROM log_export.request_logs WHERE trace_id = 'first-of-two'`);
        return row.n === 1 ? true : undefined;
      },
      { what: 'the first log' },
    );
    await h.bus.flush();
    const [row] = await h
      .db('log-export')
      .query(`SELECT count(*)::int AS n FROM log_export.request_logs WHERE trace_id = 'second-of-two'`);
    assert.equal(row.n, 1);
  });
});
