// Policies against real PostgreSQL, with real concurrency: updates of one policy apply one
// after the other, each to the other's result; and the migration that grants the policy scopes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DataSource } from 'typeorm';
import { uniqueSuffix } from '@switchyard/core/testing';
import { keyMaterialOf } from '../domain/api-keys.ts';
import { startContractDatabase, type ContractDatabase } from '../testing/contract-database.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { IdentityRepository } from './identity.repository.ts';
import { PolicyScopes1763700000023 } from './migrations/1763700000023-policy-scopes.ts';
import { PolicyRepository } from './policy.repository.ts';

const CONCURRENCY = 16;

let db: ContractDatabase | undefined;
let ds: DataSource;
let seeded: SeededOrganisation;

before(async () => {
  db = await startContractDatabase('policy-contract', CONCURRENCY + 2);
  ds = db.ds;
  seeded = await seedOrganisation(ds.manager, 'policy-contract');
});

after(() => db?.close());

const newRateLimit = () => ({
  organisationId: seeded.organisationId,
  workspaceId: seeded.workspaceId,
  name: 'contract',
  description: null,
  conditions: [{ key: 'model', value: '*', excludes: false }],
  groupBy: [{ key: 'api_key' }],
  target: 'llm' as const,
  createdBy: seeded.organisationId,
  type: 'requests' as const,
  unit: 'rpm' as const,
  value: 1,
});

describe('concurrent writes', () => {
  test('simultaneous updates each see the one before: none is lost', async () => {
    const repo = new PolicyRepository(ds.manager);
    const created = await repo.insert('rate_limit', newRateLimit());
    const results = await Promise.all(
      Array.from({ length: CONCURRENCY }, () =>
        repo.update('rate_limit', created.id, (current) => ({ value: current.value + 1 })),
      ),
    );
    assert.ok(results.every((result) => result !== null));
    const stored = await repo.find('rate_limit', seeded.organisationId, created.id);
    assert.equal(stored!.value, 1 + CONCURRENCY);
    assert.deepEqual(
      results.map((result) => result!.value).sort((a, b) => a - b),
      Array.from({ length: CONCURRENCY }, (_, i) => i + 2),
    );
  });

  test('an update racing an archive either applies before it or finds nothing', async () => {
    const repo = new PolicyRepository(ds.manager);
    const created = await repo.insert('rate_limit', newRateLimit());
    const results = await Promise.all([
      repo.update('rate_limit', created.id, () => ({ status: 'archived' as const })),
      ...Array.from({ length: CONCURRENCY - 1 }, () =>
        repo.update('rate_limit', created.id, (current) => ({ value: current.value + 1 })),
      ),
    ]);
    const stored = await repo.find('rate_limit', seeded.organisationId, created.id);
    assert.equal(stored!.status, 'archived');
    const applied = results.slice(1).filter((result) => result !== null).length;
    assert.equal(stored!.value, 1 + applied);
  });

  test('the database refuses what the API refuses: an alert threshold at the limit, both kinds of period', async () => {
    for (const [threshold, days, reset] of [
      [10, null, null],
      [null, 7, 'weekly'],
    ] as const) {
      await assert.rejects(
        ds.query(
          `INSERT INTO control_plane.usage_limit_policies (id, organisation_id, conditions, group_by, target, status,
             created_by, type, credit_limit, alert_threshold, periodic_reset, periodic_reset_days, next_usage_reset_at)
           VALUES (gen_random_uuid(), $1, '[{"key":"model","value":"*"}]', '[{"key":"api_key"}]', 'llm', 'active',
             $1, 'cost', 10, $2, $3, $4, now())`,
          [seeded.organisationId, threshold, reset, days],
        ),
      );
    }
  });
});

describe('granting the policy scopes to existing keys', () => {
  test('organisation admin keys that read settings, and other keys as far as they hold configs scopes', async () => {
    const repo = new IdentityRepository(ds.manager);
    const insert = async (
      name: string,
      kind: 'organisation_admin' | 'workspace_service' | 'workspace_user',
      scopes: string[],
    ) =>
      repo.insertApiKey({
        organisationId: seeded.organisationId,
        workspaceId: kind === 'organisation_admin' ? null : seeded.workspaceId,
        description: null,
        userId: null,
        expiresAt: null,
        kind,
        scopes,
        name,
        ...keyMaterialOf(`sy-policy-scopes-${name}-${uniqueSuffix()}`, 'sy-'),
      });
    const admin = await insert('admin', 'organisation_admin', [
      'organisation_settings.read',
      'workspaces.read',
    ]);
    const narrowAdmin = await insert('narrow-admin', 'organisation_admin', ['workspaces.read']);
    const manager = await insert('manager', 'workspace_service', [
      'configs.create',
      'configs.read',
      'configs.list',
      'configs.update',
      'configs.delete',
    ]);
    const reader = await insert('reader', 'workspace_user', [
      'completions.write',
      'configs.read',
      'configs.list',
    ]);
    const dataOnly = await insert('data', 'workspace_service', ['completions.write']);
    const already = await insert('already', 'workspace_service', ['configs.read', 'rate_limits.read']);

    const runner = ds.createQueryRunner();
    try {
      await new PolicyScopes1763700000023().up(runner);
    } finally {
      await runner.release();
    }
    const scopesOf = async (id: string) =>
      ((await repo.findApiKey(seeded.organisationId, id))!.scopes as string[]).filter((s) =>
        /^(rate|usage)_limits\./.test(s),
      );
    const all = ['rate_limits', 'usage_limits'].flatMap((r) =>
      ['create', 'read', 'list', 'update', 'delete'].map((a) => `${r}.${a}`),
    );
    assert.deepEqual((await scopesOf(admin.id)).sort(), [...all].sort());
    assert.deepEqual(await scopesOf(narrowAdmin.id), []);
    assert.deepEqual((await scopesOf(manager.id)).sort(), [...all].sort());
    assert.deepEqual((await scopesOf(reader.id)).sort(), [
      'rate_limits.list',
      'rate_limits.read',
      'usage_limits.list',
      'usage_limits.read',
    ]);
    assert.deepEqual(await scopesOf(dataOnly.id), []);
    assert.deepEqual((await scopesOf(already.id)).sort(), ['rate_limits.read', 'usage_limits.read']);
  });
});
