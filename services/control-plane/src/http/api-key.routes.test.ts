import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { sha256Hex } from '@switchyard/core';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

async function createWorkspaceKey(workspaceId: string, extra: Record<string, unknown> = {}) {
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'CI key', workspace_id: workspaceId, ...extra },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string };
}

describe('API keys', () => {
  test('shows a new API key once and stores only its hash', async () => {
    const workspace = await createWorkspace(h, 'Keys', 'keys');
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: {
        name: 'Deploy bot',
        workspace_id: workspace.id,
        scopes: ['completions.write', 'workspaces.list'],
      },
    });
    assert.equal(res.status, 200);
    const { id, key } = res.body as { id: string; key: string };
    assert.match(key, /^sy-[A-Za-z0-9_-]{40,}$/);
    assert.equal(res.body.type, 'workspace-service');
    assert.equal(res.body.workspace_id, workspace.id);
    assert.equal(res.body.object, 'api-key');

    const rows = await h
      .db('control-plane')
      .query(`SELECT * FROM control_plane.api_keys WHERE id = $1`, [id]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].key_hash, sha256Hex(key));
    for (const [column, value] of Object.entries(rows[0])) {
      assert.ok(!JSON.stringify(value).includes(key), `column ${column} holds the key`);
      assert.ok(
        !JSON.stringify(value).includes(key.slice(3)),
        `column ${column} holds the key's secret part`,
      );
    }

    const shown = await h.request('GET', `/v2/api-keys/${id}`, { key: h.adminKey });
    assert.equal(shown.status, 200);
    assert.equal(shown.body.key, `${key.slice(0, 7)}********`);
    assert.ok(!shown.text.includes(key.slice(7)));
    const listed = await h.request('GET', '/v2/api-keys?page_size=1000', { key: h.adminKey });
    assert.ok(!listed.text.includes(key.slice(7)));
    assert.equal(listed.body.data.find((k: { id: string }) => k.id === id).key, shown.body.key);

    const used = await h.request('GET', '/v2/workspaces', { key });
    assert.equal(used.status, 200);
    assert.deepEqual(
      used.body.data.map((w: { id: string }) => w.id),
      [workspace.id],
    );
  });

  test('scopes: unknown names and organisation scopes on a workspace key are 400s naming the entry; none given means all the kind can hold', async () => {
    const create = (type: string, json: Record<string, unknown>) =>
      h.request('POST', `/v2/api-keys/${type}/service`, {
        key: h.adminKey,
        json: { name: 'Scoped', workspace_id: type === 'workspace' ? h.workspaceId : undefined, ...json },
      });
    const unknown = await create('workspace', { scopes: ['completions.write', 'completions.everything'] });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.param, 'scopes[1]');
    const tooHigh = await create('workspace', { scopes: ['configs.read', 'organisation_settings.update'] });
    assert.equal(tooHigh.status, 400);
    assert.equal(tooHigh.body.error.param, 'scopes[1]');
    assert.equal(tooHigh.body.error.code, 'scope_not_allowed_for_key_type');

    const workspaceKey = await create('workspace', {});
    assert.equal(workspaceKey.status, 200, workspaceKey.text);
    assert.ok(workspaceKey.body.scopes.includes('completions.write'));
    assert.ok(workspaceKey.body.scopes.includes('configs.create'));
    assert.ok(!workspaceKey.body.scopes.some((s: string) => s.startsWith('organisation_')));
    const adminKey = await create('organisation', {});
    assert.equal(adminKey.status, 200, adminKey.text);
    assert.ok(adminKey.body.scopes.includes('organisation_settings.update'));
    assert.ok(adminKey.body.scopes.includes('workspaces.create'));

    // An admin key with only some scopes can do only that.
    const narrow = await create('organisation', { scopes: ['workspaces.list'] });
    assert.equal((await h.request('GET', '/v2/workspaces', { key: narrow.body.key })).status, 200);
    const denied = await h.request('POST', '/v2/workspaces', { key: narrow.body.key, json: { name: 'No' } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'missing_scope');
  });

  test('an organisation key cannot be a user key', async () => {
    const res = await h.request('POST', '/v2/api-keys/organisation/user', {
      key: h.adminKey,
      json: { name: 'Nope' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'sub-type');
  });

  test('an unknown key type in the path is a 400', async () => {
    const res = await h.request('POST', '/v2/api-keys/team/service', {
      key: h.adminKey,
      json: { name: 'Nope' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'type');
  });

  test('an expires_at in the past is a 400 naming expires_at', async () => {
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Stale', workspace_id: h.workspaceId, expires_at: '2020-01-01T00:00:00Z' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'expires_at');
  });

  test('a key with a future expiry works and shows when it expires', async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const created = await createWorkspaceKey(h.workspaceId, { expires_at: expires });
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);
    const shown = await h.request('GET', `/v2/api-keys/${created.id}`, { key: h.adminKey });
    assert.equal(shown.body.expires_at, expires);
  });

  test('a workspace key needs a workspace_id', async () => {
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Nowhere' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'workspace_id');
  });

  test('a workspace key cannot create keys', async () => {
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.workspaceKey,
      json: { name: 'Escalate', workspace_id: h.workspaceId },
    });
    assert.equal(res.status, 403);
  });

  test('a workspace key lists only the keys of its workspace', async () => {
    const elsewhere = await createWorkspace(h, 'Key list elsewhere');
    await createWorkspaceKey(elsewhere.id);
    const res = await h.request('GET', '/v2/api-keys?page_size=1000', { key: h.workspaceKey });
    assert.equal(res.status, 200);
    assert.ok(res.body.total >= 1);
    for (const key of res.body.data) assert.equal(key.workspace_id, h.workspaceId);
  });

  test('a revoked key is refused at once, and the revocation is shown', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);

    const revoked = await h.request('DELETE', `/v2/api-keys/${created.id}`, { key: h.adminKey });
    assert.equal(revoked.status, 200);
    assert.deepEqual(revoked.body, {});

    const refused = await h.request('GET', '/v2/workspaces', { key: created.key });
    assert.equal(refused.status, 401);
    const shown = await h.request('GET', `/v2/api-keys/${created.id}`, { key: h.adminKey });
    assert.equal(shown.body.status, 'revoked');
  });

  test('a key cannot revoke itself', async () => {
    const keys = await h.request('GET', '/v2/api-keys?page_size=1000', { key: h.adminKey });
    const own = keys.body.data.find((k: { type: string }) => k.type === 'organisation-service');
    const res = await h.request('DELETE', `/v2/api-keys/${own.id}`, { key: h.adminKey });
    assert.equal(res.status, 403);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: h.adminKey })).status, 200);
  });

  test('a workspace key cannot revoke keys', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    const res = await h.request('DELETE', `/v2/api-keys/${created.id}`, { key: h.workspaceKey });
    assert.equal(res.status, 403);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);
  });
});

describe('listing by ids', () => {
  const listed = async (ids: string, key = h.adminKey, page = '') => {
    const res = await h.request('GET', `/v2/api-keys?ids=${encodeURIComponent(ids)}${page}`, { key });
    assert.equal(res.status, 200, res.text);
    return res.body as { total: number; data: Array<{ id: string }> };
  };

  test('lists only the keys named, in the usual order, paged as usual', async () => {
    const keys = [];
    for (let n = 0; n < 3; n++) keys.push(await createWorkspaceKey(h.workspaceId, { name: `Listed ${n}` }));
    const [first, second, third] = keys.map((key) => key.id) as [string, string, string];

    const both = await listed(`${third},${first}`);
    assert.equal(both.total, 2);
    assert.deepEqual(
      both.data.map((key) => key.id),
      [first, third],
    );
    const spaced = await listed(` ${second} , ${second.toUpperCase()}`);
    assert.deepEqual(
      spaced.data.map((key) => key.id),
      [second],
    );
    const paged = await listed(`${first},${second},${third}`, h.adminKey, '&page_size=2&current_page=1');
    assert.equal(paged.total, 3);
    assert.deepEqual(
      paged.data.map((key) => key.id),
      [third],
    );
  });

  test('ids that are unknown, of another workspace or of another organisation are simply absent', async () => {
    const own = await createWorkspaceKey(h.workspaceId);
    const elsewhere = await createWorkspaceKey((await createWorkspace(h, 'Ids elsewhere')).id);
    const other = await seedOrganisation(h.db('control-plane').manager, 'ids-rival');
    const otherKeys = await h.request('GET', '/v2/api-keys', { key: other.adminKey });
    const otherId = otherKeys.body.data[0].id as string;
    const unknown = '00000000-0000-4000-8000-000000000000';
    const ids = [own.id, elsewhere.id, otherId, unknown].join(',');

    assert.deepEqual(
      (await listed(ids)).data.map((key) => key.id),
      [own.id, elsewhere.id],
    );
    assert.deepEqual(
      (await listed(ids, h.workspaceKey)).data.map((key) => key.id),
      [own.id],
    );
    assert.deepEqual(
      (await listed(ids, other.adminKey)).data.map((key) => key.id),
      [otherId],
    );
    assert.deepEqual(await listed(unknown), { object: 'list', total: 0, data: [] });
  });

  test('a malformed id, an empty list or a repeated parameter is a 400 naming ids', async () => {
    const id = (await createWorkspaceKey(h.workspaceId)).id;
    for (const query of [
      'ids=',
      'ids=not-a-uuid',
      `ids=${id},`,
      `ids=,${id}`,
      `ids=${id},,${id}`,
      `ids=${id.slice(0, -1)}`,
      `ids=${id}&ids=${id}`,
    ]) {
      const res = await h.request('GET', `/v2/api-keys?${query}`, { key: h.adminKey });
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.param, 'ids', query);
    }
  });

  test('up to 100 ids are accepted; 101 is a 400 naming ids', async () => {
    const id = (await createWorkspaceKey(h.workspaceId)).id;
    const hundred = [
      id,
      ...Array.from({ length: 99 }, (_, n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`),
    ];
    assert.deepEqual(
      (await listed(hundred.join(','))).data.map((key) => key.id),
      [id],
    );
    const res = await h.request('GET', `/v2/api-keys?ids=${[...hundred, id].join(',')}`, { key: h.adminKey });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'ids');
    assert.match(res.body.error.message, /100/);
  });
});

const DAY_MS = 86_400_000;
const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** When a rotation is due, in ms from now. */
const dueIn = (body: { rotation_policy: { next_rotation_at: string } }) =>
  Date.parse(body.rotation_policy.next_rotation_at) - Date.now();

function apiKeyChanges(since: number) {
  return h.bus
    .log(Topics.changes)
    .slice(since)
    .map((message) => fromBinary(events.ChangeEventSchema, message.value))
    .filter((change) => change.entity === 'api_key');
}

describe('rotation policy', () => {
  test('weekly and monthly are kept as 7 and 30 days, the first rotation one period away', async () => {
    for (const [period, days] of [
      ['weekly', 7],
      ['monthly', 30],
    ] as const) {
      const created = await createWorkspaceKey(h.workspaceId, {
        rotation_policy: { rotation_period: period },
      });
      const shown = await h.request('GET', `/v2/api-keys/${created.id}`, { key: h.adminKey });
      assert.equal(shown.body.rotation_policy.rotation_period_days, days);
      assert.equal(shown.body.rotation_policy.rotation_period, undefined);
      assert.ok(Math.abs(dueIn(shown.body) - days * DAY_MS) < 60_000);
      assert.deepEqual((created as Record<string, unknown>).rotation_policy, shown.body.rotation_policy);
    }
  });

  test('rotation_period_days and next_rotation_at are kept as given; a one-off date needs no period', async () => {
    const next = inHours(48);
    const both = await createWorkspaceKey(h.workspaceId, {
      rotation_policy: { rotation_period_days: 90, next_rotation_at: next },
    });
    assert.deepEqual((both as Record<string, unknown>).rotation_policy, {
      rotation_period_days: 90,
      next_rotation_at: next,
    });
    const once = await createWorkspaceKey(h.workspaceId, {
      rotation_policy: { rotation_period: null, next_rotation_at: next },
    });
    assert.deepEqual((once as Record<string, unknown>).rotation_policy, {
      rotation_period_days: null,
      next_rotation_at: next,
    });
    const none = await createWorkspaceKey(h.workspaceId);
    assert.equal((none as Record<string, unknown>).rotation_policy, null);
  });

  const refused: Array<[string, unknown, string]> = [
    [
      'both rotation_period_days and rotation_period',
      { rotation_period_days: 7, rotation_period: 'weekly' },
      'rotation_policy.rotation_period',
    ],
    ['rotation_period_days of 0', { rotation_period_days: 0 }, 'rotation_policy.rotation_period_days'],
    ['rotation_period_days of 366', { rotation_period_days: 366 }, 'rotation_policy.rotation_period_days'],
    [
      'fractional rotation_period_days',
      { rotation_period_days: 7.5 },
      'rotation_policy.rotation_period_days',
    ],
    ['rotation_period_days as text', { rotation_period_days: '30' }, 'rotation_policy.rotation_period_days'],
    ['an unknown rotation_period', { rotation_period: 'daily' }, 'rotation_policy.rotation_period'],
    ['an empty policy', {}, 'rotation_policy'],
    ['a policy that is not an object', 'monthly', 'rotation_policy'],
    [
      'a next_rotation_at in the past',
      { rotation_period: 'weekly', next_rotation_at: '2020-01-01T00:00:00Z' },
      'rotation_policy.next_rotation_at',
    ],
    [
      'a next_rotation_at that is not a date-time',
      { next_rotation_at: 'tomorrow' },
      'rotation_policy.next_rotation_at',
    ],
    [
      'a key transition period (the old secret stops at once)',
      { rotation_period: 'monthly', key_transition_period_ms: 3_600_000 },
      'rotation_policy.key_transition_period_ms',
    ],
  ];
  for (const [what, policy, param] of refused) {
    test(`${what} is a 400 naming ${param}, on create and on update`, async () => {
      const created = await h.request('POST', '/v2/api-keys/workspace/service', {
        key: h.adminKey,
        json: { name: 'Refused', workspace_id: h.workspaceId, rotation_policy: policy },
      });
      assert.equal(created.status, 400);
      assert.equal(created.body.error.param, param);
      const existing = await createWorkspaceKey(h.workspaceId);
      const updated = await h.request('PUT', `/v2/api-keys/${existing.id}`, {
        key: h.adminKey,
        json: { rotation_policy: policy },
      });
      assert.equal(updated.status, 400);
      assert.equal(updated.body.error.param, param);
      const shown = await h.request('GET', `/v2/api-keys/${existing.id}`, { key: h.adminKey });
      assert.equal(shown.body.rotation_policy, null);
    });
  }
});

describe('updating an API key', () => {
  test('an organisation admin changes name, description, scopes, expiry and rotation policy', async () => {
    const created = await createWorkspaceKey(h.workspaceId, {
      rotation_policy: { rotation_period: 'monthly' },
    });
    const expires = inHours(24);
    const res = await h.request('PUT', `/v2/api-keys/${created.id}`, {
      key: h.adminKey,
      json: {
        name: 'Renamed key',
        description: 'Now described',
        scopes: ['completions.write', 'workspaces.list'],
        expires_at: expires,
        rotation_policy: { rotation_period_days: 14 },
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.id, created.id);
    assert.equal(res.body.name, 'Renamed key');
    assert.equal(res.body.description, 'Now described');
    assert.deepEqual(res.body.scopes, ['completions.write', 'workspaces.list']);
    assert.equal(res.body.expires_at, expires);
    assert.equal(res.body.rotation_policy.rotation_period_days, 14);
    assert.ok(Math.abs(dueIn(res.body) - 14 * DAY_MS) < 60_000);
    assert.equal(res.body.type, 'workspace-service');
    assert.equal(res.body.key, `${created.key.slice(0, 7)}********`);
    assert.ok(!res.text.includes(created.key.slice(7)));
    const shown = await h.request('GET', `/v2/api-keys/${created.id}`, { key: h.adminKey });
    assert.deepEqual({ ...shown.body, last_updated_at: null }, { ...res.body, last_updated_at: null });
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);
    // The scopes it lost apply at once.
    const configs = await h.request('GET', '/v2/configs', { key: created.key });
    assert.equal(configs.status, 403);
    assert.equal(configs.body.error.code, 'missing_scope');
  });

  test('null clears the description, the expiry and the rotation policy; absent fields stay', async () => {
    const created = await createWorkspaceKey(h.workspaceId, {
      description: 'Temporary',
      expires_at: inHours(1),
      rotation_policy: { rotation_period: 'weekly' },
    });
    const res = await h.request('PUT', `/v2/api-keys/${created.id}`, {
      key: h.adminKey,
      json: { description: null, expires_at: null, rotation_policy: null },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.description, null);
    assert.equal(res.body.expires_at, null);
    assert.equal(res.body.rotation_policy, null);
    assert.equal(res.body.name, 'CI key');
  });

  test('announces the change under the key hash, so caches re-read it', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    const before = h.bus.log(Topics.changes).length;
    await h.request('PUT', `/v2/api-keys/${created.id}`, { key: h.adminKey, json: { name: 'Announced' } });
    const changes = apiKeyChanges(before);
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.action, events.ChangeAction.UPDATED);
    assert.equal(changes[0]!.entityId, created.id);
    assert.equal(changes[0]!.cacheKey, sha256Hex(created.key));
  });

  test('an unknown field, an empty body or an expires_at not in the future is a 400 naming it', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    for (const [json, param] of [
      [{ type: 'organisation' }, 'type'],
      [{ user_id: '00000000-0000-4000-8000-000000000000' }, 'user_id'],
      [{ name: 'Fine', rate_limits: [] }, 'rate_limits'],
      [{ name: '' }, 'name'],
      [{ expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
      [{ expires_at: 'next week' }, 'expires_at'],
      [{}, null],
    ] as const) {
      const res = await h.request('PUT', `/v2/api-keys/${created.id}`, { key: h.adminKey, json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    assert.equal(
      (await h.request('GET', `/v2/api-keys/${created.id}`, { key: h.adminKey })).body.name,
      'CI key',
    );
  });

  test('a workspace key cannot update keys, whatever the body', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    for (const json of [{ name: 'Escalated' }, { nonsense: true }]) {
      const res = await h.request('PUT', `/v2/api-keys/${created.id}`, { key: h.workspaceKey, json });
      assert.equal(res.status, 403);
    }
  });

  test('an unknown key, or one of another organisation, is a 404; a revoked key is a 409', async () => {
    const other = await seedOrganisation(h.db('control-plane').manager, 'update-rival');
    const created = await createWorkspaceKey(h.workspaceId);
    const foreign = await h.request('PUT', `/v2/api-keys/${created.id}`, {
      key: other.adminKey,
      json: { name: 'Taken over' },
    });
    assert.equal(foreign.status, 404);
    const unknown = await h.request('PUT', '/v2/api-keys/00000000-0000-4000-8000-000000000000', {
      key: h.adminKey,
      json: { name: 'Ghost' },
    });
    assert.equal(unknown.status, 404);

    await h.request('DELETE', `/v2/api-keys/${created.id}`, { key: h.adminKey });
    const revoked = await h.request('PUT', `/v2/api-keys/${created.id}`, {
      key: h.adminKey,
      json: { expires_at: null },
    });
    assert.equal(revoked.status, 409);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 401);
  });
});

describe('expiry', () => {
  test('a key is refused once its expires_at has passed', async () => {
    const created = await createWorkspaceKey(h.workspaceId, {
      expires_at: new Date(Date.now() + 1_000).toISOString(),
    });
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);
    await sleep(1_100);
    const refused = await h.request('GET', '/v2/workspaces', { key: created.key });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.type, 'authentication_error');
  });

  test('an expiry set on a key in use applies at once, though the key was cached without one', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);
    const res = await h.request('PUT', `/v2/api-keys/${created.id}`, {
      key: h.adminKey,
      json: { expires_at: new Date(Date.now() + 1_000).toISOString() },
    });
    assert.equal(res.status, 200);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 200);
    await sleep(1_100);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: created.key })).status, 401);
  });

  test('an expires_at that is not a date-time is a 400 naming it', async () => {
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Odd', workspace_id: h.workspaceId, expires_at: '31/12/2030' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'expires_at');
  });
});

describe('rotating an API key', () => {
  const rotate = (id: string, key = h.adminKey, json?: unknown) =>
    h.request('POST', `/v2/api-keys/${id}/rotate`, { key, json });
  const use = async (key: string) => (await h.request('GET', '/v2/workspaces', { key })).status;

  test('issues a new secret for the same key: the old one gets 401 at once, the new one works', async () => {
    const created = await createWorkspaceKey(h.workspaceId, { name: 'Rotated' });
    assert.equal(await use(created.key), 200); // now cached as a valid key

    const res = await rotate(created.id);
    assert.equal(res.status, 200, res.text);
    const rotatedKey = res.body.key as string;
    assert.equal(res.body.id, created.id);
    assert.equal(res.body.name, 'Rotated');
    assert.equal(res.body.status, 'active');
    assert.match(rotatedKey, /^sy-[A-Za-z0-9_-]{40,}$/);
    assert.notEqual(rotatedKey, created.key);
    assert.ok(Math.abs(Date.parse(res.body.key_transition_expires_at) - Date.now()) < 60_000);

    assert.equal(await use(created.key), 401);
    assert.equal(await use(rotatedKey), 200);
    assert.equal(await use(created.key), 401);

    const shown = await h.request('GET', `/v2/api-keys/${created.id}`, { key: h.adminKey });
    assert.equal(shown.body.key, `${rotatedKey.slice(0, 7)}********`);
    assert.ok(!shown.text.includes(rotatedKey.slice(7)));
    const [row] = await h
      .db('control-plane')
      .query(`SELECT key_hash FROM control_plane.api_keys WHERE id = $1`, [created.id]);
    assert.equal(row.key_hash, sha256Hex(rotatedKey));
  });

  test("announces the change under the old secret's hash, so every cache drops it", async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    const before = h.bus.log(Topics.changes).length;
    assert.equal((await rotate(created.id)).status, 200);
    const changes = apiKeyChanges(before);
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.entityId, created.id);
    assert.equal(changes[0]!.cacheKey, sha256Hex(created.key));
  });

  test('a key rotated twice keeps only the newest secret', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    const first = (await rotate(created.id)).body.key as string;
    assert.equal(await use(first), 200);
    const second = (await rotate(created.id)).body.key as string;
    assert.deepEqual([await use(created.key), await use(first), await use(second)], [401, 401, 200]);
  });

  test('an organisation admin key may rotate itself and carries on with the new secret', async () => {
    const created = await h.request('POST', '/v2/api-keys/organisation/service', {
      key: h.adminKey,
      json: { name: 'Self-rotating admin' },
    });
    assert.equal(created.status, 200, created.text);
    const res = await rotate(created.body.id, created.body.key);
    assert.equal(res.status, 200);
    assert.equal(await use(created.body.key), 401);
    assert.equal(await use(res.body.key), 200);
  });

  test('moves next_rotation_at to one period after the rotation', async () => {
    const created = await createWorkspaceKey(h.workspaceId, {
      rotation_policy: { rotation_period_days: 7, next_rotation_at: inHours(2) },
    });
    const res = await rotate(created.id);
    assert.equal(res.body.rotation_policy.rotation_period_days, 7);
    assert.ok(Math.abs(dueIn(res.body) - 7 * DAY_MS) < 60_000);
  });

  test('uses up a one-off next_rotation_at, and leaves a key without a policy without one', async () => {
    const once = await createWorkspaceKey(h.workspaceId, {
      rotation_policy: { next_rotation_at: inHours(2) },
    });
    assert.equal((await rotate(once.id)).body.rotation_policy, null);
    const none = await createWorkspaceKey(h.workspaceId);
    assert.equal((await rotate(none.id)).body.rotation_policy, null);
  });

  test('a key transition period is a 400 naming key_transition_period_ms, and the secret stays', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    const res = await rotate(created.id, h.adminKey, { key_transition_period_ms: 3_600_000 });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'key_transition_period_ms');
    assert.equal(await use(created.key), 200);
  });

  test('a workspace key cannot rotate keys, not even itself', async () => {
    const created = await createWorkspaceKey(h.workspaceId);
    for (const id of [created.id, (await createWorkspaceKey(h.workspaceId)).id]) {
      const res = await rotate(id, created.key);
      assert.equal(res.status, 403);
    }
    assert.equal(await use(created.key), 200);
  });

  test('an unknown key or one of another organisation is a 404, and nothing rotates', async () => {
    const other = await seedOrganisation(h.db('control-plane').manager, 'rotate-rival');
    const created = await createWorkspaceKey(h.workspaceId);
    assert.equal((await rotate(created.id, other.adminKey)).status, 404);
    assert.equal(await use(created.key), 200);
    assert.equal((await rotate('00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await rotate('not-a-key')).status, 404);
  });

  test('a revoked or expired key is a 409', async () => {
    const revoked = await createWorkspaceKey(h.workspaceId);
    await h.request('DELETE', `/v2/api-keys/${revoked.id}`, { key: h.adminKey });
    const refused = await rotate(revoked.id);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'api_key_revoked');

    const expiring = await createWorkspaceKey(h.workspaceId, {
      expires_at: new Date(Date.now() + 500).toISOString(),
    });
    await sleep(600);
    const expired = await rotate(expiring.id);
    assert.equal(expired.status, 409);
    assert.equal(expired.body.error.code, 'api_key_expired');
  });

  test('creating a key at a path that ends in /rotate still names the bad sub-type', async () => {
    const res = await h.request('POST', '/v2/api-keys/workspace/rotate', {
      key: h.adminKey,
      json: { name: 'Nope', workspace_id: h.workspaceId },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'sub-type');
  });
});
