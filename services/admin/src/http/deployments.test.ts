import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SecretBox, createLogger, createMetrics, maskSecret } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { ApiKeyCache, scopesForKind } from '@switchyard/access';
import {
  ScopedRouter,
  callerAuthentication,
  remotePrincipalLookup,
  remoteWorkspaceLookup,
} from '@switchyard/runtime';
import { controlPlane } from '@switchyard/control-plane';
import { IdentityRepository, keyMaterialOf } from '@switchyard/control-plane/testing';
import { startServiceHarness, type AnyBody, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';
import { DeploymentService } from '../domain/deployment.service.ts';
import { DeploymentRepository } from '../store/deployment.repository.ts';
import { remoteOrganisationDirectory } from '../grpc/organisation-directory.client.ts';
import { deploymentHandlers } from '../grpc/deployment.handlers.ts';
import { deploymentsRouter } from './deployments.routes.ts';

let h: ServiceHarness;
/** What the deployments service under test takes as now: moved forward by tests, never slept for. */
let now = Date.parse('2026-09-01T12:00:00.000Z');
let service: DeploymentService;
let handlers: ReturnType<typeof deploymentHandlers>;
/** The deployment routes over the service under test, authenticated as admin authenticates. */
let server: { url: string; close: () => Promise<void> };
/** Admin's own HTTP server, as a standalone admin serves it. */
let adminServer: { url: string; close: () => Promise<void> };

const otherAdminKey = 'sy-admin-of-another-organisation-deploy-0';
const unscopedAdminKey = 'sy-admin-without-deployment-scopes-0000';
let otherOrganisationId: string;

async function serve(router: ScopedRouter['router']) {
  const logger = createLogger('admin', 'error');
  logger.silent = true;
  const app = createHttpApp({
    service: 'admin',
    logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ router }],
  });
  const listening = await listen(app, '127.0.0.1', 0);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    close: async () => {
      const closed = listening.close();
      listening.server.closeAllConnections();
      await closed;
    },
  };
}

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
  const identity = h.client('identity');
  service = new DeploymentService(
    new DeploymentRepository(h.db('admin').manager),
    new SecretBox(h.env.SWITCHYARD_ENCRYPTION_KEY!),
    remoteOrganisationDirectory(identity),
    () => new Date(now),
  );
  handlers = deploymentHandlers(service);
  const authentication = callerAuthentication({
    keys: new ApiKeyCache(remotePrincipalLookup(identity)),
    headerPrefix: 'x-vendor-',
    env: {},
    workspaces: remoteWorkspaceLookup(identity),
  });
  server = await serve(
    new ScopedRouter().mount(
      ['/admin/v2/deployments', '/v1/deployments'],
      deploymentsRouter(service, '1mb'),
      authentication,
    ).router,
  );
  adminServer = await serve(h.instance('admin').router!);

  const repo = new IdentityRepository(h.db('control-plane').manager);
  const organisation = await repo.createOrganisation('Other Deployments Inc', 'other-deployments-inc');
  otherOrganisationId = organisation.id;
  const adminKey = (organisationId: string, name: string, key: string, scopes: string[]) =>
    repo.insertApiKey({
      organisationId,
      workspaceId: null,
      kind: 'organisation_admin',
      name,
      description: null,
      scopes,
      userId: null,
      expiresAt: null,
      ...keyMaterialOf(key, 'sy-'),
    });
  await adminKey(organisation.id, 'Other admin', otherAdminKey, [...scopesForKind('organisation_admin')]);
  await adminKey(
    h.organisationId,
    'No deployments',
    unscopedAdminKey,
    scopesForKind('organisation_admin').filter((scope) => !scope.startsWith('deployments.')),
  );
});
after(async () => {
  await server?.close();
  await adminServer?.close();
  await h?.close();
});

interface Answer {
  status: number;
  text: string;
  body: AnyBody;
}

async function call(method: string, path: string, json?: unknown, key = h.adminKey, base = server.url) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined } as Answer;
}

/** Every answer the tests saw, to check that the password never appears in any. */
const answers: string[] = [];
async function api(method: string, path: string, json?: unknown, key?: string) {
  const res = await call(method, path, json, key);
  answers.push(res.text);
  return res;
}

async function create(body: Record<string, unknown>) {
  const res = await api('POST', '/admin/v2/deployments', { name: 'A deployment', ...body });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const heartbeat = (
  deployment: string,
  instanceId: string,
  version: string,
  organisationId = h.organisationId,
) =>
  handlers.heartbeat(
    { organisationId, deployment, instanceId, version } as Parameters<typeof handlers.heartbeat>[0],
    {} as Parameters<typeof handlers.heartbeat>[1],
  );

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const password = 'pw-very-secret-deployment-password-9f3k2';

const fullBody = () => ({
  name: 'EU production',
  slug: 'eu-prod',
  type: 'production',
  is_default: 1,
  tags: { region: 'eu-west-1', team: 'platform' },
  auth_settings: {
    gateway_base_url: 'https://gateway.eu.example.com/v1',
    mcp_gateway_base_url: 'https://mcp.eu.example.com',
    private_link_endpoint: 'https://vpce-123.eu.example.com',
    use_private_link_proxy: 1,
    is_dataservice_hosted: 0,
    is_playground_proxy_allowed: 1,
    disable_vendor_gateway: 0,
    allow_all_workspaces: 0,
    workspaces_allowed: ['default'],
    jwt_subs_allowed: ['service-a', 'service-b'],
    jwt_sub_workspace_mapping: { 'service-a': 'default' },
  },
  deployment_config: { replicas: 3, nested: { cache: true } },
  workspaces: [] as Array<{ id: string; slug: string }>,
  credentials: { username: 'deployer', password },
  client_auth: 'mtls',
});

describe('a deployment (operation 6)', () => {
  let created: AnyBody;
  let workspaceSlug: string;

  before(async () => {
    const workspace = await call('GET', `/v2/workspaces/${h.workspaceId}`, undefined, h.adminKey, h.url);
    assert.equal(workspace.status, 200, workspace.text);
    workspaceSlug = workspace.body.slug;
  });

  test('create answers every field at its type, and get by id or slug answers the same', async () => {
    const body = fullBody();
    body.workspaces = [{ id: h.workspaceId, slug: workspaceSlug }];
    created = await create(body);
    const d = created;
    assert.match(d.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(d.object, 'deployment');
    assert.equal(d.name, 'EU production');
    assert.equal(d.slug, 'eu-prod');
    assert.equal(d.type, 'production');
    assert.equal(d.status, 'active');
    assert.equal(d.is_default, 1);
    assert.equal(d.connection_status, 'unknown');
    assert.equal(typeof d.created_by, 'string');
    assert.ok(d.created_by.length > 0);
    assert.equal(d.created_at, new Date(now).toISOString());
    assert.match(d.last_updated_at, ISO_UTC);
    assert.equal(d.last_synced_at, null);
    assert.equal(d.last_resynced_at, null);
    assert.deepEqual(d.tags, { region: 'eu-west-1', team: 'platform' });
    assert.deepEqual(d.auth_settings, body.auth_settings);
    assert.deepEqual(d.deployment_config, { replicas: 3, nested: { cache: true } });
    assert.deepEqual(d.workspaces, [{ id: h.workspaceId, slug: workspaceSlug }]);
    assert.deepEqual(d.credentials, { username: 'deployer', password: maskSecret(password) });
    assert.equal(d.client_auth, 'mtls');
    assert.equal(d.version, null);
    assert.equal(d.features, null);
    assert.deepEqual(d.instances, []);

    const byId = await api('GET', `/admin/v2/deployments/${d.id}`);
    assert.equal(byId.status, 200, byId.text);
    assert.deepEqual(byId.body, d);
    const bySlug = await api('GET', '/v1/deployments/eu-prod');
    assert.deepEqual(bySlug.body, d);
  });

  test('a name alone makes a production deployment serving every workspace, with a slug from the name', async () => {
    const d = await create({ name: 'Staging Cluster #2' });
    assert.equal(d.slug, 'staging-cluster-2');
    assert.equal(d.type, 'production');
    assert.equal(d.is_default, 0);
    assert.deepEqual(d.tags, {});
    assert.deepEqual(d.auth_settings, {
      gateway_base_url: null,
      mcp_gateway_base_url: null,
      private_link_endpoint: null,
      use_private_link_proxy: 0,
      is_dataservice_hosted: 0,
      is_playground_proxy_allowed: 0,
      disable_vendor_gateway: 0,
      allow_all_workspaces: 1,
      workspaces_allowed: [],
      jwt_subs_allowed: [],
      jwt_sub_workspace_mapping: {},
    });
    assert.deepEqual(d.workspaces, []);
    assert.equal(d.credentials, null);
    assert.equal(d.client_auth, null);
  });

  test('the password is stored encrypted', async () => {
    const [row] = await h.db('admin').query(`SELECT * FROM admin.deployments WHERE id = $1`, [created.id]);
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!JSON.stringify(value).includes(password), `column ${column} holds the password`);
    }
    assert.equal(
      new SecretBox(h.env.SWITCHYARD_ENCRYPTION_KEY!).decrypt(row.encrypted_credentials_password),
      password,
    );
  });

  test('a second deployment made the default takes the place of the first', async () => {
    const second = await create({ name: 'US production', slug: 'us-prod', is_default: 1 });
    assert.equal(second.is_default, 1);
    assert.equal((await api('GET', '/admin/v2/deployments/eu-prod')).body.is_default, 0);
    const back = await api('PUT', '/admin/v2/deployments/eu-prod', { is_default: 1 });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.is_default, 1);
    assert.equal((await api('GET', '/admin/v2/deployments/us-prod')).body.is_default, 0);
    const [{ count }] = await h
      .db('admin')
      .query(
        `SELECT count(*)::int AS count FROM admin.deployments WHERE organisation_id = $1 AND is_default`,
        [h.organisationId],
      );
    assert.equal(count, 1);
  });

  test('a second live deployment with the same slug is a 409 naming slug', async () => {
    const res = await api('POST', '/admin/v2/deployments', { name: 'Again', slug: 'eu-prod' });
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.param, 'slug');
  });

  test('update changes the fields given and keeps the others', async () => {
    now += 1000;
    const res = await api('PUT', `/admin/v2/deployments/${created.id}`, {
      name: 'EU production (primary)',
      type: 'non_production',
      tags: { region: 'eu-central-1' },
      auth_settings: { allow_all_workspaces: 1, jwt_subs_allowed: ['service-c'] },
      credentials: { username: 'deployer2', password: `${password}-rotated` },
      client_auth: null,
    });
    assert.equal(res.status, 200, res.text);
    const d = res.body;
    assert.equal(d.name, 'EU production (primary)');
    assert.equal(d.slug, 'eu-prod');
    assert.equal(d.type, 'non_production');
    assert.deepEqual(d.tags, { region: 'eu-central-1' });
    assert.equal(d.auth_settings.allow_all_workspaces, 1);
    assert.deepEqual(d.auth_settings.jwt_subs_allowed, ['service-c']);
    // Settings not named are kept.
    assert.equal(d.auth_settings.gateway_base_url, 'https://gateway.eu.example.com/v1');
    assert.equal(d.auth_settings.use_private_link_proxy, 1);
    assert.deepEqual(d.deployment_config, created.deployment_config);
    assert.deepEqual(d.credentials, { username: 'deployer2', password: maskSecret(`${password}-rotated`) });
    assert.equal(d.client_auth, null);
    assert.equal(d.created_at, created.created_at);
    assert.equal(d.last_updated_at, new Date(now).toISOString());
    assert.deepEqual((await api('GET', `/admin/v2/deployments/${created.id}`)).body, d);

    const removed = await api('PUT', `/admin/v2/deployments/${created.id}`, { credentials: null });
    assert.equal(removed.body.credentials, null);
    const restored = await api('PUT', `/admin/v2/deployments/${created.id}`, {
      credentials: { username: 'deployer', password },
      status: 'active',
    });
    assert.equal(restored.status, 200, restored.text);
    assert.deepEqual(restored.body.credentials, { username: 'deployer', password: maskSecret(password) });
  });

  test('status archived is refused on update: a deployment is archived by deleting it', async () => {
    const res = await api('PUT', `/admin/v2/deployments/${created.id}`, { status: 'archived' });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'status');
    assert.equal((await api('GET', `/admin/v2/deployments/${created.id}`)).body.status, 'active');
  });

  test('workspaces must be workspaces of the organisation, under their own slug', async () => {
    const unknown = await api('POST', '/admin/v2/deployments', {
      name: 'x',
      workspaces: [{ id: randomUUID(), slug: 'nope' }],
    });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.param, 'workspaces[0].id');
    const wrongSlug = await api('PUT', `/admin/v2/deployments/${created.id}`, {
      workspaces: [{ id: h.workspaceId, slug: `${workspaceSlug}-not` }],
    });
    assert.equal(wrongSlug.status, 400, wrongSlug.text);
    assert.equal(wrongSlug.body.error.param, 'workspaces[0].slug');
    assert.deepEqual((await api('GET', `/admin/v2/deployments/${created.id}`)).body.workspaces, [
      { id: h.workspaceId, slug: workspaceSlug },
    ]);
  });
});

describe('listing deployments', () => {
  const prefix = `list-${Date.now().toString(36)}`;

  before(async () => {
    for (const [i, type] of ['production', 'non_production', 'non_production'].entries()) {
      now += 1;
      await create({ name: `${prefix} ${i}`, slug: `${prefix}-${i}`, type });
    }
  });

  const listed = async (query: string) => {
    const res = await api('GET', `/admin/v2/deployments?${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  test('pages through the live deployments, oldest first, with their total', async () => {
    const all = await listed('page_size=1000');
    assert.equal(all.object, 'list');
    assert.equal(all.total, all.data.length);
    const ours = all.data.filter((d: AnyBody) => d.slug.startsWith(prefix)).map((d: AnyBody) => d.slug);
    assert.deepEqual(ours, [`${prefix}-0`, `${prefix}-1`, `${prefix}-2`]);
    const first = await listed('page_size=2&current_page=0');
    const second = await listed('page_size=2&current_page=1');
    assert.equal(first.data.length, 2);
    assert.equal(first.total, all.total);
    assert.deepEqual(
      [...first.data, ...second.data].map((d: AnyBody) => d.id),
      all.data.slice(0, 2 + second.data.length).map((d: AnyBody) => d.id),
    );
    assert.ok(all.data.every((d: AnyBody) => d.object === 'deployment' && d.status === 'active'));
  });

  test('filters by type', async () => {
    const nonProduction = await listed('type=non_production&page_size=1000');
    assert.ok(nonProduction.data.every((d: AnyBody) => d.type === 'non_production'));
    assert.deepEqual(
      nonProduction.data.filter((d: AnyBody) => d.slug.startsWith(prefix)).map((d: AnyBody) => d.slug),
      [`${prefix}-1`, `${prefix}-2`],
    );
  });

  test('a bad filter or an unknown query parameter is a 400 naming it', async () => {
    for (const [query, param] of [
      ['status=deleted', 'status'],
      ['type=staging', 'type'],
      ['colour=blue', 'colour'],
      ['page_size=0', 'page_size'],
    ]) {
      const res = await api('GET', `/admin/v2/deployments?${query}`);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.param, param, query);
      assert.equal(res.body.error.type, 'invalid_request_error');
    }
  });
});

describe('deleting a deployment', () => {
  test('archives it: hidden from the list unless archived ones are asked for, still shown by id', async () => {
    const d = await create({ name: 'Doomed', slug: 'doomed', is_default: 1 });
    const deleted = await api('DELETE', `/admin/v2/deployments/${d.id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, {});

    const live = await api('GET', '/admin/v2/deployments?page_size=1000');
    assert.ok(!live.body.data.some((x: AnyBody) => x.id === d.id));
    const archived = await api('GET', '/admin/v2/deployments?status=archived&page_size=1000');
    const shown = archived.body.data.find((x: AnyBody) => x.id === d.id);
    assert.equal(shown.status, 'archived');
    assert.ok(archived.body.data.every((x: AnyBody) => x.status === 'archived'));

    const byId = await api('GET', `/admin/v2/deployments/${d.id}`);
    assert.equal(byId.status, 200, byId.text);
    assert.equal(byId.body.status, 'archived');
    assert.equal(byId.body.is_default, 0);
    // Its slug names no live deployment any more, and is free again.
    assert.equal((await api('GET', '/admin/v2/deployments/doomed')).status, 404);
    await create({ name: 'Doomed again', slug: 'doomed' });

    assert.equal((await api('DELETE', `/admin/v2/deployments/${d.id}`)).status, 404);
    const update = await api('PUT', `/admin/v2/deployments/${d.id}`, { name: 'Revived' });
    assert.equal(update.status, 409, update.text);
    assert.equal(update.body.error.param, 'status');
  });
});

describe('access', () => {
  let ours: AnyBody;
  before(async () => {
    ours = await create({ name: 'Guarded', slug: 'guarded', credentials: { username: 'u', password } });
  });

  test("another organisation's admin key gets 404 for each operation and changes nothing", async () => {
    for (const ref of [ours.id, 'guarded']) {
      assert.equal((await api('GET', `/admin/v2/deployments/${ref}`, undefined, otherAdminKey)).status, 404);
      assert.equal(
        (await api('GET', `/admin/v2/deployments/${ref}/ping`, undefined, otherAdminKey)).status,
        404,
      );
      assert.equal(
        (await api('PUT', `/admin/v2/deployments/${ref}`, { name: 'Stolen' }, otherAdminKey)).status,
        404,
      );
      assert.equal(
        (await api('DELETE', `/admin/v2/deployments/${ref}`, undefined, otherAdminKey)).status,
        404,
      );
    }
    const list = await api('GET', '/admin/v2/deployments', undefined, otherAdminKey);
    assert.deepEqual(list.body, { object: 'list', total: 0, data: [] });
    await assert.rejects(heartbeat(ours.id, 'other-org-gw', '2.18.0', otherOrganisationId), {
      status: 404,
    });
    const after = await api('GET', `/admin/v2/deployments/${ours.id}`);
    assert.equal(after.body.name, 'Guarded');
    assert.equal(after.body.status, 'active');
    assert.deepEqual(after.body.instances, []);
  });

  test('a key without the deployment scopes gets 403, and a workspace key too', async () => {
    for (const key of [unscopedAdminKey, h.workspaceKey]) {
      for (const [method, path, body] of [
        ['GET', '/admin/v2/deployments', undefined],
        ['POST', '/admin/v2/deployments', { name: 'Nope' }],
        ['GET', `/admin/v2/deployments/${ours.id}`, undefined],
        ['GET', `/admin/v2/deployments/${ours.id}/ping`, undefined],
        ['PUT', `/admin/v2/deployments/${ours.id}`, { name: 'Nope' }],
        ['DELETE', `/admin/v2/deployments/${ours.id}`, undefined],
      ] as const) {
        const res = await api(method, path, body, key);
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.error.type, 'permission_error', res.text);
      }
    }
    assert.equal((await api('GET', `/admin/v2/deployments/${ours.id}`)).body.name, 'Guarded');
  });

  test('without a key: 401', async () => {
    const res = await fetch(`${server.url}/admin/v2/deployments`);
    assert.equal(res.status, 401);
  });
});

describe('bad bodies', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a type outside the enum', { type: 'staging' }, 'type'],
    ['is_default 2', { is_default: 2 }, 'is_default'],
    ['is_default true', { is_default: true }, 'is_default'],
    [
      'a flag as the string "1"',
      { auth_settings: { allow_all_workspaces: '1' } },
      'auth_settings.allow_all_workspaces',
    ],
    ['a flag 2', { auth_settings: { use_private_link_proxy: 2 } }, 'auth_settings.use_private_link_proxy'],
    [
      'a gateway URL that is not a URL',
      { auth_settings: { gateway_base_url: 'not a url' } },
      'auth_settings.gateway_base_url',
    ],
    [
      'an ftp:// URL',
      { auth_settings: { mcp_gateway_base_url: 'ftp://mcp.example.com' } },
      'auth_settings.mcp_gateway_base_url',
    ],
    ['an unknown field', { colour: 'blue' }, 'colour'],
    [
      'an unknown auth setting',
      { auth_settings: { disable_portkey_gateway: 1 } },
      'auth_settings.disable_portkey_gateway',
    ],
    ['tags that are not strings', { tags: { replicas: 3 } }, 'tags.replicas'],
    [
      'workspaces_allowed that are not strings',
      { auth_settings: { workspaces_allowed: [1] } },
      'auth_settings.workspaces_allowed[0]',
    ],
    [
      'too many workspaces_allowed',
      { auth_settings: { workspaces_allowed: Array.from({ length: 1001 }, (_, i) => `w${i}`) } },
      'auth_settings.workspaces_allowed',
    ],
    [
      'too many jwt_subs_allowed',
      { auth_settings: { jwt_subs_allowed: Array.from({ length: 1001 }, (_, i) => `s${i}`) } },
      'auth_settings.jwt_subs_allowed',
    ],
    [
      'too many tags',
      { tags: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`t${i}`, 'v'])) },
      'tags',
    ],
    [
      'a mapping to a number',
      { auth_settings: { jwt_sub_workspace_mapping: { sub: 1 } } },
      'auth_settings.jwt_sub_workspace_mapping.sub',
    ],
    [
      'a workspace that is not {id, slug}',
      { workspaces: [{ id: 'not-a-uuid', slug: 'x' }] },
      'workspaces[0].id',
    ],
    ['credentials without a password', { credentials: { username: 'u' } }, 'credentials.password'],
    ['a slug with spaces', { slug: 'has spaces' }, 'slug'],
    ['deployment_config that is not an object', { deployment_config: [1, 2] }, 'deployment_config'],
  ];

  for (const [what, body, param] of cases) {
    test(`${what}: 400 naming ${param}, on create and on update, and nothing is stored`, async () => {
      const before = await api('GET', '/admin/v2/deployments?page_size=1000&status=archived');
      const created = await api('POST', '/admin/v2/deployments', { name: 'Bad', slug: 'bad-body', ...body });
      assert.equal(created.status, 400, created.text);
      assert.equal(created.body.error.type, 'invalid_request_error');
      assert.equal(created.body.error.param, param, created.text);
      assert.equal(typeof created.body.error.message, 'string');
      assert.equal((await api('GET', '/admin/v2/deployments/bad-body')).status, 404);
      const updated = await api('PUT', '/admin/v2/deployments/eu-prod', body);
      assert.equal(updated.status, 400, updated.text);
      assert.equal(updated.body.error.param, param, updated.text);
      const after = await api('GET', '/admin/v2/deployments?page_size=1000&status=archived');
      assert.equal(after.body.total, before.body.total);
    });
  }

  test('create without a name, or with a body that is not JSON, is a 400', async () => {
    const nameless = await api('POST', '/admin/v2/deployments', { type: 'production' });
    assert.equal(nameless.status, 400, nameless.text);
    assert.equal(nameless.body.error.param, 'name');
    const res = await fetch(`${server.url}/admin/v2/deployments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.adminKey}`, 'content-type': 'application/json' },
      body: '{"name":',
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as AnyBody).error.type, 'invalid_request_error');
  });
});

describe('gateway heartbeats', () => {
  let d: AnyBody;
  before(async () => {
    d = await create({
      name: 'Heartbeats',
      slug: 'heartbeats',
      auth_settings: {
        gateway_base_url: 'https://gw.example.com',
        is_playground_proxy_allowed: 1,
        workspaces_allowed: ['default'],
        jwt_sub_workspace_mapping: { svc: 'default' },
      },
    });
  });

  const ping = async () => {
    const res = await api('GET', `/admin/v2/deployments/${d.id}/ping`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  test('answers the auth settings and settings revision, by id or by slug', async () => {
    const answer = await heartbeat('heartbeats', 'gw-1', '2.18.0');
    assert.equal(answer.deploymentId, d.id);
    assert.equal(answer.slug, 'heartbeats');
    assert.equal(answer.authSettings?.gatewayBaseUrl, 'https://gw.example.com');
    assert.equal(answer.authSettings?.isPlaygroundProxyAllowed, true);
    assert.equal(answer.authSettings?.allowAllWorkspaces, false);
    assert.deepEqual(answer.authSettings?.workspacesAllowed, ['default']);
    assert.deepEqual(answer.authSettings?.jwtSubWorkspaceMapping, { svc: 'default' });
    assert.equal(answer.settingsRevision, 1n);
    assert.equal(answer.settingsUpdatedAt, d.last_updated_at);
    const byId = await heartbeat(d.id, 'gw-1', '2.18.0');
    assert.equal(byId.deploymentId, d.id);
  });

  test('makes the deployment healthy, then unhealthy, then unknown as time passes', async () => {
    const beat = now;
    await heartbeat(d.id, 'gw-1', '2.18.0');
    assert.deepEqual(await ping(), {
      id: d.id,
      connection_status: 'healthy',
      last_synced_at: new Date(beat).toISOString(),
    });
    const listed = await api('GET', '/admin/v2/deployments?page_size=1000');
    const entry = listed.body.data.find((x: AnyBody) => x.id === d.id);
    assert.equal(entry.connection_status, 'healthy');
    assert.equal(entry.instances[0].instance_id, 'gw-1');
    now = beat + 90_000;
    assert.equal((await ping()).connection_status, 'healthy');
    now = beat + 90_001;
    assert.equal((await ping()).connection_status, 'unhealthy');
    const shown = await api('GET', `/admin/v2/deployments/${d.id}`);
    assert.equal(shown.body.connection_status, 'unhealthy');
    assert.equal(shown.body.last_synced_at, new Date(beat).toISOString());
    now = beat + 15 * 60_000;
    assert.equal((await ping()).connection_status, 'unhealthy');
    now = beat + 15 * 60_000 + 1;
    assert.deepEqual(await ping(), {
      id: d.id,
      connection_status: 'unknown',
      last_synced_at: new Date(beat).toISOString(),
    });
    // A new heartbeat makes it healthy again.
    await heartbeat(d.id, 'gw-2', '2.18.0');
    assert.equal((await ping()).connection_status, 'healthy');
  });

  test('each instance is shown with its version and what it supports, newest heartbeat first', async () => {
    now += 1000;
    await heartbeat(d.id, 'old', '2.10.9');
    now += 1000;
    await heartbeat(d.id, 'middle', '2.11.0');
    now += 1000;
    await heartbeat(d.id, 'new', '2.18.0-rc.1');
    now += 1000;
    await heartbeat(d.id, 'newest', 'v2.18.0');
    const shown = (await api('GET', `/admin/v2/deployments/${d.id}`)).body;
    const byId = Object.fromEntries(shown.instances.map((i: AnyBody) => [i.instance_id, i]));
    assert.deepEqual(byId.old.features, { block_inline_config: false, mcp_tool_rate_limits: false });
    assert.deepEqual(byId.middle.features, { block_inline_config: true, mcp_tool_rate_limits: false });
    assert.deepEqual(byId.new.features, { block_inline_config: true, mcp_tool_rate_limits: false });
    assert.deepEqual(byId.newest.features, { block_inline_config: true, mcp_tool_rate_limits: true });
    assert.deepEqual(
      shown.instances.slice(0, 4).map((i: AnyBody) => i.instance_id),
      ['newest', 'new', 'middle', 'old'],
    );
    assert.equal(shown.version, 'v2.18.0');
    assert.deepEqual(shown.features, { block_inline_config: true, mcp_tool_rate_limits: true });
    assert.equal(byId.newest.last_heartbeat_at, new Date(now).toISOString());
    assert.match(byId.old.first_seen_at, ISO_UTC);
    // An instance that reports again keeps when it was first seen and shows its new version.
    const firstSeen = byId.old.first_seen_at;
    now += 1000;
    await heartbeat(d.id, 'old', '2.18.1');
    const again = (await api('GET', `/admin/v2/deployments/${d.id}`)).body;
    assert.equal(again.instances[0].instance_id, 'old');
    assert.equal(again.instances[0].first_seen_at, firstSeen);
    assert.deepEqual(again.instances[0].features, { block_inline_config: true, mcp_tool_rate_limits: true });
  });

  test('an instance that picks up changed settings sets last_resynced_at, and is answered the new revision', async () => {
    now += 1000;
    const changed = await api('PUT', `/admin/v2/deployments/${d.id}`, {
      auth_settings: { allow_all_workspaces: 1 },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.last_resynced_at, null);
    now += 1000;
    const answer = await heartbeat(d.id, 'gw-1', '2.18.0');
    assert.equal(answer.settingsRevision, 2n);
    assert.equal(answer.authSettings?.allowAllWorkspaces, true);
    const shown = (await api('GET', `/admin/v2/deployments/${d.id}`)).body;
    assert.equal(shown.last_resynced_at, new Date(now).toISOString());
  });

  test('an unknown or archived deployment is NOT_FOUND, and a bad version or organisation a 400', async () => {
    await assert.rejects(heartbeat(randomUUID(), 'gw-1', '2.18.0'), { status: 404 });
    await assert.rejects(heartbeat('no-such-deployment', 'gw-1', '2.18.0'), { status: 404 });
    const gone = await create({ name: 'Gone', slug: 'gone' });
    assert.equal((await api('DELETE', `/admin/v2/deployments/${gone.id}`)).status, 200);
    await assert.rejects(heartbeat(gone.id, 'gw-1', '2.18.0'), { status: 404 });
    await assert.rejects(heartbeat('gone', 'gw-1', '2.18.0'), { status: 404 });
    assert.deepEqual((await api('GET', `/admin/v2/deployments/${gone.id}`)).body.instances, []);
    await assert.rejects(heartbeat(d.id, 'gw-1', 'latest'), { status: 400, param: 'version' });
    await assert.rejects(heartbeat(d.id, 'gw-1', '2.18.0', 'not-a-uuid'), {
      status: 400,
      param: 'organisation_id',
    });
    await assert.rejects(heartbeat(d.id, '', '2.18.0'), { status: 400, param: 'instance_id' });
  });
});

describe('as admin serves it', () => {
  test('the routes answer under /admin/v2/deployments and /v1/deployments', async () => {
    const created = await call(
      'POST',
      '/admin/v2/deployments',
      { name: 'Served', slug: 'served' },
      h.adminKey,
      adminServer.url,
    );
    answers.push(created.text);
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.object, 'deployment');
    const shown = await call(
      'GET',
      `/v1/deployments/${created.body.id}`,
      undefined,
      h.adminKey,
      adminServer.url,
    );
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.slug, 'served');
    assert.equal(shown.body.connection_status, 'unknown');
  });

  test('Heartbeat is served to the gateway alone', async () => {
    const methods = h
      .grpcMethods('admin')
      .filter((m) => m.service.typeName === 'switchyard.admin.v1.DeploymentService');
    assert.deepEqual(
      methods.map((m) => [m.method.name, m.callers]),
      [['Heartbeat', ['gateway']]],
    );
  });
});

test('the password appears in no answer', () => {
  assert.ok(answers.length > 50);
  for (const text of answers) {
    assert.ok(!text.includes(password), text.slice(0, 200));
    assert.ok(!text.includes('pw-very-secret'), text.slice(0, 200));
  }
  assert.ok(answers.some((text) => text.includes(maskSecret(password))));
});
