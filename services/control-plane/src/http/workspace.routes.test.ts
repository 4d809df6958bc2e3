import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

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
    await createWorkspace(h, 'Billing', 'billing');
    const res = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Billing again', slug: 'billing' },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.param, 'slug');
  });

  test('lists page by page with current_page and page_size', async () => {
    for (const n of [1, 2, 3]) await createWorkspace(h, `Paged ${n}`, `paged-${n}`);
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
    const other = await createWorkspace(h, 'Elsewhere', 'elsewhere');
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
    workspace = await createWorkspace(h, entered, 'formatted-name');
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

async function saveConfig(workspaceId: string, name: string, key = h.adminKey) {
  const res = await h.request('POST', '/v2/configs', {
    key,
    json: { name, workspace_id: workspaceId, config: { provider: '@mock' } },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data as { id: string; slug: string };
}

const put = (ref: string, json: unknown, key = h.adminKey) =>
  h.request('PUT', `/v2/workspaces/${ref}`, { key, json });

describe('updating a workspace', () => {
  test('an organisation admin changes the name and description; null clears the description', async () => {
    const workspace = await createWorkspace(h, 'Before', 'update-me');
    const res = await put('update-me', { name: ' After ', description: 'Now described' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.id, workspace.id);
    assert.equal(res.body.slug, 'update-me');
    assert.equal(res.body.name, 'After');
    assert.equal(res.body.description, 'Now described');
    assert.deepEqual(res.body.defaults, { user_api_key_config: null, config: null });
    assert.deepEqual(
      (await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey })).body,
      res.body,
    );

    const cleared = await put(workspace.id, { description: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.description, null);
    assert.equal(cleared.body.name, 'After');
  });

  test('every update announces a workspace change', async () => {
    const workspace = await createWorkspace(h, 'Announced', 'announced-workspace');
    const before = h.bus.log(Topics.changes).length;
    assert.equal((await put(workspace.id, { name: 'Announced again' })).status, 200);
    const changes = h.bus
      .log(Topics.changes)
      .slice(before)
      .map((message) => fromBinary(events.ChangeEventSchema, message.value))
      .filter((change) => change.entity === 'workspace');
    assert.equal(changes.length, 1);
    assert.equal(changes[0]!.action, events.ChangeAction.UPDATED);
    assert.equal(changes[0]!.entityId, workspace.id);
    assert.equal(changes[0]!.workspaceId, workspace.id);
    assert.equal(changes[0]!.organisationId, h.organisationId);
  });

  test('a workspace key cannot update, not even its own workspace, whatever the body', async () => {
    for (const json of [{ name: 'Mine now' }, { nonsense: true }]) {
      const res = await put(h.workspaceId, json, h.workspaceKey);
      assert.equal(res.status, 403);
      assert.equal(res.body.error.type, 'permission_error');
    }
    const after = await h.request('GET', `/v2/workspaces/${h.workspaceId}`, { key: h.workspaceKey });
    assert.notEqual(after.body.name, 'Mine now');
  });

  test('an unknown field is a 400 naming it, also inside defaults', async () => {
    const workspace = await createWorkspace(h, 'Strict', 'strict-update');
    for (const [json, param] of [
      [{ slug: 'renamed' }, 'slug'],
      [{ name: 'Fine', rate_limits: [] }, 'rate_limits'],
      [{ defaults: { metadata: { team: 'x' } } }, 'defaults.metadata'],
    ] as const) {
      const res = await put(workspace.id, json);
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param);
    }
    assert.equal(
      (await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey })).body.name,
      'Strict',
    );
  });

  test('an empty body, an empty name or a defaults.user_api_key_config that is not a string is a 400', async () => {
    const workspace = await createWorkspace(h, 'Picky', 'picky-update');
    assert.equal((await put(workspace.id, {})).status, 400);
    for (const [json, param] of [
      [{ name: '  ' }, 'name'],
      [{ description: 'x'.repeat(1025) }, 'description'],
      [{ defaults: { user_api_key_config: 42 } }, 'defaults.user_api_key_config'],
      [{ defaults: { user_api_key_config: '' } }, 'defaults.user_api_key_config'],
    ] as const) {
      const res = await put(workspace.id, json);
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(res.body.error.param, param);
    }
  });

  test('an unknown workspace is a 404', async () => {
    const res = await put('00000000-0000-4000-8000-000000000000', { name: 'Ghost' });
    assert.equal(res.status, 404);
  });
});

describe('defaults.user_api_key_config', () => {
  test('is set by slug or id, stored by id, and always shown as the slug', async () => {
    const workspace = await createWorkspace(h, 'User keys', 'user-keys');
    const config = await saveConfig(workspace.id, 'User key config');

    const bySlug = await put(workspace.id, { defaults: { user_api_key_config: config.slug } });
    assert.equal(bySlug.status, 200, bySlug.text);
    assert.equal(bySlug.body.defaults.user_api_key_config, config.slug);
    const [row] = await h
      .db('control-plane')
      .query(`SELECT user_api_key_config_id FROM control_plane.workspaces WHERE id = $1`, [workspace.id]);
    assert.equal(row.user_api_key_config_id, config.id);

    const byId = await put(workspace.id, { defaults: { user_api_key_config: config.id } });
    assert.equal(byId.status, 200);
    assert.equal(byId.body.defaults.user_api_key_config, config.slug);

    for (const query of ['', '?name_format=plain']) {
      const shown = await h.request('GET', `/v2/workspaces/user-keys${query}`, { key: h.adminKey });
      assert.equal(shown.body.defaults.user_api_key_config, config.slug);
    }
    const listed = await h.request('GET', '/v2/workspaces?page_size=1000', { key: h.adminKey });
    const inList = listed.body.data.find((w: { id: string }) => w.id === workspace.id);
    assert.equal(inList.defaults.user_api_key_config, config.slug);
  });

  test('follows the config when its slug changes', async () => {
    const workspace = await createWorkspace(h, 'Slug follows', 'slug-follows');
    const config = await saveConfig(workspace.id, 'Renamed later');
    assert.equal((await put(workspace.id, { defaults: { user_api_key_config: config.slug } })).status, 200);
    // No route renames a slug yet; the store may, and the default must not go stale.
    await h
      .db('control-plane')
      .query(`UPDATE control_plane.configs SET slug = 'pc-renamed-000000' WHERE id = $1`, [config.id]);
    const shown = await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey });
    assert.equal(shown.body.defaults.user_api_key_config, 'pc-renamed-000000');
  });

  test('a workspace key reads the default of its own workspace', async () => {
    const config = await saveConfig(h.workspaceId, 'Own default', h.workspaceKey);
    assert.equal((await put(h.workspaceId, { defaults: { user_api_key_config: config.slug } })).status, 200);
    const shown = await h.request('GET', `/v2/workspaces/${h.workspaceId}`, { key: h.workspaceKey });
    assert.equal(shown.status, 200);
    assert.equal(shown.body.defaults.user_api_key_config, config.slug);
    assert.equal((await put(h.workspaceId, { defaults: { user_api_key_config: null } })).status, 200);
  });

  test('a config that is unknown, archived or of another workspace is a 404 naming it, and nothing changes', async () => {
    const workspace = await createWorkspace(h, 'Picky defaults', 'picky-defaults');
    const kept = await saveConfig(workspace.id, 'Kept');
    assert.equal((await put(workspace.id, { defaults: { user_api_key_config: kept.slug } })).status, 200);
    const elsewhere = await saveConfig(h.workspaceId, 'Elsewhere');
    const archived = await saveConfig(workspace.id, 'Archived');
    assert.equal(
      (await h.request('DELETE', `/v2/configs/${archived.slug}`, { key: h.adminKey })).status,
      200,
    );

    for (const reference of [
      'pc-nothing-000000',
      '00000000-0000-4000-8000-000000000000',
      elsewhere.slug,
      elsewhere.id,
      archived.slug,
      archived.id,
    ]) {
      const res = await put(workspace.id, { name: 'Changed', defaults: { user_api_key_config: reference } });
      assert.equal(res.status, 404, reference);
      assert.equal(res.body.error.param, 'defaults.user_api_key_config');
    }
    const shown = await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey });
    assert.equal(shown.body.name, 'Picky defaults');
    assert.equal(shown.body.defaults.user_api_key_config, kept.slug);
  });

  test('null clears it; a change without defaults keeps it', async () => {
    const workspace = await createWorkspace(h, 'Cleared', 'cleared-default');
    const config = await saveConfig(workspace.id, 'To clear');
    await put(workspace.id, { defaults: { user_api_key_config: config.slug } });
    const renamed = await put(workspace.id, { name: 'Cleared soon', defaults: {} });
    assert.equal(renamed.body.defaults.user_api_key_config, config.slug);
    const cleared = await put(workspace.id, { defaults: { user_api_key_config: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.defaults.user_api_key_config, null);
  });

  test('the config cannot be archived while it is the default, by DELETE or by PUT, until the default is cleared', async () => {
    const workspace = await createWorkspace(h, 'Guarded', 'guarded-default');
    const config = await saveConfig(workspace.id, 'Guarded config');
    await put(workspace.id, { defaults: { user_api_key_config: config.id } });

    const deleted = await h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey });
    assert.equal(deleted.status, 409);
    assert.equal(deleted.body.error.type, 'conflict_error');
    assert.match(deleted.body.error.message, /guarded-default/);
    const archived = await h.request('PUT', `/v2/configs/${config.id}`, {
      key: h.adminKey,
      json: { status: 'archived' },
    });
    assert.equal(archived.status, 409);
    assert.match(archived.body.error.message, /guarded-default/);
    assert.equal((await h.request('GET', `/v2/configs/${config.slug}`, { key: h.adminKey })).status, 200);
    // Other updates of the config are fine.
    const renamed = await h.request('PUT', `/v2/configs/${config.slug}`, {
      key: h.adminKey,
      json: { name: 'Guarded, renamed' },
    });
    assert.equal(renamed.status, 200);

    await put(workspace.id, { defaults: { user_api_key_config: null } });
    assert.equal((await h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey })).status, 200);
    assert.equal((await h.request('GET', `/v2/configs/${config.slug}`, { key: h.adminKey })).status, 404);
  });
});

test('setting a default and archiving its config at the same time never leave a default on an archived config', async () => {
  const workspace = await createWorkspace(h, 'Racing', 'racing-default');
  for (let round = 0; round < 5; round++) {
    const config = await saveConfig(workspace.id, `Racing ${round}`);
    const [set, archived] = await Promise.all([
      put(workspace.id, { defaults: { user_api_key_config: config.slug } }),
      h.request('DELETE', `/v2/configs/${config.slug}`, { key: h.adminKey }),
    ]);
    const shown = await h.request('GET', `/v2/workspaces/${workspace.id}`, { key: h.adminKey });
    if (set.status === 200) {
      assert.equal(archived.status, 409);
      assert.equal(shown.body.defaults.user_api_key_config, config.slug);
      await put(workspace.id, { defaults: { user_api_key_config: null } });
    } else {
      assert.equal(set.status, 404);
      assert.equal(archived.status, 200);
      assert.notEqual(shown.body.defaults.user_api_key_config, config.slug);
    }
  }
});

describe('another organisation', () => {
  let other: SeededOrganisation;

  before(async () => {
    other = await seedOrganisation(h.db('control-plane').manager, 'workspace-rival');
  });

  test("cannot read or update this organisation's workspace", async () => {
    for (const key of [other.adminKey, other.workspaceKey]) {
      const res = await h.request('GET', `/v2/workspaces/${h.workspaceId}?name_format=plain`, { key });
      assert.equal(res.status, 404);
    }
    const res = await put(h.workspaceId, { name: 'Taken over' }, other.adminKey);
    assert.equal(res.status, 404);
    const own = await h.request('GET', `/v2/workspaces/${h.workspaceId}`, { key: h.adminKey });
    assert.notEqual(own.body.name, 'Taken over');
  });

  test("cannot create a config, an API key or a membership in this organisation's workspace", async () => {
    const configs = () => h.request('GET', `/v2/configs?workspace_id=${h.workspaceId}`, { key: h.adminKey });
    const keys = () => h.request('GET', '/v2/api-keys?page_size=1000', { key: h.adminKey });
    const members = () =>
      h.request('GET', `/v2/admin/workspaces/${h.workspaceId}/users`, { key: h.adminKey });
    const before = [(await configs()).body, (await keys()).body.total, (await members()).body];
    const attempts = [
      h.request('POST', '/v2/configs', {
        key: other.adminKey,
        json: { name: 'Planted', workspace_id: h.workspaceId, config: { provider: '@mock' } },
      }),
      h.request('POST', '/v2/api-keys/workspace/service', {
        key: other.adminKey,
        json: { name: 'Planted', workspace_id: h.workspaceId },
      }),
      h.request('POST', `/v2/admin/workspaces/${h.workspaceId}/users`, {
        key: other.adminKey,
        json: { users: [{ id: '00000000-0000-4000-8000-000000000000', role: 'member' }] },
      }),
    ];
    for (const res of await Promise.all(attempts)) assert.equal(res.status, 404, res.text);
    assert.deepEqual([(await configs()).body, (await keys()).body.total, (await members()).body], before);
  });

  test("cannot make this organisation's config its default", async () => {
    const config = await saveConfig(h.workspaceId, 'Not yours');
    for (const reference of [config.id, config.slug]) {
      const res = await put(
        other.workspaceId,
        { defaults: { user_api_key_config: reference } },
        other.adminKey,
      );
      assert.equal(res.status, 404);
      assert.equal(res.body.error.param, 'defaults.user_api_key_config');
    }
  });
});
