import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from 'express';
import {
  createMetrics,
  NotImplemented,
  ServiceUnavailable,
  Unauthorized,
  type Logger,
} from '@switchyard/core';
import { type CapturedLogger, captureLogger, settleLogs } from '@switchyard/core/testing';
import { createHttpApp, jsonBody, listen } from './http.ts';

type Line = Record<string, unknown>;

function routes(logger: () => Logger): Router {
  const router = Router();
  router.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });
  router.post('/echo', jsonBody('1kb'), (req, res) => {
    logger().warn('handler saw a body', { keys: Object.keys(req.body as object) });
    res.json(req.body);
  });
  router.get('/key', () => {
    throw new Unauthorized();
  });
  router.get('/todo', () => {
    throw new NotImplemented('Exports to tape are not built yet.', { code: 'not_built' });
  });
  router.get('/down', () => {
    throw new ServiceUnavailable('The store is away.', { code: 'store_unavailable' });
  });
  router.get('/boom', () => {
    throw new TypeError('Cannot read properties of undefined');
  });
  return router;
}

for (const requestLogContext of [true, false]) {
  describe(`access and error log lines (request log context ${requestLogContext ? 'on' : 'off'})`, () => {
    let log: CapturedLogger;
    let url: string;
    let close: () => Promise<void>;

    before(async () => {
      log = captureLogger('access-test', 'http');
      const app = createHttpApp({
        service: 'access-test',
        logger: log.logger,
        metrics: createMetrics(),
        readiness: {},
        routers: [{ router: routes(() => log.logger) }],
        requestLogContext,
      });
      const server = await listen(app, '127.0.0.1', 0);
      url = `http://127.0.0.1:${server.port}`;
      close = server.close;
    });
    after(() => close());

    /** Sends a request; returns its status, its x-request-id and the lines logged for it. */
    async function send(path: string, init?: RequestInit) {
      const res = await fetch(`${url}${path}`, init);
      await res.text();
      const requestId = res.headers.get('x-request-id')!;
      // The access line is written when the response is done, just after the client has it.
      for (let i = 0; i < 50 && !log.lines().some((l) => isAccess(l, requestId)); i += 1) {
        await settleLogs();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return { status: res.status, requestId, lines: log.lines().filter((l) => l.request_id === requestId) };
    }
    const isAccess = (line: Line, requestId: string) =>
      line.message === 'request' && line.request_id === requestId;

    test('every request, whatever its outcome, has an access line with its request id', async () => {
      const outcomes = [
        await send('/ok'),
        await send('/echo', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"a":',
        }),
        await send('/nowhere'),
        await send('/key'),
        await send('/todo'),
        await send('/boom'),
        await send('/down'),
      ];
      assert.deepEqual(
        outcomes.map((o) => o.status),
        [200, 400, 404, 401, 501, 500, 503],
      );
      for (const { status, requestId, lines } of outcomes) {
        const access = lines.filter((l) => l.message === 'request');
        assert.equal(access.length, 1, `one access line for ${status}`);
        assert.equal(access[0]!.level, 'http');
        assert.equal(access[0]!.status, status);
        assert.match(requestId, /^[0-9a-f-]{36}$/);
      }
      const accessLines = log.lines().filter((l) => l.message === 'request');
      assert.ok(accessLines.every((l) => typeof l.request_id === 'string' && l.request_id !== ''));
    });

    test('a refused request (4xx) logs at info and a feature not built (501) at warn, without a stack', async () => {
      for (const [path, init, status, code] of [
        [
          '/echo',
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' },
          400,
          'invalid_json',
        ],
        ['/nowhere', undefined, 404, 'not_found_error'],
        ['/key', undefined, 401, 'invalid_api_key'],
      ] as const) {
        const { lines } = await send(path, init);
        const refused = lines.filter((l) => l.message !== 'request');
        assert.deepEqual(
          refused.map((l) => [l.level, l.message, l.status, l.code]),
          [['info', 'request refused', status, code]],
        );
        assert.ok(!JSON.stringify(refused).includes('"stack"'), `no stack for ${status}`);
      }
      const { lines } = await send('/todo');
      const notBuilt = lines.filter((l) => l.message !== 'request');
      assert.deepEqual(
        notBuilt.map((l) => [l.level, l.message, l.status, l.code, l.error]),
        [['warn', 'request not implemented', 501, 'not_built', 'Exports to tape are not built yet.']],
      );
      assert.ok(!JSON.stringify(notBuilt).includes('"stack"'));
    });

    test('a server failure logs at error: an unexpected one with its stack, a deliberate one without', async () => {
      const boom = (await send('/boom')).lines.filter((l) => l.message !== 'request');
      assert.equal(boom.length, 1);
      assert.equal(boom[0]!.level, 'error');
      assert.equal(boom[0]!.message, 'request failed');
      assert.equal(boom[0]!.status, 500);
      const error = boom[0]!.error as { name: string; stack: string };
      assert.equal(error.name, 'TypeError');
      assert.match(error.stack, /TypeError: Cannot read properties of undefined\n\s+at /);

      const down = (await send('/down')).lines.filter((l) => l.message !== 'request');
      assert.deepEqual(
        down.map((l) => [l.level, l.message, l.status, l.code, l.error]),
        [['error', 'request failed', 503, 'store_unavailable', 'The store is away.']],
      );
    });

    if (requestLogContext) {
      test("a line a handler writes after reading the body carries the request's id", async () => {
        const { status, lines } = await send('/echo', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ a: 'x'.repeat(600) }),
        });
        assert.equal(status, 200);
        assert.deepEqual(
          lines.filter((l) => l.message !== 'request').map((l) => [l.level, l.message]),
          [['warn', 'handler saw a body']],
        );
      });
    }
  });
}
