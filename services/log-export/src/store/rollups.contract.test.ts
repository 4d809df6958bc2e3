// The rollup job against real PostgreSQL: which hours it makes and when, hours made again
// after a late log or new feedback, one replica at a time, and hours whose logs are gone.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { ScratchDatabase } from '@switchyard/adapters';
import { startContractDatabase } from '../testing/contract-database.ts';
import { storedRequestLog } from '../testing/request-logs.ts';
import type { RequestLog } from './entities.ts';
import { FeedbackRepository } from './feedback.repository.ts';
import { RequestLogPartitions } from './request-log-partitions.ts';
import { RequestLogRepository } from './request-log.repository.ts';
import { RollupMaterialiser } from './rollups.ts';

const organisationId = randomUUID();
const workspaceId = randomUUID();

function log(at: string, overrides: Partial<RequestLog> = {}): RequestLog {
  return storedRequestLog({ organisationId, workspaceId, createdAt: new Date(at), ...overrides });
}

let db: ScratchDatabase;
let logs: RequestLogRepository;
let job: RollupMaterialiser;

before(async () => {
  db = await startContractDatabase('rollups-contract');
  logs = new RequestLogRepository(db.ds.manager);
  job = new RollupMaterialiser(db.ds.manager);
  await new RequestLogPartitions(db.ds.manager).create(new Date('2026-05-01T00:00:00Z'));
});
after(() => db?.close());

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

/** Requests per hour in the hourly rollups, and in the daily ones per day. */
async function counted(): Promise<{ hourly: Record<string, number>; daily: Record<string, number> }> {
  const sums = async (table: string) => {
    const rows: Array<{ bucket: Date; n: number }> = await db.ds.query(
      `SELECT bucket, sum(requests)::int AS n FROM log_export.${table} GROUP BY 1 ORDER BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.bucket.toISOString(), r.n]));
  };
  return { hourly: await sums('request_rollups'), daily: await sums('request_rollups_daily') };
}

/** Whether each hour's rollups are of its current version. */
async function clean(): Promise<Record<string, boolean>> {
  const rows: Array<{ bucket: Date; clean: boolean }> = await db.ds.query(
    `SELECT bucket, version = materialised_version AS clean FROM log_export.rollup_hours ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.bucket.toISOString(), r.clean]));
}

describe('the rollup job', () => {
  test('makes each hour once it has been over for a while, from the start of the day of the first log; never the current one', async () => {
    await logs.insertBatch([
      log('2026-05-01T10:15:00Z'),
      log('2026-05-01T10:45:00Z'),
      log('2026-05-01T12:05:00Z', { status: 500 }),
      log('2026-05-01T13:01:00Z'),
    ]);
    // 13:00 to 14:00 is over, but only just: its last logs may still be on their way.
    const first = await job.run(new Date('2026-05-01T14:01:00Z'));
    assert.deepEqual(
      iso(first.hours),
      Array.from({ length: 13 }, (_, h) => `2026-05-01T${String(h).padStart(2, '0')}:00:00.000Z`),
    );
    assert.deepEqual(await counted(), {
      hourly: { '2026-05-01T10:00:00.000Z': 2, '2026-05-01T12:00:00.000Z': 1 },
      // Not before every hour of the day is made.
      daily: {},
    });
    assert.deepEqual(iso((await job.run(new Date('2026-05-01T14:01:00Z'))).hours), []);
    assert.deepEqual(iso((await job.run(new Date('2026-05-01T14:03:00Z'))).hours), [
      '2026-05-01T13:00:00.000Z',
    ]);
  });

  test('a late log leaves its hour to the logs until the job makes it again, counted', async () => {
    const late = log('2026-05-01T10:30:00Z', { status: 429 });
    await logs.insertBatch([late]);
    assert.equal((await clean())['2026-05-01T10:00:00.000Z'], false);
    // Delivered again: stored once, and the hour is not changed again.
    await logs.insertBatch([late]);
    assert.deepEqual(iso((await job.run(new Date('2026-05-01T14:03:00Z'))).hours), [
      '2026-05-01T10:00:00.000Z',
    ]);
    assert.equal((await clean())['2026-05-01T10:00:00.000Z'], true);
    assert.equal((await counted()).hourly['2026-05-01T10:00:00.000Z'], 3);
  });

  test('feedback on a trace makes the hours of its requests again, with the feedback in their metadata rollups', async () => {
    await logs.insertBatch([
      log('2026-05-01T15:10:00Z', { traceId: 'trace-fb', metadata: { team: 'search' }, cost: 0.5 }),
      log('2026-05-01T15:20:00Z', { traceId: 'trace-fb', metadata: { team: 'search' }, cost: 0.25 }),
      log('2026-05-01T15:30:00Z', { metadata: { team: 'ads' } }),
    ]);
    await job.run(new Date('2026-05-01T16:05:00Z'));
    const feedback = new FeedbackRepository(db.ds.manager);
    const entry = (value: number, weight: number, ws: string | null) => ({
      id: randomUUID(),
      organisationId,
      workspaceId: ws,
      traceId: 'trace-fb',
      value,
      weight,
      metadata: {},
      version: 1,
      createdBy: 'user',
      createdAt: new Date('2026-05-01T16:30:00Z'),
      updatedAt: new Date('2026-05-01T16:30:00Z'),
    });
    assert.equal(await feedback.upsertNewest(entry(4, 1, workspaceId)), true);
    assert.equal(await feedback.upsertNewest(entry(-2, 0.5, null)), true);
    assert.equal((await clean())['2026-05-01T15:00:00.000Z'], false);
    assert.deepEqual(iso((await job.run(new Date('2026-05-01T16:05:00Z'))).hours), [
      '2026-05-01T15:00:00.000Z',
    ]);
    const rows = await db.ds.query(
      `SELECT value, requests::int, cost, total_tokens::int, workspace_feedback_requests::int AS ws_n,
              workspace_feedback_weighted AS ws_sum, organisation_feedback_requests::int AS org_n,
              organisation_feedback_weighted AS org_sum
         FROM log_export.metadata_rollups WHERE key = 'team' AND bucket = '2026-05-01T15:00:00Z' ORDER BY value`,
    );
    assert.deepEqual(rows, [
      { value: 'ads', requests: 1, cost: 0, total_tokens: 15, ws_n: 0, ws_sum: 0, org_n: 0, org_sum: 0 },
      // Both requests weigh their trace's average: the workspace's own feedback (4), or all (4 and -1).
      {
        value: 'search',
        requests: 2,
        cost: 0.75,
        total_tokens: 30,
        ws_n: 2,
        ws_sum: 8,
        org_n: 2,
        org_sum: 3,
      },
    ]);
  });

  test('runs on one replica at a time: another one finds it running and does nothing', async () => {
    await logs.insertBatch([log('2026-05-01T17:10:00Z')]);
    const runner = db.ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(`SELECT pg_advisory_xact_lock(hashtext('log_export.rollup job'))`);
      assert.deepEqual(await job.run(new Date('2026-05-01T18:05:00Z')), { hours: [], ran: false });
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    assert.deepEqual(iso((await job.run(new Date('2026-05-01T18:05:00Z'))).hours), [
      '2026-05-01T16:00:00.000Z',
      '2026-05-01T17:00:00.000Z',
    ]);
  });

  test('a batch being stored into an hour holds the job back until it commits, so the job counts it', async () => {
    await job.run(new Date('2026-05-01T20:05:00Z'));
    const before = (await counted()).hourly['2026-05-01T18:00:00.000Z'] ?? 0;
    const runner = db.ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      // As the consumer's batch does it, on a transaction of its own, not committed yet.
      await new RequestLogRepository(runner.manager).insertBatch([log('2026-05-01T18:30:00Z')]);
      let made = false;
      const remaking = job.makeHour(new Date('2026-05-01T18:00:00Z')).then((outcome) => {
        made = true;
        return outcome;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(made, false);
      await runner.commitTransaction();
      assert.equal(await remaking, 'made');
    } finally {
      await runner.release();
    }
    assert.equal((await counted()).hourly['2026-05-01T18:00:00.000Z'], before + 1);
    assert.equal((await clean())['2026-05-01T18:00:00.000Z'], true);
  });

  test("a day's rollups are made once every hour of it is, and made again when one of them changes", async () => {
    const logsOfDay = async () =>
      (
        await db.ds.query(
          `SELECT count(*)::int AS n FROM log_export.request_logs WHERE created_at >= '2026-05-01' AND created_at < '2026-05-02'`,
        )
      )[0].n as number;
    await job.run(new Date('2026-05-02T00:03:00Z'));
    const before = await logsOfDay();
    assert.deepEqual((await counted()).daily, { '2026-05-01T00:00:00.000Z': before });
    await logs.insertBatch([log('2026-05-01T23:59:00Z')]);
    await job.run(new Date('2026-05-02T00:03:00Z'));
    assert.deepEqual((await counted()).daily, { '2026-05-01T00:00:00.000Z': before + 1 });
  });

  test('an hour whose logs are gone (past retention) keeps the rollups it has', async () => {
    await db.ds.query(`DELETE FROM log_export.request_logs WHERE created_at < '2026-05-01T11:00:00Z'`);
    await db.ds.query(
      `UPDATE log_export.rollup_hours SET version = version + 1 WHERE bucket = '2026-05-01T10:00:00Z'`,
    );
    assert.deepEqual(iso((await job.run(new Date('2026-05-01T18:05:00Z'))).hours), [
      '2026-05-01T10:00:00.000Z',
    ]);
    assert.equal((await counted()).hourly['2026-05-01T10:00:00.000Z'], 3);
  });
});
