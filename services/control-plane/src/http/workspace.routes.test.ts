import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';

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

describe('name_format', () => {
  const entered = '  <b>Search</b>\tteam\u200b  EU ';
  let workspace: { id: string; slug: string };

  before(async () => {
    workspace = await createWorkspace(entered, 'formatted-name');
  });

  test('display, the default, shows the name as entered, its ends trimmed', async () => {
    for (const query of ['', '?name_format=display']) {
      const res = await h.request('GET', `/v2/workspaces/${workspace.id}${query}`, { key: h.adminKey });
      assert.equal(res.status, 200);
      assert.equal(res.body.name, '<b>Search</b>\tteam\u200b  EU');
    }
  });

  test('plain shows the name without markup, control or invisible characters, whitespace collapsed', async () => {
    const res = await h.request('GET', `/v2/workspaces/formatted-name?name_format=plain`, {
      key: h.adminKey,
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Search team EU');
    assert.equal(res.body.slug, 'formatted-name');
  });

  test('a workspace key reads its own workspace in either format', async () => {
    const res = await h.request('GET', `/v2/workspaces/${h.workspaceId}?name_format=plain`, {
      key: h.workspaceKey,
    });
    assert.equal(res.status, 200);
  });

  test('any other value is a 400 naming name_format', async () => {
    for (const value of ['html', 'PLAIN', '']) {
      const res = await h.request('GET', `/v2/workspaces/${workspace.id}?name_format=${value}`, {
        key: h.adminKey,
      });
      assert.equal(res.status, 400, `name_format=${value}`);
      assert.equal(res.body.error.param, 'name_format');
    }
  });
});
