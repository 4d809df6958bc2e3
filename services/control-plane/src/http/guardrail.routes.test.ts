import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import type { Principal } from '@switchyard/access';
import { Topics } from '@switchyard/adapters';
import { parseGuardrailActions, parseGuardrailChecks } from '@switchyard/guardrails';
import { SecretBox } from '@switchyard/core';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { GuardrailService } from '../domain/guardrail.service.ts';
import { SecretReferenceMappings } from '../clients/secret-references.ts';
import { KeySettingsService } from '../domain/key-settings.service.ts';
import { WorkspaceService } from '../domain/workspace.service.ts';
import { ConfigRepository } from '../store/config.repository.ts';
import { GuardrailRepository } from '../store/guardrail.repository.ts';
import { IdentityRepository } from '../store/identity.repository.ts';
import { KeySettingsRepository } from '../store/key-settings.repository.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  other = await seedOrganisation(h.db('control-plane').manager, 'guard-other');
});
after(() => h.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PATH = '/v1/guardrails';

const regexCheck = { id: 'default.regexMatch', parameters: { rule: '\\bsecret\\b' } };
const wordCheck = (maxWords: number) => ({
  id: 'default.wordCount',
  name: 'Short answers',
  parameters: { minWords: 1, maxWords },
});

const guardrail = (extra: Record<string, unknown> = {}) => ({
  name: 'No secrets',
  checks: [regexCheck],
  actions: { deny: true },
  ...extra,
});

/** Checks and actions as the guardrails package completes them, and as JSON answers them. */
const asStored = {
  checks: (checks: unknown) => JSON.parse(JSON.stringify(parseGuardrailChecks(checks))),
  actions: (actions: unknown) => JSON.parse(JSON.stringify(parseGuardrailActions(actions))),
};

async function create(json: Record<string, unknown>, key = h.adminKey) {
  const res = await h.request('POST', PATH, { key, json });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string; version_id: string };
}

const get = (ref: string, key = h.adminKey) => h.request('GET', `${PATH}/${ref}`, { key });
const put = (ref: string, json: unknown, key = h.adminKey) =>
  h.request('PUT', `${PATH}/${ref}`, { key, json });

async function listed(key = h.adminKey, query = ''): Promise<Array<{ id: string; slug: string }>> {
  const res = await h.request('GET', `${PATH}?page_size=1000${query}`, { key });
  assert.equal(res.status, 200, res.text);
  return res.body.data;
}

async function versionsOf(ref: string, query = '') {
  const res = await h.request('GET', `${PATH}/${ref}/versions${query}`, { key: h.adminKey });
  assert.equal(res.status, 200, res.text);
  return res.body as {
    object: string;
    total: number;
    data: Array<{ version_id: string; version: number; checks: unknown; actions: unknown; id: string }>;
  };
}

/** An organisation admin key made through the API, with these scopes (all it can hold unless given). */
async function adminKeyWith(scopes?: string[]) {
  const res = await h.request('POST', '/v2/api-keys/organisation/service', {
    key: h.adminKey,
    json: { name: 'Guardrail admin', ...(scopes ? { scopes } : {}) },
  });
  assert.equal(res.status, 200, res.text);
  return { id: res.body.id as string, key: res.body.key as string };
}

describe('defining and reading a guardrail', () => {
  test('an organisation admin key defines an organisation-level guardrail and reads it back whole, by id and by slug', async () => {
    const checks = [regexCheck, wordCheck(50)];
    const created = await create(guardrail({ checks, actions: { deny: true, async: false } }));
    assert.deepEqual(Object.keys(created).sort(), ['id', 'slug', 'version_id']);
    assert.match(created.id, UUID);
    assert.match(created.slug, /^guard_no-sec-[0-9a-f]{8}$/);
    assert.match(created.version_id, UUID);

    const shown = await get(created.id);
    assert.equal(shown.status, 200, shown.text);
    const { created_at: createdAt, last_updated_at: updatedAt, owner_id: ownerId, ...rest } = shown.body;
    assert.deepEqual(rest, {
      id: created.id,
      name: 'No secrets',
      slug: created.slug,
      organisation_id: h.organisationId,
      workspace_id: null,
      status: 'active',
      updated_by: ownerId,
      version_id: created.version_id,
      checks: asStored.checks(checks),
      actions: asStored.actions({ deny: true }),
      secret_mappings: [],
      object: 'guardrail',
    });
    assert.match(ownerId, UUID);
    assert.ok(!Number.isNaN(Date.parse(createdAt)));
    assert.equal(updatedAt, createdAt);
    assert.equal(shown.body.checks[0].is_enabled, true, 'defaults are filled in');
    assert.equal(shown.body.checks[1].name, 'Short answers');
    assert.deepEqual((await get(created.slug)).body, shown.body);
  });

  test('it goes to the workspace named by id or slug; organisation_id alone, or workspace_id null, is organisation-level', async () => {
    const workspace = await createWorkspace(h, 'Guarded');
    const byId = await create(guardrail({ workspace_id: workspace.id }));
    assert.equal((await get(byId.id)).body.workspace_id, workspace.id);
    const bySlug = await create(
      guardrail({ workspace_id: workspace.slug, organisation_id: h.organisationId }),
    );
    assert.equal((await get(bySlug.id)).body.workspace_id, workspace.id);
    const organisationLevel = await create(guardrail({ organisation_id: h.organisationId }));
    assert.equal((await get(organisationLevel.id)).body.workspace_id, null);
    for (const workspaceId of [null, '']) {
      const explicit = await create(guardrail({ workspace_id: workspaceId }));
      assert.equal((await get(explicit.id)).body.workspace_id, null);
    }
  });

  test('guardrails of the same name get different slugs', async () => {
    const [a, b] = [await create(guardrail()), await create(guardrail())];
    assert.notEqual(a.slug, b.slug);
    assert.notEqual(a.id, b.id);
  });

  test('a name with nothing to make a slug of still gets one', async () => {
    const created = await create(guardrail({ name: '???' }));
    assert.match(created.slug, /^guard_[0-9a-f]{8}$/);
  });

  test('an unknown guardrail is a 404, whatever the reference looks like', async () => {
    for (const ref of [randomUUID(), 'guard_nothing-00000000', 'not a slug']) {
      const res = await get(encodeURIComponent(ref));
      assert.equal(res.status, 404, ref);
      assert.equal(res.body.error.type, 'not_found_error');
    }
  });
});

describe('validation', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no name', { ...guardrail(), name: undefined }, 'name'],
    ['a blank name', guardrail({ name: '   ' }), 'name'],
    ['a name over 255 characters', guardrail({ name: 'n'.repeat(256) }), 'name'],
    ['no checks', { ...guardrail(), checks: undefined }, 'checks'],
    ['checks that are not a list', guardrail({ checks: regexCheck }), 'checks'],
    ['an empty list of checks', guardrail({ checks: [] }), 'checks'],
    [
      'an unknown check id',
      guardrail({ checks: [regexCheck, { id: 'default.mindReading' }] }),
      'checks[1].id',
    ],
    ['a check without an id', guardrail({ checks: [{ parameters: {} }] }), 'checks[0].id'],
    [
      'an unknown field in a check',
      guardrail({ checks: [{ ...regexCheck, weight: 2 }] }),
      'checks[0].weight',
    ],
    [
      'a check time budget of 0',
      guardrail({ checks: [{ ...regexCheck, timeout_ms: 0 }] }),
      'checks[0].timeout_ms',
    ],
    [
      'an unknown failure mode',
      guardrail({ checks: [{ ...regexCheck, failure_mode: 'ajar' }] }),
      'checks[0].failure_mode',
    ],
    [
      'parameters that are not an object',
      guardrail({ checks: [{ ...regexCheck, parameters: 'x' }] }),
      'checks[0].parameters',
    ],
    ['no actions', { ...guardrail(), actions: undefined }, 'actions'],
    ['actions that are not an object', guardrail({ actions: 'deny' }), 'actions'],
    ['deny as text', guardrail({ actions: { deny: 'yes' } }), 'actions.deny'],
    ['an unknown action', guardrail({ actions: { block: true } }), 'actions.block'],
    [
      'feedback without its value',
      guardrail({ actions: { on_fail: { feedback: { weight: 1 } } } }),
      'actions.on_fail.feedback.value',
    ],
    [
      'text no store can hold in a parameter',
      guardrail({ checks: [{ ...regexCheck, parameters: { rule: 'a\u0000' } }] }),
      'checks[0].parameters.rule',
    ],
    ['a slug of its own', guardrail({ slug: 'guard_mine' }), 'slug'],
    ['an unknown field', guardrail({ enabled: true }), 'enabled'],
  ];
  for (const [what, json, param] of cases) {
    test(`defining one with ${what} is a 400 naming ${param}`, async () => {
      const before = (await listed()).length;
      const res = await h.request('POST', PATH, { key: h.adminKey, json });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
      assert.equal((await listed()).length, before, 'nothing is stored');
    });
  }

  test('a workspace or organisation that is not there is a 404, and nothing is stored', async () => {
    const before = (await listed()).length;
    const workspace = await h.request('POST', PATH, {
      key: h.adminKey,
      json: guardrail({ workspace_id: 'nowhere' }),
    });
    assert.equal(workspace.status, 404, workspace.text);
    const organisation = await h.request('POST', PATH, {
      key: h.adminKey,
      json: guardrail({ organisation_id: other.organisationId }),
    });
    assert.equal(organisation.status, 404, organisation.text);
    assert.equal(organisation.body.error.param, 'organisation_id');
    assert.equal((await listed()).length, before);
  });

  test('an invalid update is a 400 naming the field, and changes nothing', async () => {
    const created = await create(guardrail({ name: 'Stable' }));
    const cases: Array<[unknown, string | null]> = [
      [{}, null],
      [{ name: '' }, 'name'],
      [{ checks: [] }, 'checks'],
      [{ checks: [{ id: 'default.nope' }] }, 'checks[0].id'],
      [{ checks: [regexCheck], actions: { deny: 1 } }, 'actions.deny'],
      [{ workspace_id: null }, 'workspace_id'],
      [{ status: 'archived' }, 'status'],
      [{ name: 'Nul\u0000' }, 'name'],
    ];
    for (const [json, param] of cases) {
      const res = await put(created.id, json);
      assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    const shown = (await get(created.id)).body;
    assert.equal(shown.name, 'Stable');
    assert.deepEqual(shown.checks, asStored.checks([regexCheck]));
    assert.equal(shown.version_id, created.version_id);
    assert.equal((await versionsOf(created.id)).total, 1);
  });

  test('list filters and pages outside their values are a 400 naming them', async () => {
    for (const [query, param] of [
      ['page_size=0', 'page_size'],
      ['current_page=-1', 'current_page'],
      ['workspace_id=', 'workspace_id'],
    ]) {
      const res = await h.request('GET', `${PATH}?${query}`, { key: h.adminKey });
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.param, param);
    }
  });
});

describe('updating, versions and deleting', () => {
  test('new checks or actions make a new version; a rename, or the same checks sent again, keep it', async () => {
    const created = await create(guardrail({ name: 'Versioned' }));
    const editor = await adminKeyWith();

    const changed = await put(created.slug, { checks: [regexCheck, wordCheck(20)] }, editor.key);
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(Object.keys(changed.body).sort(), ['id', 'slug', 'version_id']);
    assert.equal(changed.body.id, created.id);
    assert.equal(changed.body.slug, created.slug);
    assert.match(changed.body.version_id, UUID);
    assert.notEqual(changed.body.version_id, created.version_id);

    const shown = (await get(created.id)).body;
    assert.deepEqual(shown.checks, asStored.checks([regexCheck, wordCheck(20)]));
    assert.deepEqual(shown.actions, asStored.actions({ deny: true }), 'actions not given stay as they were');
    assert.equal(shown.version_id, changed.body.version_id);
    assert.equal(shown.updated_by, editor.id);
    assert.notEqual(shown.owner_id, editor.id);
    assert.ok(Date.parse(shown.last_updated_at) >= Date.parse(shown.created_at));

    const renamed = await put(created.id, { name: 'Versioned, renamed' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.version_id, changed.body.version_id, 'a rename keeps the version');
    const resent = await put(created.id, {
      name: 'Versioned, renamed',
      checks: [regexCheck, wordCheck(20)],
      actions: { deny: true, async: false },
    });
    assert.equal(
      resent.body.version_id,
      changed.body.version_id,
      'the same checks and actions keep the version',
    );
    const denyOff = await put(created.id, { actions: { deny: false } });
    assert.notEqual(denyOff.body.version_id, changed.body.version_id);
    assert.equal((await get(created.id)).body.name, 'Versioned, renamed');

    const versions = await versionsOf(created.slug);
    assert.equal(versions.object, 'list');
    assert.equal(versions.total, 3);
    assert.deepEqual(
      versions.data.map((v) => [v.version, v.version_id]),
      [
        [3, denyOff.body.version_id],
        [2, changed.body.version_id],
        [1, created.version_id],
      ],
    );
    const [latest, middle, first] = versions.data;
    assert.deepEqual(first!.checks, asStored.checks([regexCheck]));
    assert.deepEqual(middle!.checks, asStored.checks([regexCheck, wordCheck(20)]));
    assert.deepEqual(latest!.actions, asStored.actions({ deny: false }));
    assert.deepEqual(middle!.actions, asStored.actions({ deny: true }));
    for (const version of versions.data) assert.equal(version.id, created.id);

    const paged = await versionsOf(created.id, '?page_size=1&current_page=2');
    assert.equal(paged.total, 3);
    assert.deepEqual(
      paged.data.map((v) => v.version_id),
      [created.version_id],
    );
  });

  test('DELETE archives: it is no longer found, listed or changed, by id or by slug', async () => {
    const created = await create(guardrail({ name: 'Short lived' }));
    const deleted = await h.request('DELETE', `${PATH}/${created.slug}`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, {});
    for (const ref of [created.id, created.slug]) {
      assert.equal((await get(ref)).status, 404);
      assert.equal((await put(ref, { name: 'Back' })).status, 404);
      assert.equal((await h.request('DELETE', `${PATH}/${ref}`, { key: h.adminKey })).status, 404);
      assert.equal((await h.request('GET', `${PATH}/${ref}/versions`, { key: h.adminKey })).status, 404);
    }
    assert.ok(!(await listed()).some((g) => g.id === created.id));
  });

  test('concurrent updates each write their own version: none is lost, and the guardrail ends as the newest', async () => {
    const created = await create(guardrail({ name: 'Contended' }));
    const writers = 10;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        put(created.id, { name: `writer ${i}`, checks: [wordCheck(100 + i)] }),
      ),
    );
    for (const res of results) assert.equal(res.status, 200, res.text);
    const written = new Set(results.map((res) => res.body.version_id as string));
    assert.equal(written.size, writers, 'every writer got a version of its own');

    const versions = await versionsOf(created.id);
    assert.equal(versions.total, writers + 1);
    assert.deepEqual(
      versions.data.map((v) => v.version),
      Array.from({ length: writers + 1 }, (_, i) => writers + 1 - i),
    );
    assert.deepEqual(new Set(versions.data.slice(0, writers).map((v) => v.version_id)), written);

    const final = (await get(created.id)).body;
    const newest = versions.data[0]!;
    assert.equal(final.version_id, newest.version_id);
    assert.deepEqual(final.checks, newest.checks);
    const writer = Number(/^writer (\d+)$/.exec(final.name)![1]);
    assert.deepEqual(
      final.checks,
      asStored.checks([wordCheck(100 + writer)]),
      'name and checks of one writer',
    );
  });
});

describe('webhook headers are secrets', () => {
  const hook = (headers: Record<string, string>, url = 'https://guard.example.com/verdict') => ({
    id: 'default.webhook',
    parameters: { webhookURL: url, headers },
  });
  const stored = async (id: string) =>
    (await h.db('control-plane').query(
      `SELECT g.checks::text AS checks, string_agg(v.checks::text, ' ') AS versions
           FROM control_plane.guardrails g JOIN control_plane.guardrail_versions v ON v.guardrail_id = g.id
          WHERE g.id = $1 GROUP BY g.checks`,
      [id],
    )) as Array<{ checks: string; versions: string }>;

  test('they are stored encrypted and every answer masks them; the gateways read them in the clear', async () => {
    const created = await create(
      guardrail({ checks: [hook({ Authorization: 'Bearer hook-secret-1', 'X-Team': 'search-team' })] }),
    );
    const [row] = await stored(created.id);
    assert.ok(
      !row!.checks.includes('hook-secret-1') && !row!.versions.includes('hook-secret-1'),
      row!.checks,
    );
    assert.ok(!row!.checks.includes('search-team'), row!.checks);

    const read = await get(created.slug);
    assert.deepEqual(read.body.checks[0].parameters.headers, {
      Authorization: '********',
      'X-Team': '********',
    });
    assert.ok(!read.text.includes('hook-secret-1'));
    const versions = await h.request('GET', `${PATH}/${created.id}/versions`, { key: h.adminKey });
    assert.equal(versions.status, 200, versions.text);
    assert.ok(!versions.text.includes('hook-secret-1') && versions.text.includes('********'));

    const listed = await h.client('guardrailDirectory').listGuardrails({
      organisationId: h.organisationId,
    });
    const mine = listed.guardrails.find((g) => g.id === created.id)!;
    assert.deepEqual(JSON.parse(mine.checksJson)[0].parameters.headers, {
      Authorization: 'Bearer hook-secret-1',
      'X-Team': 'search-team',
    });
  });

  test('an update that sends the mask back keeps the stored value; a new value replaces it; a mask with nothing stored is a 400', async () => {
    const created = await create(guardrail({ checks: [hook({ Authorization: 'Bearer keep-me' })] }));
    const masked = (await get(created.id)).body.checks;
    masked[0].parameters.headers['X-New'] = 'fresh';
    const updated = await put(created.id, { checks: masked });
    assert.equal(updated.status, 200, updated.text);
    const headersSeen = async () => {
      const listed = await h.client('guardrailDirectory').listGuardrails({
        organisationId: h.organisationId,
      });
      return JSON.parse(listed.guardrails.find((g) => g.id === created.id)!.checksJson)[0].parameters.headers;
    };
    assert.deepEqual(await headersSeen(), { Authorization: 'Bearer keep-me', 'X-New': 'fresh' });

    const replaced = await put(created.id, { checks: [hook({ Authorization: 'Bearer replaced' })] });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(await headersSeen(), { Authorization: 'Bearer replaced' });

    const elsewhere = await put(created.id, {
      checks: [hook({ Authorization: '********' }, 'https://other.example.com/verdict')],
    });
    assert.equal(elsewhere.status, 400, elsewhere.text);
    assert.equal(elsewhere.body.error.param, 'checks[0].parameters.headers.Authorization');
    assert.deepEqual(await headersSeen(), { Authorization: 'Bearer replaced' }, 'nothing changed');
    const fresh = await h.request('POST', PATH, {
      key: h.adminKey,
      json: guardrail({ checks: [hook({ Authorization: '********' })] }),
    });
    assert.equal(fresh.status, 400, fresh.text);
  });
});

describe('listing', () => {
  test("an organisation admin key lists all the organisation's, or one workspace's, page by page", async () => {
    const workspace = await createWorkspace(h, 'Guard listing');
    const inWorkspace = [
      await create(guardrail({ workspace_id: workspace.id })),
      await create(guardrail({ workspace_id: workspace.id })),
    ];
    const organisationLevel = await create(guardrail());
    const ids = (list: Array<{ id: string }>) => list.map((g) => g.id);

    const all = ids(await listed());
    for (const created of [...inWorkspace, organisationLevel]) assert.ok(all.includes(created.id));
    assert.deepEqual(ids(await listed(h.adminKey, `&organisation_id=${h.organisationId}`)), all);
    assert.deepEqual(
      ids(await listed(h.adminKey, `&workspace_id=${workspace.slug}`)),
      inWorkspace.map((g) => g.id),
    );

    const page = await h.request('GET', `${PATH}?workspace_id=${workspace.id}&page_size=1&current_page=1`, {
      key: h.adminKey,
    });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.object, 'list');
    assert.equal(page.body.total, 2);
    assert.deepEqual(ids(page.body.data), [inWorkspace[1]!.id]);
    const [summary] = page.body.data;
    assert.equal(summary.slug, inWorkspace[1]!.slug);
    assert.equal(summary.workspace_id, workspace.id);
    assert.equal(summary.organisation_id, h.organisationId);
    assert.equal(summary.status, 'active');
    assert.equal(summary.object, 'guardrail');
    assert.equal(summary.checks, undefined, 'a list shows metadata only');

    for (const query of [`organisation_id=${other.organisationId}`, 'workspace_id=nowhere']) {
      assert.equal((await h.request('GET', `${PATH}?${query}`, { key: h.adminKey })).status, 404, query);
    }
  });
});

describe('tenancy and scopes', () => {
  test("another organisation's keys find nothing, change nothing and cannot define into it", async () => {
    const workspace = await createWorkspace(h, 'Guard tenancy');
    const mine = [await create(guardrail()), await create(guardrail({ workspace_id: workspace.id }))];
    for (const created of mine) {
      for (const ref of [created.id, created.slug]) {
        assert.equal((await get(ref, other.adminKey)).status, 404);
        assert.equal((await put(ref, { name: 'Taken over' }, other.adminKey)).status, 404);
        assert.equal((await h.request('DELETE', `${PATH}/${ref}`, { key: other.adminKey })).status, 404);
        assert.equal(
          (await h.request('GET', `${PATH}/${ref}/versions`, { key: other.adminKey })).status,
          404,
        );
      }
      assert.equal((await get(created.id)).body.name, 'No secrets', 'unchanged');
    }
    assert.ok(!(await listed(other.adminKey)).some((g) => mine.some((m) => m.id === g.id)));
    const intoWorkspace = await h.request('POST', PATH, {
      key: other.adminKey,
      json: guardrail({ workspace_id: workspace.id }),
    });
    assert.equal(intoWorkspace.status, 404, intoWorkspace.text);
    const listWorkspace = await h.request('GET', `${PATH}?workspace_id=${workspace.id}`, {
      key: other.adminKey,
    });
    assert.equal(listWorkspace.status, 404);
  });

  test('a key without the organisation_guardrails scope a route needs is refused with 403', async () => {
    const created = await create(guardrail());
    const unscoped = await adminKeyWith(['workspaces.read']);
    const routes = [
      ['POST', PATH, guardrail()],
      ['GET', PATH, undefined],
      ['GET', `${PATH}/${created.id}`, undefined],
      ['GET', `${PATH}/${created.id}/versions`, undefined],
      ['PUT', `${PATH}/${created.id}`, { name: 'x' }],
      ['DELETE', `${PATH}/${created.id}`, undefined],
    ] as const;
    for (const [method, path, json] of routes) {
      const res = await h.request(method, path, { key: unscoped.key, json });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'missing_scope');
    }
    const reader = await adminKeyWith(['organisation_guardrails.read']);
    assert.equal((await get(created.id, reader.key)).status, 200);
    assert.equal((await put(created.id, { name: 'x' }, reader.key)).status, 403);
    assert.equal((await get(created.id)).body.name, 'No secrets');
    assert.equal((await h.request('GET', PATH)).status, 401);
  });

  test('the guardrail scopes are organisation-level: a workspace key is refused with 403 on every route', async () => {
    const created = await create(guardrail());
    for (const [method, path, json] of [
      ['POST', PATH, guardrail()],
      ['GET', PATH, undefined],
      ['GET', `${PATH}/${created.id}`, undefined],
      ['PUT', `${PATH}/${created.id}`, { name: 'x' }],
      ['DELETE', `${PATH}/${created.id}`, undefined],
    ] as const) {
      const res = await h.request(method, path, { key: h.workspaceKey, json });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'admin_key_required');
    }
  });
});

describe('what other services see', () => {
  test('every write announces a guardrail change keyed by organisation and slug, and is audited', async () => {
    const changes = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter((change) => change.entity === 'guardrail');
    const audits = () =>
      h.bus.log(Topics.audit).map((message) => fromBinary(events.AuditEventSchema, message.value));
    const [changesBefore, auditsBefore] = [changes().length, audits().length];
    const created = await create(guardrail({ workspace_id: h.workspaceId }));
    await put(created.id, { checks: [wordCheck(5)] });
    await h.request('DELETE', `${PATH}/${created.id}`, { key: h.adminKey });
    const announced = changes().slice(changesBefore);
    assert.deepEqual(
      announced.map((change) => change.action),
      [events.ChangeAction.CREATED, events.ChangeAction.UPDATED, events.ChangeAction.DELETED],
    );
    for (const change of announced) {
      assert.equal(change.entityId, created.id);
      assert.equal(change.organisationId, h.organisationId);
      assert.equal(change.workspaceId, h.workspaceId);
      assert.equal(change.cacheKey, `${h.organisationId}:${created.slug}`);
    }
    const audited = audits().slice(auditsBefore);
    assert.deepEqual(
      audited.map((entry) => `${entry.method} ${entry.route}`),
      ['POST /v1/guardrails', 'PUT /v1/guardrails/:id', 'DELETE /v1/guardrails/:id'],
    );
    assert.ok(audited.every((entry) => entry.organisationId === h.organisationId));
  });
});

/**
 * Workspace keys cannot hold the organisation_guardrails scopes, so no HTTP request reaches
 * these rules yet; the service holds them for a caller bound to a workspace all the same.
 */
describe('the service, for a caller bound to a workspace', () => {
  let service: GuardrailService;
  const caller = (workspaceId: string): Principal => ({
    apiKeyId: randomUUID(),
    organisationId: h.organisationId,
    workspaceId,
    workspaceSlug: null,
    kind: 'workspace_service',
    scopes: [],
    expiresAt: null,
    userId: null,
    name: 'workspace caller',
    organisationCreatedAt: null,
  });
  const page = { offset: 0, limit: 1000, page: 0, pageSize: 1000 };
  const definition = {
    name: 'Workspace guard',
    checks: parseGuardrailChecks([regexCheck]),
    actions: parseGuardrailActions({}),
  };

  before(() => {
    const manager = h.db('control-plane').manager;
    const workspaces = new WorkspaceService(
      new IdentityRepository(manager),
      new ConfigRepository(manager),
      new KeySettingsService(new KeySettingsRepository(manager)),
      h.bus,
    );
    service = new GuardrailService(
      new GuardrailRepository(manager),
      workspaces,
      h.bus,
      new SecretBox(SecretBox.generateKey()),
      new SecretReferenceMappings(undefined),
    );
  });

  test("defines in its own workspace, and sees its workspace's and the organisation's, not another workspace's", async () => {
    const elsewhere = await createWorkspace(h, 'Guard elsewhere');
    const me = caller(h.workspaceId);
    const own = await service.create(me, definition);
    assert.equal(own.guardrail.workspaceId, h.workspaceId);
    const organisationLevel = await create(guardrail());
    const foreign = await create(guardrail({ workspace_id: elsewhere.id }));

    assert.equal((await service.get(me, organisationLevel.slug)).id, organisationLevel.id);
    await assert.rejects(service.get(me, foreign.id), { status: 404 });
    const [seen] = await service.list(me, {}, page);
    assert.ok(seen.some((g) => g.id === own.guardrail.id));
    assert.ok(seen.some((g) => g.id === organisationLevel.id));
    assert.ok(!seen.some((g) => g.id === foreign.id));
    assert.ok(seen.every((g) => g.workspaceId === null || g.workspaceId === h.workspaceId));
    const [onlyOwn] = await service.list(me, { workspaceId: h.workspaceId }, page);
    assert.ok(onlyOwn.every((g) => g.workspaceId === h.workspaceId));
    await assert.rejects(service.list(me, { workspaceId: elsewhere.id }, page), { status: 404 });
  });

  test("cannot define, change or archive the organisation's, nor define in another workspace", async () => {
    const elsewhere = await createWorkspace(h, 'Guard elsewhere too');
    const me = caller(h.workspaceId);
    const organisationLevel = await create(guardrail({ name: 'Organisation guard' }));
    await assert.rejects(service.create(me, { ...definition, workspaceId: null }), {
      status: 403,
      param: 'workspace_id',
    });
    await assert.rejects(service.create(me, { ...definition, organisationId: h.organisationId }), {
      status: 403,
      param: 'organisation_id',
    });
    await assert.rejects(service.create(me, { ...definition, workspaceId: elsewhere.id }), { status: 404 });
    await assert.rejects(service.update(me, organisationLevel.id, { name: 'Mine now' }), { status: 403 });
    await assert.rejects(service.archive(me, organisationLevel.id), { status: 403 });
    assert.equal((await get(organisationLevel.id)).body.name, 'Organisation guard');
  });
});
