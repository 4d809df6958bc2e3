import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger, sha256Hex } from '@switchyard/core';
import { createDataSource } from '@switchyard/adapters';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane, type ControlPlane } from '../service.ts';
import { SCHEMA, entities } from '../store/entities.ts';
import { IdentityRepository } from '../store/identity.repository.ts';
import { Init1763700000000 } from '../store/migrations/1763700000000-init.ts';
import { BootstrapService } from './bootstrap.service.ts';

const logger = createLogger('test');
logger.silent = true;

describe('bootstrap on an empty database', () => {
  let h: ServiceHarness;
  const replicas: Array<ReturnType<typeof createDataSource>> = [];

  before(async () => {
    h = await startServiceHarness({ services: [controlPlane], bootstrap: false });
  });
  after(async () => {
    await Promise.all(replicas.map((db) => db.destroy()));
    await h.close();
  });

  test('creates exactly one organisation even when five replicas bootstrap at the same time', async () => {
    // Five independent connection pools, as five control-plane replicas would have.
    for (let i = 0; i < 5; i++) {
      const db = createDataSource({
        ...h.postgres,
        poolSize: 2,
        logger,
        schema: SCHEMA,
        entities,
        migrations: [Init1763700000000],
      });
      await db.initialize();
      replicas.push(db);
    }
    const results = await Promise.all(
      replicas.map((db) =>
        new BootstrapService(new IdentityRepository(db.manager), logger, 'sy-').bootstrap({
          withWorkspaceKey: true,
        }),
      ),
    );

    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.organisation.id)).size, 1);
    const db = h.db('control-plane');
    const [organisations] = await db.query(`SELECT count(*)::int AS n FROM control_plane.organisations`);
    const [workspaces] = await db.query(`SELECT count(*)::int AS n FROM control_plane.workspaces`);
    const keys = await db.query(`SELECT kind FROM control_plane.api_keys ORDER BY kind`);
    assert.equal(organisations.n, 1);
    assert.equal(workspaces.n, 1);
    assert.deepEqual(
      keys.map((k: { kind: string }) => k.kind),
      ['organisation_admin', 'workspace_service'],
    );

    const created = results.find((r) => r.created)!;
    const admin = await h.request('GET', '/v2/workspaces', { key: created.adminKey });
    assert.equal(admin.status, 200);
    assert.deepEqual(
      admin.body.data.map((w: { id: string }) => w.id),
      [created.workspace!.id],
    );
    const workspace = await h.request('GET', `/v2/workspaces/${created.workspace!.id}`, {
      key: created.workspaceKey,
    });
    assert.equal(workspace.status, 200);
  });

  test('a later bootstrap returns the existing organisation and hands out no keys', async () => {
    const again = await h.instance<ControlPlane>('control-plane').bootstrap({
      withWorkspaceKey: true,
    });
    assert.equal(again.created, false);
    assert.equal(again.adminKey, undefined);
    assert.equal(again.workspaceKey, undefined);
    const [keys] = await h.db('control-plane').query(`SELECT count(*)::int AS n FROM control_plane.api_keys`);
    assert.equal(keys.n, 2);
  });
});

describe('bootstrap with an admin key from the options', () => {
  const adminKey = 'sy-operator-chosen-admin-key-0123456789';
  let h: ServiceHarness;

  before(async () => {
    h = await startServiceHarness({ services: [controlPlane], adminKey });
  });
  after(() => h.close());

  test('stores that key as the organisation admin key, by hash only', async () => {
    const listed = await h.request('GET', '/v2/workspaces', { key: adminKey });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.total, 1);

    const created = await h.request('POST', '/v2/workspaces', { key: adminKey, json: { name: 'Research' } });
    assert.equal(created.status, 200);

    const rows = await h
      .db('control-plane')
      .query(`SELECT * FROM control_plane.api_keys WHERE kind = 'organisation_admin'`);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].key_hash, sha256Hex(adminKey));
    assert.ok(!JSON.stringify(rows[0]).includes(adminKey));
  });

  test('any other key is refused', async () => {
    const refused = await h.request('GET', '/v2/workspaces', { key: `${adminKey}x` });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.type, 'authentication_error');
  });
});
