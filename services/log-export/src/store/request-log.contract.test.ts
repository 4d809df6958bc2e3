// Request log ingestion against real PostgreSQL: batches stored once however often delivered,
// each counted once in its hour's rollups; a row the database rejects skipped; rows kept in
// daily partitions, old days dropped; and the conversion of the table stored before partitioning.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  createDataSource,
  MemoryEventBus,
  migrate,
  publishEvent,
  Topics,
  type ScratchDatabase,
} from '@switchyard/adapters';
import { captureLogger } from '@switchyard/core/testing';
import { events } from '@switchyard/proto';
import { RequestLogService } from '../domain/request-logs.ts';
import { consumeRequestLogs } from '../events/request-log.consumer.ts';
import { logExportService } from '../service.ts';
import { startContractDatabase } from '../testing/contract-database.ts';
import type { RequestLog } from './entities.ts';
import { RequestLogPartitions, partitionName } from './request-log-partitions.ts';
import { RequestLogRepository } from './request-log.repository.ts';
import { RollupMaterialiser } from './rollups.ts';
import { storedRequestLog } from '../testing/request-logs.ts';

/** A database of its own on the PostgreSQL of `DATABASE_URL`, migrated with `migrations`. */
const scratchDatabase = (
  label: string,
  migrations?: NonNullable<typeof logExportService.database>['migrations'],
) => startContractDatabase(label, migrations ? { migrations } : {});

const organisationId = randomUUID();
const workspaceId = randomUUID();

function log(overrides: Partial<RequestLog> = {}): RequestLog {
  return storedRequestLog({
    organisationId,
    workspaceId,
    traceId: 'trace-1',
    metadata: { team: 'search' },
    model: 'gpt-4o-mini',
    createdAt: new Date('2026-03-14T12:30:00Z'),
    latencyMs: 120,
    cost: 0.25,
    ...overrides,
  });
}

let db: ScratchDatabase;
let repo: RequestLogRepository;
let partitions: RequestLogPartitions;

before(async () => {
  db = await scratchDatabase('request-log-contract');
  repo = new RequestLogRepository(db.ds.manager);
  partitions = new RequestLogPartitions(db.ds.manager);
});
after(() => db?.close());

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await db.ds.query(`SELECT (${sql})::int AS n`, params);
  return row.n;
}

/** Where each of the logs is stored: its partition's name. */
async function partitionsOf(ids: string[]): Promise<string[]> {
  const rows: Array<{ part: string }> = await db.ds.query(
    `SELECT tableoid::regclass::text AS part FROM log_export.request_logs WHERE id = ANY($1) ORDER BY created_at`,
    [ids],
  );
  return rows.map((r) => r.part.replace(/^log_export\./, ''));
}

describe('batched writes', () => {
  test('a batch delivered twice is stored once, and the rollups of its hour count each log once', async () => {
    const apiKeyId = randomUUID();
    const batch = [
      log({ apiKeyId, latencyMs: 40 }),
      log({ apiKeyId, latencyMs: 700, cost: 0.5 }),
      log({ apiKeyId, status: 502, latencyMs: 90_000, cost: 0 }),
    ];
    assert.equal((await repo.insertBatch(batch)).length, 3);
    // Delivered again, with one new log and a duplicate inside the batch itself.
    const late = log({ apiKeyId, latencyMs: 40 });
    assert.deepEqual(
      (await repo.insertBatch([...batch, late, late])).map((l) => l.id),
      [late.id],
    );
    assert.equal(
      await count(`SELECT count(*) FROM log_export.request_logs WHERE api_key_id = $1`, [apiKeyId]),
      4,
    );

    assert.equal(
      await new RollupMaterialiser(db.ds.manager).makeHour(new Date('2026-03-14T12:00:00Z')),
      'made',
    );
    const rollups = await db.ds.query(
      `SELECT bucket, status, requests::int, errors::int, cost, total_tokens::int, latency_ms_sum::int,
              latency_ms_histogram::int[] AS histogram
         FROM log_export.request_rollups WHERE api_key_id = $1 ORDER BY status`,
      [apiKeyId],
    );
    assert.deepEqual(
      rollups.map((r: Record<string, unknown>) => ({ ...r, bucket: (r.bucket as Date).toISOString() })),
      [
        {
          bucket: '2026-03-14T12:00:00.000Z',
          status: 200,
          requests: 3,
          errors: 0,
          cost: 1,
          total_tokens: 45,
          latency_ms_sum: 780,
          histogram: [2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
        },
        {
          bucket: '2026-03-14T12:00:00.000Z',
          status: 502,
          requests: 1,
          errors: 1,
          cost: 0,
          total_tokens: 15,
          latency_ms_sum: 90_000,
          histogram: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        },
      ],
    );
  });

  test('a log is found by its id alone, in whichever partition holds it, and only within its scope', async () => {
    await partitions.create(new Date('2026-02-01T00:00:00Z'));
    const stored = log({ createdAt: new Date('2026-02-01T08:00:00Z') });
    await repo.insertBatch([stored]);
    const found = await repo.find(stored.id, { organisationId, workspaceId });
    assert.equal(found?.id, stored.id);
    assert.equal(found?.createdAt.toISOString(), '2026-02-01T08:00:00.000Z');
    assert.equal(await repo.find(stored.id, { organisationId, workspaceId: randomUUID() }), null);
    assert.equal(await repo.find(stored.id, { organisationId: randomUUID(), workspaceId: null }), null);
  });
});

describe('consuming in batches', () => {
  const event = (overrides: Partial<Omit<events.RequestLogEvent, '$typeName' | '$unknown'>> = {}) => ({
    id: randomUUID(),
    organisationId,
    workspaceId,
    apiKeyId: randomUUID(),
    method: 'POST',
    path: '/v1/chat/completions',
    status: 200,
    createdAtMs: String(Date.UTC(2026, 2, 14, 9)),
    latencyMs: 10,
    requestBody: '{}',
    responseBody: '{}',
    ...overrides,
  });

  test('a row the database rejects is skipped and logged; the rest of its batch is stored', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const capture = captureLogger('request-log-contract');
    const batch = [event(), event({ workspaceId: 'not-a-uuid' }), event(), event()];
    // Published before subscribing, the four arrive as one batch.
    for (const e of batch) publishEvent(bus, Topics.requestLogs, events.RequestLogEventSchema, 'k', e);
    const subscription = await consumeRequestLogs(
      bus,
      capture.logger,
      new RequestLogService(new RequestLogRepository(db.ds.manager)),
    );
    t.after(() => subscription.stop());
    await bus.flush();
    const ids = batch.map((e) => e.id);
    assert.deepEqual(
      (await db.ds.query(`SELECT id FROM log_export.request_logs WHERE id = ANY($1)`, [ids]))
        .map((r: { id: string }) => r.id)
        .sort(),
      [ids[0], ids[2], ids[3]].sort(),
    );
    const skipped = capture.lines().filter((l) => l.message === 'skipping request log the database rejects');
    assert.deepEqual(
      skipped.map((l) => l.id),
      [ids[1]],
    );
  });
});

describe('daily partitions', () => {
  test('logs of two days land in the partitions of those days', async () => {
    const made = await partitions.prepare(new Date('2030-05-10T15:00:00Z'), 2);
    assert.deepEqual(made, [
      'request_logs_p20300509',
      'request_logs_p20300510',
      'request_logs_p20300511',
      'request_logs_p20300512',
    ]);
    assert.deepEqual(await partitions.prepare(new Date('2030-05-10T15:00:00Z'), 2), [], 'made once');
    const first = log({ createdAt: new Date('2030-05-10T23:59:59.999Z') });
    const second = log({ createdAt: new Date('2030-05-11T00:00:00Z') });
    await repo.insertBatch([first, second]);
    assert.deepEqual(await partitionsOf([first.id, second.id]), [
      'request_logs_p20300510',
      'request_logs_p20300511',
    ]);
  });

  test('a log of a day without a partition is kept in the default one, and moves when the day gets its partition', async () => {
    const early = log({ createdAt: new Date('2031-07-04T10:00:00Z') });
    await repo.insertBatch([early]);
    assert.deepEqual(await partitionsOf([early.id]), ['request_logs_default']);
    assert.equal(await partitions.create(new Date('2031-07-04T00:00:00Z')), true);
    assert.deepEqual(await partitionsOf([early.id]), ['request_logs_p20310704']);
    assert.equal((await repo.find(early.id, { organisationId, workspaceId }))?.id, early.id);
    // Stored again after the move, it is still one log.
    assert.deepEqual(await repo.insertBatch([early]), []);
  });

  test('retention drops the partitions older than it and keeps the recent ones', async () => {
    const days = ['2029-01-01', '2029-01-02', '2029-01-03'].map((d) => new Date(`${d}T00:00:00Z`));
    for (const day of days) await partitions.create(day);
    const old = log({ createdAt: new Date('2029-01-01T18:00:00Z') });
    const recent = log({ createdAt: new Date('2029-01-02T06:00:00Z') });
    const stray = log({ createdAt: new Date('2028-06-01T00:00:00Z') });
    await repo.insertBatch([old, recent, stray]);
    assert.deepEqual(await partitionsOf([stray.id]), ['request_logs_default']);

    // 30 days before 2029-01-31T12:00Z is 2029-01-01T12:00Z: 1 January still holds a log younger than that.
    let dropped = await partitions.maintain(new Date('2029-01-31T12:00:00Z'), 30);
    assert.ok(!dropped.dropped.includes(partitionName(days[0]!)));
    assert.ok(dropped.dropped.every((name) => name < partitionName(days[0]!)));
    dropped = await partitions.maintain(new Date('2029-02-01T00:00:00Z'), 30);
    assert.ok(dropped.dropped.includes('request_logs_p20290101'));
    const left = await partitions.list();
    assert.ok(!left.includes('request_logs_p20290101'));
    assert.ok(left.includes('request_logs_p20290102'));
    assert.ok(left.includes('request_logs_p20290103'));
    assert.equal(await count(`SELECT count(*) FROM log_export.request_logs WHERE id = $1`, [old.id]), 0);
    assert.equal(await count(`SELECT count(*) FROM log_export.request_logs WHERE id = $1`, [recent.id]), 1);
    assert.equal(await count(`SELECT count(*) FROM log_export.request_logs WHERE id = $1`, [stray.id]), 0);
  });
});

describe('converting the table stored before partitions', () => {
  test('the logs stored before are all kept, each in its day, and counted in the rollups', async (t) => {
    const all = logExportService.database!.migrations;
    const before = all.slice(
      0,
      all.findIndex((m) => (m as { name: string }).name === 'PartitionedRequestLogs1763700000027'),
    );
    assert.ok(before.length > 0);
    const scratch = await scratchDatabase('request-log-conversion', before);
    t.after(() => scratch.close());
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    await scratch.ds.query(
      `INSERT INTO log_export.request_logs
         (id, organisation_id, workspace_id, api_key_id, trace_id, method, path, model, status, created_at,
          latency_ms, request_body, response_body, usage, cost, retry_count, guardrails)
       SELECT v.id, $2, $3, $4, 'trace-old', 'POST', '/v1/chat/completions', 'gpt-4o', v.status, v.at,
              v.latency, '{"model":"gpt-4o"}', '{}', '{"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}',
              0.5, 1, '[]'
         FROM unnest($1::text[], ARRAY[200, 200, 500], ARRAY['2025-12-30T23:00:00Z', '2025-12-30T23:30:00Z', '2025-12-31T01:00:00Z']::timestamptz[], ARRAY[30, 300, 3000])
           AS v(id, status, at, latency)`,
      [ids, organisationId, workspaceId, randomUUID()],
    );
    const converted = createDataSource({
      url: (scratch.ds.options as { url: string }).url,
      schema: 'log_export',
      entities: logExportService.database!.entities,
      migrations: all,
      poolSize: 2,
      logger: captureLogger('request-log-conversion').logger,
    });
    t.after(() => converted.destroy());
    await migrate(converted, 'log_export', captureLogger('request-log-conversion').logger);

    const rows: Array<{ id: string; part: string; created_at: Date; retry_count: number; usage: unknown }> =
      await converted.query(
        `SELECT id, tableoid::regclass::text AS part, created_at, retry_count, usage
           FROM log_export.request_logs ORDER BY created_at`,
      );
    assert.deepEqual(
      rows.map((r) => [r.id, r.part, r.created_at.toISOString(), r.retry_count]),
      [
        [ids[0], 'log_export.request_logs_p20251230', '2025-12-30T23:00:00.000Z', 1],
        [ids[1], 'log_export.request_logs_p20251230', '2025-12-30T23:30:00.000Z', 1],
        [ids[2], 'log_export.request_logs_p20251231', '2025-12-31T01:00:00.000Z', 1],
      ],
    );
    const rollups = await converted.query(
      `SELECT bucket, status, requests::int, errors::int, total_tokens::int, latency_ms_histogram::int[] AS histogram
         FROM log_export.request_rollups ORDER BY bucket, status`,
    );
    assert.deepEqual(
      rollups.map((r: Record<string, unknown>) => ({ ...r, bucket: (r.bucket as Date).toISOString() })),
      [
        {
          bucket: '2025-12-30T23:00:00.000Z',
          status: 200,
          requests: 2,
          errors: 0,
          total_tokens: 14,
          histogram: [1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        },
        {
          bucket: '2025-12-31T01:00:00.000Z',
          status: 500,
          requests: 1,
          errors: 1,
          total_tokens: 7,
          histogram: [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0],
        },
      ],
    );
    // The hours rolled up in the conversion are left to the rollup job to make again, alike.
    const made = await new RollupMaterialiser(converted.manager).run(new Date('2025-12-31T03:00:00Z'));
    assert.deepEqual(
      [made.hours.length, made.hours[0]?.toISOString(), made.hours.at(-1)?.toISOString()],
      [26, '2025-12-30T00:00:00.000Z', '2025-12-31T01:00:00.000Z'],
    );
    assert.deepEqual(
      await converted.query(
        `SELECT bucket, status, requests::int, errors::int, total_tokens::int, latency_ms_histogram::int[] AS histogram
           FROM log_export.request_rollups ORDER BY bucket, status`,
      ),
      rollups,
    );
    // Stored again after the conversion, an old log is still one.
    const repo = new RequestLogRepository(converted.manager);
    const again = await repo.find(ids[0]!, { organisationId, workspaceId });
    assert.ok(again);
    assert.deepEqual(await repo.insertBatch([again]), []);
  });
});
