/**
 * `pnpm bench:logs`: the log-export service at scale, on the real PostgreSQL that `pnpm bench`
 * uses (deploy/local/deps.sh, started if not running), in a scratch database dropped at the end.
 *
 * 1. Loads `--logs` synthetic request logs over the last 30 days (several organisations,
 *    workspaces and keys, many models, statuses, cache statuses, metadata, feedback on some
 *    traces) through the bulk path (`logs-scale/bulk-store.ts`: COPY of the rows the consumer's
 *    batch path stores), then has the rollup job (`RollupMaterialiser`) make every hour over.
 * 2. After ANALYZE, times each query 50 times after 5 warm-ups: `GET /v1/logs` with two filters
 *    through `LogSearchService.list` (first page, and a later page by cursor), and 30-day
 *    analytics graphs and groups through `AnalyticsService`, each for a workspace key and for an
 *    organisation key.
 * 3. Ingestion into the table at that size: `--ingest` events as the gateway publishes them,
 *    turned into rows by `requestLogFromEvent` and stored by `RequestLogRepository.insertBatch`
 *    in the consumer's batches, with 1 and with 2 concurrent writers.
 *
 * Writes `bench/results/logs-latest.md` and `.data/bench/logs.json`.
 *
 *   pnpm bench:logs [--logs 10000000] [--ingest 200000] [--keep]
 */
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startScratchDatabase } from '@switchyard/adapters';
import { createLogger, parsePage } from '@switchyard/core';
import { ensureDependencies } from '@switchyard/test-e2e';
import { AnalyticsService } from '../../services/log-export/src/domain/analytics.ts';
import { analyticsQuery } from '../../services/log-export/src/domain/analytics.schemas.ts';
import { LogSearchService } from '../../services/log-export/src/domain/log-search.ts';
import { listLogsQuery } from '../../services/log-export/src/domain/log-search.schemas.ts';
import { RequestLogService, requestLogFromEvent } from '../../services/log-export/src/domain/request-logs.ts';
import { logExportService } from '../../services/log-export/src/service.ts';
import { AnalyticsRepository } from '../../services/log-export/src/store/analytics.repository.ts';
import type { RequestLog } from '../../services/log-export/src/store/entities.ts';
import { FeedbackRepository } from '../../services/log-export/src/store/feedback.repository.ts';
import { RequestLogRepository } from '../../services/log-export/src/store/request-log.repository.ts';
import { RollupMaterialiser } from '../../services/log-export/src/store/rollups.ts';
import { RequestLogSearch } from '../../services/log-export/src/store/request-log.search.ts';
import { DAY_MS, HOUR_MS, count, loadLogs, preparePartitions } from './logs-scale/load.ts';
import { makeWorld, syntheticEvent, type World } from './logs-scale/synthetic.ts';
import { targetsSection, writeBenchResults } from './report.ts';
import { nearestRank } from './stats.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const { values: args } = parseArgs({
  options: {
    logs: { type: 'string', default: '10000000' },
    ingest: { type: 'string', default: '200000' },
    keep: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

const LOGS = count('logs', args.logs, 1_000, 100_000_000);
const INGEST = count('ingest', args.ingest, 500, 10_000_000);
/** As the consumer's (REQUEST_LOG_BATCH in request-log.consumer.ts). */
const REQUEST_LOG_BATCH = 500;
const DAYS = 30;
const HOURS = DAYS * 24;
/** Bulk writers: COPY on one connection while the next hour's rows are built for the other. */
const LOAD_WRITERS = 2;
const WARMUPS = 5;
const RUNS = 50;
/**
 * A query whose first call takes longer than SLOW_MS is timed after SLOW_WARMUPS calls (the
 * first one included), as often as fits in SLOW_BUDGET_MS: 3 to SLOW_RUNS times.
 */
const SLOW_MS = 1_000;
const SLOW_WARMUPS = 2;
const SLOW_RUNS = 10;
const SLOW_BUDGET_MS = 60_000;

const TARGETS = {
  ingestEventsPerS: 10_000,
  logsP95Ms: 100,
  analyticsP95Ms: 300,
};

function log(message: string): void {
  console.log(`[bench:logs ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

interface Timing {
  group: 'logs' | 'graph' | 'groups';
  label: string;
  caller: 'workspace key' | 'organisation key';
  p50Ms: number;
  p95Ms: number;
  /** What one call answered (logs on the page, data points, groups). */
  answered: number;
  /** How many calls were timed (RUNS, or fewer for a query of seconds). */
  runs: number;
}

interface IngestRun {
  writers: number;
  events: number;
  seconds: number;
  eventsPerS: number;
  /** Events per second of the time spent in insertBatch alone, summed over writers. */
  storingEventsPerS: number;
}

async function time(
  run: () => Promise<number>,
): Promise<{ p50Ms: number; p95Ms: number; answered: number; runs: number }> {
  let t = performance.now();
  let answered = await run();
  // A query of seconds is timed fewer times, so that a run still ends in reasonable time.
  const firstMs = performance.now() - t;
  const slow = firstMs > SLOW_MS;
  const runs = slow ? Math.max(3, Math.min(SLOW_RUNS, Math.floor(SLOW_BUDGET_MS / firstMs))) : RUNS;
  for (let i = 1; i < (slow ? SLOW_WARMUPS : WARMUPS); i++) answered = await run();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50Ms: nearestRank(ms, 50), p95Ms: nearestRank(ms, 95), answered, runs: ms.length };
}

const deps = await ensureDependencies();
const logger = createLogger('bench-logs', 'error');
logger.silent = true;
const database = logExportService.database!;
const scratch = await startScratchDatabase({
  url: deps.databaseUrl,
  label: 'bench-logs',
  schema: database.schema,
  entities: database.entities,
  migrations: database.migrations,
  poolSize: 4,
  // A COPY of an hour and ANALYZE of the whole table run longer than a request's query may.
  queryTimeoutMs: null,
  logger,
});
const { ds } = scratch;
log(`scratch database ${scratch.name}`);

async function load(world: World, firstHourMs: number): Promise<{ seconds: number; feedback: number }> {
  return loadLogs(ds, {
    world,
    logs: LOGS,
    firstHourMs,
    hours: HOURS,
    writers: LOAD_WRITERS,
    onProgress: (hours, stored, s) =>
      log(
        `loaded ${hours / 24} of ${DAYS} days: ${int(stored)} logs in ${s.toFixed(0)} s (${int(stored / s)}/s)`,
      ),
  });
}

async function ingest(world: World, writers: number, offset: number): Promise<IngestRun> {
  const repo = new RequestLogRepository(ds.manager);
  let next = 0;
  let storingMs = 0;
  const write = async () => {
    while (next < INGEST) {
      const from = next;
      next = Math.min(INGEST, next + REQUEST_LOG_BATCH);
      const batch: RequestLog[] = [];
      for (let i = from; i < next; i++)
        batch.push(requestLogFromEvent(syntheticEvent(world, offset + i, Date.now())));
      const t = performance.now();
      await repo.insertBatch(batch);
      storingMs += performance.now() - t;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: writers }, write));
  const seconds = (performance.now() - started) / 1_000;
  return {
    writers,
    events: INGEST,
    seconds,
    eventsPerS: INGEST / seconds,
    storingEventsPerS: (INGEST * writers) / (storingMs / 1_000),
  };
}

type Principal = Parameters<LogSearchService['list']>[0];

function principal(organisationId: string, workspaceId: string | null): Principal {
  return {
    apiKeyId: '00000000-0000-4000-8000-000000000000',
    organisationId,
    workspaceId,
    workspaceSlug: null,
    kind: workspaceId ? 'workspace_service' : 'organisation_admin',
    scopes: ['logs.list', 'analytics.read'],
    expiresAt: null,
    userId: null,
    name: 'bench',
    organisationCreatedAt: null,
  };
}

/** Pages walked by cursor before the "later page" that is timed. */
const LATER_PAGE = 5;

async function queries(world: World, now: Date): Promise<Timing[]> {
  const organisation = world.organisations[0]!;
  const callers: Array<[Timing['caller'], Principal]> = [
    ['workspace key', principal(organisation.id, organisation.workspaces[0]!.id)],
    ['organisation key', principal(organisation.id, null)],
  ];
  const timings: Timing[] = [];
  const search = new LogSearchService(
    new RequestLogService(new RequestLogRepository(ds.manager)),
    new RequestLogSearch(ds.manager),
    new FeedbackRepository(ds.manager),
    () => undefined,
    () => now,
  );
  const filters: Array<[string, Record<string, string>]> = [
    ['model=gpt-4o, status=200', { model: 'gpt-4o', status: '200' }],
    ['status=5xx, metadata.team=team-3', { status: '5xx', 'metadata.team': 'team-3' }],
  ];
  for (const [caller, who] of callers) {
    for (const [label, filter] of filters) {
      const first = await time(async () => (await search.list(who, listLogsQuery.parse(filter))).logs.length);
      timings.push({ group: 'logs', label: `GET /v1/logs ${label}, first page`, caller, ...first });
      let cursor: string | null = null;
      for (let p = 0; p < LATER_PAGE - 1; p++) {
        const page = await search.list(who, listLogsQuery.parse(cursor ? { ...filter, cursor } : filter));
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      if (cursor) {
        const later = await time(
          async () =>
            (await search.list(who, listLogsQuery.parse({ ...filter, cursor: cursor! }))).logs.length,
        );
        timings.push({
          group: 'logs',
          label: `GET /v1/logs ${label}, page ${LATER_PAGE} by cursor`,
          caller,
          ...later,
        });
      }
    }
  }
  const analytics = new AnalyticsService(new AnalyticsRepository(ds.manager), { now: () => now });
  const month = analyticsQuery.parse({
    time_of_generation_min: new Date(now.getTime() - DAYS * DAY_MS).toISOString(),
    time_of_generation_max: now.toISOString(),
  });
  const page = parsePage({});
  for (const [caller, who] of callers) {
    const graphs: Array<[string, () => Promise<{ data_points: unknown[] }>]> = [
      ['30-day requests graph', () => analytics.requests(who, month)],
      ['30-day cost graph', () => analytics.cost(who, month)],
      ['30-day latency graph', () => analytics.latency(who, month)],
    ];
    for (const [label, run] of graphs) {
      timings.push({
        group: 'graph',
        label,
        caller,
        ...(await time(async () => (await run()).data_points.length)),
      });
    }
    const groups: Array<[string, () => Promise<{ data: unknown[] }>]> = [
      ['30-day groups by model', () => analytics.modelGroups(who, month, page)],
      ['30-day groups by metadata key team', () => analytics.metadataGroups(who, month, 'team', page)],
    ];
    for (const [label, run] of groups) {
      timings.push({
        group: 'groups',
        label,
        caller,
        ...(await time(async () => (await run()).data.length)),
      });
    }
  }
  return timings;
}

interface Results {
  generatedAt: string;
  environment: { cpus: number; cpuModel: string; memoryGiB: number; node: string; postgres: string };
  logs: number;
  days: number;
  organisations: number;
  workspaces: number;
  apiKeys: number;
  feedback: number;
  rollups: { hourly: number; daily: number; metadata: number; hours: number; seconds: number };
  tableSizeGiB: number;
  loadSeconds: number;
  analyzeSeconds: number;
  ingest: IngestRun[];
  timings: Timing[];
  targets: Array<{ target: string; measured: string; holds: boolean }>;
}

function targetsOf(ingestRuns: IngestRun[], timings: Timing[]): Results['targets'] {
  const worst = (group: Timing['group']) =>
    Math.max(...timings.filter((t) => t.group === group).map((t) => t.p95Ms));
  const best = Math.max(...ingestRuns.map((r) => r.eventsPerS));
  const analyticsWorst = Math.max(worst('graph'), worst('groups'));
  return [
    {
      target: `ingestion ≥ ${int(TARGETS.ingestEventsPerS)} events/s (batch path, best of 1 and 2 writers)`,
      measured: `${int(best)} events/s`,
      holds: best >= TARGETS.ingestEventsPerS,
    },
    {
      target: `GET /v1/logs with two filters p95 ≤ ${TARGETS.logsP95Ms} ms (slowest case)`,
      measured: `${worst('logs').toFixed(1)} ms`,
      holds: worst('logs') <= TARGETS.logsP95Ms,
    },
    {
      target: `30-day analytics graph and groups p95 ≤ ${TARGETS.analyticsP95Ms} ms (slowest case)`,
      measured: `${analyticsWorst.toFixed(1)} ms`,
      holds: analyticsWorst <= TARGETS.analyticsP95Ms,
    },
  ];
}

function toMarkdown(r: Results): string {
  const lines = [
    '# Switchyard logs at scale',
    '',
    `- Date: ${r.generatedAt}`,
    `- Machine: ${r.environment.cpus} CPUs (${r.environment.cpuModel}), ${r.environment.memoryGiB} GiB memory`,
    `- Node: ${r.environment.node}; ${r.environment.postgres}`,
    `- Logs: ${int(r.logs)} over the last ${r.days} days (${r.tableSizeGiB.toFixed(1)} GiB with indexes), ` +
      `${r.organisations} organisations, ${r.workspaces} workspaces, ${r.apiKeys} API keys; ` +
      `${int(r.feedback)} feedback`,
    `- Load: ${r.loadSeconds.toFixed(0)} s (${int(r.logs / r.loadSeconds)} logs/s) through the bulk path ` +
      `(COPY of the rows the batch path stores), feedback one at a time as the consumer stores it`,
    `- Rollups: the rollup job made ${int(r.rollups.hours)} hours in ${r.rollups.seconds.toFixed(0)} s ` +
      `(${(r.rollups.seconds / Math.max(1, r.rollups.hours)).toFixed(2)} s an hour): ${int(r.rollups.hourly)} hourly rows per API key, ` +
      `${int(r.rollups.daily)} daily rows, ${int(r.rollups.metadata)} hourly metadata rows; ANALYZE ${r.analyzeSeconds.toFixed(0)} s`,
    '',
    'Command: `pnpm bench:logs' +
      (r.logs === 10_000_000 ? '' : ` --logs ${r.logs}`) +
      (r.ingest[0]?.events === 200_000 ? '' : ` --ingest ${r.ingest[0]?.events}`) +
      '`. Queries read the largest organisation (60% of the traffic) and its largest workspace (half of that), ' +
      `through the services the routes call, after ANALYZE. Ingestion runs last, ` +
      'into the table at that size: events as the gateway publishes them, `requestLogFromEvent`, and ' +
      `\`insertBatch\` in batches of ${REQUEST_LOG_BATCH} (the consumer's), wall clock including building the events; ` +
      'one log-export replica stores 2 batches at once by default (`LOG_INGEST_CONCURRENCY`).',
    '',
    '## Ingestion (batch path)',
    '',
    '| writers | events | seconds | events/s | events/s counting only insertBatch |',
    '|---|---|---|---|---|',
    ...r.ingest.map(
      (i) =>
        `| ${i.writers} | ${int(i.events)} | ${i.seconds.toFixed(1)} | ${int(i.eventsPerS)} | ${int(i.storingEventsPerS)} |`,
    ),
    '',
    '## Queries',
    '',
    '| query | caller | p50 (ms) | p95 (ms) | answered | runs |',
    '|---|---|---|---|---|---|',
    ...r.timings.map(
      (t) =>
        `| ${t.label} | ${t.caller} | ${t.p50Ms.toFixed(1)} | ${t.p95Ms.toFixed(1)} | ${t.answered} | ${t.runs} |`,
    ),
    '',
    '"answered": logs on the page, data points of the graph, or groups on the first page. "runs": calls timed, ' +
      `after ${WARMUPS} warm-ups; a query whose first call took over ${SLOW_MS / 1_000} s is timed after ` +
      `${SLOW_WARMUPS} calls, 3 to ${SLOW_RUNS} times (as many as fit in ${SLOW_BUDGET_MS / 1_000} s), so that a run ` +
      'ends in reasonable time.',
    '',
    ...targetsSection(r.targets),
  ];
  return lines.join('\n');
}

let failed = false;
try {
  const world = makeWorld();
  const now = new Date();
  const firstHourMs = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - HOURS * HOUR_MS;
  await preparePartitions(ds, firstHourMs, now);

  log(`loading ${int(LOGS)} logs over ${DAYS} days`);
  const loaded = await load(world, firstHourMs);
  log(`loaded in ${loaded.seconds.toFixed(0)} s, ${loaded.feedback} feedback`);
  log('rolling up');
  const rolling = performance.now();
  const rolled = await new RollupMaterialiser(ds.manager).run(now);
  const rollupSeconds = (performance.now() - rolling) / 1_000;
  log(`rolled up ${rolled.hours.length} hours in ${rollupSeconds.toFixed(0)} s`);
  const t = performance.now();
  await ds.query('ANALYZE log_export.request_logs');
  await ds.query('ANALYZE log_export.request_rollups');
  await ds.query('ANALYZE log_export.request_rollups_daily');
  await ds.query('ANALYZE log_export.metadata_rollups');
  await ds.query('ANALYZE log_export.rollup_hours');
  await ds.query('ANALYZE log_export.feedback');
  const analyzeSeconds = (performance.now() - t) / 1_000;

  log('timing queries');
  const timings = await queries(world, now);
  for (const q of timings)
    log(`${q.label} (${q.caller}): p50 ${q.p50Ms.toFixed(1)} ms, p95 ${q.p95Ms.toFixed(1)} ms`);

  const ingestRuns: IngestRun[] = [];
  for (const writers of [1, 2]) {
    log(`ingesting ${int(INGEST)} events with ${writers} writer(s)`);
    const run = await ingest(world, writers, LOGS + ingestRuns.length * INGEST);
    log(`${int(run.eventsPerS)} events/s`);
    ingestRuns.push(run);
  }

  const [sizes] = await ds.query(
    `SELECT (SELECT count(*) FROM log_export.request_rollups)::int AS hourly,
            (SELECT count(*) FROM log_export.request_rollups_daily)::int AS daily,
            (SELECT count(*) FROM log_export.metadata_rollups)::int AS metadata,
            (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'log_export.request_logs'::regclass)::float8 AS bytes,
            version() AS postgres`,
  );
  const results: Results = {
    generatedAt: new Date().toISOString(),
    environment: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      postgres: String(sizes.postgres).split(' on ')[0]!,
    },
    logs: LOGS,
    days: DAYS,
    organisations: world.organisations.length,
    workspaces: world.workspaces.length,
    apiKeys: world.workspaces.reduce((n, w) => n + w.keys.length, 0),
    feedback: loaded.feedback,
    rollups: {
      hourly: sizes.hourly,
      daily: sizes.daily,
      metadata: sizes.metadata,
      hours: rolled.hours.length,
      seconds: rollupSeconds,
    },
    tableSizeGiB: sizes.bytes / 2 ** 30,
    loadSeconds: loaded.seconds,
    analyzeSeconds,
    ingest: ingestRuns,
    timings,
    targets: targetsOf(ingestRuns, timings),
  };
  const markdown = toMarkdown(results);
  writeBenchResults(repoRoot, 'logs', results, markdown);
} catch (err) {
  failed = true;
  console.error(err);
} finally {
  if (args.keep) {
    await ds.destroy();
    log(`kept the scratch database ${scratch.name}`);
  } else {
    await scratch.close();
  }
}
process.exit(failed ? 1 : 0);
