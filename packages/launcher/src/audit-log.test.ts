import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { adminService, type Admin } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import {
  AuditLogScope1763700000014,
  seedOrganisation,
  type SeededOrganisation,
} from '@switchyard/control-plane/testing';
import { gatewayService } from '@switchyard/gateway';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import { scopesForKind } from '@switchyard/access';
import type { ServiceDefinition } from '@switchyard/runtime';
import { eventually, startServiceHarness, type ServiceHarness } from '@switchyard/testing';

/**
 * The audit log end to end: management writes on control-plane and admin routes, through
 * the route guard, the event bus and log-export's consumer, read back with GET /v1/audit-logs.
 */

const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];

let h: ServiceHarness;
let rival: SeededOrganisation;
let adminKeyId: string;

const USER_AGENT = 'audit-suite/2.0';
const PROVIDER_CREDENTIAL = 'sk-audit-provider-credential-5f1c9e2a77';

interface Entry {
  id: string;
  object: string;
  occurred_at: string;
  organisation_id: string;
  workspace_id: string | null;
  actor: { api_key_id: string; key_name: string; user_id: string | null; auth_method: string };
  method: string;
  resource: string;
  resource_id: string | null;
  path: string;
  scope: string | null;
  status: number;
  service: string;
  request_id: string;
  client: { ip: string; user_agent: string };
}

function write(method: string, path: string, key: string, json?: unknown) {
  return h.request(method, path, {
    key,
    ...(json === undefined ? {} : { json }),
    headers: { 'user-agent': USER_AGENT },
  });
}

async function auditLog(query = '', key = h.adminKey): Promise<{ total: number; data: Entry[] }> {
  const res = await h.request('GET', `/v1/audit-logs${query}`, { key });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.object, 'list');
  return res.body as { total: number; data: Entry[] };
}

/** Waits until the entry of the request with this id has been stored; audit events are asynchronous. */
function entryOf(requestId: string, key = h.adminKey): Promise<Entry> {
  return eventually(
    async () => (await auditLog('?page_size=1000', key)).data.find((e) => e.request_id === requestId),
    { what: `the audit entry of request ${requestId}` },
  );
}

/** A write whose entry, once stored, shows that everything published before it was consumed. */
async function barrier(): Promise<void> {
  const res = await write('POST', '/v2/workspaces', h.adminKey, { name: `Barrier ${randomUUID()}` });
  assert.equal(res.status, 200, res.text);
  await entryOf(res.headers.get('x-request-id')!);
}

before(async () => {
  h = await startServiceHarness({ services });
  rival = await seedOrganisation(h.db('control-plane').manager, 'audit-rival');
  const keys = await h.request('GET', '/v2/api-keys?page_size=100', { key: h.adminKey });
  adminKeyId = keys.body.data.find((k: { workspace_id: string | null }) => k.workspace_id === null).id;
});
after(() => h?.close());

describe('the audit log', () => {
  test('control-plane and admin writes are recorded with who, what, when and from where', async () => {
    const started = Date.now();
    const workspace = await write('POST', '/v2/workspaces', h.adminKey, { name: 'Audited' });
    assert.equal(workspace.status, 200, workspace.text);
    const created = await entryOf(workspace.headers.get('x-request-id')!);
    assert.equal(created.object, 'audit_log');
    assert.equal(created.organisation_id, h.organisationId);
    assert.equal(created.workspace_id, null, 'an organisation admin key is bound to no workspace');
    assert.deepEqual(created.actor, {
      api_key_id: adminKeyId,
      key_name: created.actor.key_name,
      user_id: null,
      auth_method: 'api_key',
    });
    assert.ok(created.actor.key_name.length > 0);
    assert.equal(created.method, 'POST');
    assert.equal(created.resource, '/v2/workspaces');
    assert.equal(created.path, '/v2/workspaces');
    assert.equal(created.scope, 'workspaces.create');
    assert.equal(created.status, 200);
    assert.equal(created.service, 'control-plane');
    assert.equal(created.client.ip, '127.0.0.1');
    assert.equal(created.client.user_agent, USER_AGENT);
    const at = Date.parse(created.occurred_at);
    assert.ok(at >= started - 1000 && at <= Date.now(), created.occurred_at);

    const renamed = await write('PUT', `/v2/workspaces/${workspace.body.id}`, h.adminKey, {
      name: 'Renamed',
    });
    assert.equal(renamed.status, 200, renamed.text);
    const updated = await entryOf(renamed.headers.get('x-request-id')!);
    assert.equal(updated.method, 'PUT');
    assert.equal(updated.resource, '/v2/workspaces/:id');
    assert.equal(updated.path, `/v2/workspaces/${workspace.body.id}`);
    assert.equal(updated.resource_id, workspace.body.id);
    assert.equal(updated.scope, 'workspaces.update');

    const settings = await write('PUT', '/v1/admin/organisation/settings', h.adminKey, {
      block_inline_config: false,
    });
    assert.equal(settings.status, 200, settings.text);
    const changed = await entryOf(settings.headers.get('x-request-id')!);
    assert.equal(changed.service, 'admin');
    assert.equal(changed.resource, '/v1/admin/organisation/settings');
    assert.equal(changed.scope, 'organisation_settings.update');

    const config = await write('POST', '/v2/configs', h.workspaceKey, {
      name: 'audited config',
      config: { provider: '@mock' },
    });
    assert.equal(config.status, 200, config.text);
    const byWorkspaceKey = await entryOf(config.headers.get('x-request-id')!);
    assert.equal(byWorkspaceKey.workspace_id, h.workspaceId);
    assert.notEqual(byWorkspaceKey.actor.api_key_id, adminKeyId);
    assert.equal(byWorkspaceKey.scope, 'configs.create');
  });

  test('reads, model calls and failed writes are not recorded', async () => {
    await barrier();
    const before = await auditLog('?page_size=1000');
    await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
    const unrecorded = [
      await h.request('GET', '/v2/workspaces', { key: h.adminKey }),
      await h.request('GET', '/v2/api-keys', { key: h.adminKey }),
      await h.request('GET', '/v1/admin/organisation/settings', { key: h.adminKey }),
      await h.request('POST', '/v1/chat/completions', {
        key: h.workspaceKey,
        json: { model: '@mock/mock-1', messages: [{ role: 'user', content: 'not audited' }] },
      }),
      await h.request('POST', '/v1/embeddings', {
        key: h.workspaceKey,
        json: { model: '@mock/mock-1', input: 'not audited' },
      }),
      await write('POST', '/v2/workspaces', h.adminKey, {}),
      await write('DELETE', `/v2/api-keys/${randomUUID()}`, h.adminKey),
      await write('PUT', '/v1/admin/organisation/settings', h.adminKey, { block_inline_config: 'maybe' }),
      await write('POST', '/v2/workspaces', h.workspaceKey, { name: 'Refused' }),
      await write('POST', '/v2/workspaces', 'sy-not-a-key-0000000000000000'),
    ];
    assert.deepEqual(
      unrecorded.map((r) => r.status),
      [200, 200, 200, 200, unrecorded[4]!.status, 400, 404, 400, 403, 401],
    );
    await barrier();
    const afterwards = await auditLog('?page_size=1000');
    const ids = new Set(unrecorded.map((r) => r.headers.get('x-request-id')));
    assert.deepEqual(
      afterwards.data.filter((e) => ids.has(e.request_id)),
      [],
    );
    assert.equal(afterwards.total, before.total + 1, 'only the barrier was recorded');
    assert.ok(afterwards.data.every((e) => e.method !== 'GET' && e.status >= 200 && e.status < 300));
  });

  test('no secret is ever stored: neither a created API key nor a provider credential', async () => {
    const key = await write('POST', '/v2/api-keys/workspace/service', h.adminKey, {
      name: 'audit secret key',
      workspace_id: h.workspaceId,
    });
    assert.equal(key.status, 200, key.text);
    const secretKey: string = key.body.key;
    assert.ok(secretKey.length > 20);
    const integration = await write('POST', '/admin/v2/integrations', h.adminKey, {
      name: 'Audited provider',
      slug: 'audited-provider',
      ai_provider_id: 'openai',
      key: PROVIDER_CREDENTIAL,
    });
    assert.equal(integration.status, 200, integration.text);
    const rotated = await write('PUT', '/admin/v2/integrations/audited-provider', h.adminKey, {
      key: `${PROVIDER_CREDENTIAL}-rotated`,
    });
    const revoked = await write('DELETE', `/v2/api-keys/${key.body.id}`, h.adminKey);
    assert.equal(revoked.status, 200, revoked.text);
    const keyEntry = await entryOf(key.headers.get('x-request-id')!);
    assert.equal(keyEntry.resource, '/v2/api-keys/:type/:sub');
    const integrationEntry = await entryOf(integration.headers.get('x-request-id')!);
    assert.equal(integrationEntry.service, 'admin');
    assert.equal(integrationEntry.resource, '/admin/v2/integrations');
    const revokedEntry = await entryOf(revoked.headers.get('x-request-id')!);
    assert.equal(revokedEntry.resource, '/v2/api-keys/:id');
    assert.equal(revokedEntry.resource_id, key.body.id);
    if (rotated.status === 200) await entryOf(rotated.headers.get('x-request-id')!);

    const rows: unknown[] = await h.db('log-export').query('SELECT * FROM log_export.audit_logs');
    assert.ok(rows.length >= 3);
    const stored = JSON.stringify(rows);
    assert.ok(!stored.includes(secretKey), 'the API key is not stored');
    assert.ok(!stored.includes(secretKey.slice(-12)), 'nor any recognisable part of it');
    assert.ok(!stored.includes(PROVIDER_CREDENTIAL), 'the provider credential is not stored');
    assert.ok(!stored.includes(h.adminKey), "the caller's own key is not stored");
    const served = JSON.stringify(await auditLog('?page_size=1000'));
    assert.ok(!served.includes(secretKey) && !served.includes(PROVIDER_CREDENTIAL));
  });

  test('SCIM provisioning writes are recorded as made with the SCIM token, which is never stored', async () => {
    const issued = await write('POST', '/v1/admin/organisation/scim-token', h.adminKey, {});
    assert.equal(issued.status, 200, issued.text);
    const scimToken: string = issued.body.token;
    const created = await h.request('POST', `/scim/${h.organisationId}/Users`, {
      headers: { authorization: `Bearer ${scimToken}`, 'user-agent': USER_AGENT },
      json: {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'audited.scim@example.com',
        emails: [{ value: 'audited.scim@example.com', primary: true }],
        active: true,
      },
    });
    assert.equal(created.status, 201, created.text);
    const entry = await entryOf(created.headers.get('x-request-id')!);
    assert.equal(entry.organisation_id, h.organisationId);
    assert.equal(entry.method, 'POST');
    assert.equal(entry.resource, '/scim/:organisationId/Users');
    assert.equal(entry.service, 'admin');
    assert.equal(entry.actor.auth_method, 'scim_token');
    assert.equal(entry.actor.key_name, 'SCIM token');
    assert.equal(entry.actor.api_key_id, null, 'no API key made it');
    assert.equal(entry.client.user_agent, USER_AGENT);
    const refused = await h.request('POST', `/scim/${h.organisationId}/Users`, {
      headers: { authorization: 'Bearer scim_not-the-token' },
      json: { userName: 'nobody@example.com' },
    });
    assert.equal(refused.status, 401);
    await barrier();
    const all = await auditLog('?page_size=1000');
    assert.ok(!all.data.some((e) => e.request_id === refused.headers.get('x-request-id')));
    const rows: unknown[] = await h.db('log-export').query('SELECT * FROM log_export.audit_logs');
    assert.ok(!JSON.stringify(rows).includes(scimToken), 'the SCIM token is not stored');
  });

  test("another organisation's admin sees none of it, and its own writes stay its own", async () => {
    const theirs = await write('POST', '/v2/workspaces', rival.adminKey, { name: 'Rival audited' });
    assert.equal(theirs.status, 200, theirs.text);
    const entry = await entryOf(theirs.headers.get('x-request-id')!, rival.adminKey);
    assert.equal(entry.organisation_id, rival.organisationId);
    const seen = await auditLog('?page_size=1000', rival.adminKey);
    assert.ok(seen.data.every((e) => e.organisation_id === rival.organisationId));
    assert.equal(seen.total, 1);
    const filtered = await auditLog(`?workspace_id=${h.workspaceId}`, rival.adminKey);
    assert.deepEqual(filtered, { object: 'list', total: 0, data: [] });
    const ours = await auditLog('?page_size=1000');
    assert.ok(ours.data.every((e) => e.organisation_id === h.organisationId));
    assert.ok(!ours.data.some((e) => e.request_id === theirs.headers.get('x-request-id')));
  });

  test('workspace keys and admin keys without audit_logs.list are refused', async () => {
    const ws = await h.request('GET', '/v1/audit-logs', { key: h.workspaceKey });
    assert.equal(ws.status, 403, ws.text);
    assert.equal(ws.body.error.code, 'admin_key_required');
    const limited = await h.request('POST', '/v2/api-keys/organisation/service', {
      key: h.adminKey,
      json: {
        name: 'no audit',
        scopes: scopesForKind('organisation_admin').filter((s) => s !== 'audit_logs.list'),
      },
    });
    assert.equal(limited.status, 200, limited.text);
    const refused = await h.request('GET', '/v1/audit-logs', { key: limited.body.key });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'missing_scope');
    assert.equal((await h.request('GET', '/v1/audit-logs')).status, 401);
  });

  test('filters: workspace, user, API key, method, resource and time', async () => {
    // A member's user key: its writes carry the user.
    const user = await h.request('POST', '/v1/admin/users', {
      key: h.adminKey,
      json: { email: 'audit.admin@example.com', role: 'member' },
    });
    assert.equal(user.status, 200, user.text);
    const joined = await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
      key: h.adminKey,
      json: { users: [{ id: user.body.id, role: 'admin' }] },
    });
    assert.equal(joined.status, 200, joined.text);
    const userKey = await h.request('POST', '/v2/api-keys/workspace/user', {
      key: h.adminKey,
      json: { name: 'audit user key', workspace_id: h.workspaceId, user_id: user.body.id },
    });
    assert.equal(userKey.status, 200, userKey.text);
    const start = new Date().toISOString();
    const byUser = await write('POST', '/v2/configs', userKey.body.key, {
      name: 'user config',
      config: { provider: '@mock' },
    });
    assert.equal(byUser.status, 200, byUser.text);
    const slug: string = byUser.body.data.slug;
    const deleted = await write('DELETE', `/v2/configs/${slug}`, userKey.body.key);
    assert.equal(deleted.status, 200, deleted.text);
    const last = await entryOf(deleted.headers.get('x-request-id')!);
    const end = new Date(Date.parse(last.occurred_at) + 1).toISOString();

    const mine = await auditLog(`?user_id=${user.body.id}`);
    assert.deepEqual(
      mine.data.map((e) => [e.method, e.resource, e.resource_id]),
      [
        ['DELETE', '/v2/configs/:slug', slug],
        ['POST', '/v2/configs', null],
      ],
      'newest first',
    );
    assert.ok(
      mine.data.every((e) => e.actor.user_id === user.body.id && e.actor.api_key_id === userKey.body.id),
    );
    assert.equal((await auditLog(`?api_key_id=${userKey.body.id}`)).total, 2);
    assert.equal((await auditLog(`?api_key_id=${userKey.body.id}&method=delete`)).total, 1);
    assert.equal((await auditLog(`?user_id=${user.body.id}&resource=/v2/configs/:slug`)).total, 1);
    assert.equal(
      (
        await auditLog(
          `?user_id=${user.body.id}&from=${encodeURIComponent(start)}&to=${encodeURIComponent(end)}`,
        )
      ).total,
      2,
    );
    assert.equal((await auditLog(`?user_id=${user.body.id}&from=${encodeURIComponent(end)}`)).total, 0);
    assert.equal((await auditLog(`?user_id=${user.body.id}&to=${encodeURIComponent(start)}`)).total, 0);
    const inWorkspace = await auditLog(`?workspace_id=${h.workspaceId}&page_size=1000`);
    assert.ok(inWorkspace.total >= 3);
    assert.ok(inWorkspace.data.every((e) => e.workspace_id === h.workspaceId));
    const byAdmin = await auditLog(`?api_key_id=${adminKeyId}&method=POST&page_size=1000`);
    assert.ok(byAdmin.total > 0);
    assert.ok(byAdmin.data.every((e) => e.actor.api_key_id === adminKeyId && e.method === 'POST'));
    assert.equal((await auditLog(`?workspace_id=${randomUUID()}`)).total, 0);
  });

  test('pages: newest first, disjoint, with the total', async () => {
    const all = await auditLog('?page_size=1000');
    assert.ok(all.total >= 6);
    const times = all.data.map((e) => Date.parse(e.occurred_at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );
    const first = await auditLog('?page_size=2');
    const second = await auditLog('?page_size=2&current_page=1');
    assert.equal(first.total, all.total);
    assert.deepEqual(
      [...first.data, ...second.data].map((e) => e.id),
      all.data.slice(0, 4).map((e) => e.id),
    );
    const beyond = await auditLog(`?page_size=1000&current_page=1`);
    assert.deepEqual(beyond.data, []);
  });

  test('every query parameter is validated: a bad value is a 400 naming it', async () => {
    for (const [query, param] of [
      ['workspace_id=nope', 'workspace_id'],
      ['user_id=1', 'user_id'],
      ['api_key_id=x', 'api_key_id'],
      ['method=GET', 'method'],
      ['method=FETCH', 'method'],
      ['resource=v2/configs', 'resource'],
      ['resource=/v2/<script>', 'resource'],
      ['from=yesterday', 'from'],
      ['to=2026-13-01T00:00:00Z', 'to'],
      ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'to'],
      ['page_size=0', 'page_size'],
      ['current_page=-1', 'current_page'],
      ['workspace=x', 'workspace'],
      ['method=POST&method=PUT', 'method'],
    ] as const) {
      const res = await h.request('GET', `/v1/audit-logs?${query}`, { key: h.adminKey });
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.param, param, query);
    }
  });
});

describe('the scope migration', () => {
  test('organisation admin keys that read settings are granted audit_logs.list; nothing else changes', async () => {
    const manager = h.db('control-plane').manager;
    const seeded = await seedOrganisation(manager, 'audit-migration');
    const withoutAudit = scopesForKind('organisation_admin').filter((s) => s !== 'audit_logs.list');
    await manager.query(
      `UPDATE control_plane.api_keys SET scopes = $1::jsonb WHERE organisation_id = $2 AND kind = 'organisation_admin'`,
      [JSON.stringify(withoutAudit), seeded.organisationId],
    );
    const narrow = await h.request('POST', '/v2/api-keys/organisation/service', {
      key: seeded.adminKey,
      json: { name: 'workspaces only', scopes: ['workspaces.list'] },
    });
    assert.equal(narrow.status, 200, narrow.text);
    const scopesOf = async () =>
      Object.fromEntries(
        (
          (await manager.query(
            `SELECT kind, name, scopes FROM control_plane.api_keys WHERE organisation_id = $1`,
            [seeded.organisationId],
          )) as Array<{ name: string; scopes: string[] }>
        ).map((k) => [k.name, k.scopes]),
      );
    const before = await scopesOf();
    const runner = h.db('control-plane').createQueryRunner();
    try {
      await new AuditLogScope1763700000014().up(runner);
      await new AuditLogScope1763700000014().up(runner);
    } finally {
      await runner.release();
    }
    const afterwards = await scopesOf();
    assert.deepEqual(
      afterwards['audit-migration admin'],
      [...withoutAudit, 'audit_logs.list'],
      'granted once',
    );
    assert.deepEqual(afterwards['workspaces only'], before['workspaces only']);
    assert.deepEqual(afterwards['audit-migration workspace'], before['audit-migration workspace']);
  });
});
