import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import type { ServiceDefinition } from '@switchyard/runtime';
import { startServiceHarness, type AnyBody, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '@switchyard/control-plane';
import { createWorkspace } from '@switchyard/control-plane/testing';

let h: ServiceHarness;
const SETTINGS = '/v1/admin/organisation/settings';
let emails = 0;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] as ServiceDefinition[] });
});
after(() => h.close());

async function settings(json: Record<string, unknown>) {
  const res = await h.request('PUT', SETTINGS, { key: h.adminKey, json });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function member(workspaceId: string, role = 'member') {
  const user = await h.request('POST', '/v1/admin/users', {
    key: h.adminKey,
    json: { email: `keyholder.${++emails}@example.com`, role: 'member' },
  });
  assert.equal(user.status, 200, user.text);
  const joined = await h.request('POST', `/v1/admin/workspaces/${workspaceId}/users`, {
    key: h.adminKey,
    json: { users: [{ id: user.body.id, role }] },
  });
  assert.equal(joined.status, 200, joined.text);
  return user.body.id as string;
}

async function userKeysOf(userId: string) {
  const res = await h.request('GET', '/v2/api-keys?page_size=100', { key: h.adminKey });
  return (res.body.data as Array<Record<string, AnyBody>>).filter(
    (k) => k.user_id === userId && k.status === 'active',
  );
}

function userKey(workspaceId: string, userId: string, extra: Record<string, unknown> = {}) {
  return h.request('POST', '/v2/api-keys/workspace/user', {
    key: h.adminKey,
    json: { name: 'Personal', workspace_id: workspaceId, user_id: userId, ...extra },
  });
}

describe('key settings in the organisation settings', () => {
  test('are shown with their defaults, stored, normalised (weekly = 7, monthly = 30) and cleared with null', async () => {
    const shown = await h.request('GET', SETTINGS, { key: h.adminKey });
    assert.equal(shown.body.user_api_key_auto_create, false);
    assert.equal(shown.body.user_api_key_rotation_period, null);
    assert.equal(shown.body.user_api_key_auto_create_scopes, null);

    let body = await settings({ user_api_key_rotation_period: 'weekly', user_api_key_auto_create: true });
    assert.equal(body.user_api_key_rotation_period, 7);
    assert.equal(body.user_api_key_auto_create, true);
    body = await settings({ user_api_key_rotation_period: 'monthly' });
    assert.equal(body.user_api_key_rotation_period, 30);
    assert.equal(body.user_api_key_auto_create, true, 'a field left out keeps its value');
    body = await settings({
      user_api_key_rotation_period: 90,
      user_api_key_auto_create_scopes: ['completions.write'],
    });
    assert.equal(body.user_api_key_rotation_period, 90);
    assert.deepEqual(body.user_api_key_auto_create_scopes, ['completions.write']);
    body = await settings({
      user_api_key_rotation_period: null,
      user_api_key_auto_create: null,
      user_api_key_auto_create_scopes: null,
    });
    assert.equal(body.user_api_key_rotation_period, null);
    assert.equal(body.user_api_key_auto_create, false);
    assert.equal(body.user_api_key_auto_create_scopes, null);
  });

  test('bad values are 400s naming the field, and change nothing', async () => {
    await settings({ user_api_key_rotation_period: 14 });
    for (const [json, param] of [
      [{ user_api_key_rotation_period: 0 }, 'user_api_key_rotation_period'],
      [{ user_api_key_rotation_period: 366 }, 'user_api_key_rotation_period'],
      [{ user_api_key_rotation_period: 'daily' }, 'user_api_key_rotation_period'],
      [{ user_api_key_rotation_period: 1.5 }, 'user_api_key_rotation_period'],
      [{ user_api_key_auto_create: 'yes' }, 'user_api_key_auto_create'],
      [
        { user_api_key_auto_create_scopes: ['completions.write', 'configs.create'] },
        'user_api_key_auto_create_scopes[1]',
      ],
      [{ user_api_key_auto_create_scopes: [] }, 'user_api_key_auto_create_scopes'],
      [{ default_workspace_user_api_key_auto_create: 1 }, 'default_workspace_user_api_key_auto_create'],
    ] as const) {
      const res = await h.request('PUT', SETTINGS, { key: h.adminKey, json });
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param);
    }
    const shown = await h.request('GET', SETTINGS, { key: h.adminKey });
    assert.equal(shown.body.user_api_key_rotation_period, 14);
    await settings({ user_api_key_rotation_period: null });
  });

  test('only organisation admin keys read or change them', async () => {
    const res = await h.request('PUT', SETTINGS, {
      key: h.workspaceKey,
      json: { user_api_key_rotation_period: 7 },
    });
    assert.equal(res.status, 403);
  });
});

describe('an enforced rotation period (user_api_key_rotation_period)', () => {
  test('applies to user keys without a policy; another period or a manual next_rotation_at is a 422', async () => {
    const workspace = await createWorkspace(h, 'Rotation enforced');
    const userId = await member(workspace.id);
    await settings({ user_api_key_rotation_period: 30 });
    try {
      const plain = await userKey(workspace.id, userId);
      assert.equal(plain.status, 200, plain.text);
      assert.equal(plain.body.rotation_policy.rotation_period_days, 30);

      const same = await userKey(workspace.id, userId, { rotation_policy: { rotation_period: 'monthly' } });
      assert.equal(same.status, 200, same.text);

      const before = (await userKeysOf(userId)).length;
      for (const [policy, param] of [
        [{ rotation_period_days: 14 }, 'rotation_policy.rotation_period_days'],
        [{ rotation_period: 'weekly' }, 'rotation_policy.rotation_period_days'],
        [
          { next_rotation_at: new Date(Date.now() + 86_400_000).toISOString() },
          'rotation_policy.next_rotation_at',
        ],
      ] as const) {
        const res = await userKey(workspace.id, userId, { rotation_policy: policy });
        assert.equal(res.status, 422, res.text);
        assert.equal(res.body.error.param, param);
        assert.equal(res.body.error.code, 'rotation_enforced');
      }
      assert.equal((await userKeysOf(userId)).length, before, 'refused keys are not created');

      // Updates are held to it too.
      for (const [rotation_policy, param] of [
        [{ rotation_period_days: 60 }, 'rotation_policy.rotation_period_days'],
        [null, 'rotation_policy'],
      ] as const) {
        const res = await h.request('PUT', `/v2/api-keys/${plain.body.id}`, {
          key: h.adminKey,
          json: { rotation_policy },
        });
        assert.equal(res.status, 422, res.text);
        assert.equal(res.body.error.param, param);
      }

      // Service keys are not user keys: their policy is their own.
      const service = await h.request('POST', '/v2/api-keys/workspace/service', {
        key: h.adminKey,
        json: { name: 'Bot', workspace_id: workspace.id, rotation_policy: { rotation_period_days: 3 } },
      });
      assert.equal(service.status, 200, service.text);
    } finally {
      await settings({ user_api_key_rotation_period: null });
    }
    const free = await userKey(workspace.id, userId, { rotation_policy: { rotation_period_days: 14 } });
    assert.equal(free.status, 200, 'without enforcement any period goes');
  });
});

describe('user_api_key_auto_create', () => {
  test('gives members joining a workspace a user key with the limited scopes and the enforced period', async () => {
    const workspace = await createWorkspace(h, 'Auto keys');
    await settings({
      user_api_key_auto_create: true,
      user_api_key_auto_create_scopes: ['completions.write', 'files.read'],
      user_api_key_rotation_period: 'weekly',
    });
    try {
      const userId = await member(workspace.id);
      const keys = await userKeysOf(userId);
      assert.equal(keys.length, 1);
      assert.equal(keys[0]!.workspace_id, workspace.id);
      assert.deepEqual([...keys[0]!.scopes].sort(), ['completions.write', 'files.read']);
      assert.equal(keys[0]!.rotation_policy.rotation_period_days, 7);
      assert.match(keys[0]!.key, /\*{4,}$/, 'its secret is shown to nobody');
    } finally {
      await settings({
        user_api_key_auto_create: null,
        user_api_key_auto_create_scopes: null,
        user_api_key_rotation_period: null,
      });
    }
  });

  test("a workspace's own choice overrides the organisation's, both ways; off by default", async () => {
    const optedOut = await createWorkspace(h, 'Opted out');
    const optedIn = await createWorkspace(h, 'Opted in');
    const plain = await createWorkspace(h, 'Following');
    for (const [workspace, value] of [
      [optedOut, false],
      [optedIn, true],
    ] as const) {
      const res = await h.request('PUT', `/v2/workspaces/${workspace.id}`, {
        key: h.adminKey,
        json: { settings: { user_api_key_auto_create: value } },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.settings.user_api_key_auto_create, value);
    }
    assert.equal((await userKeysOf(await member(plain.id))).length, 0, 'off by default');
    assert.equal((await userKeysOf(await member(optedIn.id))).length, 1, 'the workspace opted in');

    await settings({ user_api_key_auto_create: true });
    try {
      assert.equal((await userKeysOf(await member(optedOut.id))).length, 0, 'the workspace opted out');
      const joined = await member(plain.id, 'member');
      const [key] = await userKeysOf(joined);
      assert.ok(key, 'the organisation turned it on');
      assert.ok(key.scopes.includes('completions.write'));
      assert.ok(!key.scopes.includes('configs.read'), 'auto-created keys hold data-plane scopes only');
    } finally {
      await settings({ user_api_key_auto_create: null });
    }
  });

  test('default_workspace_user_api_key_auto_create decides for the default workspace', async () => {
    await settings({ default_workspace_user_api_key_auto_create: true });
    try {
      assert.equal((await userKeysOf(await member(h.workspaceId))).length, 1);
      const other = await createWorkspace(h, 'Not the default');
      assert.equal((await userKeysOf(await member(other.id))).length, 0);
    } finally {
      await settings({ default_workspace_user_api_key_auto_create: null });
    }
  });
});

describe('workspace security_settings', () => {
  test('a workspace sets only the sections its organisation opened to override; others are a 422 and nothing changes', async () => {
    const workspace = await createWorkspace(h, 'Secured');
    const put = (json: Record<string, unknown>) =>
      h.request('PUT', `/v2/workspaces/${workspace.id}`, { key: h.adminKey, json });
    const shown = async () =>
      (await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey })).body.security_settings;

    const closed = await put({ security_settings: { session: { max_age_minutes: 30 } } });
    assert.equal(closed.status, 422, closed.text);
    assert.equal(closed.body.error.param, 'security_settings.session');
    assert.equal(closed.body.error.code, 'security_section_not_overridable');
    assert.deepEqual(await shown(), {});

    const body = await settings({ workspace_security_settings_override: ['session', 'ip_allowlist'] });
    assert.deepEqual(body.workspace_security_settings_override, ['session', 'ip_allowlist']);
    const opened = await put({
      security_settings: { session: { max_age_minutes: 30 }, ip_allowlist: { cidrs: ['10.0.0.0/8'] } },
    });
    assert.equal(opened.status, 200, opened.text);
    assert.deepEqual(opened.body.security_settings, {
      session: { max_age_minutes: 30 },
      ip_allowlist: { cidrs: ['10.0.0.0/8'] },
    });

    // One closed section refuses the whole change, the open one included.
    const mixed = await put({
      security_settings: { session: { max_age_minutes: 5 }, mfa: { required: true } },
    });
    assert.equal(mixed.status, 422);
    assert.equal(mixed.body.error.param, 'security_settings.mfa');
    assert.deepEqual((await shown()).session, { max_age_minutes: 30 });

    // A section set to null is dropped; the others stay.
    const dropped = await put({ security_settings: { ip_allowlist: null } });
    assert.equal(dropped.status, 200, dropped.text);
    assert.deepEqual(dropped.body.security_settings, { session: { max_age_minutes: 30 } });

    for (const [json, param] of [
      [{ security_settings: { 'Bad-Name': {} } }, 'security_settings'],
      [{ security_settings: ['session'] }, 'security_settings'],
    ] as const) {
      const res = await put(json);
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.error.param, new RegExp(`^${param.replace('.', '\\.')}`));
    }
    await settings({ workspace_security_settings_override: null });
    const reclosed = await put({ security_settings: { session: { max_age_minutes: 10 } } });
    assert.equal(reclosed.status, 422, 'closed again once the organisation withdraws the override');
  });
});
