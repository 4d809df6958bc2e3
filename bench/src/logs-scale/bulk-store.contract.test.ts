// The scale scenario's bulk path against real PostgreSQL: it stores exactly the rows that the
// consumer's batch path (RequestLogRepository.insertBatch) stores for the same logs, and
// refuses logs stored before instead of storing them twice.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ScratchDatabase } from '@switchyard/adapters';
import { requestLogFromEvent } from '../../../services/log-export/src/domain/request-logs.ts';
import type { RequestLog } from '../../../services/log-export/src/store/entities.ts';
import { RequestLogPartitions } from '../../../services/log-export/src/store/request-log-partitions.ts';
import { RequestLogRepository } from '../../../services/log-export/src/store/request-log.repository.ts';
import { startContractDatabase } from '../../../services/log-export/src/testing/contract-database.ts';
import { storedRequestLog } from '../../../services/log-export/src/testing/request-logs.ts';
import { bulkStore } from './bulk-store.ts';
import { makeWorld, syntheticEvent } from './synthetic.ts';

const HOUR_MS = 3_600_000;
const FIRST_HOUR = Date.parse('2026-03-14T10:00:00Z');
const HOURS = 3;
const PER_HOUR = 700;
const world = makeWorld();

/** Logs of three whole hours, and a few whose text holds what COPY's format must escape. */
function logsOfHours(): RequestLog[][] {
  const hours: RequestLog[][] = [];
  for (let h = 0; h < HOURS; h++) {
    const logs: RequestLog[] = [];
    for (let k = 0; k < PER_HOUR; k++) {
      const i = h * PER_HOUR + k;
      logs.push(requestLogFromEvent(syntheticEvent(world, i, FIRST_HOUR + h * HOUR_MS + k * 5_000)));
    }
    hours.push(logs);
  }
  const workspace = world.workspaces[0]!;
  hours[0]!.push(
    storedRequestLog({
      organisationId: workspace.organisationId,
      workspaceId: workspace.id,
      createdAt: new Date(FIRST_HOUR + 123),
      traceId: 'trace\twith\ttabs',
      metadata: { 'team "a"': 'back\\slash', line: 'one\ntwo\r\nthree', _user: 'ü ✓' },
      requestBody: '{"messages":[{"role":"user","content":"tab\\there, newline\\nthere, \\\\ backslash"}]}',
      responseBody: 'not json at all:\t\\N\n',
      errorMessage: '\\N',
      provider: null,
      model: null,
      cacheStatus: null,
      policy: {
        decision: 'allowed',
        policy_id: 'p1',
        code: null,
        adjustments: [{ policy_id: 'p1', type: 'requests', held: 1, used: 1 }],
      },
      guardrails: [
        {
          phase: 'input',
          guardrail_id: 'g1',
          slug: 'pii',
          version_id: 'v1',
          action: 'redact',
          explanation: 'an e-mail address',
          redactions: 1,
          duration_ms: 3,
          checks: [{ id: 'default.pii', name: 'PII', passed: false, explanation: 'email', error: null }],
        },
      ],
    }),
    storedRequestLog({
      organisationId: workspace.organisationId,
      workspaceId: workspace.id,
      createdAt: new Date(FIRST_HOUR + 456),
      guardrails: null,
      cost: 0.1 + 0.2,
      latencyMs: 70_000,
    }),
  );
  return hours;
}

let batchDb: ScratchDatabase;
let bulkDb: ScratchDatabase;

before(async () => {
  [batchDb, bulkDb] = await Promise.all([
    startContractDatabase('bulk-store-batch'),
    startContractDatabase('bulk-store-bulk'),
  ]);
  for (const db of [batchDb, bulkDb]) {
    await new RequestLogPartitions(db.ds.manager).create(new Date(FIRST_HOUR - 10 * HOUR_MS));
  }
});
after(() => Promise.all([batchDb?.close(), bulkDb?.close()]));

const LOGS = `SELECT to_jsonb(l) AS row FROM log_export.request_logs l ORDER BY id`;
const WORKSPACES = `SELECT organisation_id, workspace_id FROM log_export.log_workspaces ORDER BY 1, 2`;

test('the bulk path stores the rows and notes the workspaces that insertBatch does', async () => {
  const hours = logsOfHours();
  const all = hours.flat();
  const repo = new RequestLogRepository(batchDb.ds.manager);
  // As the consumer: batches of 500, across hour boundaries.
  for (let at = 0; at < all.length; at += 500) await repo.insertBatch(all.slice(at, at + 500));
  for (const hour of hours) await bulkStore(bulkDb.ds, hour);

  const batchLogs: Array<{ row: unknown }> = await batchDb.ds.query(LOGS);
  const bulkLogs: Array<{ row: unknown }> = await bulkDb.ds.query(LOGS);
  assert.equal(batchLogs.length, all.length);
  assert.deepEqual(bulkLogs, batchLogs);

  const batchWorkspaces: unknown[] = await batchDb.ds.query(WORKSPACES);
  assert.ok(batchWorkspaces.length > 1);
  assert.deepEqual(await bulkDb.ds.query(WORKSPACES), batchWorkspaces);
});

test('logs stored before fail the whole COPY: nothing is stored twice or in part', async () => {
  const hour = logsOfHours()[0]!;
  await bulkStore(bulkDb.ds, hour.slice(0, 10));
  const count = async () =>
    (await bulkDb.ds.query(`SELECT count(*)::int AS n FROM log_export.request_logs`))[0].n as number;
  const before = await count();
  await assert.rejects(bulkStore(bulkDb.ds, hour), /duplicate key/);
  assert.equal(await count(), before);
});
