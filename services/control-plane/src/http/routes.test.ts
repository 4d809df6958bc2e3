import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sha256Hex } from '@switchyard/platform';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation } from '../testing/organisations.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

async function createWorkspace(name: string, slug?: string) {
  const res = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name, slug } });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

async function createWorkspaceKey(workspaceId: string, extra: Record<string, unknown> = {}) {
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'CI key', workspace_id: workspaceId, ...extra },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string };
}

describe('workspaces', () => {
  test('an organisation admin creates a workspace and gets it back', async () => {
    const res = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Search team', slug: 'search-team', description: 'Ranking experiments' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.object, 'workspace');
    assert.equal(res.body.slug, 'search-team');
    assert.equal(res.body.name, 'Search team');
    assert.equal(res.body.description, 'Ranking experiments');
    assert.equal(res.body.organisation_id, h.organisationId);

    const byId = await h.request('GET', `/v2/workspaces/${res.body.id}`, { key: h.adminKey });
    const bySlug = await h.request('GET', '/v2/workspaces/search-team', { key: h.adminKey });
    assert.equal(byId.status, 200);
    assert.deepEqual(bySlug.body, byId.body);
    assert.deepEqual(byId.body, res.body);
  });

  test('a workspace without a slug gets one derived from its name', async () => {
    const res = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Data Platform!' },
    });
    assert.equal(res.status, 200);
    assert.match(res.body.slug, /^data-platform-[0-9a-f]{6}$/);
  });

  test('a workspace key cannot create workspaces', async () => {
    const res = await h.request('POST', '/v2/workspaces', { key: h.workspaceKey, json: { name: 'Sneaky' } });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.type, 'permission_error');
  });

  test('a slug that is not lower-case letters, digits, - and _ is a 400 naming slug', async () => {
    for (const slug of ['Upper', 'has space', '-leading', '', 'x'.repeat(64)]) {
      const res = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name: 'Bad', slug } });
      assert.equal(res.status, 400, `slug ${JSON.stringify(slug)}`);
      assert.equal(res.body.error.param, 'slug');
    }
  });

  test('a missing name is a 400 naming name', async () => {
    const res = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { slug: 'no-name' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'name');
  });

  test('a duplicate slug in the organisation is a 409', async () => {
    await createWorkspace('Billing', 'billing');
    const res = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Billing again', slug: 'billing' },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.param, 'slug');
  });

  test('lists page by page with current_page and page_size', async () => {
    for (const n of [1, 2, 3]) await createWorkspace(`Paged ${n}`, `paged-${n}`);
    const all = await h.request('GET', '/v2/workspaces?page_size=1000', { key: h.adminKey });
    assert.equal(all.status, 200);
    assert.equal(all.body.object, 'list');
    assert.equal(all.body.total, all.body.data.length);
    assert.ok(all.body.total >= 4);

    const pages = [];
    for (let page = 0; page * 2 < all.body.total; page++) {
      const res = await h.request('GET', `/v2/workspaces?current_page=${page}&page_size=2`, {
        key: h.adminKey,
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.object, 'list');
      assert.equal(res.body.total, all.body.total);
      assert.ok(res.body.data.length <= 2);
      pages.push(...res.body.data.map((w: { id: string }) => w.id));
    }
    assert.deepEqual(
      pages,
      all.body.data.map((w: { id: string }) => w.id),
    );

    const beyond = await h.request('GET', '/v2/workspaces?current_page=500&page_size=2', { key: h.adminKey });
    assert.deepEqual(beyond.body, { object: 'list', total: all.body.total, data: [] });
  });

  test('a page size outside 1 to 1000 is a 400 naming page_size', async () => {
    for (const size of ['0', '1001', 'ten']) {
      const res = await h.request('GET', `/v2/workspaces?page_size=${size}`, { key: h.adminKey });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.param, 'page_size');
    }
  });

  test('a workspace key sees only its own workspace', async () => {
    const other = await createWorkspace('Elsewhere', 'elsewhere');
    const list = await h.request('GET', '/v2/workspaces', { key: h.workspaceKey });
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 1);
    assert.deepEqual(
      list.body.data.map((w: { id: string }) => w.id),
      [h.workspaceId],
    );
    const own = await h.request('GET', `/v2/workspaces/${h.workspaceId}`, { key: h.workspaceKey });
    assert.equal(own.status, 200);
    for (const ref of [other.id, other.slug]) {
      const res = await h.request('GET', `/v2/workspaces/${ref}`, { key: h.workspaceKey });
      assert.equal(res.status, 404);
    }
  });

  test('an unknown workspace is a 404', async () => {
    const res = await h.request('GET', '/v2/workspaces/00000000-0000-4000-8000-000000000000', {
      key: h.adminKey,
    });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.type, 'not_found_error');
  });
});

describe('API keys', () => {
  test('shows a new API key once and stores only its hash', async () => {
    const workspace = await createWorkspace('Keys', 'keys');
    const res = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Deploy bot', workspace_id: workspace.id, scopes: ['completions.write'] },
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
    const elsewhere = await createWorkspace('Key list elsewhere');
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
