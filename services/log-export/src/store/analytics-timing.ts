// How long analytics take over 30 days of request logs stored through the batch path, on the
// PostgreSQL of DATABASE_URL (a scratch database of its own, dropped afterwards): graphs read
// from the rollups, and groups and graphs only the logs can answer.
//
//   node --import tsx services/log-export/src/store/analytics-timing.ts [logs=1000000] [writers=2]
import { randomUUID } from 'node:crypto';
import type { Principal } from '@switchyard/access';
import { startScratchDatabase } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { AnalyticsService } from '../domain/analytics.ts';
import { analyticsFeedbackQuery, analyticsQuery } from '../domain/analytics.schemas.ts';
import { logExportService } from '../service.ts';
import { AnalyticsRepository } from './analytics.repository.ts';
import type { RequestLog } from './entities.ts';
import { RequestLogPartitions } from './request-log-partitions.ts';
import { RequestLogRepository } from './request-log.repository.ts';

/** As the consumer's (REQUEST_LOG_BATCH). */
const REQUEST_LOG_BATCH = 500;
const DAY_MS = 86_400_000;
const DAYS = 30;
const total = Number(process.argv[2] ?? 1_000_000);
const writers = Number(process.argv[3] ?? 2);
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is not set');

const logger = createLogger('analytics-timing', 'error');
logger.silent = true;
const database = logExportService.database!;
const scratch = await startScratchDatabase({
  url,
  label: 'analytics-timing',
  schema: database.schema,
  entities: database.entities,
  migrations: database.migrations,
  poolSize: writers + 1,
  // ANALYZE of a million logs may take longer than a request's query may.
  queryTimeoutMs: null,
  logger,
});
const { ds } = scratch;

try {
  const end = new Date('2026-03-15T00:00:00Z');
  const start = new Date(end.getTime() - DAYS * DAY_MS);
  const partitions = new RequestLogPartitions(ds.manager);
  for (let d = 0; d < DAYS; d++) await partitions.create(new Date(start.getTime() + d * DAY_MS));
  const repo = new RequestLogRepository(ds.manager);

  const organisations = Array.from({ length: 5 }, () => randomUUID());
  const workspaces = Array.from({ length: 20 }, () => randomUUID());
  const keys = Array.from({ length: 200 }, () => randomUUID());
  const models = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4', 'gemini-2.5-flash'];
  const providers = ['openai', 'openai', 'anthropic', 'google'];
  const step = (DAYS * DAY_MS) / total;
  const log = (i: number): RequestLog => ({
    id: randomUUID(),
    organisationId: organisations[i % organisations.length]!,
    // Each organisation's four workspaces.
    workspaceId: workspaces[(i % organisations.length) * 4 + (Math.floor(i / 5) % 4)]!,
    apiKeyId: keys[i % keys.length]!,
    traceId: `trace-${i}`,
    spanId: null,
    parentSpanId: null,
    spanName: null,
    metadata: { _user: `user-${i % 5_000}`, team: `team-${i % 12}`, env: 'prod' },
    method: 'POST',
    path: '/v1/chat/completions',
    provider: providers[i % models.length]!,
    model: models[i % models.length]!,
    integrationSlug: null,
    status: i % 50 === 0 ? 500 : i % 97 === 0 ? 429 : 200,
    stream: false,
    createdAt: new Date(start.getTime() + Math.floor(i * step)),
    latencyMs: 100 + (i % 2_000),
    requestBody: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}',
    responseBody: '{"choices":[{"message":{"role":"assistant","content":"Hi"}}]}',
    usage: {
      prompt_tokens: 120,
      completion_tokens: 60,
      total_tokens: 180,
      cached_tokens: 0,
      reasoning_tokens: 0,
    },
    cost: 0.00042,
    errorMessage: null,
    cacheStatus: i % 10 === 0 ? 'HIT' : 'MISS',
    configSlug: null,
    routePath: null,
    retryCount: i % 40 === 0 ? 1 : 0,
    cacheNamespace: null,
    cacheForceRefresh: false,
    modelsEndpoint: false,
    policy: null,
    guardrails: [],
  });

  let next = 0;
  const write = async () => {
    while (next < total) {
      const from = next;
      next = Math.min(total, next + REQUEST_LOG_BATCH);
      const batch: RequestLog[] = [];
      for (let i = from; i < next; i++) batch.push(log(i));
      await repo.insertBatch(batch);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: writers }, write));
  console.log(
    `${total} logs over ${DAYS} days stored in ${((performance.now() - started) / 1_000).toFixed(1)} s`,
  );
  await ds.query(`ANALYZE log_export.request_logs`);
  await ds.query(`ANALYZE log_export.request_rollups`);
  const [{ rollups }] = await ds.query(`SELECT count(*)::int AS rollups FROM log_export.request_rollups`);
  console.log(`${rollups} rollup rows; one organisation holds ${total / organisations.length} logs`);

  const analytics = new AnalyticsService(new AnalyticsRepository(ds.manager), { now: () => end });
  const admin: Principal = {
    apiKeyId: randomUUID(),
    organisationId: organisations[0]!,
    workspaceId: null,
    workspaceSlug: null,
    kind: 'organisation_admin',
    scopes: ['logs.list'],
    expiresAt: null,
    userId: null,
    name: 'timing',
    organisationCreatedAt: null,
  };
  const month = { time_of_generation_min: start.toISOString(), time_of_generation_max: end.toISOString() };
  const query = analyticsQuery.parse(month);
  const page = { page: 0, pageSize: 100, offset: 0, limit: 100 };
  const timings = async (label: string, run: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await run();
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    console.log(`${label}: p50 ${ms[10]!.toFixed(1)} ms, p95 ${ms[18]!.toFixed(1)} ms`);
  };
  await timings('30-day requests graph of an organisation (rollups)', () => analytics.requests(admin, query));
  await timings('30-day latency graph with percentiles (rollups)', () => analytics.latency(admin, query));
  await timings('30-day cache hit-rate graph (rollups)', () => analytics.cacheHitRate(admin, query));
  await timings('30-day ai-models groups (rollups)', () => analytics.modelGroups(admin, query, page));
  await timings('30-day api-keys groups (rollups)', () =>
    analytics.groupsBy(admin, query, 'api_key_id', page),
  );
  await timings('30-day requests graph of one workspace, not on whole hours (rollups and logs)', () =>
    analytics.requests(
      admin,
      analyticsQuery.parse({
        time_of_generation_min: new Date(start.getTime() + 1_800_000).toISOString(),
        time_of_generation_max: new Date(end.getTime() - 1_800_000).toISOString(),
        workspace_id: workspaces[0],
      }),
    ),
  );
  await timings('30-day requests graph filtered by metadata (logs)', () =>
    analytics.requests(admin, analyticsQuery.parse({ ...month, metadata: '{"team":"team-5"}' })),
  );
  await timings('30-day users graph (logs)', () => analytics.users(admin, query));
  await timings('30-day users groups (logs)', () => analytics.userGroups(admin, query, page));
  await timings('30-day metadata groups of team (logs and feedback)', () =>
    analytics.metadataGroups(admin, query, 'team', page),
  );
  await timings('7-day users groups (logs)', () =>
    analytics.userGroups(admin, analyticsQuery.parse({}), page),
  );
  await timings('30-day feedback graph', () =>
    analytics.feedbacks(admin, analyticsFeedbackQuery.parse(month)),
  );
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await scratch.close();
}
