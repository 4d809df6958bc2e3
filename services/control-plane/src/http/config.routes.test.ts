import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation } from '../testing/organisations.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const fallback = {
  retry: { attempts: 5, on_status_codes: [429, 529] },
  cache: { mode: 'simple', max_age: 3600 },
  strategy: { mode: 'fallback' },
  targets: [{ provider: '@main-258f4d' }, { virtual_key: 'azure-test-4110dd' }],
};

async function create(json: Record<string, unknown>, key = h.workspaceKey) {
  const res = await h.request('POST', '/v2/configs', { key, json });
  assert.equal(res.status, 200, res.text);
  return res.body.data as { id: string; version_id: string; slug: string };
}

const get = (ref: string, key = h.workspaceKey) => h.request('GET', `/v2/configs/${ref}`, { key });

async function listedSlugs(key: string, query = ''): Promise<string[]> {
  const res = await h.request('GET', `/v2/configs?page_size=1000${query}`, { key });
  assert.equal(res.status, 200, res.text);
  return res.body.data.map((c: { slug: string }) => c.slug);
}

async function workspaceWithKey(name: string) {
  const workspace = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name } });
  assert.equal(workspace.status, 200, workspace.text);
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: `${name} key`, workspace_id: workspace.body.id },
  });
  assert.equal(key.status, 200, key.text);
  return { id: workspace.body.id as string, key: key.body.key as string, keyId: key.body.id as string };
}

describe('saving and reading a config', () => {
  test('a workspace key saves a config and reads it back by slug and by id, under /v2 and /v1', async () => {
    const created = await create({ name: 'Pplx Cache Test', config: fallback });
    assert.match(created.id, UUID);
    assert.match(created.version_id, UUID);
    assert.match(created.slug, /^pc-pplx-c-[0-9a-f]{6}$/);

    const bySlug = await get(created.slug);
    assert.equal(bySlug.status, 200);
    assert.equal(bySlug.body.success, true);
    const shown = bySlug.body.data;
    assert.deepEqual(shown.config, fallback);
    assert.equal(shown.id, created.id);
    assert.equal(shown.slug, created.slug);
    assert.equal(shown.name, 'Pplx Cache Test');
    assert.equal(shown.version_id, created.version_id);
    assert.equal(shown.organisation_id, h.organisationId);
    assert.equal(shown.workspace_id, h.workspaceId);
    assert.equal(shown.status, 'active');
    assert.equal(shown.is_default, 0);
    assert.equal(shown.owner_id, shown.updated_by);
    assert.match(shown.owner_id, UUID);
    assert.ok(!Number.isNaN(Date.parse(shown.created_at)));
    assert.equal(shown.last_updated_at, shown.created_at);

    const keys = await h.request('GET', '/v2/api-keys?page_size=1000', { key: h.workspaceKey });
    assert.ok(
      keys.body.data.some((k: { id: string }) => k.id === shown.owner_id),
      'owned by the calling key',
    );

    assert.deepEqual((await get(created.id)).body, bySlug.body);
    const viaV1 = await h.request('GET', `/v1/configs/${created.slug}`, { key: h.workspaceKey });
    assert.equal(viaV1.status, 200);
    assert.deepEqual(viaV1.body, bySlug.body);
  });

  test('/v1/configs creates too, and needs a key like /v2', async () => {
    const res = await h.request('POST', '/v1/configs', {
      key: h.workspaceKey,
      json: { name: 'Through v1', config: { retry: { attempts: 2 } } },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await get(res.body.data.slug)).body.data.name, 'Through v1');
    const anonymous = await h.request('GET', '/v1/configs');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.error.type, 'authentication_error');
  });

  test('a config sent as JSON text is saved as the object it encodes', async () => {
    const created = await create({ name: 'As text', config: JSON.stringify(fallback) });
    assert.deepEqual((await get(created.slug)).body.data.config, fallback);
  });

  test('a given slug is kept, and taken: a second config with it is a 409 naming slug', async () => {
    const created = await create({ name: 'Support bot', slug: 'support-bot', config: fallback });
    assert.equal(created.slug, 'support-bot');
    const elsewhere = await workspaceWithKey('Slug clash');
    for (const key of [h.workspaceKey, elsewhere.key]) {
      const again = await h.request('POST', '/v2/configs', {
        key,
        json: { name: 'Support bot again', slug: 'support-bot', config: fallback },
      });
      assert.equal(again.status, 409);
      assert.equal(again.body.error.type, 'conflict_error');
      assert.equal(again.body.error.param, 'slug');
    }
  });

  test('a slug that is not lower-case letters, digits, - and _, or that reads as an id, is a 400', async () => {
    for (const slug of ['Upper', 'has space', '', '4e54a1a4-109c-43ee-b0f7-11e7d60b0066']) {
      const res = await h.request('POST', '/v2/configs', {
        key: h.workspaceKey,
        json: { name: 'Bad slug', slug, config: fallback },
      });
      assert.equal(res.status, 400, `slug ${JSON.stringify(slug)}`);
      assert.equal(res.body.error.param, 'slug');
    }
  });

  test('generated slugs differ for configs of the same name', async () => {
    const first = await create({ name: 'Twin', config: fallback });
    const second = await create({ name: 'Twin', config: fallback });
    assert.notEqual(first.slug, second.slug);
    assert.match(first.slug, /^pc-twin-[0-9a-f]{6}$/);
  });

  test('an organisation admin key saves into the workspace it names, and must name one', async () => {
    const missing = await h.request('POST', '/v2/configs', {
      key: h.adminKey,
      json: { name: 'Nowhere', config: fallback },
    });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.param, 'workspace_id');
    const empty = await h.request('POST', '/v2/configs', {
      key: h.adminKey,
      json: { name: 'Nowhere', config: fallback, workspace_id: '' },
    });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.param, 'workspace_id');

    const created = await create(
      { name: 'Admin made', config: fallback, workspace_id: h.workspaceId },
      h.adminKey,
    );
    const shown = await get(created.slug);
    assert.equal(shown.status, 200, 'the workspace key sees it');
    assert.equal(shown.body.data.workspace_id, h.workspaceId);

    const unknown = await h.request('POST', '/v2/configs', {
      key: h.adminKey,
      json: { name: 'Nowhere', config: fallback, workspace_id: '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(unknown.status, 404);
  });

  test('a workspace has at most one default config: a new default replaces the old one', async () => {
    const workspace = await workspaceWithKey('Defaults');
    const first = await create({ name: 'First default', config: fallback, isDefault: 1 }, workspace.key);
    assert.equal((await get(first.slug, workspace.key)).body.data.is_default, 1);
    const second = await create({ name: 'Second default', config: fallback, isDefault: true }, workspace.key);
    assert.equal((await get(second.slug, workspace.key)).body.data.is_default, 1);
    assert.equal((await get(first.slug, workspace.key)).body.data.is_default, 0);
    const other = await create({ name: 'Not default', config: fallback, isDefault: 0 }, workspace.key);
    assert.equal((await get(other.slug, workspace.key)).body.data.is_default, 0);
    assert.equal((await get(second.slug, workspace.key)).body.data.is_default, 1);
  });

  test('an unknown config is a 404, whatever the reference looks like', async () => {
    for (const ref of ['pc-never-000000', '00000000-0000-4000-8000-000000000000', 'not-a-uuid-at-all']) {
      const res = await get(ref);
      assert.equal(res.status, 404, ref);
      assert.equal(res.body.error.type, 'not_found_error');
    }
  });
});

describe('what a saved config may hold', () => {
  const invalid: Array<{ what: string; config: unknown; param: string }> = [
    {
      what: 'a strategy without targets',
      config: { strategy: { mode: 'fallback' } },
      param: 'config.targets',
    },
    {
      what: 'targets without a strategy',
      config: { targets: [{ virtual_key: 'a' }] },
      param: 'config.strategy',
    },
    {
      what: 'an unknown field in a target',
      config: { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'a', colour: 'blue' }] },
      param: 'config.targets[0].colour',
    },
    {
      what: 'a weight below 0',
      config: {
        strategy: { mode: 'loadbalance' },
        targets: [
          { virtual_key: 'a', weight: 1 },
          { virtual_key: 'b', weight: -1 },
        ],
      },
      param: 'config.targets[1].weight',
    },
    {
      what: 'a condition whose then names no target',
      config: {
        strategy: {
          mode: 'conditional',
          conditions: [{ query: { 'metadata.tier': 'pro' }, then: 'premium' }],
        },
        targets: [{ name: 'basic', virtual_key: 'a' }],
      },
      param: 'config.strategy.conditions[0].then',
    },
    {
      what: 'a provider key in a target',
      config: {
        strategy: { mode: 'fallback' },
        targets: [{ virtual_key: 'a' }, { provider: 'openai', api_key: 'sk-x' }],
      },
      param: 'config.targets[1].api_key',
    },
    {
      what: 'a provider key at the top',
      config: { provider: 'openai', api_key: 'sk-x' },
      param: 'config.api_key',
    },
    {
      what: 'a provider key inside override_params',
      config: { virtual_key: 'a', override_params: { headers: { api_key: 'sk-x' } } },
      param: 'config.override_params.headers.api_key',
    },
    { what: 'JSON text that does not parse', config: '{"retry": ', param: 'config' },
    { what: 'a number', config: 42, param: 'config' },
    { what: 'an array', config: [{ virtual_key: 'a' }], param: 'config' },
    { what: 'nothing', config: undefined, param: 'config' },
  ];

  for (const { what, config, param } of invalid) {
    test(`${what} is a 400 naming ${param}, and nothing is saved`, async () => {
      const before = await listedSlugs(h.workspaceKey);
      const res = await h.request('POST', '/v2/configs', {
        key: h.workspaceKey,
        json: { name: 'Invalid', config },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
      assert.deepEqual(await listedSlugs(h.workspaceKey), before);
    });
  }

  test('an unknown field at the top is a 400 that names it', async () => {
    const res = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Invalid', config: { retry: { attempts: 1 }, colour: 'blue' } },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'config.colour');
    assert.match(res.body.error.message, /colour/);
  });

  test('a config nested thousands of levels deep is a 400, not a fault', async () => {
    let node: Record<string, unknown> = { virtual_key: 'a' };
    for (let i = 0; i < 1000; i++) node = { strategy: { mode: 'fallback' }, targets: [node] };
    const res = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Deep', config: node },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'config');
  });

  test('a config nested 100 000 levels deep, as an object or as JSON text, is a 400 naming where', async () => {
    const depth = 100_000;
    const deep = `{"targets":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    for (const [config, param] of [
      [deep, 'config'],
      [`"${deep.replace(/"/g, '\\"')}"`, 'config.targets'],
    ] as const) {
      const res = await h.request('POST', '/v2/configs', {
        key: h.workspaceKey,
        headers: { 'content-type': 'application/json' },
        body: `{"name":"Deep","config":${config}}`,
      });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(res.body.error.code, 'too_deeply_nested');
      assert.equal(res.body.error.param, param);
    }
    assert.equal((await listedSlugs(h.workspaceKey)).includes('deep'), false);
  });

  test('text no store can hold, in any field or in config JSON text, is a 400 naming the field', async () => {
    const cases: Array<[string, string]> = [
      ['{"name":"Nul\\u0000","config":{"retry":{"attempts":1}}}', 'name'],
      [
        '{"name":"Lone","config":{"override_params":{"user":"\\ud800"},"virtual_key":"a"}}',
        'config.override_params.user',
      ],
      [
        '{"name":"Text","config":"{\\"override_params\\":{\\"\\\\u0000\\":1},\\"virtual_key\\":\\"a\\"}"}',
        'config.override_params',
      ],
    ];
    for (const [body, param] of cases) {
      const res = await h.request('POST', '/v2/configs', {
        key: h.workspaceKey,
        headers: { 'content-type': 'application/json' },
        body,
      });
      assert.equal(res.status, 400, `${body}: ${res.text}`);
      assert.equal(res.body.error.code, 'invalid_text', body);
      assert.equal(res.body.error.param, param, body);
    }
  });

  test('a config over 64 KiB is a 413', async () => {
    const config = { virtual_key: 'a', override_params: { padding: 'x'.repeat(70_000) } };
    const res = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Big', config },
    });
    assert.equal(res.status, 413, res.text);
    assert.equal(res.body.error.param, 'config');
  });

  test('an unknown body field or a bad isDefault is a 400 naming it', async () => {
    const extra = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Extra', config: fallback, owner: 'me' },
    });
    assert.equal(extra.status, 400);
    const isDefault = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Extra', config: fallback, isDefault: 2 },
    });
    assert.equal(isDefault.status, 400);
    assert.equal(isDefault.body.error.param, 'isDefault');
    const name = await h.request('POST', '/v2/configs', { key: h.workspaceKey, json: { config: fallback } });
    assert.equal(name.status, 400);
    assert.equal(name.body.error.param, 'name');
  });

  test('a body that is not JSON is a 400', async () => {
    const res = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      body: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 400);
    assert.ok(res.body.error);
  });

  for (const field of ['input_guardrails', 'output_guardrails']) {
    test(`a guardrail named in ${field} that does not exist is a 422 naming it`, async () => {
      const res = await h.request('POST', '/v2/configs', {
        key: h.workspaceKey,
        json: { name: 'Guarded', config: { ...fallback, [field]: ['pg-patron-1d0224'] } },
      });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.error.param, `config.${field}[0]`);
      assert.match(res.body.error.message, /'pg-patron-1d0224' does not exist/);
    });
  }

  test('a config may name an active guardrail of its workspace or the organisation, not another workspace’s or an archived one', async () => {
    const guardrail = async (json: Record<string, unknown>) => {
      const res = await h.request('POST', '/v1/guardrails', {
        key: h.adminKey,
        json: {
          name: 'No emails',
          checks: [{ id: 'default.pii', parameters: { categories: ['email'] } }],
          actions: { deny: true },
          ...json,
        },
      });
      assert.equal(res.status, 200, res.text);
      return res.body.slug as string;
    };
    const organisationLevel = await guardrail({});
    const own = await guardrail({ workspace_id: h.workspaceId });
    const other = await workspaceWithKey('Guardrails elsewhere');
    const elsewhere = await guardrail({ workspace_id: other.id });

    const saved = await create({
      name: 'Guarded',
      config: { ...fallback, input_guardrails: [organisationLevel], output_guardrails: [own] },
    });
    assert.deepEqual((await get(saved.slug)).body.data.config.input_guardrails, [organisationLevel]);

    const refused = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Guarded elsewhere', config: { ...fallback, output_guardrails: [own, elsewhere] } },
    });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.error.param, 'config.output_guardrails[1]');

    assert.equal((await h.request('DELETE', `/v1/guardrails/${own}`, { key: h.adminKey })).status, 200);
    const archived = await h.request('PUT', `/v2/configs/${saved.slug}`, {
      key: h.workspaceKey,
      json: { config: { ...fallback, output_guardrails: [own] } },
    });
    assert.equal(archived.status, 422, archived.text);
    assert.equal(archived.body.error.code, 'guardrail_not_found');
  });

  test('empty guardrail lists are fine', async () => {
    const created = await create({
      name: 'No guardrails',
      config: { ...fallback, input_guardrails: [], output_guardrails: [] },
    });
    assert.deepEqual((await get(created.slug)).body.data.config.input_guardrails, []);
  });
});

describe('updating, versions and deleting', () => {
  test('an update writes a new version; versions list newest first with the document as JSON text', async () => {
    const created = await create({ name: 'Versioned', config: fallback });
    const next = { retry: { attempts: 1 }, virtual_key: 'copy-of-anthrop-b20259' };
    const updated = await h.request('PUT', `/v2/configs/${created.slug}`, {
      key: h.workspaceKey,
      json: { name: 'Versioned twice', config: next, status: 'active' },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.success, true);
    assert.match(updated.body.data.version_id, UUID);
    assert.notEqual(updated.body.data.version_id, created.version_id);

    const shown = (await get(created.id)).body.data;
    assert.equal(shown.name, 'Versioned twice');
    assert.deepEqual(shown.config, next);
    assert.equal(shown.version_id, updated.body.data.version_id);
    assert.ok(Date.parse(shown.last_updated_at) >= Date.parse(shown.created_at));

    const renamed = await h.request('PUT', `/v2/configs/${created.id}`, {
      key: h.workspaceKey,
      json: { name: 'Versioned thrice' },
    });
    assert.equal(renamed.status, 200);
    assert.deepEqual((await get(created.slug)).body.data.config, next, 'a rename keeps the document');

    const versions = await h.request('GET', `/v2/configs/${created.slug}/versions`, { key: h.workspaceKey });
    assert.equal(versions.status, 200);
    assert.equal(versions.body.object, 'list');
    assert.equal(versions.body.total, 3);
    assert.deepEqual(
      versions.body.data.map((v: { version_id: string }) => v.version_id),
      [renamed.body.data.version_id, updated.body.data.version_id, created.version_id],
    );
    const [latest, middle, first] = versions.body.data;
    assert.equal(typeof first.config, 'string');
    assert.deepEqual(JSON.parse(first.config), fallback);
    assert.deepEqual(JSON.parse(middle.config), next);
    assert.deepEqual(JSON.parse(latest.config), next);
    for (const version of versions.body.data) {
      assert.equal(version.id, created.id);
      assert.equal(version.slug, created.slug);
      assert.equal(version.workspace_id, h.workspaceId);
      assert.equal(version.format, 'json');
      assert.equal(version.object, 'config');
    }

    const paged = await h.request('GET', `/v2/configs/${created.slug}/versions?page_size=1&current_page=2`, {
      key: h.workspaceKey,
    });
    assert.equal(paged.body.total, 3);
    assert.deepEqual(
      paged.body.data.map((v: { version_id: string }) => v.version_id),
      [created.version_id],
    );
  });

  test('an invalid update is refused and changes nothing', async () => {
    const created = await create({ name: 'Stable', config: fallback });
    const cases: Array<[unknown, number, string | null]> = [
      [{}, 400, null],
      [{ status: 'paused' }, 400, 'status'],
      [{ name: '' }, 400, 'name'],
      [{ config: { strategy: { mode: 'single' } } }, 400, 'config.targets'],
      [{ config: { provider: 'openai', api_key: 'sk-x' } }, 400, 'config.api_key'],
      [{ config: { ...fallback, output_guardrails: ['pg-none'] } }, 422, 'config.output_guardrails[0]'],
      [{ name: 'Nul\u0000' }, 400, 'name'],
      [{ name: 'Lone \udc00' }, 400, 'name'],
    ];
    for (const [json, status, param] of cases) {
      const res = await h.request('PUT', `/v2/configs/${created.slug}`, { key: h.workspaceKey, json });
      assert.equal(res.status, status, JSON.stringify(json));
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    const shown = (await get(created.slug)).body.data;
    assert.deepEqual(shown.config, fallback);
    assert.equal(shown.name, 'Stable');
    const versions = await h.request('GET', `/v2/configs/${created.slug}/versions`, { key: h.workspaceKey });
    assert.equal(versions.body.total, 1);
  });

  test('a deleted config is archived: not found, not listed, and its slug stays taken', async () => {
    const created = await create({ name: 'Short lived', slug: 'short-lived', config: fallback });
    assert.ok((await listedSlugs(h.workspaceKey)).includes('short-lived'));

    const deleted = await h.request('DELETE', '/v2/configs/short-lived', { key: h.workspaceKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, {});

    for (const ref of [created.slug, created.id]) assert.equal((await get(ref)).status, 404);
    assert.equal((await get(created.slug, h.adminKey)).status, 404);
    assert.ok(!(await listedSlugs(h.workspaceKey)).includes('short-lived'));
    assert.ok(!(await listedSlugs(h.adminKey)).includes('short-lived'));
    const versions = await h.request('GET', '/v2/configs/short-lived/versions', { key: h.workspaceKey });
    assert.equal(versions.status, 404);
    const update = await h.request('PUT', '/v2/configs/short-lived', {
      key: h.workspaceKey,
      json: { status: 'active' },
    });
    assert.equal(update.status, 404);
    const again = await h.request('DELETE', '/v2/configs/short-lived', { key: h.workspaceKey });
    assert.equal(again.status, 404);

    const reuse = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'Short lived', slug: 'short-lived', config: fallback },
    });
    assert.equal(reuse.status, 409);
  });

  test('archiving through an update is a delete', async () => {
    const created = await create({ name: 'Archive me', config: fallback });
    const res = await h.request('PUT', `/v2/configs/${created.slug}`, {
      key: h.workspaceKey,
      json: { status: 'archived' },
    });
    assert.equal(res.status, 200);
    assert.equal((await get(created.slug)).status, 404);
  });

  test('every write announces a config change keyed by slug and id', async () => {
    const announced = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter((change) => change.entity === 'config');
    const before = announced().length;
    const created = await create({ name: 'Announced', config: fallback });
    await h.request('PUT', `/v2/configs/${created.slug}`, { key: h.workspaceKey, json: { name: 'Renamed' } });
    await h.request('DELETE', `/v2/configs/${created.id}`, { key: h.workspaceKey });
    const changes = announced().slice(before);
    assert.deepEqual(
      changes.map((change) => change.action),
      [events.ChangeAction.CREATED, events.ChangeAction.UPDATED, events.ChangeAction.DELETED],
    );
    for (const change of changes) {
      assert.equal(change.entityId, created.id);
      assert.equal(change.cacheKey, `${h.organisationId}:${created.slug}`);
      assert.equal(change.organisationId, h.organisationId);
      assert.equal(change.workspaceId, h.workspaceId);
    }
  });
});

describe('lists', () => {
  test('list page by page, with success, total and the metadata of each config', async () => {
    const workspace = await workspaceWithKey('Paged configs');
    const slugs = [];
    for (const n of [1, 2, 3])
      slugs.push((await create({ name: `Paged ${n}`, config: fallback }, workspace.key)).slug);

    const all = await h.request('GET', '/v2/configs', { key: workspace.key });
    assert.equal(all.status, 200);
    assert.equal(all.body.success, true);
    assert.equal(all.body.object, 'list');
    assert.equal(all.body.total, 3);
    assert.deepEqual(
      all.body.data.map((c: { slug: string }) => c.slug),
      slugs,
    );
    const [first] = all.body.data;
    assert.equal(first.workspace_id, workspace.id);
    assert.equal(first.status, 'active');
    assert.equal(first.config, undefined, 'lists show metadata only');

    const second = await h.request('GET', '/v2/configs?current_page=1&page_size=2', { key: workspace.key });
    assert.equal(second.body.total, 3);
    assert.deepEqual(
      second.body.data.map((c: { slug: string }) => c.slug),
      [slugs[2]],
    );
    const bad = await h.request('GET', '/v2/configs?page_size=0', { key: workspace.key });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'page_size');
  });
});

describe('workspaces and organisations', () => {
  test('a key of another workspace can neither see nor change a config, nor save into that workspace', async () => {
    const a = await create({ name: 'Team A', config: fallback });
    const b = await workspaceWithKey('Team B');
    for (const ref of [a.slug, a.id]) {
      assert.equal((await get(ref, b.key)).status, 404);
      const versions = await h.request('GET', `/v2/configs/${ref}/versions`, { key: b.key });
      assert.equal(versions.status, 404);
      const update = await h.request('PUT', `/v2/configs/${ref}`, { key: b.key, json: { name: 'Hijacked' } });
      assert.equal(update.status, 404);
      const deleted = await h.request('DELETE', `/v2/configs/${ref}`, { key: b.key });
      assert.equal(deleted.status, 404);
    }
    assert.ok(!(await listedSlugs(b.key)).includes(a.slug));
    const into = await h.request('POST', '/v2/configs', {
      key: b.key,
      json: { name: 'Into A', config: fallback, workspace_id: h.workspaceId },
    });
    assert.equal(into.status, 404);
    const listA = await h.request('GET', `/v2/configs?workspace_id=${h.workspaceId}`, { key: b.key });
    assert.equal(listA.status, 404);

    const shown = await get(a.slug);
    assert.equal(shown.body.data.name, 'Team A');
    assert.equal(shown.body.data.version_id, a.version_id);
  });

  test('an organisation admin key reads every workspace, or the one it names', async () => {
    const a = await create({ name: 'Listed A', config: fallback });
    const b = await workspaceWithKey('Listed B');
    const inB = await create({ name: 'Listed B', config: fallback }, b.key);

    const all = await listedSlugs(h.adminKey);
    assert.ok(all.includes(a.slug) && all.includes(inB.slug));
    assert.deepEqual(await listedSlugs(h.adminKey, `&workspace_id=${b.id}`), [inB.slug]);
    assert.ok(!(await listedSlugs(h.workspaceKey)).includes(inB.slug));
    assert.equal((await get(inB.slug, h.adminKey)).status, 200);
    const update = await h.request('PUT', `/v2/configs/${inB.slug}`, {
      key: h.adminKey,
      json: { name: 'By admin' },
    });
    assert.equal(update.status, 200);
    assert.equal((await get(inB.slug, b.key)).body.data.name, 'By admin');
  });

  test('another organisation sees none of it, and may use the same slug', async () => {
    const { adminKey: otherAdmin, workspaceKey: otherWorkspace } = await seedOrganisation(
      h.db('control-plane').manager,
      'other-configs',
    );

    const ours = await create({ name: 'Ours', slug: 'shared-name', config: fallback });
    for (const key of [otherAdmin, otherWorkspace]) {
      assert.equal((await get(ours.id, key)).status, 404);
      assert.equal((await listedSlugs(key)).length, 0);
    }
    const intoOurs = await h.request('POST', '/v2/configs', {
      key: otherAdmin,
      json: { name: 'Cross', config: fallback, workspace_id: h.workspaceId },
    });
    assert.equal(intoOurs.status, 404);

    const theirs = await create(
      { name: 'Theirs', slug: 'shared-name', config: { retry: { attempts: 1 } } },
      otherWorkspace,
    );
    assert.equal(theirs.slug, 'shared-name');
    assert.equal((await get('shared-name')).body.data.id, ours.id);
    assert.equal((await get('shared-name', otherAdmin)).body.data.id, theirs.id);
  });
});
