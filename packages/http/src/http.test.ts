import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Router } from 'express';
import {
  type AppError,
  BadRequest,
  Conflict,
  createMetrics,
  Forbidden,
  GuardrailDenied,
  InternalError,
  labelRoute,
  NotFound,
  NotImplemented,
  PayloadTooLarge,
  requestContext,
  RequestTimeout,
  ServiceUnavailable,
  toAppError,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  UpstreamError,
} from '@switchyard/core';
import {
  createHttpApp,
  formBody,
  jsonBody,
  listen,
  serverClasses,
  type HttpAppOptions,
  type ReadinessCheck,
} from './http.ts';
import {
  type CapturedLogger,
  captureLogger,
  deferred,
  settleLogs,
  sleep,
  timed,
} from '@switchyard/core/testing';

interface Served {
  url: string;
  log: CapturedLogger;
  close(): Promise<void>;
}

async function serve(options: Partial<HttpAppOptions> = {}): Promise<Served> {
  const log = captureLogger('http-test');
  const app = createHttpApp({
    service: 'http-test',
    logger: log.logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [],
    ...options,
  });
  const server = await listen(app, '127.0.0.1', 0);
  return { url: `http://127.0.0.1:${server.port}`, log, close: server.close };
}

function assertErrorBody(
  body: unknown,
  expected: { message?: string | RegExp; type: string; param?: string | null; code?: string | null },
): void {
  assert.ok(body && typeof body === 'object', 'body is an object');
  assert.deepEqual(Object.keys(body), ['error'], 'the body has exactly one top-level key, "error"');
  const error = (body as { error: Record<string, unknown> }).error;
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof error.message, 'string');
  if (expected.message instanceof RegExp) assert.match(error.message as string, expected.message);
  else if (expected.message !== undefined) assert.equal(error.message, expected.message);
  assert.equal(error.type, expected.type);
  if (expected.param !== undefined) assert.equal(error.param, expected.param);
  if (expected.code !== undefined) assert.equal(error.code, expected.code);
}

describe('error responses', () => {
  const cases: Array<{
    name: string;
    error: () => AppError;
    status: number;
    type: string;
    code: string | null;
    param?: string | null;
    headers?: Record<string, string>;
  }> = [
    {
      name: 'BadRequest',
      error: () =>
        new BadRequest("Invalid body parameter 'messages[2].content'.", { param: 'messages[2].content' }),
      status: 400,
      type: 'invalid_request_error',
      code: null,
      param: 'messages[2].content',
    },
    {
      name: 'Unauthorized',
      error: () => new Unauthorized(),
      status: 401,
      type: 'authentication_error',
      code: 'invalid_api_key',
    },
    {
      name: 'Forbidden',
      error: () => new Forbidden('No.'),
      status: 403,
      type: 'permission_error',
      code: null,
    },
    {
      name: 'NotFound',
      error: () => new NotFound('No such thing.'),
      status: 404,
      type: 'not_found_error',
      code: null,
    },
    {
      name: 'Conflict',
      error: () => new Conflict('Exists.'),
      status: 409,
      type: 'conflict_error',
      code: null,
    },
    {
      name: 'RequestTimeout',
      error: () => new RequestTimeout('Slow.'),
      status: 408,
      type: 'timeout_error',
      code: 'request_timeout',
    },
    {
      name: 'PayloadTooLarge',
      error: () => new PayloadTooLarge('Too big.'),
      status: 413,
      type: 'invalid_request_error',
      code: 'payload_too_large',
    },
    {
      name: 'UnprocessableEntity',
      error: () => new UnprocessableEntity('Cannot.', { code: 'model_unknown' }),
      status: 422,
      type: 'invalid_request_error',
      code: 'model_unknown',
    },
    {
      name: 'TooManyRequests',
      error: () => new TooManyRequests('Slow down.', 2.2),
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limited',
      headers: { 'retry-after': '3' },
    },
    {
      name: 'GuardrailDenied',
      error: () => new GuardrailDenied('Denied by policy.'),
      status: 446,
      type: 'guardrail_error',
      code: 'guardrail_denied',
    },
    {
      name: 'NotImplemented',
      error: () => new NotImplemented('Not yet.'),
      status: 501,
      type: 'not_implemented_error',
      code: 'not_implemented',
    },
    {
      name: 'UpstreamError',
      error: () => new UpstreamError(502, 'Provider failed.'),
      status: 502,
      type: 'upstream_error',
      code: null,
    },
    {
      name: 'ServiceUnavailable',
      error: () => new ServiceUnavailable('Try later.'),
      status: 503,
      type: 'service_unavailable_error',
      code: null,
    },
  ];

  let served: Served;
  before(async () => {
    const router = Router();
    router.get('/throw/:name', (req) => {
      const found = cases.find((c) => c.name === req.params.name);
      throw found ? found.error() : new Error(`unknown case ${req.params.name}`);
    });
    router.get('/reject/:name', async (req) => {
      await sleep(1);
      const found = cases.find((c) => c.name === req.params.name);
      throw found ? found.error() : new Error(`unknown case ${req.params.name}`);
    });
    router.get('/leak', () => {
      throw new Error('connect ECONNREFUSED 10.1.2.3:5432 (user=switchyard)');
    });
    router.get('/leak-async', async () => {
      await sleep(1);
      throw new TypeError("Cannot read properties of undefined (reading 'secretColumn')");
    });
    // What TypeORM throws when Postgres refuses a query: a QueryFailedError around pg's DatabaseError.
    router.get('/database/:code', (req) => {
      const report = Object.assign(new Error('value too long for type character varying(5)'), {
        severity: 'ERROR',
        code: req.params.code,
        detail: 'Key (parent)=(7) is not present in table "parents".',
        table: 'children',
      });
      throw Object.assign(new Error(report.message), { name: 'QueryFailedError', driverError: report });
    });
    router.get('/status-error', (_req, _res, next) => {
      next(Object.assign(new Error('Range Not Satisfiable'), { status: 416 }));
    });
    router.get('/partial', (_req, res, next) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial ');
      setTimeout(() => next(new Error('failed after the headers were sent')), 20);
    });
    router.post('/echo', jsonBody('1kb'), (req, res) => {
      res.json({ received: req.body });
    });
    served = await serve({ routers: [{ prefix: '/v1', router }] });
  });
  after(() => served.close());

  for (const c of cases) {
    test(`a thrown ${c.name} becomes ${c.status} with the error body`, async () => {
      const res = await fetch(`${served.url}/v1/throw/${c.name}`);
      assert.equal(res.status, c.status);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const expected = c.error();
      assertErrorBody(await res.json(), {
        message: expected.message,
        type: c.type,
        code: c.code,
        param: c.param ?? null,
      });
      for (const [name, value] of Object.entries(c.headers ?? {})) assert.equal(res.headers.get(name), value);
    });
  }

  test('a rejected promise from an async handler is translated the same way as a throw', async () => {
    for (const name of ['BadRequest', 'TooManyRequests', 'ServiceUnavailable']) {
      const c = cases.find((x) => x.name === name)!;
      const res = await fetch(`${served.url}/v1/reject/${name}`);
      assert.equal(res.status, c.status, name);
      assertErrorBody(await res.json(), { type: c.type, code: c.code });
    }
  });

  test('TooManyRequests rounds retry-after up to whole seconds and never below one', () => {
    assert.equal(new TooManyRequests('x', 0).headers['retry-after'], '1');
    assert.equal(new TooManyRequests('x', 0.2).headers['retry-after'], '1');
    assert.equal(new TooManyRequests('x', 59.01).headers['retry-after'], '60');
  });

  test('an unknown error becomes a 500 with a generic message and no internals', async () => {
    for (const path of ['/v1/leak', '/v1/leak-async']) {
      const res = await fetch(served.url + path);
      assert.equal(res.status, 500, path);
      const text = await res.text();
      assertErrorBody(JSON.parse(text), {
        message: 'Internal error.',
        type: 'internal_error',
        param: null,
        code: null,
      });
      assert.doesNotMatch(text, /ECONNREFUSED|10\.1\.2\.3|switchyard|secretColumn|TypeError|at /);
    }
  });

  test("a database error the request's values caused is a 4xx in the error body, naming no table", async () => {
    const cases: Array<[string, number, string, string | null]> = [
      ['22001', 400, 'invalid_request_error', 'value_too_long'],
      ['22003', 400, 'invalid_request_error', 'number_out_of_range'],
      ['22021', 400, 'invalid_request_error', 'invalid_text'],
      ['22P02', 400, 'invalid_request_error', 'invalid_parameter'],
      ['22P05', 400, 'invalid_request_error', 'invalid_text'],
      ['23514', 400, 'invalid_request_error', 'invalid_parameter'],
      ['23503', 404, 'not_found_error', null],
      ['23505', 409, 'conflict_error', null],
    ];
    for (const [sqlState, status, type, code] of cases) {
      const res = await fetch(`${served.url}/v1/database/${sqlState}`);
      assert.equal(res.status, status, sqlState);
      const text = await res.text();
      assertErrorBody(JSON.parse(text), { type, code, param: null });
      assert.doesNotMatch(text, /children|parents|varying/, sqlState);
    }
  });

  test("a database fault that is not the input's stays a 500", async () => {
    // 42P01 undefined_table and XX000 internal_error: our bug, not the client's, and not passing.
    for (const sqlState of ['42P01', 'XX000']) {
      const res = await fetch(`${served.url}/v1/database/${sqlState}`);
      assert.equal(res.status, 500, sqlState);
      assertErrorBody(await res.json(), { message: 'Internal error.', type: 'internal_error', code: null });
    }
  });

  test('a database that is shutting down or full is a 503 to try again', async () => {
    // 57P01 admin_shutdown, 53300 too_many_connections.
    for (const sqlState of ['57P01', '53300']) {
      const res = await fetch(`${served.url}/v1/database/${sqlState}`);
      assert.equal(res.status, 503, sqlState);
      assert.equal(res.headers.get('retry-after'), '1');
      assertErrorBody(await res.json(), {
        message: 'The database is busy or unavailable; try again shortly.',
        type: 'service_unavailable_error',
        code: 'database_unavailable',
      });
    }
  });

  test('a 500 is logged for operators with the method, path, status and the original error', async () => {
    await fetch(`${served.url}/v1/leak`);
    await settleLogs();
    const line = served.log.lines().find((l) => l.message === 'request failed' && l.path === '/v1/leak');
    assert.ok(line, 'a "request failed" line was logged');
    assert.equal(line.level, 'error');
    assert.equal(line.method, 'GET');
    assert.equal(line.status, 500);
    assert.match(JSON.stringify(line.error), /ECONNREFUSED 10\.1\.2\.3:5432/);
  });

  test('client errors are not logged as failures, only in the access log', async () => {
    const start = served.log.lines().length;
    await fetch(`${served.url}/v1/throw/NotFound`);
    await settleLogs();
    const added = served.log.lines().slice(start);
    assert.deepEqual(
      added.filter((l) => l.level === 'error' || l.level === 'warn'),
      [],
    );
    const access = added.filter((l) => l.message === 'request' && l.path === '/v1/throw/NotFound');
    assert.equal(access.length, 1);
    assert.equal(access[0]!.status, 404);
    assert.equal(access[0]!.level, 'http');
  });

  test('a framework error carrying a 4xx status keeps that status in the error body', async () => {
    const res = await fetch(`${served.url}/v1/status-error`);
    assert.equal(res.status, 416);
    assertErrorBody(await res.json(), { message: 'Range Not Satisfiable', type: 'invalid_request_error' });
  });

  test('malformed JSON is a 400 with code invalid_json', async () => {
    const res = await fetch(`${served.url}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": "gpt", ',
    });
    assert.equal(res.status, 400);
    assertErrorBody(await res.json(), {
      message: /^Request body is not valid JSON/,
      type: 'invalid_request_error',
      code: 'invalid_json',
      param: null,
    });
  });

  test('a well-formed JSON body within the limit is parsed', async () => {
    const res = await fetch(`${served.url}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ model: 'm', n: 2 }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { received: { model: 'm', n: 2 } });
  });

  test('a body over the limit is a 413 with code payload_too_large', async () => {
    const res = await fetch(`${served.url}/v1/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x'.repeat(4096) }),
    });
    assert.equal(res.status, 413);
    assertErrorBody(await res.json(), { type: 'invalid_request_error', code: 'payload_too_large' });
  });

  test('an unknown route is a 404 naming the method and path', async () => {
    const res = await fetch(`${served.url}/v1/nothing-here?x=1`, { method: 'DELETE' });
    assert.equal(res.status, 404);
    assertErrorBody(await res.json(), {
      message: 'No route for DELETE /v1/nothing-here.',
      type: 'not_found_error',
      param: null,
      code: null,
    });
  });

  test('an error after the headers were sent aborts the response instead of appending an error body', async () => {
    const res = await fetch(`${served.url}/v1/partial`);
    assert.equal(res.status, 200);
    await assert.rejects(res.text());
  });
});

describe('bodies no store can hold as sent', () => {
  let served: Served;
  before(async () => {
    const router = Router();
    router.post('/json', jsonBody('1mb'), (req, res) => {
      res.json({ received: req.body });
    });
    router.post('/form', formBody('1mb', 32), (req, res) => {
      res.json({ received: req.body });
    });
    served = await serve({ routers: [{ router }] });
  });
  after(() => served.close());

  const post = (path: string, body: string | Buffer, type = 'application/json') =>
    fetch(`${served.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });

  test('a NUL character in a JSON value is a 400 naming the field', async () => {
    const res = await post('/json', '{"messages":[{"content":"a"},{"content":"b"},{"content":"x\\u0000y"}]}');
    assert.equal(res.status, 400);
    assertErrorBody(await res.json(), {
      message: /'messages\[2\]\.content'.*NUL/,
      type: 'invalid_request_error',
      param: 'messages[2].content',
      code: 'invalid_text',
    });
  });

  test('a lone surrogate in a JSON key or value is a 400 naming the field', async () => {
    const value = await post('/json', '{"name":"\\ud800"}');
    assert.equal(value.status, 400);
    assertErrorBody(await value.json(), {
      type: 'invalid_request_error',
      param: 'name',
      code: 'invalid_text',
    });
    const key = await post('/json', '{"metadata":{"\\udc00":"v"}}');
    assert.equal(key.status, 400);
    assertErrorBody(await key.json(), {
      type: 'invalid_request_error',
      param: 'metadata',
      code: 'invalid_text',
    });
  });

  test('a surrogate pair (an emoji) is text like any other and comes back as sent', async () => {
    const res = await post('/json', '{"name":"\\ud83d\\ude00 ok"}');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { received: { name: '😀 ok' } });
  });

  test('JSON nested 100 000 levels deep is a 400, and the server goes on serving', async () => {
    const depth = 100_000;
    const res = await post('/json', `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    assert.equal(res.status, 400);
    assertErrorBody(await res.json(), {
      message: /'a'.*at most 64 levels/,
      type: 'invalid_request_error',
      param: 'a',
      code: 'too_deeply_nested',
    });
    const arrays = await post('/json', `${'['.repeat(depth)}${']'.repeat(depth)}`);
    assert.equal(arrays.status, 400);
    assert.equal((await post('/json', '{"ok":true}')).status, 200);
  });

  test('a body of bytes that are not UTF-8 is a 400, not decoded into other text', async () => {
    const res = await post(
      '/json',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    );
    assert.equal(res.status, 400);
    assertErrorBody(await res.json(), {
      message: 'Request body is not valid UTF-8.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_text',
    });
  });

  test('a form value with a NUL character is a 400 naming the field; repeated names arrive as arrays', async () => {
    const res = await post('/form', 'grant_type=x&client_id=a%00b', 'application/x-www-form-urlencoded');
    assert.equal(res.status, 400);
    assertErrorBody(await res.json(), {
      type: 'invalid_request_error',
      param: 'client_id',
      code: 'invalid_text',
    });
    const repeated = await post('/form', 'scope=a&scope=b%00', 'application/x-www-form-urlencoded');
    assert.equal(repeated.status, 400);
    assertErrorBody(await repeated.json(), {
      type: 'invalid_request_error',
      param: 'scope[1]',
      code: 'invalid_text',
    });
    const fine = await post('/form', 'scope=a&scope=b', 'application/x-www-form-urlencoded');
    assert.deepEqual(await fine.json(), { received: { scope: ['a', 'b'] } });
  });
});

describe('request ids', () => {
  let served: Served;
  let seen: Array<string | undefined> = [];
  before(async () => {
    const router = Router();
    router.get('/ctx', (_req, res) => {
      seen.push(requestContext.getStore()?.requestId);
      res.json({ ok: true });
    });
    served = await serve({ routers: [{ router }] });
  });
  after(() => served.close());

  test('the server assigns every request its own id, whatever x-request-id the client sent', async () => {
    seen = [];
    const res = await fetch(`${served.url}/ctx`, { headers: { 'x-request-id': 'req-123.abc:def' } });
    const id = res.headers.get('x-request-id') ?? '';
    assert.notEqual(id, 'req-123.abc:def');
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.deepEqual(seen, [id]);
  });

  test('a missing or malformed x-request-id also gets a fresh uuid', async () => {
    seen = [];
    const a = await fetch(`${served.url}/ctx`);
    const b = await fetch(`${served.url}/ctx`, {
      headers: { 'x-request-id': 'bad id with spaces <script>' },
    });
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    assert.match(a.headers.get('x-request-id') ?? '', uuid);
    assert.match(b.headers.get('x-request-id') ?? '', uuid);
    assert.notEqual(a.headers.get('x-request-id'), b.headers.get('x-request-id'));
    assert.deepEqual(seen, [a.headers.get('x-request-id'), b.headers.get('x-request-id')]);
  });

  test('error responses carry the request id too', async () => {
    const res = await fetch(`${served.url}/missing`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  test('without the request log context a request still gets its id, and the log of a failure names it', async (t) => {
    const router = Router();
    let store: unknown = 'unset';
    router.get('/ctx', (_req, res) => {
      store = requestContext.getStore();
      res.json({ ok: true });
    });
    router.get('/boom', () => {
      throw new Error('exploded');
    });
    const quiet = await serve({ routers: [{ router }], requestLogContext: false });
    t.after(() => quiet.close());
    const ok = await fetch(`${quiet.url}/ctx`);
    assert.match(ok.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(store, undefined, 'no context is entered');
    const failed = await fetch(`${quiet.url}/boom`);
    assert.equal(failed.status, 500);
    await settleLogs();
    const line = quiet.log.lines().find((l) => l.message === 'request failed');
    assert.equal(line?.request_id, failed.headers.get('x-request-id'));
  });
});

describe('health and readiness', () => {
  test('/healthz answers 200 without consulting readiness checks', async (t) => {
    let calls = 0;
    const served = await serve({
      readiness: {
        db: async () => {
          calls++;
          throw new Error('down');
        },
      },
    });
    t.after(() => served.close());
    const res = await fetch(`${served.url}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
    assert.equal(calls, 0);
  });

  test('/readyz is 200 and lists every check when all pass', async (t) => {
    const served = await serve({ readiness: { database: async () => {}, kafka: async () => {} } });
    t.after(() => served.close());
    const res = await fetch(`${served.url}/readyz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ready', checks: { database: 'ok', kafka: 'ok' } });
  });

  test('/readyz is 503 and names the check that threw, with its message', async (t) => {
    const served = await serve({
      readiness: {
        database: async () => {},
        redis: async () => {
          throw new Error('connect ECONNREFUSED');
        },
      },
    });
    t.after(() => served.close());
    const res = await fetch(`${served.url}/readyz`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      status: 'not_ready',
      checks: { database: 'ok', redis: 'connect ECONNREFUSED' },
    });
  });

  test('/readyz is 503 and names a check that does not answer within its time limit', async (t) => {
    const hang = deferred();
    const slow: ReadinessCheck = () => hang.promise;
    const served = await serve({ readiness: { database: async () => {}, policy: slow } });
    t.after(async () => {
      hang.resolve();
      await served.close();
    });
    const { value: res, ms } = await timed(fetch(`${served.url}/readyz`));
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      status: 'not_ready',
      checks: { database: 'ok', policy: 'policy readiness check timed out' },
    });
    assert.ok(ms >= 1_900 && ms < 5_000, `answered after ${Math.round(ms)} ms, at the 2 s check limit`);
  });

  test('/readyz is 503 "stopping" while the process stops, without running the checks', async (t) => {
    let stopping = false;
    let calls = 0;
    const served = await serve({
      readiness: {
        database: async () => {
          calls++;
        },
      },
      isStopping: () => stopping,
    });
    t.after(() => served.close());
    assert.equal((await fetch(`${served.url}/readyz`)).status, 200);
    stopping = true;
    const res = await fetch(`${served.url}/readyz`);
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: 'stopping' });
    assert.equal(calls, 1);
  });
});

describe('/metrics', () => {
  test('counts requests whatever the log level (no access log line below http)', async (t) => {
    const log = captureLogger('http-test', 'info');
    const app = createHttpApp({
      service: 'http-test',
      logger: log.logger,
      metrics: createMetrics(),
      readiness: {},
      routers: [],
    });
    const server = await listen(app, '127.0.0.1', 0);
    t.after(() => server.close());
    const url = `http://127.0.0.1:${server.port}`;
    await fetch(`${url}/healthz`);
    await fetch(`${url}/healthz`);
    const text = await (await fetch(`${url}/metrics`)).text();
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="\/healthz",status="200",status_class="2xx"\} 2$/m,
    );
    assert.match(
      text,
      /^switchyard_http_request_duration_seconds_count\{service="http-test",method="GET",route="\/healthz",status_class="2xx"\} 2$/m,
    );
    await settleLogs();
    assert.ok(!log.lines().some((line) => line.message === 'request'), 'no access log line at level info');
  });

  test('serves Prometheus text with request counts per route and status', async (t) => {
    const router = Router();
    router.get('/things/:id', (_req, res) => {
      res.json({});
    });
    const served = await serve({ routers: [{ router }] });
    t.after(() => served.close());
    await fetch(`${served.url}/healthz`);
    await fetch(`${served.url}/things/1`);
    await fetch(`${served.url}/things/2`);
    await fetch(`${served.url}/nowhere`);

    const res = await fetch(`${served.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(text, /^# HELP switchyard_http_requests_total /m);
    assert.match(text, /^# TYPE switchyard_http_requests_total counter$/m);
    assert.match(text, /^# TYPE switchyard_http_request_duration_seconds histogram$/m);
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="\/healthz",status="200",status_class="2xx"\} 1$/m,
    );
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="\/things\/:id",status="200",status_class="2xx"\} 2$/m,
      'requests are labelled by route pattern, not by raw path',
    );
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="unmatched",status="404",status_class="4xx"\} 1$/m,
    );
    assert.match(
      text,
      /^switchyard_http_request_duration_seconds_count\{service="http-test",method="GET",route="\/things\/:id",status_class="2xx"\} 2$/m,
    );
    assert.match(text, /^process_cpu_user_seconds_total /m, 'default process metrics are included');
  });
});

describe('/metrics route labels', () => {
  test('a route matched by a pattern, or refused before it ran, counts under the template its handler named', async (t) => {
    const router = Router();
    // Refuses before any route runs, as authentication does, after naming the template.
    router.use('/files', (req, res, next) => {
      labelRoute(res, req.path === '/' ? '/files' : '/files/*');
      if (req.headers.authorization) next();
      else res.status(401).json({});
    });
    router.all(/^\/files(\/.*)?$/, (_req, res) => {
      res.json({});
    });
    const served = await serve({ routers: [{ router }] });
    t.after(() => served.close());
    const authorised = { headers: { authorization: 'Bearer x' } };
    await fetch(`${served.url}/files/file-1`, authorised);
    await fetch(`${served.url}/files/file-2`, authorised);
    await fetch(`${served.url}/files/file-3`);
    await fetch(`${served.url}/files`, authorised);

    const text = await (await fetch(`${served.url}/metrics`)).text();
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="\/files\/\*",status="200",status_class="2xx"\} 2$/m,
    );
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="\/files\/\*",status="401",status_class="4xx"\} 1$/m,
    );
    assert.match(
      text,
      /^switchyard_http_requests_total\{service="http-test",method="GET",route="\/files",status="200",status_class="2xx"\} 1$/m,
    );
    assert.doesNotMatch(text, /file-1|unmatched/, 'no raw path, and nothing unmatched');
  });
});

describe('listen', () => {
  test('close() lets an in-flight request finish, then resolves promptly and refuses new connections', async () => {
    const entered = deferred();
    const release = deferred();
    const router = Router();
    router.get('/slow', async (_req, res) => {
      entered.resolve();
      await release.promise;
      res.json({ finished: true });
    });
    const served = await serve({ routers: [{ router }] });
    const inflight = fetch(`${served.url}/slow`);
    await entered.promise;
    const closing = served.close();
    await sleep(20);
    release.resolve();
    const released = performance.now();
    const res = await inflight;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { finished: true });
    await closing;
    const ms = performance.now() - released;
    assert.ok(
      ms < 2_000,
      `close() resolved ${Math.round(ms)} ms after the last response, not at the keep-alive timeout`,
    );
    await assert.rejects(fetch(`${served.url}/healthz`));
  });

  test("requests and responses are born on the app's own prototypes, so Express need not move them", async () => {
    const app = express();
    app.get('/shape', (req, res) => {
      res.json({ probe: req.get('x-probe') ?? null });
    });
    const seen: boolean[] = [];
    const server = createServer(serverClasses(app), (req, res) => {
      // Before Express has touched them.
      seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
      app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/shape`, { headers: { 'x-probe': 'p' } });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { probe: 'p' });
      assert.deepEqual(seen, [true, true]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('listening on port 0 picks a free port and reports it', async () => {
    const a = await serve();
    const b = await serve();
    try {
      assert.notEqual(a.url, b.url);
      assert.equal((await fetch(`${a.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${b.url}/healthz`)).status, 200);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('toAppError', () => {
  test('keeps an AppError as it is and wraps anything else as a generic InternalError', () => {
    const original = new Conflict('dup');
    assert.equal(toAppError(original), original);
    const cause = new Error('secret detail');
    const wrapped = toAppError(cause);
    assert.ok(wrapped instanceof InternalError);
    assert.equal(wrapped.status, 500);
    assert.equal(wrapped.message, 'Internal error.');
    assert.equal(wrapped.cause, cause);
    assert.equal(toAppError('a string').message, 'Internal error.');
  });

  test('UpstreamError keeps an HTTP error status and maps anything else to 502', () => {
    assert.equal(new UpstreamError(429, 'x').status, 429);
    assert.equal(new UpstreamError(504, 'x').status, 504);
    assert.equal(new UpstreamError(200, 'x').status, 502);
    assert.equal(new UpstreamError(0, 'x').status, 502);
  });

  test('error classes carry their own name', () => {
    assert.equal(new BadRequest('x').name, 'BadRequest');
    assert.equal(new TooManyRequests('x', 1).name, 'TooManyRequests');
  });
});
