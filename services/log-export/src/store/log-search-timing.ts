// How long a page of `GET /v1/logs` takes to find at size: logs stored through the batch path
// into a scratch database on the PostgreSQL of DATABASE_URL (dropped afterwards), then pages
// with two filters read through the logs API's service (the search, the cursor and the
// feedback of the page), p50 and p95 of 50 reads each:
//
//   node --import tsx services/log-export/src/store/log-search-timing.ts [logs=1000000]
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import type { Principal } from '@switchyard/access';
import { startScratchDatabase } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { events } from '@switchyard/proto';
import { LogSearchService } from '../domain/log-search.ts';
import { listLogsQuery } from '../domain/log-search.schemas.ts';
import { RequestLogService, requestLogFromEvent } from '../domain/request-logs.ts';
import { logExportService } from '../service.ts';
import { FeedbackRepository } from './feedback.repository.ts';
import { RequestLogPartitions } from './request-log-partitions.ts';
import { RequestLogRepository } from './request-log.repository.ts';
import { RequestLogSearch } from './request-log.search.ts';

const BATCH = 500;
const total = Number(process.argv[2] ?? 1_000_000);
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is not set');

const logger = createLogger('log-search-timing', 'error');
logger.silent = true;
const database = logExportService.database!;
const scratch = await startScratchDatabase({
  url,
  label: 'log-search-timing',
  schema: database.schema,
  entities: database.entities,
  migrations: database.migrations,
  poolSize: 2,
  logger,
});
const { ds } = scratch;

try {
  const now = new Date();
  await new RequestLogPartitions(ds.manager).prepare(new Date(now.getTime() - 2 * 86_400_000), 2);
  const repo = new RequestLogRepository(ds.manager);

  // One organisation of four workspaces holds nearly all of them, over the last 36 hours;
  // a second organisation the rest.
  const organisation = randomUUID();
  const elsewhere = randomUUID();
  const workspaces = Array.from({ length: 4 }, () => randomUUID());
  const keys = Array.from({ length: 40 }, () => randomUUID());
  const models = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4', 'gemini-2.5-flash'];
  const providers = ['openai', 'openai', 'anthropic', 'google'];
  const span = 36 * 3_600_000;
  const content = 'Summarise the following paragraph in two sentences. '.repeat(12);
  // Each attribute cycles at its own pace, so that no two filters pick the same logs.
  const model = (i: number) => Math.floor(i / 4) % models.length;
  const event = (i: number) =>
    create(events.RequestLogEventSchema, {
      id: randomUUID(),
      organisationId: i % 50 === 7 ? elsewhere : organisation,
      workspaceId: workspaces[i % workspaces.length],
      apiKeyId: keys[Math.floor(i / 3) % keys.length],
      traceId: `trace-${i}`,
      metadata: { team: i % 7 < 2 ? 'search' : 'ads', env: 'prod', _user: `user-${i % 101}` },
      method: 'POST',
      path: '/v1/chat/completions',
      provider: providers[model(i)],
      model: models[model(i)],
      status: i % 50 === 0 ? 500 : i % 97 === 0 ? 429 : 200,
      createdAtMs: String(now.getTime() - Math.floor((i / total) * span)),
      latencyMs: 100 + ((i * 7919) % 3_000),
      requestBody: JSON.stringify({
        model: models[model(i)],
        messages: [{ role: 'user', content }],
      }),
      responseBody: JSON.stringify({ id: `chatcmpl-${i}`, choices: [] }),
      usage: { promptTokens: 120, completionTokens: 60, totalTokens: 180 },
      cost: (i % 10) / 1_000,
      cacheStatus: i % 5 === 0 ? 'HIT' : 'MISS',
    });

  const started = performance.now();
  for (let start = 0; start < total; start += BATCH) {
    const batch = [];
    for (let i = start; i < Math.min(total, start + BATCH); i++) batch.push(requestLogFromEvent(event(i)));
    await repo.insertBatch(batch);
  }
  console.log(`${total} logs stored in ${((performance.now() - started) / 1_000).toFixed(1)} s`);
  await ds.query(`ANALYZE log_export.request_logs`);
  await ds.query(`ANALYZE log_export.request_rollups`);

  const service = new LogSearchService(
    new RequestLogService(repo),
    new RequestLogSearch(ds.manager),
    new FeedbackRepository(ds.manager),
    () => undefined,
  );
  const principal = (workspaceId: string | null): Principal => ({
    apiKeyId: randomUUID(),
    organisationId: organisation,
    workspaceId,
    workspaceSlug: null,
    kind: workspaceId ? 'workspace_service' : 'organisation_admin',
    scopes: ['logs.list'],
    expiresAt: null,
    userId: null,
    name: 'timing',
    organisationCreatedAt: null,
  });
  const timings = async (label: string, caller: Principal, query: Record<string, string>) => {
    const ms: number[] = [];
    let cursor: string | null = null;
    let rows = 0;
    for (let i = 0; i < 50; i++) {
      // Every fifth read is a next page; the rest first pages.
      const t = performance.now();
      const page = await service.list(
        caller,
        listLogsQuery.parse(i % 5 !== 0 && cursor ? { ...query, cursor } : query),
      );
      ms.push(performance.now() - t);
      cursor = page.nextCursor;
      rows += page.logs.length;
    }
    ms.sort((a, b) => a - b);
    console.log(
      `${label}: p50 ${ms[25]!.toFixed(1)} ms, p95 ${ms[47]!.toFixed(1)} ms (${(rows / 50).toFixed(0)} logs a page)`,
    );
  };
  const workspace = principal(workspaces[0]!);
  const admin = principal(null);
  await timings('workspace key, model and status=200', workspace, { model: 'gpt-4o', status: '200' });
  await timings('workspace key, status=5xx and provider', workspace, { status: '5xx', provider: 'openai' });
  await timings('workspace key, metadata.team and user', workspace, {
    'metadata.team': 'search',
    user: 'user-12',
  });
  await timings('workspace key, api_key_id and cache_status', workspace, {
    api_key_id: keys[8]!,
    cache_status: 'MISS',
  });
  await timings('organisation admin key, model and latency_min', admin, {
    model: 'gpt-4o',
    latency_min: '2000',
  });
  await timings('organisation admin key, status=429 and cost_min', admin, {
    status: '429',
    cost_min: '0.005',
  });
} finally {
  await scratch.close();
}
