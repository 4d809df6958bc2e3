import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Router } from 'express';
import { adminService, type Admin } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { seedOrganisation, type SeededOrganisation } from '@switchyard/control-plane/testing';
import { gatewayService } from '@switchyard/gateway';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import {
  ALL_SCOPES,
  kindCanHold,
  scopeLevel,
  scopesForKind,
  scopesForWorkspaceRole,
  type Scope,
} from '@switchyard/access';
import type { DeclaredRoute, HttpMethod, ServiceDefinition, ServiceName } from '@switchyard/runtime';
import {
  eventually,
  startServiceHarness,
  type HarnessResponse,
  type ServiceHarness,
} from '@switchyard/testing';

/**
 * The route/permission matrix: every route every service serves, called with no key, with
 * keys of each kind, with keys that hold exactly the route's scope or every scope but it, and
 * with keys of another organisation and another workspace. The routes come from the services
 * themselves, so a route added later is in the matrix at once.
 */

const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];
const HTTP_SERVICES: ServiceName[] = ['control-plane', 'admin', 'log-export', 'gateway'];

let h: ServiceHarness;
let rival: SeededOrganisation;

/** One request the matrix makes: a route with its parameters filled in. */
interface Call {
  method: HttpMethod;
  path: string;
  scope: Scope;
  template: string;
}

let calls: Call[] = [];
/** Routes that need only an authenticated caller and decide the rest themselves; tested on their own. */
let openToAnyCaller: DeclaredRoute[] = [];
/** Routes that need no caller at all (OAuth's protocol endpoints); tested on their own. */
let publicRoutes: DeclaredRoute[] = [];
/** SCIM's protocol endpoints: no API key, the organisation's SCIM token instead; tested on their own. */
let scimRoutes: DeclaredRoute[] = [];
const isScim = (route: DeclaredRoute) => route.path.startsWith('/scim/');

const NOTHING = randomUUID();

/** Fills each `:param` with something that names no resource: a call the key may make then changes nothing. */
function harmless(template: string): string {
  return template
    .replace('/:type/:sub', '/workspace/service')
    .replace(/:(slug)\b/g, 'matrix-nothing')
    .replace(/:\w+/g, NOTHING);
}

function callsOf(routes: DeclaredRoute[]): Call[] {
  return routes.flatMap((route): Call[] => {
    if (route.method === 'ALL') {
      return route.examples.map((e) => ({
        method: e.method,
        path: e.path,
        scope: e.scope,
        template: e.path,
      }));
    }
    if (route.scope === 'authenticated' || route.scope === 'public' || route.scope === null) return [];
    return [{ method: route.method, path: harmless(route.path), scope: route.scope, template: route.path }];
  });
}

/** Bodies are empty objects: a permitted call is then refused by validation (400) or finds nothing (404), and stores nothing. */
function send(call: Call, key: string | undefined, path = call.path): Promise<HarnessResponse> {
  const hasBody = call.method !== 'GET' && call.method !== 'DELETE';
  return h.request(call.method, path, { key, ...(hasBody ? { json: {} } : {}) });
}

const label = (call: Call) => `${call.method} ${call.path} (${call.scope})`;

function assertPermitted(res: HarnessResponse, call: Call, who: string): void {
  assert.ok(
    res.status !== 401 && res.status !== 403,
    `${who}: ${label(call)} was refused with ${res.status}: ${res.text}`,
  );
  assert.ok(
    res.status < 500 || notBuilt(res),
    `${who}: ${label(call)} failed with ${res.status}: ${res.text}`,
  );
}

/** A route whose feature is not built yet answers 501 saying so, to every caller it lets through. */
const notBuilt = (res: HarnessResponse) => res.status === 501 && /not built yet/.test(res.text);

function assertRefused(res: HarnessResponse, call: Call, who: string, code: string): void {
  assert.equal(res.status, 403, `${who}: ${label(call)} was not refused: ${res.status} ${res.text}`);
  assert.equal(res.body.error.type, 'permission_error', label(call));
  assert.equal(res.body.error.code, code, `${who}: ${label(call)}`);
}

async function createKey(
  type: 'organisation' | 'workspace',
  scopes: readonly Scope[] | undefined,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; key: string }> {
  const sub = extra.user_id ? 'user' : 'service';
  const res = await h.request('POST', `/v2/api-keys/${type}/${sub}`, {
    key: h.adminKey,
    json: {
      name: `matrix ${type} key`,
      ...(type === 'workspace' ? { workspace_id: h.workspaceId } : {}),
      ...(scopes ? { scopes } : {}),
      ...extra,
    },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string };
}

/** Counts the route layers express holds, through mounted routers: what the services really serve. */
function servedRouteCount(router: Router): number {
  let count = 0;
  for (const layer of (
    router as unknown as { stack: Array<{ route?: unknown; handle?: { stack?: unknown } }> }
  ).stack) {
    if (layer.route) count += 1;
    else if (layer.handle?.stack) count += servedRouteCount(layer.handle as unknown as Router);
  }
  return count;
}

before(async () => {
  h = await startServiceHarness({ services });
  rival = await seedOrganisation(h.db('control-plane').manager, 'matrix-rival');
  const routes = HTTP_SERVICES.flatMap((name) => h.instance(name).routes ?? []);
  calls = callsOf(routes);
  openToAnyCaller = routes.filter((r) => r.scope === 'authenticated');
  publicRoutes = routes.filter((r) => r.scope === 'public' && !isScim(r));
  scimRoutes = routes.filter((r) => r.scope === 'public' && isScim(r));
});
after(() => h?.close());

describe('the route/permission matrix', () => {
  test('lists every route each service serves, each with a scope from the catalogue', () => {
    for (const name of HTTP_SERVICES) {
      const instance = h.instance(name);
      assert.ok(instance.router && instance.routes, `${name} declares its routes`);
      assert.equal(
        servedRouteCount(instance.router),
        instance.routes.length,
        `${name}: every route served is declared with its scope`,
      );
    }
    assert.ok(calls.length > 60, `only ${calls.length} calls`);
    assert.ok(
      calls.some((call) => label(call) === 'GET /v1/audit-logs (audit_logs.list)'),
      'the audit log is in the matrix',
    );
    assert.deepEqual(
      openToAnyCaller.map((r) => `${r.method} ${r.path}`),
      [
        'POST /v1/auth/sessions',
        'DELETE /v1/auth/sessions/current',
        'GET /v1/auth/self',
        'GET /v1/auth/key',
        'GET /oauth/authorize',
        'POST /oauth/postAuthorizeConsent',
        'GET /v2/policies/usage',
        // Removed: any caller gets the 410 that says where prompts live now.
        ...['', '/*rest'].flatMap((rest) =>
          ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map(
            (method) => `${method} /v2/organisation/prompts${rest}`,
          ),
        ),
      ],
      'only these routes need no scope (each tested on its own)',
    );
    assert.deepEqual(
      publicRoutes.map((r) => `${r.method} ${r.path}`),
      [
        'GET /openapi.json',
        'GET /.well-known/oauth-authorization-server',
        'POST /oauth/register',
        'POST /oauth/token',
        'POST /oauth/revoke',
        'POST /oauth/introspect',
        'GET /openapi.json',
        'GET /model-configs/pricing/:provider/:model',
        'GET /v1/model-configs/pricing/:provider/:model',
        'GET /v1/auth/sso/login',
        'GET /v1/auth/sso/callback',
        'GET /openapi.json',
        'GET /v1/logs/exports/:id/file',
        'GET /.well-known/oauth-protected-resource/mcp/:slug',
        'GET /openapi.json',
      ],
      'only these routes need no caller at all (each tested on its own)',
    );
    for (const call of calls) assert.ok(ALL_SCOPES.includes(call.scope), label(call));
  });

  test('no key: 401 on every route', async () => {
    const unscoped = openToAnyCaller.map((r): Call => ({
      method: r.method as HttpMethod,
      path: harmless(r.path),
      scope: 'workspaces.read',
      template: r.path,
    }));
    for (const call of [...calls, ...unscoped]) {
      const res = await send(call, undefined);
      assert.equal(res.status, 401, label(call));
      assert.equal(res.body.error.type, 'authentication_error', label(call));
    }
  });

  test('public routes are reached without a key: the metadata answers, the OAuth endpoints answer in the RFC shape', async () => {
    for (const route of publicRoutes) {
      // The price list answers for a model it lists.
      const path = route.path.replace('/:provider/:model', '/openai/gpt-4o');
      const res = await h.request(route.method, path, route.method === 'GET' ? {} : { json: {} });
      const call = `${route.method} ${route.path}`;
      assert.ok(res.status < 500, `${call}: ${res.status} ${res.text}`);
      if (route.path.startsWith('/v1/auth/sso/')) {
        // The SSO login (sso-login.test.ts): without its parameters, a 400 in the one error shape.
        assert.equal(res.status, 400, `${call}: ${res.text}`);
        assert.equal(res.body.error.type, 'invalid_request_error', `${call}: ${res.text}`);
        continue;
      }
      if (route.path.startsWith('/v1/logs/exports/')) {
        // A signed download link proves itself: without its token, a 400 in the one error shape.
        assert.equal(res.status, 400, `${call}: ${res.text}`);
        assert.equal(res.body.error.type, 'invalid_request_error', `${call}: ${res.text}`);
        continue;
      }
      if (route.method === 'GET') {
        assert.equal(res.status, 200, `${call}: ${res.text}`);
        continue;
      }
      // Refused by the endpoint itself (a missing parameter or client), never by key authentication.
      assert.ok(res.status === 400 || res.status === 401, `${call}: ${res.status} ${res.text}`);
      assert.equal(typeof res.body.error, 'string', `${call}: ${res.text}`);
      assert.equal(typeof res.body.error_description, 'string', `${call}: ${res.text}`);
    }
  });

  test("SCIM routes take the organisation's SCIM token only: no token, an API key or another organisation's token is a SCIM 401", async () => {
    assert.deepEqual(
      scimRoutes.map((r) => `${r.method} ${r.path}`),
      ['Users', 'Groups'].flatMap((resource) => [
        `GET /scim/:organisationId/${resource}`,
        `POST /scim/:organisationId/${resource}`,
        `GET /scim/:organisationId/${resource}/:id`,
        `PUT /scim/:organisationId/${resource}/:id`,
        `PATCH /scim/:organisationId/${resource}/:id`,
        `DELETE /scim/:organisationId/${resource}/:id`,
      ]),
      'the SCIM 2.0 Users and Groups endpoints',
    );
    const rivalToken = await h.request('POST', '/v1/admin/organisation/scim-token', {
      key: rival.adminKey,
      json: { replace_existing: true },
    });
    assert.equal(rivalToken.status, 200, rivalToken.text);
    for (const route of scimRoutes) {
      const path = route.path.replace(':organisationId', h.organisationId).replace(':id', NOTHING);
      for (const token of [undefined, h.adminKey, rivalToken.body.token as string]) {
        const res = await h.request(route.method, path, {
          ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { json: {} }),
        });
        assert.equal(res.status, 401, `${route.method} ${path}: ${res.text}`);
        assert.deepEqual(res.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error'], res.text);
      }
    }
  });

  test('an organisation admin key with every scope may call every route but model calls, which need a workspace', async () => {
    for (const call of calls) {
      const res = await send(call, h.adminKey);
      if (kindCanHold('organisation_admin', call.scope)) assertPermitted(res, call, 'admin key');
      else assertRefused(res, call, 'admin key', 'workspace_key_required');
    }
  });

  test("a workspace service key: every workspace-level route, and a 403 on the organisation's own", async () => {
    for (const call of calls) {
      const res = await send(call, h.workspaceKey);
      if (!kindCanHold('workspace_service', call.scope)) {
        assertRefused(res, call, 'workspace key', 'admin_key_required');
      } else assertPermitted(res, call, 'workspace key');
    }
  });

  test('a key that lacks exactly the scope a route needs is refused; a key holding only that scope is let through', async () => {
    const scopes = [...new Set(calls.map((c) => c.scope))];
    for (const scope of scopes) {
      const routes = calls.filter((c) => c.scope === scope);
      for (const type of ['organisation', 'workspace'] as const) {
        const kind = type === 'organisation' ? 'organisation_admin' : 'workspace_service';
        if (!kindCanHold(kind, scope)) continue;
        const allBut = await createKey(
          type,
          scopesForKind(kind).filter((s) => s !== scope),
        );
        const only = await createKey(type, [scope]);
        for (const call of routes) {
          assertRefused(await send(call, allBut.key), call, `${type} key without ${scope}`, 'missing_scope');
          assertPermitted(await send(call, only.key), call, `${type} key with only ${scope}`);
        }
      }
    }
  });

  test("a member's user key reaches what the member role allows and nothing else", async () => {
    const user = await h.request('POST', '/v1/admin/users', {
      key: h.adminKey,
      json: { email: 'matrix.member@example.com', role: 'member' },
    });
    assert.equal(user.status, 200, user.text);
    const joined = await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
      key: h.adminKey,
      json: { users: [{ id: user.body.id, role: 'member' }] },
    });
    assert.equal(joined.status, 200, joined.text);
    const userKey = await createKey('workspace', undefined, { user_id: user.body.id });
    const memberScopes = new Set<Scope>(scopesForWorkspaceRole('member'));
    for (const call of calls) {
      const res = await send(call, userKey.key);
      if (memberScopes.has(call.scope)) assertPermitted(res, call, 'member key');
      else {
        assertRefused(
          res,
          call,
          'member key',
          kindCanHold('workspace_user', call.scope) ? 'missing_scope' : 'admin_key_required',
        );
      }
    }
  });
});

describe('tenancy: keys of another organisation or workspace', () => {
  /** Real resources of the first organisation's default workspace, by the parameter that names them. */
  const owned: Record<string, string> = {};

  before(async () => {
    const keys = await h.request('GET', '/v2/api-keys?page_size=100', { key: h.adminKey });
    owned.apiKey = keys.body.data.find(
      (k: { workspace_id: string | null }) => k.workspace_id === h.workspaceId,
    ).id;
    const config = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'matrix config', config: { provider: '@mock' } },
    });
    assert.equal(config.status, 200, config.text);
    owned.config = config.body.data.slug;
    const guardrail = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: {
        name: 'matrix guardrail',
        workspace_id: h.workspaceId,
        checks: [{ id: 'default.regexMatch', parameters: { rule: 'matrix' } }],
        actions: { deny: true },
      },
    });
    assert.equal(guardrail.status, 200, guardrail.text);
    owned.guardrail = guardrail.body.slug;
    const user = await h.request('POST', '/v1/admin/users', {
      key: h.adminKey,
      json: { email: 'matrix.owned@example.com', role: 'member' },
    });
    owned.user = user.body.id;
    await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
      key: h.adminKey,
      json: { users: [{ id: owned.user, role: 'member' }] },
    });
    const integration = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: 'Matrix',
        slug: 'matrix-owned',
        ai_provider_id: 'openai',
        key: 'sk-matrix-owned-00000000',
        workspace_id: h.workspaceId,
      },
    });
    assert.equal(integration.status, 200, integration.text);
    owned.integration = 'matrix-owned';
    const sso = await h.request('PUT', '/v1/admin/organisation/sso/matrix-owned-client', {
      key: h.adminKey,
      json: { issuer: 'https://idp.example.com', client_secret: 'matrix-owned-client-secret' },
    });
    assert.equal(sso.status, 200, sso.text);
    owned.ssoClient = 'matrix-owned-client';
    const domain = await h.request('POST', '/v1/admin/organisation/email-domains', {
      key: h.adminKey,
      json: { domain: 'matrix-owned.example' },
    });
    assert.equal(domain.status, 200, domain.text);
    owned.emailDomain = 'matrix-owned.example';
    const deployment = await h.request('POST', '/admin/v2/deployments', {
      key: h.adminKey,
      json: { name: 'Matrix deployment', slug: 'matrix-owned-deployment' },
    });
    assert.equal(deployment.status, 200, deployment.text);
    owned.deployment = deployment.body.id;
    // No endpoint of its own: the region's AWS host, never connected to here.
    const secretReference = await h.request('POST', '/v1/secret-references', {
      key: h.adminKey,
      json: {
        name: 'Matrix secret',
        slug: 'matrix-owned-secret',
        manager_type: 'aws_sm',
        auth_config: {
          aws_auth_type: 'accessKey',
          aws_access_key_id: 'AKIAMATRIXOWNED00000',
          aws_secret_access_key: 'matrix-owned-secret-access-key',
          aws_region: 'eu-west-1',
        },
        secret_path: 'matrix/owned',
      },
    });
    assert.equal(secretReference.status, 200, secretReference.text);
    owned.secretReference = secretReference.body.id;
    const logExport = await h.request('POST', '/v1/logs/exports', {
      key: h.workspaceKey,
      json: { filters: {}, requested_data: ['id'] },
    });
    assert.equal(logExport.status, 200, logExport.text);
    owned.export = logExport.body.id;
    await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
    const completion = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { model: '@mock/mock-1', messages: [{ role: 'user', content: 'log me' }] },
    });
    assert.equal(completion.status, 200, completion.text);
    owned.log = completion.headers.get('x-request-id')!;
    // A response the gateway keeps (the mock has no Responses API: it is translated and kept).
    const response = await h.request('POST', '/v1/responses', {
      key: h.workspaceKey,
      json: { model: '@mock/mock-1', input: 'keep me' },
    });
    assert.equal(response.status, 200, response.text);
    owned.response = response.body.id;
    await eventually(async () => {
      const found = await h.request('GET', `/v1/logs/${owned.log}`, { key: h.workspaceKey });
      return found.status === 200 ? true : undefined;
    });
  });

  /** The route's path naming the first organisation's resources, or null when it names none. */
  function ownedPath(template: string): string | null {
    if (!template.includes(':')) return null;
    // A grouping key, not a resource: each organisation's answer is of its own logs.
    if (template.includes(':metadataKey')) return null;
    // Provider kinds are the gateway's, the same for every organisation.
    if (template.includes(':provider')) return null;
    return template
      .replace(/\/workspaces\/:id\b/, `/workspaces/${h.workspaceId}`)
      .replace(/\/workspaces\/:workspaceId\b/, `/workspaces/${h.workspaceId}`)
      .replace(/\/api-keys\/:id\b/, `/api-keys/${owned.apiKey}`)
      .replace(/\/configs\/:slug\b/, `/configs/${owned.config}`)
      .replace(/\/guardrails\/:id\b/, `/guardrails/${owned.guardrail}`)
      .replace(/\/users\/:(id|userId)\b/, `/users/${owned.user}`)
      .replace(/\/integrations\/:slug\b/, `/integrations/${owned.integration}`)
      .replace(/\/logs\/:id\b/, `/logs/${owned.log}`)
      .replace(/\/responses\/:response_id\b/, `/responses/${owned.response}`)
      .replace(/\/exports\/:id\b/, `/exports/${owned.export}`)
      .replace(/\/sso\/:client_id\b/, `/sso/${owned.ssoClient}`)
      .replace(/\/email-domains\/:domain\b/, `/email-domains/${owned.emailDomain}`)
      .replace(/\/deployments\/:deploymentId\b/, `/deployments/${owned.deployment}`)
      .replace(/\/secret-references\/:secretReferenceId\b/, `/secret-references/${owned.secretReference}`)
      .replace('/:type/:sub', '/workspace/service');
  }

  async function snapshot(): Promise<string[]> {
    const reads = [
      `/v2/workspaces/${h.workspaceId}`,
      `/v2/api-keys/${owned.apiKey}`,
      `/v2/configs/${owned.config}`,
      `/v1/guardrails/${owned.guardrail}`,
      `/v1/admin/users/${owned.user}`,
      `/v1/admin/workspaces/${h.workspaceId}/users`,
      `/admin/v2/integrations/${owned.integration}`,
      `/admin/v2/integrations/${owned.integration}/models`,
      `/admin/v2/deployments/${owned.deployment}`,
      `/v1/secret-references/${owned.secretReference}`,
      `/v1/logs/${owned.log}`,
      `/v1/logs/exports/${owned.export}`,
      `/v1/admin/organisation/sso/${owned.ssoClient}`,
      '/v1/admin/organisation/email-domains',
    ];
    return Promise.all(
      reads.map(async (path) => {
        const res = await h.request('GET', path, { key: h.adminKey });
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        return JSON.stringify({ ...res.body, last_used_at: null });
      }),
    );
  }

  test('see nothing of it: reads, changes and deletes of its resources are 404s, and nothing changes', async () => {
    const other = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Matrix other' },
    });
    assert.equal(other.status, 200, other.text);
    const otherWorkspaceKey = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'other workspace', workspace_id: other.body.id },
    });
    assert.equal(otherWorkspaceKey.status, 200, otherWorkspaceKey.text);
    const strangers = [
      { who: 'another organisation', key: rival.adminKey, level: 'organisation' as const },
      { who: 'another workspace', key: otherWorkspaceKey.body.key as string, level: 'workspace' as const },
    ];
    const before = await snapshot();
    let checked = 0;
    for (const call of calls) {
      const path = ownedPath(call.template);
      if (!path || call.template.includes(':type')) continue;
      for (const stranger of strangers) {
        if (stranger.level === 'workspace' && scopeLevel(call.scope) === 'organisation') continue;
        const res = await send(call, stranger.key, path);
        if (notBuilt(res)) {
          // Nothing of it exists to be seen.
        } else if (
          stranger.level === 'organisation' &&
          res.status === 403 &&
          res.body?.error?.code === 'workspace_key_required'
        ) {
          // A workspace's own route: an organisation key is refused whatever the path names.
        } else if (res.status === 400 && res.body?.error?.code === 'provider_required') {
          // Not one the gateway keeps for this caller: it would go to a provider, and none is chosen.
        } else if (call.method === 'GET' || call.method === 'DELETE') {
          assert.equal(res.status, 404, `${stranger.who}: ${call.method} ${path}: ${res.text}`);
        } else {
          // A body is validated before anything is looked up: a 400 says nothing of the resource either.
          assert.ok(
            [400, 404].includes(res.status),
            `${stranger.who}: ${call.method} ${path}: ${res.status} ${res.text}`,
          );
        }
        assert.ok(
          !res.text.includes(h.workspaceId) || path.includes(h.workspaceId),
          'no id of the owner leaks',
        );
        checked += 1;
      }
    }
    assert.ok(checked > 20, `only ${checked} calls checked`);
    assert.deepEqual(await snapshot(), before);
    // The kept response outlived the strangers' deletes.
    const kept = await h.request('GET', `/v1/responses/${owned.response}`, { key: h.workspaceKey });
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.body.id, owned.response);
  });
});
