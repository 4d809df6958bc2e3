import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from 'express';
import {
  createMetrics,
  flushTraces,
  ServiceUnavailable,
  startTracing,
  tracingConfigFrom,
  type Tracing,
} from '@switchyard/core';
import {
  type CapturedLogger,
  captureLogger,
  settleLogs,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@switchyard/core/testing';
import { createHttpApp, listen } from './http.ts';

let receiver: OtlpReceiver;
let tracing: Tracing;
let log: CapturedLogger;
let url: string;
let close: () => Promise<void>;

before(async () => {
  receiver = await startOtlpReceiver();
  tracing = await startTracing(
    tracingConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'http-tracing-test' }),
    'http-test',
  );
  log = captureLogger('http-tracing-test', 'http');
  const router = Router();
  router.get('/items/:id', async (req, res) => {
    // Written after an await, without the request log context: the trace context names the request.
    await new Promise((resolve) => setTimeout(resolve, 1));
    log.logger.warn('looking up an item', { item: req.params.id });
    res.json({ id: req.params.id });
  });
  router.get('/boom', () => {
    throw new TypeError('Cannot read properties of undefined');
  });
  router.get('/down', () => {
    throw new ServiceUnavailable('The store is away.', { code: 'store_unavailable' });
  });
  const app = createHttpApp({
    service: 'http-tracing-test',
    logger: log.logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ prefix: '/v1', router }],
    requestLogContext: false,
  });
  const server = await listen(app, '127.0.0.1', 0);
  url = `http://127.0.0.1:${server.port}`;
  close = server.close;
});
after(async () => {
  await close?.();
  await tracing?.shutdown();
  await receiver?.close();
});

/** Sends a request; returns its request id and, once exported, its server span. */
async function traced(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${path}`, { headers });
  await res.text();
  const requestId = res.headers.get('x-request-id')!;
  let span: ReceivedSpan | undefined;
  for (let i = 0; i < 100 && !span; i += 1) {
    await flushTraces();
    span = receiver.spans.find((s) => s.attributes['switchyard.request_id'] === requestId);
    if (!span) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(span, `the server span of ${path}`);
  await settleLogs();
  return {
    status: res.status,
    requestId,
    span,
    lines: log.lines().filter((l) => l.request_id === requestId),
  };
}

describe('server spans', () => {
  test('a request continues the caller trace, named by its route; its log lines carry the request and trace ids', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { status, requestId, span, lines } = await traced('/v1/items/42', {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    assert.equal(status, 200);
    assert.equal(span.name, 'GET /v1/items/:id');
    assert.equal(span.traceId, traceId);
    assert.equal(span.parentSpanId, '00f067aa0ba902b7');
    assert.equal(span.serviceName, 'http-tracing-test');
    assert.deepEqual(
      {
        method: span.attributes['http.request.method'],
        path: span.attributes['url.path'],
        route: span.attributes['http.route'],
        status: span.attributes['http.response.status_code'],
      },
      { method: 'GET', path: '/v1/items/42', route: '/v1/items/:id', status: 200 },
    );
    assert.equal(span.statusCode, 0);
    assert.deepEqual(
      lines.map((l) => [l.message, l.request_id, l.w3c_trace_id]),
      [
        ['looking up an item', requestId, traceId],
        ['request', requestId, traceId],
      ],
    );
  });

  test('a server failure marks the span failed with what failed; a refusal does not', async () => {
    const boom = await traced('/v1/boom');
    assert.equal(boom.status, 500);
    assert.equal(boom.span.statusCode, 2);
    assert.equal(boom.span.attributes['error.type'], 'TypeError');
    const down = await traced('/v1/down');
    assert.equal(down.status, 503);
    assert.equal(down.span.attributes['error.type'], 'store_unavailable');
    const nowhere = await traced('/v1/nowhere');
    assert.equal(nowhere.status, 404);
    assert.equal(nowhere.span.name, 'GET');
    assert.equal(nowhere.span.attributes['http.route'], undefined);
    assert.equal(nowhere.span.statusCode, 0);
    assert.equal(nowhere.span.parentSpanId, '', 'a request without a traceparent begins a trace');
  });
});
