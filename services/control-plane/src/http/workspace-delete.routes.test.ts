import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { keyMaterialOf } from '../domain/api-keys.ts';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  other = await seedOrganisation(h.db('control-plane').manager, 'delete-other');
});
after(() => h.close());

const del = (ref: string, key = h.adminKey, json?: unknown) =>
  h.request('DELETE', `/v2/workspaces/${ref}`, { key, ...(json === undefined ? {} : { json }) });

/** A workspace with a service key, a config (its default), a guardrail, a rate limit and a member. */
async function populatedWorkspace(name: string) {
  const workspace = await createWorkspace(h, name);
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: `${name} key`, workspace_id: workspace.id },
  });
  assert.equal(key.status, 200, key.text);
  const config = await h.request('POST', '/v2/configs', {
    key: key.body.key,
    json: {
      name: `${name} config`,
      config: { strategy: { mode: 'fallback' }, targets: [{ provider: '@a' }] },
    },
  });
  assert.equal(config.status, 200, config.text);
  const asDefault = await h.request('PUT', `/v2/workspaces/${workspace.id}`, {
    key: h.adminKey,
    json: { defaults: { user_api_key_config: config.body.data.slug } },
  });
  assert.equal(asDefault.status, 200, asDefault.text);
  const guardrail = await h.request('POST', '/v1/guardrails', {
    key: h.adminKey,
    json: {
      name: `${name} guard`,
      workspace_id: workspace.id,
      checks: [{ id: 'default.regexMatch', parameters: { rule: '\\bsecret\\b' } }],
      actions: { deny: true },
    },
  });
  assert.equal(guardrail.status, 200, guardrail.text);
  const policy = await h.request('POST', '/v2/policies/rate-limits', {
    key: key.body.key,
    json: {
      name: `${name} rpm`,
      conditions: [{ key: 'metadata.team', value: 'ml' }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 5,
    },
  });
  assert.equal(policy.status, 200, policy.text);
  const user = await h.request('POST', '/v1/admin/users', {
    key: h.adminKey,
    json: { email: `${workspace.slug}@example.com`, role: 'member' },
  });
  assert.equal(user.status, 200, user.text);
  const member = await h.request('POST', `/v1/admin/workspaces/${workspace.id}/users`, {
    key: h.adminKey,
    json: { users: [{ id: user.body.id, role: 'member' }] },
  });
  assert.equal(member.status, 200, member.text);
  return {
    ...workspace,
    key: key.body.key as string,
    keyId: key.body.id as string,
    configId: config.body.data.id as string,
    guardrailId: guardrail.body.id as string,
    policyId: policy.body.id as string,
    userId: user.body.id as string,
  };
}

/** What an admin key and the workspace's own key still see of it. */
async function stateOf(workspace: Awaited<ReturnType<typeof populatedWorkspace>>) {
  const admin = h.adminKey;
  return {
    workspace: (await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: admin })).status,
    ownKey: (await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: workspace.key })).status,
    config: (await h.request('GET', `/v2/configs/${workspace.configId}`, { key: admin })).status,
    guardrail: (await h.request('GET', `/v1/guardrails/${workspace.guardrailId}`, { key: admin })).status,
    policy: (await h.request('GET', `/v2/policies/rate-limits/${workspace.policyId}`, { key: admin })).status,
    member: (
      (await h.request('GET', `/v1/admin/users/${workspace.userId}`, { key: admin })).body
        .workspace_ids as string[]
    ).includes(workspace.id),
  };
}

const untouched = { workspace: 200, ownKey: 200, config: 200, guardrail: 200, policy: 200, member: true };

describe('deleting a workspace', () => {
  test('answers {}; the workspace, its config, guardrail, policy and member are gone and its key no longer authenticates', async () => {
    const workspace = await populatedWorkspace('Doomed');
    assert.deepEqual(await stateOf(workspace), untouched);

    const res = await del(workspace.slug);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {});

    assert.deepEqual(await stateOf(workspace), {
      workspace: 404,
      ownKey: 401,
      config: 404,
      guardrail: 404,
      policy: 404,
      member: false,
    });
    const list = await h.request('GET', '/v2/workspaces?page_size=1000', { key: h.adminKey });
    assert.ok(!list.body.data.some((w: { id: string }) => w.id === workspace.id));
    assert.equal((await del(workspace.id)).status, 404, 'a second delete finds nothing');
  });

  test('announces the revoked key by its hash, the archived items and the workspace, as their own deletes do', async () => {
    const workspace = await populatedWorkspace('Announced delete');
    const before = h.bus.log(Topics.changes).length;
    assert.equal((await del(workspace.id)).status, 200);
    const changes = h.bus
      .log(Topics.changes)
      .slice(before)
      .map((message) => fromBinary(events.ChangeEventSchema, message.value));
    const deleted = (entity: string) =>
      changes.filter((c) => c.entity === entity && c.action === events.ChangeAction.DELETED);
    const keyChange = deleted('api_key').find((c) => c.entityId === workspace.keyId);
    assert.ok(keyChange, 'the key is announced');
    assert.equal(keyChange.cacheKey, keyMaterialOf(workspace.key, 'sy-').keyHash);
    assert.deepEqual(
      deleted('config').map((c) => c.entityId),
      [workspace.configId],
    );
    assert.deepEqual(
      deleted('guardrail').map((c) => c.entityId),
      [workspace.guardrailId],
    );
    assert.deepEqual(
      deleted('policy').map((c) => c.entityId),
      [workspace.policyId],
    );
    assert.deepEqual(
      deleted('workspace_member').map((c) => c.entityId),
      [workspace.userId],
    );
    assert.deepEqual(
      deleted('workspace').map((c) => c.entityId),
      [workspace.id],
    );
  });

  test('frees the slug for a new workspace', async () => {
    const workspace = await createWorkspace(h, 'Reused', 'reused-slug');
    assert.equal((await del(workspace.id)).status, 200);
    const again = await createWorkspace(h, 'Reused again', 'reused-slug');
    assert.notEqual(again.id, workspace.id);
    assert.equal(
      (await h.request('GET', '/v2/workspaces/reused-slug', { key: h.adminKey })).body.id,
      again.id,
    );
  });

  test('a name that confirms it is taken; any other name is a 400 naming name, and nothing changes', async () => {
    const workspace = await populatedWorkspace('Confirmed');
    const wrong = await del(workspace.id, h.adminKey, { name: 'Not this one' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.param, 'name');
    const unknown = await del(workspace.id, h.adminKey, { name: 'Confirmed', cascade: true });
    assert.equal(unknown.status, 400);
    assert.deepEqual(await stateOf(workspace), untouched);
    const right = await del(workspace.id, h.adminKey, { name: 'Confirmed', force_delete: false });
    assert.equal(right.status, 200, right.text);
    assert.equal((await stateOf(workspace)).workspace, 404);
  });

  test('of concurrent deletes exactly one succeeds, the others are 404', async () => {
    const workspace = await populatedWorkspace('Raced');
    const answers = await Promise.all(Array.from({ length: 5 }, () => del(workspace.id)));
    assert.deepEqual(answers.map((res) => res.status).sort(), [200, 404, 404, 404, 404]);
    assert.deepEqual(await stateOf(workspace), {
      workspace: 404,
      ownKey: 401,
      config: 404,
      guardrail: 404,
      policy: 404,
      member: false,
    });
  });
});

describe('deleting a workspace is refused', () => {
  test("to another organisation's admin key, as 404, and nothing changes", async () => {
    const workspace = await populatedWorkspace('Foreign');
    for (const ref of [workspace.id, workspace.slug]) {
      const res = await del(ref, other.adminKey);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.type, 'not_found_error');
    }
    assert.deepEqual(await stateOf(workspace), untouched);
  });

  test('to a workspace key, even for its own workspace, as 403, and nothing changes', async () => {
    const workspace = await populatedWorkspace('Own key');
    const res = await del(workspace.id, workspace.key);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.type, 'permission_error');
    assert.deepEqual(await stateOf(workspace), untouched);
  });

  test('to an admin key without workspaces.delete, as 403, and nothing changes', async () => {
    const workspace = await populatedWorkspace('Scoped out');
    const key = await h.request('POST', '/v2/api-keys/organisation/service', {
      key: h.adminKey,
      json: { name: 'Reader', scopes: ['workspaces.read', 'workspaces.list', 'workspaces.update'] },
    });
    assert.equal(key.status, 200, key.text);
    const res = await del(workspace.id, key.body.key);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'missing_scope');
    assert.deepEqual(await stateOf(workspace), untouched);
  });

  test("for the organisation's default workspace, as 409 saying so, and nothing changes", async () => {
    const res = await del(other.workspaceId, other.adminKey);
    assert.equal(res.status, 409);
    assert.match(res.body.error.message, /default workspace/);
    const still = await h.request('GET', `/v2/workspaces/${other.workspaceId}`, { key: other.workspaceKey });
    assert.equal(still.status, 200, 'its key still authenticates');
  });

  test('for an id that is no workspace (unknown, not a UUID or slug, too long, NUL) as a 4xx', async () => {
    for (const ref of [
      '00000000-0000-4000-8000-000000000000',
      'no%20such%20thing',
      'x'.repeat(2000),
      'a%00b',
    ]) {
      const res = await del(ref);
      assert.ok(res.status >= 400 && res.status < 500, `${ref.slice(0, 20)}: ${res.status} ${res.text}`);
      assert.equal(typeof res.body.error.message, 'string');
    }
  });
});
