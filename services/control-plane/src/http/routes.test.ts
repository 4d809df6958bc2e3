import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation } from '../testing/organisations.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

describe('another organisation', () => {
  let otherAdminKey: string;
  let otherWorkspaceKey: string;
  let otherOrganisationId: string;
  let otherWorkspaceId: string;

  before(async () => {
    ({
      adminKey: otherAdminKey,
      workspaceKey: otherWorkspaceKey,
      organisationId: otherOrganisationId,
      workspaceId: otherWorkspaceId,
    } = await seedOrganisation(h.db('control-plane').manager, 'other-inc'));
  });

  test('its keys list only its own workspaces and keys', async () => {
    const workspaces = await h.request('GET', '/v2/workspaces', { key: otherAdminKey });
    assert.equal(workspaces.status, 200);
    assert.deepEqual(
      workspaces.body.data.map((w: { id: string }) => w.id),
      [otherWorkspaceId],
    );
    const keys = await h.request('GET', '/v2/api-keys', { key: otherAdminKey });
    assert.equal(keys.body.total, 2);
    for (const key of keys.body.data) assert.equal(key.organisation_id, otherOrganisationId);
  });

  test('its keys cannot see, use or revoke anything of the first organisation', async () => {
    const firstKeys = await h.request('GET', '/v2/api-keys?page_size=1000', { key: h.adminKey });
    const firstKeyId = firstKeys.body.data[0].id;
    for (const key of [otherAdminKey, otherWorkspaceKey]) {
      assert.equal((await h.request('GET', `/v2/workspaces/${h.workspaceId}`, { key })).status, 404);
      assert.equal((await h.request('GET', `/v2/api-keys/${firstKeyId}`, { key })).status, 404);
    }
    // Same slug, other organisation: the slug resolves within the caller's organisation.
    const bySlug = await h.request('GET', '/v2/workspaces/default', { key: otherAdminKey });
    assert.equal(bySlug.body.id, otherWorkspaceId);

    const revoke = await h.request('DELETE', `/v2/api-keys/${firstKeyId}`, { key: otherAdminKey });
    assert.equal(revoke.status, 404);
    const keyForFirst = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: otherAdminKey,
      json: { name: 'Cross', workspace_id: h.workspaceId },
    });
    assert.equal(keyForFirst.status, 404);
    assert.equal((await h.request('GET', '/v2/workspaces', { key: h.adminKey })).status, 200);
  });

  test('the first organisation cannot see it either', async () => {
    const res = await h.request('GET', `/v2/workspaces/${otherWorkspaceId}`, { key: h.adminKey });
    assert.equal(res.status, 404);
    const list = await h.request('GET', '/v2/workspaces?page_size=1000', { key: h.adminKey });
    assert.ok(
      list.body.data.every((w: { organisation_id: string }) => w.organisation_id === h.organisationId),
    );
  });
});

test('requests without a key are refused', async () => {
  const res = await h.request('GET', '/v2/workspaces');
  assert.equal(res.status, 401);
  assert.equal(res.body.error.type, 'authentication_error');
});
