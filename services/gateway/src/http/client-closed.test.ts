import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { createMetrics, type Metrics } from '@switchyard/core';
import { captureLogger, type CapturedLogger } from '@switchyard/core/testing';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import { events } from '@switchyard/proto';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  eventually,
  startFakeOpenAi,
  startServiceHarness,
  type AnyBody,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

const upstreamKey = 'sk-client-closed-upstream-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;
/** An upstream that reads requests and never answers them. */
let silent: Server;
let silentSeen = 0;
let silentAborted = 0;
/** The gateway's own log lines and metrics. */
let log: CapturedLogger;
let metrics: Metrics;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  silent = createServer((req, res) => {
    silentSeen++;
    req.resume();
    res.on('close', () => silentAborted++);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  log = captureLogger('gateway', 'info');
  metrics = createMetrics();
  const gateway: ServiceDefinition = {
    ...gatewayService,
    create: (deps) => gatewayService.create({ ...deps, logger: log.logger, metrics }),
  };
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gateway],
  });
  const { port } = silent.address() as { port: number };
  await createIntegration('fake', fake.baseUrl);
  await createIntegration('silent', `http://127.0.0.1:${port}/v1`);
});
after(async () => {
  await h?.close();
  await fake?.close();
  silent?.closeAllConnections();
  await new Promise((resolve) => silent?.close(resolve));
});

async function createIntegration(slug: string, customHost: string) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: customHost },
    },
  });
  assert.equal(res.status, 200, res.text);
}

function send(path: string, body: unknown, traceId: string, signal: AbortSignal): Promise<Response> {
  return fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${h.workspaceKey}`,
      'content-type': 'application/json',
      'x-vendor-trace-id': traceId,
    },
    body: JSON.stringify(body),
    signal,
  });
}

/**
 * The stored log of the request with this trace id, as `GET /v1/logs/{id}` shows it. A client
 * that left before the answer never saw its request id: the published event names it.
 */
async function storedLog(traceId: string): Promise<AnyBody> {
  const id = await eventually(
    () =>
      h.bus
        .log(Topics.requestLogs)
        .map((m) => fromBinary(events.RequestLogEventSchema, m.value))
        .find((event) => event.traceId === traceId)?.id,
    { what: `the request log of trace ${traceId}` },
  );
  return eventually(
    async () => {
      const found = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
      return found.status === 200 ? (found.body as AnyBody) : undefined;
    },
    { what: `log ${id}` },
  );
}

/** How many requests the gateway's metrics counted for this route and status. */
async function counted(route: string, status: string): Promise<number> {
  const { values } = await metrics.httpRequests.get();
  return values
    .filter((v) => v.labels.route === route && v.labels.status === status)
    .reduce((sum, v) => sum + v.value, 0);
}

/** The gateway's log lines about the request with this id. */
const linesOf = (requestId: string) => log.lines().filter((line) => line.request_id === requestId);

/** The log line, metrics and stored log say the client closed the request, and nothing says server error. */
async function assertRecordedAsClientClosed(traceId: string, route: string, before: number) {
  const stored = await storedLog(traceId);
  assert.equal(stored.status, 499);
  assert.equal(stored.response.status, 499);
  assert.equal(stored.error_message, 'client closed request');
  const lines = linesOf(stored.id);
  assert.deepEqual(
    lines.map((line) => [line.level, line.message, line.status, line.trace_id, line.path]),
    [['info', 'client closed request', 499, traceId, stored.request.path]],
  );
  assert.ok(!('stack' in lines[0]!) && !('error' in lines[0]!), JSON.stringify(lines[0]));
  assert.deepEqual(
    log.lines().filter((line) => line.level === 'error'),
    [],
  );
  assert.equal(await counted(route, '499'), before + 1);
  assert.equal(await counted(route, '500'), 0);
  return stored;
}

describe('a client that goes away before the answer', () => {
  test('while the upstream is silent: the upstream call is cancelled, and the request is recorded as 499 client closed request', async () => {
    const traceId = `closed-silent-${Date.now()}`;
    const before = await counted('/v1/chat/completions', '499');
    const aborted = fake.aborted;
    const seen = fake.requests.length;
    const controller = new AbortController();
    const pending = send(
      '/v1/chat/completions',
      { model: '@fake/hang', messages: [{ role: 'user', content: 'Hello there' }] },
      traceId,
      controller.signal,
    );
    await eventually(() => (fake.requests.length > seen ? true : undefined), {
      what: 'the upstream request',
    });
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await eventually(() => (fake.aborted > aborted ? true : undefined), {
      what: 'the upstream to see the abort',
    });
    const stored = await assertRecordedAsClientClosed(traceId, '/v1/chat/completions', before);
    assert.equal(stored.stream, false);
    assert.equal(stored.model, 'hang');
  });

  test('mid-stream: the upstream call is cancelled, and the request is recorded as 499 with what was sent, its usage counted as before', async () => {
    const traceId = `closed-stream-${Date.now()}`;
    const before = await counted('/v1/chat/completions', '499');
    const usageEvents = () => h.bus.log(Topics.usage).length;
    const usageBefore = usageEvents();
    const aborted = fake.aborted;
    const controller = new AbortController();
    const response = await send(
      '/v1/chat/completions',
      {
        model: '@fake/slow-stream',
        stream: true,
        messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p q r s t u v w x y z' }],
      },
      traceId,
      controller.signal,
    );
    // The answer had begun: its status on the wire was 200.
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^data: /);
    controller.abort();
    await eventually(() => (fake.aborted > aborted ? true : undefined), {
      what: 'the upstream to see the abort',
    });
    const stored = await assertRecordedAsClientClosed(traceId, '/v1/chat/completions', before);
    assert.equal(stored.stream, true);
    assert.ok(
      String(stored.response.body).startsWith(first.trim()),
      'the log keeps what was sent before the client left',
    );
    assert.ok(!String(stored.response.body).includes('[DONE]'));
    // An answer that was given, if not in full, is counted as used, as it was before.
    assert.equal(usageEvents(), usageBefore + 1);
  });

  test('of a forwarded operation: the upstream call is cancelled, and the request is recorded as 499', async () => {
    const traceId = `closed-forwarded-${Date.now()}`;
    // Forwarded operations are counted under their route template, never the raw path.
    const route = '/v1/embeddings';
    const before = await counted(route, '499');
    const seen = silentSeen;
    const aborted = silentAborted;
    const controller = new AbortController();
    const pending = send(
      '/v1/embeddings',
      { model: '@silent/text-embedding-3-small', input: 'Hello there' },
      traceId,
      controller.signal,
    );
    await eventually(() => (silentSeen > seen ? true : undefined), { what: 'the upstream request' });
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await eventually(() => (silentAborted > aborted ? true : undefined), {
      what: 'the upstream to see the abort',
    });
    const stored = await assertRecordedAsClientClosed(traceId, route, before);
    assert.equal(stored.request.path, '/v1/embeddings');
  });
});

describe('a client that stays', () => {
  test('is recorded with the status it was answered with, and no client-closed line is logged', async () => {
    const traceId = `stayed-${Date.now()}`;
    const res = await send(
      '/v1/chat/completions',
      { model: '@fake/gpt-x', messages: [{ role: 'user', content: 'Hello there' }] },
      traceId,
      new AbortController().signal,
    );
    assert.equal(res.status, 200, await res.text());
    const stored = await storedLog(traceId);
    assert.equal(stored.status, 200);
    assert.equal(stored.error_message, null);
    assert.deepEqual(linesOf(stored.id), []);
  });
});
