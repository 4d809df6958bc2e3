// Guardrails against real PostgreSQL, with real concurrency: updates of one guardrail number
// their versions one after the other, none lost; and the table refuses what the API refuses.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DataSource } from 'typeorm';
import { uniqueSuffix } from '@switchyard/core/testing';
import { parseGuardrailActions, parseGuardrailChecks } from '@switchyard/guardrails';
import { startContractDatabase, type ContractDatabase } from '../testing/contract-database.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { GuardrailRepository } from './guardrail.repository.ts';

const CONCURRENCY = 16;

let db: ContractDatabase | undefined;
let ds: DataSource;
let seeded: SeededOrganisation;

before(async () => {
  db = await startContractDatabase('guardrail-contract', CONCURRENCY + 2);
  ds = db.ds;
  seeded = await seedOrganisation(ds.manager, 'guardrail-contract');
});

after(() => db?.close());

const wordCount = (maxWords: number) =>
  parseGuardrailChecks([{ id: 'default.wordCount', parameters: { minWords: 1, maxWords } }]);

const newGuardrail = (slug = `guard_contract-${uniqueSuffix()}`) => ({
  organisationId: seeded.organisationId,
  workspaceId: seeded.workspaceId,
  name: 'contract',
  slug,
  checks: wordCount(1),
  actions: parseGuardrailActions({ deny: true }),
  actorId: seeded.organisationId,
});

describe('concurrent writes', () => {
  test('simultaneous changes of the checks each write the next version: none is lost or numbered twice', async () => {
    const repo = new GuardrailRepository(ds.manager);
    const created = (await repo.insert(newGuardrail()))!;
    const results = await Promise.all(
      Array.from({ length: CONCURRENCY }, (_, i) =>
        repo.update(created.guardrail.id, { checks: wordCount(i + 2) }, seeded.organisationId),
      ),
    );
    assert.ok(results.every((result) => result?.version));
    assert.deepEqual(
      results.map((result) => result!.version!.version).sort((a, b) => a - b),
      Array.from({ length: CONCURRENCY }, (_, i) => i + 2),
    );
    const [versions, total] = await repo.listVersions(created.guardrail.id, { offset: 0, limit: 100 });
    assert.equal(total, CONCURRENCY + 1);
    const stored = await repo.find(seeded.organisationId, created.guardrail.id);
    assert.equal(stored!.currentVersionId, versions[0]!.id, 'the guardrail stands at its newest version');
    assert.deepEqual(stored!.checks, versions[0]!.checks);
  });

  test('a change racing an archive either applies before it or finds nothing', async () => {
    const repo = new GuardrailRepository(ds.manager);
    const created = (await repo.insert(newGuardrail()))!;
    const results = await Promise.all([
      repo.update(created.guardrail.id, { status: 'archived' }, seeded.organisationId),
      ...Array.from({ length: CONCURRENCY - 1 }, (_, i) =>
        repo.update(created.guardrail.id, { checks: wordCount(i + 2) }, seeded.organisationId),
      ),
    ]);
    const stored = await repo.find(seeded.organisationId, created.guardrail.id);
    assert.equal(stored!.status, 'archived');
    const applied = results.slice(1).filter((result) => result !== null).length;
    const [, total] = await repo.listVersions(created.guardrail.id, { offset: 0, limit: 100 });
    assert.equal(total, 1 + applied);
  });
});

describe('the table', () => {
  test('a slug is taken once per organisation, also once archived; another organisation may use it', async () => {
    const repo = new GuardrailRepository(ds.manager);
    const slug = `guard_taken-${uniqueSuffix()}`;
    const first = (await repo.insert(newGuardrail(slug)))!;
    await repo.update(first.guardrail.id, { status: 'archived' }, seeded.organisationId);
    assert.equal(await repo.insert(newGuardrail(slug)), null);
    const elsewhere = await seedOrganisation(ds.manager, `guardrail-contract-${uniqueSuffix()}`);
    const theirs = await repo.insert({
      ...newGuardrail(slug),
      organisationId: elsewhere.organisationId,
      workspaceId: null,
    });
    assert.equal(theirs?.guardrail.slug, slug);
  });

  /** One guardrail and its first version, written as the repository would, with these columns. */
  const insertRow = (name: string, checks: string, actions: string) =>
    ds.transaction(async (manager) => {
      const [{ id }] = (await manager.query(`SELECT gen_random_uuid() AS id`)) as [{ id: string }];
      await manager.query(
        `INSERT INTO control_plane.guardrails (id, organisation_id, name, slug, checks, actions, status,
           owner_id, updated_by, current_version_id)
         VALUES ($1, $2, $3, $4, $5, $6, 'active', $2, $2, $1)`,
        [id, seeded.organisationId, name, `guard_row-${uniqueSuffix()}`, checks, actions],
      );
      await manager.query(
        `INSERT INTO control_plane.guardrail_versions (id, guardrail_id, version, checks, actions, created_by)
         VALUES ($1, $1, 1, $2, $3, $4)`,
        [id, checks, actions, seeded.organisationId],
      );
    });

  test('refuses what the API refuses: no checks, actions that are not an object, an empty name', async () => {
    await insertRow('accepted', '[{"id":"default.wordCount"}]', '{}');
    for (const [name, checks, actions] of [
      ['no checks', '[]', '{}'],
      ['checks not a list', '{"id":"default.wordCount"}', '{}'],
      ['actions a list', '[{"id":"default.wordCount"}]', '[]'],
      ['', '[{"id":"default.wordCount"}]', '{}'],
    ] as const) {
      await assert.rejects(insertRow(name, checks, actions), `${name} ${checks} ${actions}`);
    }
  });
});
