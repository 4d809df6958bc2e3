// Feedback in log-export against real PostgreSQL: the migration, the upsert that keeps the
// newest version, the read by trace ids the logs use, and the consumer of FeedbackEvents.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { MemoryEventBus, publishEvent, Topics, type ScratchDatabase } from '@switchyard/adapters';
import { captureLogger } from '@switchyard/core/testing';
import { events } from '@switchyard/proto';
import { eventually } from '@switchyard/testing';
import { consumeFeedback } from './feedback.consumer.ts';
import { FeedbackRepository, type Feedback } from '../store/feedback.repository.ts';
import { Feedback1763700000026 } from '../store/migrations/1763700000026-feedback.ts';
import { startContractDatabase } from '../testing/contract-database.ts';

type FeedbackInit = MessageInitShape<typeof events.FeedbackEventSchema>;

let database: ScratchDatabase;
let ds: ScratchDatabase['ds'];
let repo: FeedbackRepository;

before(async () => {
  database = await startContractDatabase('feedback-contract');
  ds = database.ds;
  repo = new FeedbackRepository(ds.manager);
});

after(() => database?.close());

const organisationId = randomUUID();
const workspaceId = randomUUID();

function feedback(overrides: Partial<Feedback> = {}): Feedback {
  const at = new Date(Date.UTC(2026, 2, 14, 12, 0, 0));
  return {
    id: randomUUID(),
    organisationId,
    workspaceId,
    traceId: `trace-${randomUUID()}`,
    value: 1,
    weight: 1,
    metadata: {},
    version: 1,
    createdBy: randomUUID(),
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

async function storedRow(id: string): Promise<Feedback | undefined> {
  const [row] = (await ds.query(`SELECT trace_id FROM log_export.feedback WHERE id = $1`, [id])) as Array<{
    trace_id: string;
  }>;
  if (!row) return undefined;
  return (await repo.forTraces(organisationId, [row.trace_id])).get(row.trace_id)?.find((f) => f.id === id);
}

describe('storing feedback', () => {
  test('a newer version replaces the stored one; the same or an older one changes nothing', async () => {
    const first = feedback({ value: 2, weight: 0.5, metadata: { note: 'first' } });
    assert.equal(await repo.upsertNewest(first), true);
    const third = {
      ...first,
      value: -4,
      weight: 0.25,
      metadata: { note: 'third' },
      version: 3,
      updatedAt: new Date(first.createdAt.getTime() + 2_000),
    };
    const second = { ...first, value: 9, metadata: { note: 'second' }, version: 2 };
    assert.equal(await repo.upsertNewest(third), true);
    assert.equal(await repo.upsertNewest(second), false, 'an older version arriving late');
    assert.equal(await repo.upsertNewest(third), false, 'the same version again');
    assert.equal(await repo.upsertNewest(first), false);
    assert.deepEqual(await storedRow(first.id), third);
    const [{ n }] = (await ds.query(`SELECT count(*)::int AS n FROM log_export.feedback WHERE id = $1`, [
      first.id,
    ])) as [{ n: number }];
    assert.equal(n, 1);
  });

  test("an event naming another organisation's feedback id cannot change it", async () => {
    const mine = feedback({ value: 5 });
    await repo.upsertNewest(mine);
    assert.equal(
      await repo.upsertNewest({ ...mine, organisationId: randomUUID(), value: -5, version: 9 }),
      false,
    );
    assert.equal((await storedRow(mine.id))!.value, 5);
  });

  test('the table refuses metadata that is not an object', async () => {
    await assert.rejects(
      ds.query(
        `INSERT INTO log_export.feedback (id, organisation_id, trace_id, value, weight, metadata, version, created_by, created_at, updated_at)
         VALUES (gen_random_uuid(), $1, 't', 1, 1, '[1]', 1, 'x', now(), now())`,
        [organisationId],
      ),
    );
  });
});

describe('feedback for the logs of some trace ids', () => {
  test("by trace id, oldest first; the organisation's only; a workspace sees its own and the organisation's", async () => {
    const [traceA, traceB, traceC] = [`a-${randomUUID()}`, `b-${randomUUID()}`, `c-${randomUUID()}`];
    const otherWorkspace = randomUUID();
    const at = (seconds: number) => new Date(Date.UTC(2026, 2, 14, 12, 0, seconds));
    const a1 = feedback({ traceId: traceA, createdAt: at(1), updatedAt: at(1) });
    const a2 = feedback({
      traceId: traceA,
      workspaceId: null,
      value: -1,
      createdAt: at(2),
      updatedAt: at(2),
    });
    const a3 = feedback({ traceId: traceA, workspaceId: otherWorkspace, createdAt: at(3), updatedAt: at(3) });
    const b1 = feedback({ traceId: traceB, weight: 0.3, metadata: { user: 'u-1', tags: ['x'] } });
    const foreign = feedback({ traceId: traceA, organisationId: randomUUID() });
    for (const entry of [a3, a1, b1, a2, foreign]) await repo.upsertNewest(entry);

    const all = await repo.forTraces(organisationId, [traceA, traceB, traceC, traceA]);
    assert.deepEqual([...all.keys()].sort(), [traceA, traceB].sort());
    assert.deepEqual(
      all.get(traceA)!.map((f) => f.id),
      [a1.id, a2.id, a3.id],
    );
    assert.deepEqual(all.get(traceB), [b1]);

    const ofWorkspace = await repo.forTraces(organisationId, [traceA, traceB], workspaceId);
    assert.deepEqual(
      ofWorkspace.get(traceA)!.map((f) => f.id),
      [a1.id, a2.id],
    );
    const ofOther = await repo.forTraces(organisationId, [traceA, traceB], otherWorkspace);
    assert.deepEqual(
      ofOther.get(traceA)!.map((f) => f.id),
      [a2.id, a3.id],
    );
    assert.equal(ofOther.get(traceB), undefined);
    assert.equal((await repo.forTraces(organisationId, [])).size, 0);
    assert.equal((await repo.forTraces(randomUUID(), [traceA])).size, 0);
  });
});

describe('consuming feedback events', () => {
  let bus: MemoryEventBus;
  let stop: () => Promise<void>;

  before(async () => {
    bus = new MemoryEventBus();
    const subscription = await consumeFeedback(bus, captureLogger('feedback-consumer').logger, repo);
    stop = () => subscription.stop();
  });
  after(async () => {
    await stop?.();
    await bus?.close();
  });

  function event(overrides: Partial<FeedbackInit> = {}): FeedbackInit & { id: string; traceId: string } {
    return {
      id: randomUUID(),
      organisationId,
      workspaceId,
      traceId: `trace-${randomUUID()}`,
      value: 3,
      weight: 0.5,
      metadataJson: '{"source":"thumbs"}',
      createdBy: randomUUID(),
      createdAtMs: String(Date.UTC(2026, 2, 14, 12, 30, 15, 250)),
      updatedAtMs: String(Date.UTC(2026, 2, 14, 12, 30, 15, 250)),
      version: 1,
      ...overrides,
    } as FeedbackInit & { id: string; traceId: string };
  }

  const publish = (init: FeedbackInit) =>
    publishEvent(bus, Topics.feedback, events.FeedbackEventSchema, init.traceId ?? '', init);

  const storedAt = (id: string, version: number) =>
    eventually(
      async () => {
        const found = await storedRow(id);
        return found?.version === version ? found : undefined;
      },
      { what: `feedback ${id} at version ${version}` },
    );

  test('events delivered twice and out of order leave the newest version', async () => {
    const created = event();
    const updated = { ...created, value: -2, weight: 1, metadataJson: '{"source":"edit"}', version: 2 };
    const newest = {
      ...created,
      value: 8,
      metadataJson: '{}',
      version: 3,
      updatedAtMs: String(Date.UTC(2026, 2, 14, 12, 31)),
    };
    publish(created);
    publish(newest);
    publish(updated);
    publish(created);
    const marker = event();
    publish(marker);
    await storedAt(marker.id, 1);
    const stored = await storedAt(created.id, 3);
    assert.deepEqual(stored, {
      id: created.id,
      organisationId,
      workspaceId,
      traceId: created.traceId,
      value: 8,
      weight: 0.5,
      metadata: {},
      version: 3,
      createdBy: created.createdBy,
      createdAt: new Date(Date.UTC(2026, 2, 14, 12, 30, 15, 250)),
      updatedAt: new Date(Date.UTC(2026, 2, 14, 12, 31)),
    });
    const ofOrganisation = event({ workspaceId: '' });
    publish(ofOrganisation);
    assert.equal((await storedAt(ofOrganisation.id, 1)).workspaceId, null);
  });

  test('undecodable messages and events that cannot be stored are skipped; later events still arrive', async () => {
    bus.publish({ topic: Topics.feedback, key: 'junk', value: Uint8Array.from([0xff, 0xff, 0xff, 0xff]) });
    const skipped = [
      event({ organisationId: 'not-a-uuid' }),
      event({ metadataJson: '[1, 2]' }),
      event({ metadataJson: '{broken' }),
      event({ traceId: '' }),
    ];
    for (const init of skipped) publish(init);
    const later = event();
    publish(later);
    await storedAt(later.id, 1);
    for (const init of skipped) {
      const [{ n }] = (await ds.query(`SELECT count(*)::int AS n FROM log_export.feedback WHERE id = $1`, [
        init.id,
      ])) as [{ n: number }];
      assert.equal(n, 0);
    }
  });
});

describe('the migration', () => {
  test('down drops the table, up makes it again', async () => {
    const runner = ds.createQueryRunner();
    try {
      const migration = new Feedback1763700000026();
      await ds.query(`CREATE TABLE log_export.feedback_kept AS SELECT * FROM log_export.feedback`);
      await migration.down(runner);
      await assert.rejects(ds.query(`SELECT 1 FROM log_export.feedback`));
      await migration.up(runner);
      await ds.query(`INSERT INTO log_export.feedback SELECT * FROM log_export.feedback_kept`);
      await ds.query(`DROP TABLE log_export.feedback_kept`);
    } finally {
      await runner.release();
    }
  });
});
