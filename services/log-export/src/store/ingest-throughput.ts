// How fast request logs are stored through the consumer's batch path, on the PostgreSQL of
// DATABASE_URL (a scratch database of its own, dropped afterwards), and how long reading one
// back by id and a filtered newest-first page take at that size:
//
//   node --import tsx services/log-export/src/store/ingest-throughput.ts [events=200000] [writers=1]
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { startScratchDatabase } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { events } from '@switchyard/proto';
import { requestLogFromEvent } from '../domain/request-logs.ts';
import { logExportService } from '../service.ts';
import { RequestLogPartitions } from './request-log-partitions.ts';
import { RequestLogRepository } from './request-log.repository.ts';

/** As the consumer's (REQUEST_LOG_BATCH). */
const REQUEST_LOG_BATCH = 500;
const total = Number(process.argv[2] ?? 200_000);
const writers = Number(process.argv[3] ?? 1);
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is not set');

const logger = createLogger('ingest-throughput', 'error');
logger.silent = true;
const database = logExportService.database!;
const scratch = await startScratchDatabase({
  url,
  label: 'ingest-throughput',
  schema: database.schema,
  entities: database.entities,
  migrations: database.migrations,
  poolSize: writers + 1,
  logger,
});
const { ds } = scratch;

try {
  const now = new Date();
  await new RequestLogPartitions(ds.manager).prepare(new Date(now.getTime() - 2 * 86_400_000), 3);
  const repo = new RequestLogRepository(ds.manager);

  const organisations = Array.from({ length: 5 }, () => randomUUID());
  const workspaces = Array.from({ length: 20 }, () => randomUUID());
  const keys = Array.from({ length: 200 }, () => randomUUID());
  const models = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4', 'gemini-2.5-flash'];
  const content = 'Summarise the following paragraph in two sentences. '.repeat(12);
  const event = (i: number) =>
    create(events.RequestLogEventSchema, {
      id: randomUUID(),
      organisationId: organisations[i % organisations.length],
      workspaceId: workspaces[i % workspaces.length],
      apiKeyId: keys[i % keys.length],
      traceId: `trace-${i}`,
      metadata: { team: 'search', env: 'prod' },
      method: 'POST',
      path: '/v1/chat/completions',
      provider: 'openai',
      model: models[i % models.length],
      status: i % 50 === 0 ? 500 : 200,
      createdAtMs: String(now.getTime() - (i % 172_800) * 1_000),
      latencyMs: 100 + (i % 2_000),
      requestBody: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      responseBody: JSON.stringify({
        id: `chatcmpl-${i}`,
        choices: [{ index: 0, message: { role: 'assistant', content: content.slice(0, 300) } }],
        usage: { prompt_tokens: 120, completion_tokens: 60, total_tokens: 180 },
      }),
      usage: { promptTokens: 120, completionTokens: 60, totalTokens: 180 },
      cost: 0.00042,
    });

  let next = 0;
  let storing = 0;
  const someIds: string[] = [];
  const write = async () => {
    while (next < total) {
      const start = next;
      next = Math.min(total, next + REQUEST_LOG_BATCH);
      const batch = [];
      for (let i = start; i < next; i++) batch.push(requestLogFromEvent(event(i)));
      if (start % 20_000 === 0) someIds.push(batch[0]!.id);
      const t = performance.now();
      await repo.insertBatch(batch);
      storing += performance.now() - t;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: writers }, write));
  const seconds = (performance.now() - started) / 1_000;
  console.log(
    `${total} events, ${writers} writer(s), batches of ${REQUEST_LOG_BATCH}: ${seconds.toFixed(1)} s, ${Math.round(total / seconds)} events/s` +
      ` (${Math.round((total * 1_000) / storing)} events/s counting only the time spent storing)`,
  );

  await ds.query(`ANALYZE log_export.request_logs`);
  const timings = async (label: string, run: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      await run();
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    console.log(`${label}: p50 ${ms[25]!.toFixed(2)} ms, p95 ${ms[47]!.toFixed(2)} ms`);
  };
  let k = 0;
  await timings('find by id', () =>
    repo.find(someIds[k++ % someIds.length]!, { organisationId: organisations[0]!, workspaceId: null }),
  );
  await timings('newest 50 of a workspace with model and status filters', () =>
    ds.query(
      `SELECT id, created_at, model, status, latency_ms FROM log_export.request_logs
        WHERE organisation_id = $1 AND workspace_id = $2 AND model = $3 AND status = 200
        ORDER BY created_at DESC LIMIT 50`,
      [organisations[0], workspaces[0], models[0]],
    ),
  );
  await timings('hourly requests and errors of an organisation over 30 days (rollups)', () =>
    ds.query(
      `SELECT bucket, sum(requests) AS requests, sum(errors) AS errors FROM log_export.request_rollups
        WHERE organisation_id = $1 AND bucket >= now() - interval '30 days' GROUP BY bucket ORDER BY bucket`,
      [organisations[0]],
    ),
  );
} finally {
  await scratch.close();
}
