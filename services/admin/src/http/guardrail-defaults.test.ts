import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fromBinary } from '@bufbuild/protobuf';
import type { Scope } from '@switchyard/access';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { controlPlane } from '@switchyard/control-plane';
import {
  IdentityRepository,
  keyMaterialOf,
  seedOrganisation,
  type SeededOrganisation,
} from '@switchyard/control-plane/testing';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

const DEFAULTS = '/v1/admin/organisation/defaults';
const EXCLUSIONS = {
  input: '/v1/workspace-exclusions/input-guardrails',
  output: '/v1/workspace-exclusions/output-guardrails',
};

let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
  other = await seedOrganisation(h.db('control-plane').manager, 'defaults-bystander');
});
after(() => h.close());

interface Created {
  id: string;
  slug: string;
}

/** A guardrail of the organisation the key belongs to (of a workspace when one is named). */
async function guardrail(key = h.adminKey, workspaceId?: string): Promise<Created> {
  const created = await h.request('POST', '/v1/guardrails', {
    key,
    json: {
      name: `g ${randomUUID().slice(0, 8)}`,
      checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
      actions: { deny: true },
      ...(workspaceId ? { workspace_id: workspaceId } : {}),
    },
  });
  assert.equal(created.status, 200, created.text);
  return { id: created.body.id, slug: created.body.slug };
}

async function workspace(name = `w ${randomUUID().slice(0, 8)}`): Promise<{ id: string; slug: string }> {
  const created = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name } });
  assert.equal(created.status, 200, created.text);
  return { id: created.body.id, slug: created.body.slug };
}

const putDefaults = (json: unknown, key = h.adminKey) => h.request('PUT', DEFAULTS, { key, json });
const getDefaults = (key = h.adminKey) => h.request('GET', DEFAULTS, { key });
const putExclusions = (phase: 'input' | 'output', json: unknown, key = h.adminKey) =>
  h.request('PUT', EXCLUSIONS[phase], { key, json });
const excluded = async (phase: 'input' | 'output', key = h.adminKey): Promise<string[]> => {
  const res = await h.request('GET', EXCLUSIONS[phase], { key });
  assert.equal(res.status, 200, res.text);
  return res.body.workspace_ids;
};

/** An organisation admin key of our organisation holding only these scopes. */
async function keyWithScopes(scopes: Scope[]): Promise<string> {
  const key = `sy-narrow-${randomUUID().replaceAll('-', '')}`;
  await new IdentityRepository(h.db('control-plane').manager).insertApiKey({
    organisationId: h.organisationId,
    workspaceId: null,
    kind: 'organisation_admin',
    name: 'narrow',
    description: null,
    scopes,
    userId: null,
    expiresAt: null,
    ...keyMaterialOf(key, 'sy-'),
  });
  return key;
}

describe('default guardrails', () => {
  test('none before the organisation chooses', async () => {
    const fresh = await seedOrganisation(h.db('control-plane').manager, 'defaults-fresh');
    const res = await getDefaults(fresh.adminKey);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { input_guardrails: [], output_guardrails: [] });
  });

  test('named by id or slug, answered and read back with both, in the order given, stored as ids', async () => {
    const [a, b, c] = [await guardrail(), await guardrail(), await guardrail()];
    const written = await putDefaults({ input_guardrails: [a.slug, b.id], output_guardrails: [c.id] });
    assert.equal(written.status, 200, written.text);
    const expected = { input_guardrails: [a, b], output_guardrails: [c] };
    assert.deepEqual(written.body, expected);
    assert.deepEqual((await getDefaults()).body, expected);
    const [row] = await h
      .db('admin')
      .query(
        `SELECT input_guardrail_ids, output_guardrail_ids FROM admin.organisation_guardrail_defaults WHERE organisation_id = $1`,
        [h.organisationId],
      );
    assert.deepEqual(row.input_guardrail_ids, [a.id, b.id]);
    assert.deepEqual(row.output_guardrail_ids, [c.id]);
  });

  test('a phase left out keeps its defaults, an empty list drops them, a guardrail named twice is kept once', async () => {
    const [a, b] = [await guardrail(), await guardrail()];
    await putDefaults({ input_guardrails: [a.id], output_guardrails: [b.id] });
    const kept = await putDefaults({ output_guardrails: [b.slug, a.id, b.id] });
    assert.deepEqual(kept.body, { input_guardrails: [a], output_guardrails: [b, a] });
    const dropped = await putDefaults({ input_guardrails: [] });
    assert.deepEqual(dropped.body, { input_guardrails: [], output_guardrails: [b, a] });
    assert.deepEqual((await getDefaults()).body, dropped.body);
    await putDefaults({ output_guardrails: [] });
  });

  test('an unknown guardrail is a 422 naming its place, and nothing changes', async () => {
    const a = await guardrail();
    await putDefaults({ input_guardrails: [a.id], output_guardrails: [] });
    for (const [body, param] of [
      [{ input_guardrails: [a.id, 'guard_nothing-0000'] }, 'input_guardrails[1]'],
      [{ input_guardrails: [a.id], output_guardrails: [randomUUID()] }, 'output_guardrails[0]'],
    ] as const) {
      const res = await putDefaults(body);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.error.param, param);
      assert.equal(res.body.error.code, 'guardrail_not_found');
    }
    assert.deepEqual((await getDefaults()).body, { input_guardrails: [a], output_guardrails: [] });
  });

  test("another organisation's guardrail and a workspace's guardrail are refused", async () => {
    const theirs = await guardrail(other.adminKey);
    const workspaceLevel = await guardrail(h.adminKey, h.workspaceId);
    for (const reference of [theirs.id, theirs.slug, workspaceLevel.id, workspaceLevel.slug]) {
      const res = await putDefaults({ output_guardrails: [reference] });
      assert.equal(res.status, 422, reference);
      assert.equal(res.body.error.param, 'output_guardrails[0]');
    }
  });

  test('an archived guardrail is refused, and one archived after it was chosen is no longer shown', async () => {
    const [kept, archived] = [await guardrail(), await guardrail()];
    await putDefaults({ input_guardrails: [kept.id, archived.id], output_guardrails: [] });
    const deleted = await h.request('DELETE', `/v1/guardrails/${archived.id}`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual((await getDefaults()).body, { input_guardrails: [kept], output_guardrails: [] });
    const res = await putDefaults({ input_guardrails: [archived.slug] });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.param, 'input_guardrails[0]');
  });

  test('a bad body is a 400 naming the field', async () => {
    for (const [body, param] of [
      [{ input_guardrail: [] }, undefined],
      [{ input_guardrails: 'guard_x' }, 'input_guardrails'],
      [{ output_guardrails: [1] }, 'output_guardrails.0'],
      [{ output_guardrails: [''] }, 'output_guardrails.0'],
    ] as const) {
      const res = await putDefaults(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.type, 'invalid_request_error');
      if (param) assert.match(String(res.body.error.param), new RegExp(param.replace('.', '[.\\[]')));
    }
    const notObject = await h.request('PUT', DEFAULTS, {
      key: h.adminKey,
      body: '[]',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notObject.status, 400);
  });
});

describe('workspace exclusions', () => {
  test('none at first; a PUT adds to the list, each workspace once, those there keeping their place', async () => {
    const [w1, w2, w3] = [await workspace(), await workspace(), await workspace()];
    assert.deepEqual(await excluded('input'), []);
    const first = await putExclusions('input', { workspace_ids: [w1.id, w2.id] });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body, { workspace_ids: [w1.id, w2.id] });
    const merged = await putExclusions('input', { workspace_ids: [w3.id, w1.id, w3.id] });
    assert.deepEqual(merged.body, { workspace_ids: [w1.id, w2.id, w3.id] });
    assert.deepEqual(await excluded('input'), [w1.id, w2.id, w3.id]);
    assert.deepEqual(await excluded('output'), [], 'the other phase is its own list');

    const replaced = await putExclusions('input', { workspace_ids: [w2.id], override_existing: true });
    assert.deepEqual(replaced.body, { workspace_ids: [w2.id] });
    const cleared = await putExclusions('input', { workspace_ids: [], override_existing: true });
    assert.deepEqual(cleared.body, { workspace_ids: [] });
    assert.deepEqual(await excluded('input'), []);
  });

  test('a workspace named by slug is stored by id', async () => {
    const w = await workspace();
    const res = await putExclusions('output', { workspace_ids: [w.slug], override_existing: true });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { workspace_ids: [w.id] });
    await putExclusions('output', { workspace_ids: [], override_existing: true });
  });

  test("another organisation's workspace or none at all is a 422 naming it, and nothing changes", async () => {
    await putExclusions('output', { workspace_ids: [h.workspaceId], override_existing: true });
    for (const stranger of [other.workspaceId, randomUUID(), 'no-such-workspace']) {
      const res = await putExclusions('output', {
        workspace_ids: [h.workspaceId, stranger],
        override_existing: true,
      });
      assert.equal(res.status, 422, stranger);
      assert.equal(res.body.error.param, 'workspace_ids[1]');
      assert.equal(res.body.error.code, 'workspace_not_found');
    }
    assert.deepEqual(await excluded('output'), [h.workspaceId]);
    assert.deepEqual(
      await excluded('output', other.adminKey),
      [],
      "the other organisation's list is its own",
    );
    await putExclusions('output', { workspace_ids: [], override_existing: true });
  });

  test('concurrent additions all survive', async () => {
    const workspaces = [];
    for (let i = 0; i < 12; i++) workspaces.push(await workspace());
    await putExclusions('output', { workspace_ids: [], override_existing: true });
    // The admin database is held while the requests arrive, so that all of them read before any writes.
    const holder = h.db('admin').createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`LOCK TABLE admin.organisation_guardrail_defaults IN EXCLUSIVE MODE`);
    const sent = Promise.all(workspaces.map((w) => putExclusions('output', { workspace_ids: [w.id] })));
    await sleep(300);
    await holder.commitTransaction();
    await holder.release();
    for (const res of await sent) assert.equal(res.status, 200, res.text);
    assert.deepEqual([...(await excluded('output'))].sort(), workspaces.map((w) => w.id).sort());
    await putExclusions('output', { workspace_ids: [], override_existing: true });
  });

  test('a bad body is a 400', async () => {
    for (const body of [
      {},
      { workspace_ids: 'w' },
      { workspace_ids: [1] },
      { workspace_ids: [], override_existing: 'yes' },
      { workspace_ids: [], extra: 1 },
    ]) {
      const res = await putExclusions('input', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.type, 'invalid_request_error');
    }
  });
});

describe('every write', () => {
  test('announces an organisation_settings change keyed by the organisation, and is audited', async () => {
    const a = await guardrail();
    const changes = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter(
          (change) => change.entity === 'organisation_settings' && change.organisationId === h.organisationId,
        );
    const audits = () =>
      h.bus
        .log(Topics.audit)
        .map((message) => fromBinary(events.AuditEventSchema, message.value))
        .filter((audit) => audit.organisationId === h.organisationId && audit.service === 'admin');
    const [changesBefore, auditsBefore] = [changes().length, audits().length];
    await putDefaults({ input_guardrails: [a.id] });
    await putExclusions('input', { workspace_ids: [h.workspaceId] });
    await putExclusions('output', { workspace_ids: [], override_existing: true });
    const announced = changes().slice(changesBefore);
    assert.equal(announced.length, 3);
    for (const change of announced) {
      assert.equal(change.cacheKey, h.organisationId);
      assert.equal(change.action, events.ChangeAction.UPDATED);
    }
    const audited = audits().slice(auditsBefore);
    assert.deepEqual(
      audited.map((audit) => [audit.method, audit.path, audit.scope, audit.status]),
      [
        ['PUT', DEFAULTS, 'organisation_settings.update', 200],
        ['PUT', EXCLUSIONS.input, 'organisation_exclusions.update', 200],
        ['PUT', EXCLUSIONS.output, 'organisation_exclusions.update', 200],
      ],
    );
    await putDefaults({ input_guardrails: [] });
    await putExclusions('input', { workspace_ids: [], override_existing: true });
  });

  test('a refused write announces nothing', async () => {
    const seen = h.bus.log(Topics.changes).length;
    assert.equal((await putDefaults({ input_guardrails: ['guard_nothing-0000'] })).status, 422);
    assert.equal((await putExclusions('input', { workspace_ids: [randomUUID()] })).status, 422);
    assert.equal(h.bus.log(Topics.changes).length, seen);
  });
});

describe('who may', () => {
  test('the defaults need the settings scopes, the exclusions the exclusions scopes', async () => {
    const settingsOnly = await keyWithScopes(['organisation_settings.read', 'organisation_settings.update']);
    const exclusionsOnly = await keyWithScopes([
      'organisation_exclusions.list',
      'organisation_exclusions.update',
    ]);
    const readOnly = await keyWithScopes(['organisation_settings.read', 'organisation_exclusions.list']);
    const cases: Array<[string, string, string, unknown, number]> = [
      [settingsOnly, 'GET', DEFAULTS, undefined, 200],
      [settingsOnly, 'PUT', DEFAULTS, {}, 200],
      [settingsOnly, 'GET', EXCLUSIONS.input, undefined, 403],
      [settingsOnly, 'PUT', EXCLUSIONS.output, { workspace_ids: [] }, 403],
      [exclusionsOnly, 'GET', EXCLUSIONS.input, undefined, 200],
      [exclusionsOnly, 'PUT', EXCLUSIONS.output, { workspace_ids: [] }, 200],
      [exclusionsOnly, 'GET', DEFAULTS, undefined, 403],
      [exclusionsOnly, 'PUT', DEFAULTS, {}, 403],
      [readOnly, 'GET', DEFAULTS, undefined, 200],
      [readOnly, 'GET', EXCLUSIONS.output, undefined, 200],
      [readOnly, 'PUT', DEFAULTS, {}, 403],
      [readOnly, 'PUT', EXCLUSIONS.input, { workspace_ids: [] }, 403],
    ];
    for (const [key, method, path, json, status] of cases) {
      const res = await h.request(method, path, { key, json });
      assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      if (status === 403) assert.equal(res.body.error.code, 'missing_scope');
    }
  });

  test('a workspace key gets 403 on every route, and no key 401', async () => {
    for (const path of [DEFAULTS, EXCLUSIONS.input, EXCLUSIONS.output]) {
      const read = await h.request('GET', path, { key: h.workspaceKey });
      assert.equal(read.status, 403, path);
      assert.equal(read.body.error.code, 'admin_key_required');
      const write = await h.request('PUT', path, { key: h.workspaceKey, json: { workspace_ids: [] } });
      assert.equal(write.status, 403, path);
      assert.equal((await h.request('GET', path)).status, 401);
      assert.equal((await h.request('PUT', path, { json: {} })).status, 401);
    }
  });

  test("one organisation's defaults and exclusions are its own", async () => {
    const a = await guardrail();
    await putDefaults({ input_guardrails: [a.id] });
    await putExclusions('input', { workspace_ids: [h.workspaceId] });
    assert.deepEqual((await getDefaults(other.adminKey)).body, {
      input_guardrails: [],
      output_guardrails: [],
    });
    assert.deepEqual(await excluded('input', other.adminKey), []);
    const theirs = await putExclusions('input', { workspace_ids: [other.workspaceId] }, other.adminKey);
    assert.deepEqual(theirs.body, { workspace_ids: [other.workspaceId] });
    assert.deepEqual(await excluded('input'), [h.workspaceId]);
    await putDefaults({ input_guardrails: [] });
    await putExclusions('input', { workspace_ids: [], override_existing: true });
  });
});
