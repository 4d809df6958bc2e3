import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type express from 'express';
import {
  ALL_SCOPES,
  DATA_PLANE_SCOPES,
  hasScope,
  kindCanHold,
  type Principal,
  type Scope,
  scopesForKind,
  scopesForWorkspaceRole,
} from '@switchyard/access';
import { createHttpApp, jsonBody, listen } from '@switchyard/http';
import { createLogger, createMetrics } from '@switchyard/core';
import { ScopedRouter } from './scoped-router.ts';

function principal(kind: Principal['kind'], scopes: Scope[]): Principal {
  return {
    apiKeyId: 'k',
    organisationId: 'o',
    workspaceId: kind === 'organisation_admin' ? null : 'w',
    workspaceSlug: null,
    kind,
    scopes,
    expiresAt: null,
    userId: null,
    name: 'test',
    organisationCreatedAt: null,
  };
}

describe('scopes', () => {
  test('a key has a scope only when it holds it and its kind can hold it', () => {
    assert.equal(hasScope(principal('workspace_service', ['configs.read']), 'configs.read'), true);
    assert.equal(hasScope(principal('workspace_service', ['configs.read']), 'configs.list'), false);
    // Held by mistake (e.g. written straight to the store): still not usable by the wrong kind.
    assert.equal(hasScope(principal('workspace_service', ['workspaces.create']), 'workspaces.create'), false);
    assert.equal(
      hasScope(principal('organisation_admin', ['completions.write']), 'completions.write'),
      false,
    );
    assert.equal(hasScope(principal('organisation_admin', ['workspaces.create']), 'workspaces.create'), true);
  });

  test('organisation admin keys hold no data-plane scope; workspace keys no organisation scope', () => {
    for (const scope of DATA_PLANE_SCOPES)
      assert.equal(kindCanHold('organisation_admin', scope), false, scope);
    assert.ok(scopesForKind('workspace_service').includes('completions.write'));
    assert.ok(!scopesForKind('workspace_user').includes('organisation_settings.update'));
    assert.equal(scopesForKind('organisation_admin').length + DATA_PLANE_SCOPES.length, ALL_SCOPES.length);
  });

  test('the named scopes exist', () => {
    for (const scope of [
      'organisation_settings.read',
      'organisation_settings.update',
      'organisation_guardrails.create',
      'organisation_guardrails.read',
      'organisation_guardrails.list',
      'organisation_guardrails.update',
      'organisation_guardrails.delete',
      'organisation_exclusions.list',
      'organisation_exclusions.update',
      'guardrails.invoke',
      'agents.invoke',
    ]) {
      assert.ok((ALL_SCOPES as readonly string[]).includes(scope), scope);
    }
  });

  test('roles: admin ⊇ manager ⊇ member, members only read configs and cannot export logs', () => {
    const admin = new Set(scopesForWorkspaceRole('admin'));
    const manager = new Set(scopesForWorkspaceRole('manager'));
    const member = scopesForWorkspaceRole('member');
    for (const scope of manager) assert.ok(admin.has(scope), scope);
    for (const scope of member) assert.ok(manager.has(scope), scope);
    assert.ok(!manager.has('api_keys.read') || !manager.has('api_keys.create'));
    assert.ok(member.includes('configs.read') && !member.includes('configs.create'));
    assert.ok(!member.includes('logs.export'));
    for (const scope of DATA_PLANE_SCOPES) assert.ok(member.includes(scope), scope);
  });
});

describe('ScopedRouter', () => {
  let url: string;
  let close: () => Promise<void>;
  const root = new ScopedRouter();

  before(async () => {
    const child = new ScopedRouter({ body: jsonBody('1kb') });
    child.get('/:id', 'configs.read', (req, res) => {
      res.json({ id: req.params.id });
    });
    child.post('/', 'configs.create', (req, res) => {
      res.json({ got: req.body });
    });
    // The test's own authentication: the scopes come from a header.
    const authenticate: express.RequestHandler = (req, _res, next) => {
      const scopes = String(req.headers['x-scopes'] ?? '')
        .split(',')
        .filter(Boolean) as Scope[];
      req.principal = principal('workspace_service', scopes);
      next();
    };
    root.mount(['/v2/things', '/v1/things'], child, authenticate);
    // Mounted without authentication: a public route needs no principal at all.
    root.mount(
      '/open',
      new ScopedRouter().get('/hello', 'public', (_req, res) => void res.json({ hi: 1 })),
    );
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

  test('lists each route under each prefix with its scope', () => {
    assert.deepEqual(
      root.routes().map((r) => `${r.method} ${r.path} ${r.scope}`),
      [
        'GET /v2/things/:id configs.read',
        'POST /v2/things configs.create',
        'GET /v1/things/:id configs.read',
        'POST /v1/things configs.create',
        'GET /open/hello public',
      ],
    );
  });

  test('a key without the scope gets the one 403 before its body is read; with it the route runs', async () => {
    const refused = await fetch(`${url}/v1/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-scopes': 'configs.read' },
      body: '{"not json',
    });
    assert.equal(refused.status, 403);
    const body = (await refused.json()) as { error: { code: string; type: string } };
    assert.equal(body.error.code, 'missing_scope');
    assert.equal(body.error.type, 'permission_error');

    const allowed = await fetch(`${url}/v2/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-scopes': 'configs.create' },
      body: '{"a":1}',
    });
    assert.deepEqual(await allowed.json(), { got: { a: 1 } });
    const read = await fetch(`${url}/v2/things/abc`, { headers: { 'x-scopes': 'configs.read' } });
    assert.deepEqual(await read.json(), { id: 'abc' });
  });

  test('a public route answers a caller without any key', async () => {
    const res = await fetch(`${url}/open/hello`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { hi: 1 });
  });

  test('a NUL character in a path parameter or query value is a 400 naming it; other escapes pass', async () => {
    const headers = { 'x-scopes': 'configs.read' };
    const param = await fetch(`${url}/v2/things/ab%00c`, { headers });
    assert.equal(param.status, 400);
    assert.deepEqual(((await param.json()) as { error: unknown }).error, {
      message: "Invalid path parameter 'id': text must not hold a NUL character (U+0000).",
      type: 'invalid_request_error',
      param: 'id',
      code: 'invalid_text',
    });
    const query = await fetch(`${url}/open/hello?name=a%00`);
    assert.equal(query.status, 400);
    const error = ((await query.json()) as { error: { param: string; code: string } }).error;
    assert.equal(error.param, 'name');
    assert.equal(error.code, 'invalid_text');
    const escaped = await fetch(`${url}/v2/things/a%20b%F0%9F%98%80?q=%C3%A9`, { headers });
    assert.deepEqual(await escaped.json(), { id: 'a b😀' });
  });

  test('a query escape that is not UTF-8, or not an escape, is a 400 naming the parameter', async () => {
    for (const query of ['name=%FF', 'name=a%', 'name=%zz', 'name=%C3']) {
      const res = await fetch(`${url}/open/hello?${query}`);
      assert.equal(res.status, 400, query);
      assert.deepEqual(((await res.json()) as { error: unknown }).error, {
        message: "Query parameter 'name' is not valid percent-encoded UTF-8.",
        type: 'invalid_request_error',
        param: 'name',
        code: 'invalid_text',
      });
    }
    const plus = await fetch(`${url}/open/hello?name=a+b%2B`);
    assert.equal(plus.status, 200);
  });

  test('a pattern route whose examples disagree with its scope function is refused at start-up', () => {
    assert.throws(
      () =>
        new ScopedRouter().all(/^\/x/, () => 'files.read', [
          { method: 'POST', path: '/x', scope: 'files.write' },
        ]),
      /needs files.read, described as files.write/,
    );
  });
});
