// Feedback against real PostgreSQL, with real concurrency: updates of one feedback each number
// their own version; a list is stored all or none; and the migration that grants feedback.write.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { DataSource } from 'typeorm';
import { uniqueSuffix } from '@switchyard/core/testing';
import { keyMaterialOf } from '../domain/api-keys.ts';
import { startContractDatabase, type ContractDatabase } from '../testing/contract-database.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { FeedbackRepository, type NewFeedback } from './feedback.repository.ts';
import { IdentityRepository } from './identity.repository.ts';
import { Feedback1763700000026 } from './migrations/1763700000026-feedback.ts';

const CONCURRENCY = 16;

let db: ContractDatabase | undefined;
let ds: DataSource;
let seeded: SeededOrganisation;

before(async () => {
  db = await startContractDatabase('feedback-contract', CONCURRENCY + 2);
  ds = db.ds;
  seeded = await seedOrganisation(ds.manager, 'feedback-contract');
});

after(() => db?.close());

const entry = (overrides: Partial<NewFeedback> = {}): NewFeedback => ({
  organisationId: seeded.organisationId,
  workspaceId: seeded.workspaceId,
  traceId: `trace-${randomUUID()}`,
  value: 1,
  weight: 1,
  metadata: {},
  createdBy: randomUUID(),
  ...overrides,
});

describe('writing feedback', () => {
  test('simultaneous updates of one feedback each get a version of their own; the last is the newest', async () => {
    const repo = new FeedbackRepository(ds.manager);
    const [created] = await repo.insertAll([entry()]);
    const scope = { organisationId: seeded.organisationId, workspaceId: seeded.workspaceId };
    const results = await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, i) => repo.update(scope, created!.id, { value: i % 10 })),
    );
    assert.deepEqual(
      results.map((result) => result!.version).sort((a, b) => a - b),
      Array.from({ length: CONCURRENCY }, (_, i) => i + 2),
    );
    const newest = results.find((result) => result!.version === CONCURRENCY + 1)!;
    const [stored] = (await ds.query(`SELECT value, version FROM control_plane.feedback WHERE id = $1`, [
      created!.id,
    ])) as [{ value: number; version: number }];
    assert.deepEqual(stored, { value: newest.value, version: CONCURRENCY + 1 });
    for (const result of results) assert.ok(result!.updatedAt.getTime() >= created!.updatedAt.getTime());
  });

  test('a list is stored all or none, and answered in the order given', async () => {
    const repo = new FeedbackRepository(ds.manager);
    const traces = Array.from({ length: 5 }, () => `trace-${randomUUID()}`);
    const written = await repo.insertAll(traces.map((traceId, value) => entry({ traceId, value })));
    assert.deepEqual(
      written.map((f) => [f.traceId, f.value, f.version]),
      traces.map((traceId, value) => [traceId, value, 1]),
    );
    const before = (await ds.query(`SELECT count(*)::int AS n FROM control_plane.feedback`)) as [
      { n: number },
    ];
    await assert.rejects(repo.insertAll([entry(), entry({ value: 11 }), entry()]), 'the database refuses 11');
    const after = (await ds.query(`SELECT count(*)::int AS n FROM control_plane.feedback`)) as [
      { n: number },
    ];
    assert.equal(after[0].n, before[0].n);
  });
});

describe('granting feedback.write to existing keys', () => {
  test('organisation admin keys that read settings, and other keys that call models or read logs', async () => {
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
        ...keyMaterialOf(`sy-feedback-scopes-${name}-${uniqueSuffix()}`, 'sy-'),
      });
    const keys = {
      admin: await insert('admin', 'organisation_admin', ['organisation_settings.read', 'workspaces.read']),
      narrowAdmin: await insert('narrow-admin', 'organisation_admin', ['workspaces.read']),
      caller: await insert('caller', 'workspace_service', ['completions.write']),
      reader: await insert('reader', 'workspace_user', ['logs.view', 'logs.list']),
      configs: await insert('configs', 'workspace_service', ['configs.read', 'configs.create']),
    };

    // Down takes the scope from every key (and drops the table); up gives it back as the migration does.
    const runner = ds.createQueryRunner();
    try {
      const migration = new Feedback1763700000026();
      await migration.down(runner);
      await migration.up(runner);
    } finally {
      await runner.release();
    }
    const holds = async (id: string) =>
      ((await repo.findApiKey(seeded.organisationId, id))!.scopes as string[]).filter(
        (s) => s === 'feedback.write',
      ).length;
    assert.equal(await holds(keys.admin.id), 1);
    assert.equal(await holds(keys.narrowAdmin.id), 0);
    assert.equal(await holds(keys.caller.id), 1);
    assert.equal(await holds(keys.reader.id), 1);
    assert.equal(await holds(keys.configs.id), 0);
  });
});
