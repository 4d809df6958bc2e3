import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type express from 'express';
import { z } from 'zod';
import type { Principal, Scope } from '@switchyard/access';
import { createHttpApp, jsonBody, listen } from '@switchyard/http';
import { createLogger, createMetrics, parseInput, parsePage } from '@switchyard/core';
import { ScopedRouter } from './scoped-router.ts';

const principal = (scopes: Scope[]): Principal => ({
  apiKeyId: 'k',
  organisationId: 'o',
  workspaceId: 'w',
  workspaceSlug: null,
  kind: 'workspace_service',
  scopes,
  expiresAt: null,
  userId: null,
  name: 'test',
  organisationCreatedAt: null,
});

/** What parseInput answers for the same input: the error a declared parser must give too. */
function refusalOf(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    const e = err as { status: number; message: string; param: string | null; code: string | null };
    return { status: e.status, message: e.message, param: e.param, code: e.code };
  }
  return 'accepted';
}

const thingBody = z.strictObject({ name: z.string().min(1), size: z.int().default(1) });
const thingQuery = z.object({ sort: z.enum(['asc', 'desc']).optional() });
const kindParams = z.object({ kind: z.enum(['a', 'b']), 'sub-kind': z.enum(['x', 'y']) });
const slug = z.string().regex(/^[a-z]{1,8}$/, 'a slug');

describe('a declared route validates with the schemas it declares', () => {
  let url: string;
  let close: () => Promise<void>;

  before(async () => {
    const child = new ScopedRouter({ body: jsonBody('1kb') });
    child.post(
      '/:kind/:sub',
      {
        scope: 'configs.create',
        params: kindParams,
        paramNames: { sub: 'sub-kind' },
        query: thingQuery,
        body: thingBody,
      },
      (req, res, _next, input) => {
        res.json({ params: input.params(req), query: input.query(req), body: input.body(req) });
      },
    );
    child.get(
      '/:slug',
      { scope: 'configs.read', params: z.object({ slug }), query: 'none', page: true },
      (req, res, _next, input) => {
        res.json({ slug: input.param(req, 'slug'), page: input.page(req) });
      },
    );
    child.get(
      '/:slug/named',
      { scope: 'configs.read', params: z.object({ slug }), query: 'none' },
      (req, res, _next, input) => {
        res.json({ slug: input.param(req, 'slug', 'slug') });
      },
    );
    child.put(
      '/:slug',
      {
        scope: 'configs.update',
        query: 'none',
        body: {
          contentTypes: ['application/json'],
          schema: z.strictObject({ on: z.boolean().default(false) }),
          optional: true,
        },
      },
      (req, res, _next, input) => {
        res.json(input.body(req));
      },
    );
    const authenticate: express.RequestHandler = (req, _res, next) => {
      req.principal = principal(
        String(req.headers['x-scopes'] ?? '')
          .split(',')
          .filter(Boolean) as Scope[],
      );
      next();
    };
    const root = new ScopedRouter().mount('/things', child, authenticate);
    const logger = createLogger('test', 'error');
    logger.silent = true;
    const app = createHttpApp({
      service: 'test',
      logger,
      metrics: createMetrics(),
      readiness: {},
      routers: [{ router: root.router }],
    });
    const server = await listen(app, '127.0.0.1', 0);
    url = `http://127.0.0.1:${server.port}`;
    close = () => server.close();
  });
  after(() => close());

  const call = async (method: string, path: string, scopes: string, body?: string) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-scopes': scopes, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body,
    });
    const json = (await res.json()) as {
      error?: { message: string; param: string | null; code: string | null };
    };
    return { status: res.status, json };
  };
  const refusal = (res: Awaited<ReturnType<typeof call>>) =>
    res.status === 200
      ? 'accepted'
      : {
          status: res.status,
          message: res.json.error?.message,
          param: res.json.error?.param,
          code: res.json.error?.code,
        };

  test('parses path, query and body with the declared schemas, as the client sent them', async () => {
    const res = await call('POST', '/things/a/y?sort=asc', 'configs.create', '{"name":"n"}');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      params: { kind: 'a', 'sub-kind': 'y' },
      query: { sort: 'asc' },
      body: { name: 'n', size: 1 },
    });
  });

  test("its refusals are parseInput's, word for word, in the handler's order", async () => {
    assert.deepEqual(
      refusal(await call('POST', '/things/c/y', 'configs.create', '{"name":"n"}')),
      refusalOf(() => parseInput(kindParams, { kind: 'c', 'sub-kind': 'y' }, 'path')),
    );
    assert.equal((await call('POST', '/things/a/z', 'configs.create', '{}')).json.error?.param, 'sub-kind');
    assert.deepEqual(
      refusal(await call('POST', '/things/a/y?sort=up', 'configs.create', '{"name":"n"}')),
      refusalOf(() => parseInput(thingQuery, { sort: 'up' }, 'query')),
    );
    assert.deepEqual(
      refusal(await call('POST', '/things/a/y', 'configs.create', '{"name":"n","extra":1}')),
      refusalOf(() => parseInput(thingBody, { name: 'n', extra: 1 })),
    );
    assert.deepEqual(
      refusal(await call('GET', '/things/NOPE', 'configs.read')),
      refusalOf(() => parseInput(slug, 'NOPE', 'path')),
    );
    assert.deepEqual(
      refusal(await call('GET', '/things/NOPE/named', 'configs.read')),
      refusalOf(() => parseInput(slug, 'NOPE', 'path', 'slug')),
    );
    assert.deepEqual(
      refusal(await call('GET', '/things/ok?page_size=0', 'configs.read')),
      refusalOf(() => parsePage({ page_size: '0' })),
    );
  });

  test('the scope is checked first: a key without it gets the 403 whatever it sent', async () => {
    const res = await call('POST', '/things/c/z?sort=up', 'configs.read', '{"not json');
    assert.equal(res.status, 403);
    assert.equal(res.json.error?.code, 'missing_scope');
  });

  test('an optional body may be absent: it is read as {}', async () => {
    const res = await fetch(`${url}/things/ok`, { method: 'PUT', headers: { 'x-scopes': 'configs.update' } });
    assert.deepEqual(await res.json(), { on: false });
  });

  test('the page parameters are parsePage’s', async () => {
    const res = await call('GET', '/things/ok?current_page=2&page_size=10', 'configs.read');
    assert.deepEqual(res.json, { slug: 'ok', page: parsePage({ current_page: '2', page_size: '10' }) });
  });
});

describe('what a route declares is recorded with it', () => {
  test('a declared route carries its input; a route declared with a bare scope carries none', () => {
    const router = new ScopedRouter()
      .get('/bare', 'configs.read', (_req, res) => void res.json({}))
      .get(
        '/declared',
        { scope: 'configs.read', summary: 'Reads.', query: thingQuery },
        (_req, res) => void res.json({}),
      )
      .delete(
        '/declared',
        { scope: 'configs.delete', query: 'none', body: 'none' },
        (_req, res) => void res.json({}),
      );
    const [bare, read, remove] = router.routes('/v1');
    assert.equal(bare?.input, undefined);
    assert.deepEqual(read?.input, { summary: 'Reads.', query: thingQuery, body: 'none' });
    assert.equal(read?.scope, 'configs.read');
    assert.deepEqual(remove?.input, { query: 'none', body: 'none' });
  });

  test('declaring a parameter the path does not have is refused at start-up, naming the route', () => {
    assert.throws(
      () =>
        new ScopedRouter().get(
          '/:id',
          { scope: 'configs.read', params: z.object({ slug }), query: 'none' },
          (_req, res) => void res.json({}),
        ),
      /route GET \/:id: declares the path parameter 'slug', not in its path/,
    );
    assert.throws(
      () =>
        new ScopedRouter().get(
          '/:id',
          { scope: 'configs.read', paramNames: { sub: 'sub-type' }, query: 'none' },
          (_req, res) => void res.json({}),
        ),
      /route GET \/:id: renames :sub, not in its path/,
    );
  });

  test("a pattern route's operations take their scope from it, and must be paths it serves", () => {
    const scopeOf = (method: string) => (method === 'GET' ? 'files.read' : 'files.write');
    const routes = new ScopedRouter()
      .all(/^\/v1\/files(\/|$)/, scopeOf, {
        examples: [{ method: 'GET', path: '/v1/files', scope: 'files.read' }],
        operations: [
          { method: 'GET', path: '/v1/files', query: 'none', forwarded: true },
          { method: 'DELETE', path: '/v1/files/:file_id', query: 'none', body: 'none', forwarded: true },
        ],
      })
      .routes();
    assert.deepEqual(
      routes[0]?.operations?.map((o) => `${o.method} ${o.path} ${o.scope} ${String(o.input.body)}`),
      ['GET /v1/files files.read none', 'DELETE /v1/files/:file_id files.write none'],
    );
    assert.throws(
      () =>
        new ScopedRouter().all(/^\/v1\/files(\/|$)/, scopeOf, {
          examples: [],
          operations: [{ method: 'GET', path: '/v1/models', query: 'none' }],
        }),
      /route GET \/v1\/models: not served by/,
    );
  });
});
