import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { sha256Hex } from '@switchyard/core';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { remotePrincipalLookup } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let rival: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  rival = await seedOrganisation(h.db('control-plane').manager, 'key-defaults-rival');
});
after(() => h.close());

async function saveConfig(workspaceId: string, name: string, key = h.adminKey) {
  const res = await h.request('POST', '/v2/configs', {
    key,
    json: { name, workspace_id: workspaceId, config: { provider: '@mock' } },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data as { id: string; slug: string };
}

const createKey = (json: Record<string, unknown>, type = 'workspace/service') =>
  h.request('POST', `/v2/api-keys/${type}`, { key: h.adminKey, json: { name: 'Defaults', ...json } });

const updateKey = (id: string, json: unknown) =>
  h.request('PUT', `/v2/api-keys/${id}`, { key: h.adminKey, json });

const updateWorkspace = (id: string, json: unknown, key = h.adminKey) =>
  h.request('PUT', `/v2/workspaces/${id}`, { key, json });

/** The principal the gateway gets for a key, over the identity gRPC service as it resolves it. */
const principalOf = (key: string) => remotePrincipalLookup(h.client('identity'))(sha256Hex(key));

describe('API key defaults', () => {
  test('are set at creation, stored by config id, and shown with the config as its slug on every read', async () => {
    const workspace = await createWorkspace(h, 'Key defaults', 'key-defaults');
    const config = await saveConfig(workspace.id, 'Key default');
    const created = await createKey({
      workspace_id: workspace.id,
      defaults: { config_id: config.slug, metadata: { team: 'search' }, allow_config_override: false },
    });
    assert.equal(created.status, 200, created.text);
    const expected = { config_id: config.slug, metadata: { team: 'search' }, allow_config_override: false };
    assert.deepEqual(created.body.defaults, expected);

    const [row] = await h
      .db('control-plane')
      .query(`SELECT default_config_id FROM control_plane.api_keys WHERE id = $1`, [created.body.id]);
    assert.equal(row.default_config_id, config.id);
    const shown = await h.request('GET', `/v2/api-keys/${created.body.id}`, { key: h.adminKey });
    assert.deepEqual(shown.body.defaults, expected);
    const listed = await h.request('GET', `/v2/api-keys?ids=${created.body.id}`, { key: h.adminKey });
    assert.deepEqual(listed.body.data[0].defaults, expected);

    const byId = await createKey({ workspace_id: workspace.id, defaults: { config_id: config.id } });
    assert.equal(byId.status, 200, byId.text);
    assert.deepEqual(byId.body.defaults, {
      config_id: config.slug,
      metadata: null,
      allow_config_override: true,
    });
  });

  test('a key without defaults shows none, and its principal carries none', async () => {
    const created = await createKey({ workspace_id: h.workspaceId });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.body.defaults, { config_id: null, metadata: null, allow_config_override: true });
    const principal = await principalOf(created.body.key);
    assert.ok(principal);
    assert.equal(principal.defaults, undefined);
  });

  test('an update changes the fields given, null clears one, and a null defaults clears them all', async () => {
    const workspace = await createWorkspace(h, 'Key defaults update', 'key-defaults-update');
    const first = await saveConfig(workspace.id, 'First default');
    const second = await saveConfig(workspace.id, 'Second default');
    const created = await createKey({ workspace_id: workspace.id, defaults: { config_id: first.slug } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.id as string;

    const changed = await updateKey(id, { defaults: { config_id: second.id, metadata: { env: 'prod' } } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.defaults, {
      config_id: second.slug,
      metadata: { env: 'prod' },
      allow_config_override: true,
    });
    const renamed = await updateKey(id, { name: 'Renamed' });
    assert.deepEqual(renamed.body.defaults, changed.body.defaults);
    const refused = await updateKey(id, { defaults: { allow_config_override: false } });
    assert.equal(refused.body.defaults.allow_config_override, false);
    assert.equal(refused.body.defaults.config_id, second.slug);
    const noConfig = await updateKey(id, { defaults: { config_id: null } });
    assert.deepEqual(noConfig.body.defaults, {
      config_id: null,
      metadata: { env: 'prod' },
      allow_config_override: false,
    });
    const cleared = await updateKey(id, { defaults: null });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.body.defaults, { config_id: null, metadata: null, allow_config_override: true });
  });

  test('malformed defaults are 400s naming the field', async () => {
    for (const [defaults, param] of [
      [{ config_id: 42 }, 'defaults.config_id'],
      [{ config_id: '' }, 'defaults.config_id'],
      [{ metadata: { team: 7 } }, 'defaults.metadata.team'],
      [{ metadata: ['a'] }, 'defaults.metadata'],
      [
        { metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) },
        'defaults.metadata',
      ],
      [{ metadata: { big: 'x'.repeat(1025) } }, 'defaults.metadata.big'],
      [{ allow_config_override: 'no' }, 'defaults.allow_config_override'],
      [{ config: 'misspelt' }, 'defaults.config'],
    ] as const) {
      const created = await createKey({ workspace_id: h.workspaceId, defaults });
      assert.equal(created.status, 400, JSON.stringify(defaults));
      assert.equal(created.body.error.param, param, JSON.stringify(defaults));
    }
    const key = await createKey({ workspace_id: h.workspaceId });
    const updated = await updateKey(key.body.id, { defaults: { metadata: 'team=search' } });
    assert.equal(updated.status, 400);
    assert.equal(updated.body.error.param, 'defaults.metadata');
  });

  test('a config that is unknown, archived, of another workspace or another organisation is never accepted', async () => {
    const workspace = await createWorkspace(h, 'Key defaults picky', 'key-defaults-picky');
    const kept = await saveConfig(workspace.id, 'Kept key default');
    const elsewhere = await saveConfig(h.workspaceId, 'Elsewhere key default');
    const archived = await saveConfig(workspace.id, 'Archived key default');
    assert.equal(
      (await h.request('DELETE', `/v2/configs/${archived.slug}`, { key: h.adminKey })).status,
      200,
    );
    const foreign = await h.request('POST', '/v2/configs', {
      key: rival.adminKey,
      json: { name: 'Rival config', workspace_id: rival.workspaceId, config: { provider: '@mock' } },
    });
    assert.equal(foreign.status, 200, foreign.text);
    const references = [
      'pc-nothing-000000',
      '00000000-0000-4000-8000-000000000000',
      elsewhere.slug,
      elsewhere.id,
      archived.slug,
      archived.id,
      foreign.body.data.slug as string,
      foreign.body.data.id as string,
    ];
    const key = await createKey({ workspace_id: workspace.id, defaults: { config_id: kept.slug } });
    for (const reference of references) {
      const created = await createKey({ workspace_id: workspace.id, defaults: { config_id: reference } });
      assert.equal(created.status, 404, reference);
      assert.equal(created.body.error.param, 'defaults.config_id');
      const updated = await updateKey(key.body.id, { name: 'Changed', defaults: { config_id: reference } });
      assert.equal(updated.status, 404, reference);
      assert.equal(updated.body.error.param, 'defaults.config_id');
    }
    const shown = await h.request('GET', `/v2/api-keys/${key.body.id}`, { key: h.adminKey });
    assert.equal(shown.body.name, 'Defaults');
    assert.equal(shown.body.defaults.config_id, kept.slug);
  });

  test('an organisation key cannot name a default config: configs belong to a workspace', async () => {
    const config = await saveConfig(h.workspaceId, 'Not for organisation keys');
    const created = await createKey({ defaults: { config_id: config.slug } }, 'organisation/service');
    assert.equal(created.status, 400);
    assert.equal(created.body.error.param, 'defaults.config_id');
  });

  test('the config cannot be archived while a key names it, until the key no longer does', async () => {
    const config = await saveConfig(h.workspaceId, 'Held by a key');
    const created = await createKey({ workspace_id: h.workspaceId, defaults: { config_id: config.slug } });
    const deleted = await h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey });
    assert.equal(deleted.status, 409);
    assert.equal(deleted.body.error.code, 'config_in_use');
    assert.match(
      deleted.body.error.message,
      new RegExp(`defaults.config_id of API key '${created.body.id}'`),
    );

    assert.equal(
      (await h.request('DELETE', `/v2/api-keys/${created.body.id}`, { key: h.adminKey })).status,
      200,
    );
    assert.equal((await h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey })).status, 200);
  });

  test('every change of defaults announces the key, so caches holding it drop it', async () => {
    const created = await createKey({ workspace_id: h.workspaceId });
    const before = h.bus.log(Topics.changes).length;
    assert.equal((await updateKey(created.body.id, { defaults: { metadata: { a: 'b' } } })).status, 200);
    const changes = h.bus
      .log(Topics.changes)
      .slice(before)
      .map((message) => fromBinary(events.ChangeEventSchema, message.value))
      .filter((change) => change.entity === 'api_key');
    assert.deepEqual(
      changes.map((change) => change.cacheKey),
      [sha256Hex(created.body.key)],
    );
  });
});

describe('workspace defaults.config', () => {
  test('is set by slug or id, shown as the slug, cleared by null, and announced', async () => {
    const workspace = await createWorkspace(h, 'Workspace default', 'workspace-default-config');
    const config = await saveConfig(workspace.id, 'Workspace default config');
    const before = h.bus.log(Topics.changes).length;
    const bySlug = await updateWorkspace(workspace.id, { defaults: { config: config.slug } });
    assert.equal(bySlug.status, 200, bySlug.text);
    assert.deepEqual(bySlug.body.defaults, { user_api_key_config: null, config: config.slug });
    const announced = h.bus
      .log(Topics.changes)
      .slice(before)
      .map((message) => fromBinary(events.ChangeEventSchema, message.value))
      .filter((change) => change.entity === 'workspace');
    assert.deepEqual(
      announced.map((change) => change.workspaceId),
      [workspace.id],
    );
    const byId = await updateWorkspace(workspace.id, { defaults: { config: config.id } });
    assert.equal(byId.body.defaults.config, config.slug);
    const shown = await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey });
    assert.equal(shown.body.defaults.config, config.slug);
    const cleared = await updateWorkspace(workspace.id, { defaults: { config: null } });
    assert.equal(cleared.body.defaults.config, null);
  });

  test('a config that is not an active config of the workspace is a 404 naming defaults.config; a malformed one a 400', async () => {
    const workspace = await createWorkspace(h, 'Workspace default picky', 'workspace-default-picky');
    const elsewhere = await saveConfig(h.workspaceId, 'Workspace default elsewhere');
    for (const reference of [elsewhere.slug, elsewhere.id, 'pc-nothing-000000']) {
      const res = await updateWorkspace(workspace.id, { defaults: { config: reference } });
      assert.equal(res.status, 404, reference);
      assert.equal(res.body.error.param, 'defaults.config');
    }
    const mine = await saveConfig(rival.workspaceId, 'Rival default', rival.adminKey);
    const res = await updateWorkspace(h.workspaceId, { defaults: { config: mine.slug } });
    assert.equal(res.status, 404);
    for (const bad of [42, '']) {
      const malformed = await updateWorkspace(workspace.id, { defaults: { config: bad } });
      assert.equal(malformed.status, 400);
      assert.equal(malformed.body.error.param, 'defaults.config');
    }
  });

  test('the config cannot be archived while it is the workspace default', async () => {
    const workspace = await createWorkspace(h, 'Workspace default guarded', 'workspace-default-guarded');
    const config = await saveConfig(workspace.id, 'Workspace default guarded');
    await updateWorkspace(workspace.id, { defaults: { config: config.slug } });
    const deleted = await h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey });
    assert.equal(deleted.status, 409);
    assert.match(deleted.body.error.message, /defaults\.config of workspace 'workspace-default-guarded'/);
    await updateWorkspace(workspace.id, { defaults: { config: null } });
    assert.equal((await h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey })).status, 200);
  });

  test("a workspace's deletion is not blocked by its own default config", async () => {
    const workspace = await createWorkspace(h, 'Workspace default deleted', 'workspace-default-deleted');
    const config = await saveConfig(workspace.id, 'Goes with its workspace');
    await updateWorkspace(workspace.id, { defaults: { config: config.slug } });
    await createKey({ workspace_id: workspace.id, defaults: { config_id: config.slug } });
    const res = await h.request('DELETE', `/v2/workspaces/${workspace.id}`, { key: h.adminKey });
    assert.equal(res.status, 200, res.text);
    assert.equal((await h.request('GET', `/v2/configs/${config.slug}`, { key: h.adminKey })).status, 404);
  });
});

describe('the principal a key resolves to', () => {
  let userId: string;
  let workspace: { id: string; slug: string };
  let keyConfig: { slug: string };
  let userConfig: { slug: string };
  let workspaceConfig: { slug: string };

  before(async () => {
    workspace = await createWorkspace(h, 'Precedence', 'defaults-precedence');
    keyConfig = await saveConfig(workspace.id, 'Precedence key');
    userConfig = await saveConfig(workspace.id, 'Precedence user keys');
    workspaceConfig = await saveConfig(workspace.id, 'Precedence workspace');
    const user = await h.request('POST', '/v1/admin/users', {
      key: h.adminKey,
      json: { role: 'member', email: 'precedence@example.com' },
    });
    assert.equal(user.status, 200, user.text);
    userId = user.body.id;
    const joined = await h.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
      key: h.adminKey,
      json: { users: [{ id: userId, role: 'member' }] },
    });
    assert.equal(joined.status, 200, joined.text);
    const set = await updateWorkspace(workspace.id, {
      defaults: { user_api_key_config: userConfig.slug, config: workspaceConfig.slug },
    });
    assert.equal(set.status, 200, set.text);
  });

  test("carries the key's own config over the workspace's, with its metadata and override rule", async () => {
    const created = await createKey(
      {
        workspace_id: workspace.id,
        user_id: userId,
        defaults: { config_id: keyConfig.slug, metadata: { team: 'a' }, allow_config_override: false },
      },
      'workspace/user',
    );
    assert.equal(created.status, 200, created.text);
    assert.deepEqual((await principalOf(created.body.key))?.defaults, {
      config: keyConfig.slug,
      metadata: { team: 'a' },
      allowConfigOverride: false,
    });
  });

  test("a user key without its own config gets the workspace's user_api_key_config; a service key the workspace's config", async () => {
    const user = await createKey({ workspace_id: workspace.id, user_id: userId }, 'workspace/user');
    assert.equal(user.status, 200, user.text);
    assert.equal((await principalOf(user.body.key))?.defaults?.config, userConfig.slug);
    const service = await createKey({ workspace_id: workspace.id });
    assert.equal((await principalOf(service.body.key))?.defaults?.config, workspaceConfig.slug);
    // The key's metadata alone, with the workspace's config.
    const tagged = await createKey({ workspace_id: workspace.id, defaults: { metadata: { env: 'ci' } } });
    assert.deepEqual((await principalOf(tagged.body.key))?.defaults, {
      config: workspaceConfig.slug,
      metadata: { env: 'ci' },
      allowConfigOverride: true,
    });
  });
});
