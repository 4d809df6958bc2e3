import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import type express from 'express';
import { events } from '@switchyard/proto';
import {
  ALL_SCOPES,
  auditTrail,
  type AuditEntry,
  type AuditSink,
  type Principal,
  type Scope,
} from '@switchyard/access';
import { busAuditSink, serviceAuditSink } from './audit.ts';
import { type EventBus, MemoryEventBus, Topics } from '@switchyard/adapters';
import { createHttpApp, jsonBody, listen } from '@switchyard/http';
import { createLogger, createMetrics } from '@switchyard/core';
import { ScopedRouter } from './scoped-router.ts';

const logger = createLogger('test', 'error');
logger.silent = true;

const caller: Principal = {
  apiKeyId: '00000000-0000-4000-8000-00000000000a',
  organisationId: '00000000-0000-4000-8000-00000000000b',
  workspaceId: '00000000-0000-4000-8000-00000000000c',
  workspaceSlug: 'ws',
  kind: 'workspace_service',
  scopes: [...ALL_SCOPES],
  expiresAt: null,
  userId: '00000000-0000-4000-8000-00000000000d',
  name: 'ci key',
  organisationCreatedAt: null,
};

/** The routes of a small service: management reads and writes, a model call, a pattern route. */
function routes(): ScopedRouter {
  const root = new ScopedRouter();
  const configs = new ScopedRouter({ body: jsonBody('1kb') });
  configs.get('/:slug', 'configs.read', (req, res) => void res.json({ slug: req.params.slug }));
  configs.post('/', 'configs.create', (req, res) => void res.json({ created: req.body }));
  configs.put('/:slug', 'configs.update', (req, res) => {
    if (req.params.slug === 'missing') res.status(404).json({ error: 'no' });
    else res.json({ updated: req.params.slug });
  });
  configs.delete('/:slug/versions/:versionId', 'configs.delete', (_req, res) => void res.json({}));
  // An answer larger than the socket buffers on both ends: it cannot all be sent before the client reads it.
  configs.post(
    '/:slug/export',
    'configs.create',
    (_req, res) => void res.json({ data: 'x'.repeat(32 << 20) }),
  );
  const data = new ScopedRouter();
  data.post('/chat/completions', 'completions.write', (_req, res) => void res.json({ ok: 1 }));
  data.all(
    /^\/things(\/.*)?$/,
    (method) => (method === 'GET' ? 'configs.read' : ('configs.update' as Scope)),
    [{ method: 'POST', path: '/things/x', scope: 'configs.update' }],
    (_req, res) => void res.status(201).json({}),
  );
  const authenticate: express.RequestHandler = (req, _res, next) => {
    req.principal = caller;
    next();
  };
  root.mount('/v2/configs', configs, authenticate);
  root.mount('/v1', data, authenticate);
  return root;
}

async function serve(
  sink: AuditSink,
  trustProxy?: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const app = createHttpApp({
    service: 'test',
    logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ router: auditTrail(sink) }, { router: routes().router }],
    trustProxy,
  });
  const server = await listen(app, '127.0.0.1', 0);
  return { url: `http://127.0.0.1:${server.port}`, close: server.close };
}

/** Time for anything that would be recorded late to show up. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('the audit trail of ScopedRouter routes', () => {
  const entries: AuditEntry[] = [];
  let url: string;
  let close: () => Promise<void>;

  before(async () => {
    ({ url, close } = await serve((entry) => entries.push(entry)));
  });
  after(() => close());

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  test('a successful write is recorded with who, what, when and from where, and no body', async () => {
    entries.length = 0;
    const before = Date.now();
    const res = await call(
      'POST',
      '/v2/configs?secret=q',
      { api_key: 'sk-never-recorded' },
      {
        'user-agent': 'audit-test/1.0',
        'x-forwarded-for': '203.0.113.9',
      },
    );
    assert.equal(res.status, 200);
    assert.equal(entries.length, 1);
    const entry = entries[0]!;
    assert.equal(entry.organisationId, caller.organisationId);
    assert.equal(entry.workspaceId, caller.workspaceId);
    assert.equal(entry.apiKeyId, caller.apiKeyId);
    assert.equal(entry.userId, caller.userId);
    assert.equal(entry.keyName, 'ci key');
    assert.equal(entry.authMethod, 'api_key');
    assert.equal(entry.method, 'POST');
    assert.equal(entry.route, '/v2/configs');
    assert.equal(entry.path, '/v2/configs', 'no query string');
    assert.equal(entry.scope, 'configs.create');
    assert.equal(entry.status, 200);
    assert.equal(entry.resourceId, '');
    assert.ok(Number(entry.occurredAtMs) >= before && Number(entry.occurredAtMs) <= Date.now());
    assert.equal(entry.clientIp, '127.0.0.1', 'X-Forwarded-For is not trusted by default');
    assert.equal(entry.userAgent, 'audit-test/1.0');
    assert.equal(entry.requestId, res.headers.get('x-request-id'));
    assert.ok(!JSON.stringify(entry).includes('sk-never-recorded'));
    assert.ok(!JSON.stringify(entry).includes('secret'));
  });

  test("a write is recorded before its answer is sent: it is there when the answer's head arrives", async () => {
    entries.length = 0;
    const res = await call('POST', '/v2/configs/prod/export', {});
    assert.equal(res.status, 200);
    assert.deepEqual(
      entries.map((e) => [e.method, e.route, e.requestId]),
      [['POST', '/v2/configs/:slug/export', res.headers.get('x-request-id')]],
    );
    const body = (await res.json()) as { data: string };
    assert.equal(body.data.length, 32 << 20, 'the whole answer still arrives');
  });

  test('the route pattern and the resource the path names', async () => {
    entries.length = 0;
    assert.equal((await call('PUT', '/v2/configs/prod', {})).status, 200);
    assert.equal((await call('DELETE', '/v2/configs/prod/versions/7')).status, 200);
    assert.deepEqual(
      entries.map((e) => [e.method, e.route, e.path, e.resourceId]),
      [
        ['PUT', '/v2/configs/:slug', '/v2/configs/prod', 'prod'],
        ['DELETE', '/v2/configs/:slug/versions/:versionId', '/v2/configs/prod/versions/7', '7'],
      ],
    );
  });

  test('reads, model calls and failed writes are not recorded', async () => {
    entries.length = 0;
    assert.equal((await call('GET', '/v2/configs/prod')).status, 200);
    assert.equal((await call('POST', '/v1/chat/completions', {})).status, 200);
    assert.equal((await call('PUT', '/v2/configs/missing', {})).status, 404);
    assert.equal(
      (await call('POST', '/v2/configs', undefined, { 'content-type': 'application/json' })).status,
      200,
    );
    assert.equal(
      (
        await fetch(`${url}/v2/configs`, {
          method: 'POST',
          body: '{"bad',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
      400,
    );
    await settled();
    assert.deepEqual(
      entries.map((e) => `${e.method} ${e.route} ${e.status}`),
      ['POST /v2/configs 200'],
    );
  });

  test('a pattern route records a management write by the scope it picked', async () => {
    entries.length = 0;
    assert.equal((await call('POST', '/v1/things/x', {})).status, 201);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.scope, 'configs.update');
    assert.equal(entries[0]!.status, 201);
  });
});

describe('audit events on the bus', () => {
  test('a write becomes an AuditEvent keyed by organisation', async () => {
    const bus = new MemoryEventBus({ retainAll: true });
    const server = await serve(busAuditSink(bus, 'control-plane', logger));
    try {
      const res = await fetch(`${server.url}/v2/configs/prod`, { method: 'PUT' });
      assert.equal(res.status, 200);
      const published: events.AuditEvent[] = [];
      const sub = await bus.subscribe({
        groupId: 'audit-test',
        topics: [Topics.audit],
        fromBeginning: true,
        handler: async (message) => {
          assert.equal(message.key, caller.organisationId);
          published.push(fromBinary(events.AuditEventSchema, message.value));
        },
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await sub.stop();
      assert.equal(published.length, 1);
      assert.equal(published[0]!.service, 'control-plane');
      assert.equal(published[0]!.route, '/v2/configs/:slug');
      assert.match(published[0]!.id, /^[0-9a-f-]{36}$/);
    } finally {
      await server.close();
      await bus.close();
    }
  });

  test('a failing bus fails no request', async () => {
    const broken = {
      publish() {
        throw new Error('broker down');
      },
    } as unknown as EventBus;
    const server = await serve(busAuditSink(broken, 'admin', logger));
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${server.url}/v2/configs/prod`, { method: 'PUT' });
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { updated: 'prod' });
      }
    } finally {
      await server.close();
    }
  });

  test('a service serving management writes without a bus is a wiring error', () => {
    assert.throws(
      () => serviceAuditSink('admin', routes().routes(), undefined, logger),
      /needs the event bus/,
    );
    const readsOnly = new ScopedRouter().get('/x', 'configs.read', (_req, res) => void res.json({}));
    assert.equal(serviceAuditSink('log-export', readsOnly.routes(), undefined, logger), undefined);
  });

  test('mount prefixes must be literal, so that a route pattern is its base URL and path', () => {
    assert.throws(() => new ScopedRouter().mount('/v1/:org', new ScopedRouter()), /literal/);
  });
});

describe('the client address', () => {
  test('X-Forwarded-For counts only when the trust proxy setting trusts the sender', async () => {
    for (const [trust, expected] of [
      [undefined, '127.0.0.1'],
      ['false', '127.0.0.1'],
      ['loopback', '203.0.113.9'],
      ['1', '203.0.113.9'],
    ] as const) {
      const entries: AuditEntry[] = [];
      const server = await serve((entry) => entries.push(entry), trust);
      try {
        const res = await fetch(`${server.url}/v2/configs/prod`, {
          method: 'PUT',
          headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' },
        });
        assert.equal(res.status, 200);
        await settled();
        assert.equal(entries[0]?.clientIp, expected, `trust proxy ${String(trust)}`);
      } finally {
        await server.close();
      }
    }
  });
});
