import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { scopesForKind } from '@switchyard/access';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { EXPORT_FIELDS } from '@switchyard/rules';
import { controlPlane } from '@switchyard/control-plane';
import { keyMaterialOf, IdentityRepository } from '@switchyard/control-plane/testing';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

const path = '/v1/admin/organisation/settings';
let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService], allowInlineConfig: false });
});
after(() => h.close());

/** An organisation created at the given instant, with an admin key. */
async function organisationCreatedAt(iso: string, slug: string): Promise<{ id: string; adminKey: string }> {
  const repo = new IdentityRepository(h.db('control-plane').manager);
  const organisation = await repo.createOrganisation(slug, slug);
  await h
    .db('control-plane')
    .query(`UPDATE control_plane.organisations SET created_at = $2 WHERE id = $1`, [
      organisation.id,
      new Date(iso),
    ]);
  const adminKey = `sy-admin-of-${slug}-0000000000000000`;
  await repo.insertApiKey({
    organisationId: organisation.id,
    workspaceId: null,
    kind: 'organisation_admin',
    name: `${slug} admin`,
    description: null,
    scopes: [...scopesForKind('organisation_admin')],
    userId: null,
    expiresAt: null,
    ...keyMaterialOf(adminKey, 'sy-'),
  });
  return { id: organisation.id, adminKey };
}

/** The block_inline_config part of the settings (the key settings are tested with control-plane). */
const inlineSetting = (body: Record<string, unknown>) => ({
  block_inline_config: body.block_inline_config,
  block_inline_config_source: body.block_inline_config_source,
});

const put = (key: string, json: unknown) => h.request('PUT', path, { key, json });

describe('the default, before the organisation chooses', () => {
  test('on for an organisation created on 2026-06-19 or later', async () => {
    const cutOver = await organisationCreatedAt('2026-06-19T00:00:00Z', 'cut-over-day');
    for (const key of [h.adminKey, cutOver.adminKey]) {
      const res = await h.request('GET', path, { key });
      assert.equal(res.status, 200);
      assert.deepEqual(inlineSetting(res.body), {
        block_inline_config: true,
        block_inline_config_source: 'default',
      });
    }
  });

  test('off for an organisation created before 2026-06-19', async () => {
    const older = await organisationCreatedAt('2026-06-18T23:59:59.999Z', 'day-before');
    const res = await h.request('GET', path, { key: older.adminKey });
    assert.equal(res.status, 200);
    assert.deepEqual(inlineSetting(res.body), {
      block_inline_config: false,
      block_inline_config_source: 'default',
    });
  });
});

describe('choosing', () => {
  test('false, true and null round-trip, with their source', async () => {
    const older = await organisationCreatedAt('2025-01-01T00:00:00Z', 'round-trip');
    const steps: Array<[boolean | null, boolean, string]> = [
      [true, true, 'organisation'],
      [false, false, 'organisation'],
      [null, false, 'default'],
    ];
    for (const [choice, effective, source] of steps) {
      const expected = { block_inline_config: effective, block_inline_config_source: source };
      const written = await put(older.adminKey, { block_inline_config: choice });
      assert.equal(written.status, 200, written.text);
      assert.deepEqual(inlineSetting(written.body), expected, `PUT ${choice}`);
      assert.deepEqual(
        inlineSetting((await h.request('GET', path, { key: older.adminKey })).body),
        expected,
        `GET ${choice}`,
      );
    }
  });

  test('an organisation created after the cut-over may turn it off, and null turns it back on', async () => {
    const off = await put(h.adminKey, { block_inline_config: false });
    assert.deepEqual(inlineSetting(off.body), {
      block_inline_config: false,
      block_inline_config_source: 'organisation',
    });
    const cleared = await put(h.adminKey, { block_inline_config: null });
    assert.deepEqual(inlineSetting(cleared.body), {
      block_inline_config: true,
      block_inline_config_source: 'default',
    });
  });

  test('a body without block_inline_config keeps the choice', async () => {
    await put(h.adminKey, { block_inline_config: false });
    const res = await put(h.adminKey, {});
    assert.equal(res.status, 200);
    assert.deepEqual(inlineSetting(res.body), {
      block_inline_config: false,
      block_inline_config_source: 'organisation',
    });
    await put(h.adminKey, { block_inline_config: null });
  });

  test('one organisation’s choice does not touch another’s', async () => {
    const other = await organisationCreatedAt('2026-07-01T00:00:00Z', 'bystander');
    await put(other.adminKey, { block_inline_config: false });
    const ours = await h.request('GET', path, { key: h.adminKey });
    assert.deepEqual(inlineSetting(ours.body), {
      block_inline_config: true,
      block_inline_config_source: 'default',
    });
  });

  test('is stored with who changed it', async () => {
    const chooser = await organisationCreatedAt('2026-08-01T00:00:00Z', 'stored');
    await put(chooser.adminKey, { block_inline_config: false });
    const [row] = await h
      .db('admin')
      .query(`SELECT settings, updated_by FROM admin.organisation_settings WHERE organisation_id = $1`, [
        chooser.id,
      ]);
    assert.deepEqual(row.settings, { block_inline_config: false });
    const [key] = await h
      .db('control-plane')
      .query(`SELECT id FROM control_plane.api_keys WHERE organisation_id = $1`, [chooser.id]);
    assert.equal(row.updated_by, key.id);
  });

  test('every write announces a change keyed by the organisation', async () => {
    const announced = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter(
          (change) => change.entity === 'organisation_settings' && change.organisationId === h.organisationId,
        );
    const seen = announced().length;
    await put(h.adminKey, { block_inline_config: true });
    await put(h.adminKey, { block_inline_config: null });
    const changes = announced().slice(seen);
    assert.equal(changes.length, 2);
    for (const change of changes) {
      assert.equal(change.cacheKey, h.organisationId);
      assert.equal(change.entityId, h.organisationId);
      assert.equal(change.action, events.ChangeAction.UPDATED);
    }
  });
});

describe('bad input', () => {
  test('an unknown field is a 400 naming it, and changes nothing', async () => {
    const res = await put(h.adminKey, { block_inline_config: false, block_inline_configs: true });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.type, 'invalid_request_error');
    assert.match(res.body.error.message, /block_inline_configs/);
    const shown = await h.request('GET', path, { key: h.adminKey });
    assert.equal(shown.body.block_inline_config_source, 'default');
  });

  test('a value that is not a boolean or null is a 400 naming block_inline_config', async () => {
    for (const value of ['true', 1, 'off', {}, []]) {
      const res = await put(h.adminKey, { block_inline_config: value });
      assert.equal(res.status, 400, JSON.stringify(value));
      assert.equal(res.body.error.param, 'block_inline_config');
    }
  });

  test('a body that is not an object is a 400', async () => {
    for (const body of ['[]', 'true', 'null', '{"block_inline_config":']) {
      const res = await h.request('PUT', path, {
        key: h.adminKey,
        body,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, body);
      assert.ok(res.body.error.message, body);
    }
    assert.equal((await h.request('PUT', path, { key: h.adminKey })).status, 400);
  });
});

describe('who may', () => {
  test('a workspace key gets 403, before its body is read, and changes nothing', async () => {
    const read = await h.request('GET', path, { key: h.workspaceKey });
    assert.equal(read.status, 403);
    assert.deepEqual(Object.keys(read.body), ['error']);
    assert.equal(read.body.error.type, 'permission_error');
    assert.equal(read.body.error.code, 'admin_key_required');

    for (const body of ['{"block_inline_config":false}', '{"nonsense":1}', '{"block_inline_config":']) {
      const written = await h.request('PUT', path, {
        key: h.workspaceKey,
        body,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(written.status, 403, body);
      assert.equal(written.body.error.code, 'admin_key_required');
    }
    const shown = await h.request('GET', path, { key: h.adminKey });
    assert.equal(shown.body.block_inline_config_source, 'default');
  });

  test('no key is a 401', async () => {
    assert.equal((await h.request('GET', path)).status, 401);
    assert.equal((await h.request('PUT', path, { json: { block_inline_config: false } })).status, 401);
  });
});

describe('export_settings.deniedFields', () => {
  const deniedFields = async (key: string) => {
    const res = await h.request('GET', path, { key });
    assert.equal(res.status, 200, res.text);
    return res.body.export_settings;
  };
  const storedSettings = async (organisationId: string) => {
    const [row] = await h
      .db('admin')
      .query(`SELECT settings FROM admin.organisation_settings WHERE organisation_id = $1`, [organisationId]);
    return row?.settings;
  };

  test('is an empty list while the organisation has not chosen', async () => {
    const fresh = await organisationCreatedAt('2026-09-01T00:00:00Z', 'export-fresh');
    assert.deepEqual(await deniedFields(fresh.adminKey), { deniedFields: [] });
  });

  test('is stored as sent, shown by PUT and GET, and announced as a change', async () => {
    const chooser = await organisationCreatedAt('2026-09-02T00:00:00Z', 'export-set');
    const announced = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter(
          (change) => change.entity === 'organisation_settings' && change.organisationId === chooser.id,
        );
    const seen = announced().length;
    const written = await put(chooser.adminKey, {
      export_settings: { deniedFields: ['response', 'cost', 'request'] },
    });
    assert.equal(written.status, 200, written.text);
    assert.deepEqual(written.body.export_settings, { deniedFields: ['response', 'cost', 'request'] });
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: ['response', 'cost', 'request'] });
    assert.deepEqual(await storedSettings(chooser.id), {
      export_settings: { deniedFields: ['response', 'cost', 'request'] },
    });
    assert.equal(announced().length, seen + 1);
    // Another organisation is untouched.
    assert.deepEqual(await deniedFields(h.adminKey), { deniedFields: [] });
  });

  test('a new list replaces the old one, and every exportable field may be denied at once', async () => {
    const chooser = await organisationCreatedAt('2026-09-03T00:00:00Z', 'export-replace');
    await put(chooser.adminKey, { export_settings: { deniedFields: ['metadata'] } });
    const all = [...EXPORT_FIELDS];
    const res = await put(chooser.adminKey, { export_settings: { deniedFields: all } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: all });
    const none = await put(chooser.adminKey, { export_settings: { deniedFields: [] } });
    assert.equal(none.status, 200, none.text);
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: [] });
  });

  test('a body without export_settings keeps the list, and other settings keep theirs', async () => {
    const chooser = await organisationCreatedAt('2026-09-04T00:00:00Z', 'export-keep');
    await put(chooser.adminKey, { export_settings: { deniedFields: ['feedback'] } });
    const other = await put(chooser.adminKey, { block_inline_config: false });
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.body.export_settings, { deniedFields: ['feedback'] });
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: ['feedback'] });
    await put(chooser.adminKey, { export_settings: { deniedFields: ['cost'] } });
    assert.deepEqual(inlineSetting((await h.request('GET', path, { key: chooser.adminKey })).body), {
      block_inline_config: false,
      block_inline_config_source: 'organisation',
    });
  });

  test('null clears the list', async () => {
    const chooser = await organisationCreatedAt('2026-09-05T00:00:00Z', 'export-clear');
    await put(chooser.adminKey, {
      export_settings: { deniedFields: ['request', 'response'] },
      block_inline_config: true,
    });
    const cleared = await put(chooser.adminKey, { export_settings: null });
    assert.equal(cleared.status, 200, cleared.text);
    assert.deepEqual(cleared.body.export_settings, { deniedFields: [] });
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: [] });
    assert.deepEqual(await storedSettings(chooser.id), { block_inline_config: true });
  });

  test('an unknown field is a 400 naming it, and changes nothing', async () => {
    const chooser = await organisationCreatedAt('2026-09-06T00:00:00Z', 'export-unknown');
    await put(chooser.adminKey, { export_settings: { deniedFields: ['cost'] } });
    for (const field of ['foo', 'COST', 'request.body', '']) {
      const res = await put(chooser.adminKey, { export_settings: { deniedFields: ['request', field] } });
      assert.equal(res.status, 400, field);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, 'export_settings.deniedFields[1]');
      assert.ok(
        res.body.error.message.includes(`'${field}' is not an exportable field`),
        res.body.error.message,
      );
    }
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: ['cost'] });
  });

  test('a field listed twice is a 400 naming it, and changes nothing', async () => {
    const chooser = await organisationCreatedAt('2026-09-07T00:00:00Z', 'export-twice');
    await put(chooser.adminKey, { export_settings: { deniedFields: ['cost'] } });
    const res = await put(chooser.adminKey, {
      export_settings: { deniedFields: ['request', 'response', 'request'] },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'export_settings.deniedFields[2]');
    assert.match(res.body.error.message, /'request' is listed twice/);
    assert.deepEqual(await deniedFields(chooser.adminKey), { deniedFields: ['cost'] });
  });

  test('a value of the wrong shape is a 400 naming where it is', async () => {
    const cases: Array<[unknown, string]> = [
      [{ deniedFields: 'cost' }, 'export_settings.deniedFields'],
      [{ deniedFields: { cost: true } }, 'export_settings.deniedFields'],
      [{ deniedFields: null }, 'export_settings.deniedFields'],
      [{ deniedFields: [1] }, 'export_settings.deniedFields[0]'],
      [{ deniedFields: [['cost']] }, 'export_settings.deniedFields[0]'],
      [{}, 'export_settings.deniedFields'],
      [{ deniedFields: [], denied_fields: ['cost'] }, 'export_settings.denied_fields'],
      [['cost'], 'export_settings'],
      ['cost', 'export_settings'],
      [true, 'export_settings'],
    ];
    for (const [value, param] of cases) {
      const res = await put(h.adminKey, { export_settings: value });
      assert.equal(res.status, 400, JSON.stringify(value));
      assert.equal(res.body.error.type, 'invalid_request_error', JSON.stringify(value));
      assert.equal(res.body.error.param, param, JSON.stringify(value));
    }
    assert.deepEqual(await deniedFields(h.adminKey), { deniedFields: [] });
  });
});
