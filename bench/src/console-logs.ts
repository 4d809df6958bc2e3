/**
 * `pnpm bench:console`: what a user of the console sees of the logs explorer over millions of
 * logged requests, in a real browser.
 *
 * 1. Starts the five services as separate processes on real PostgreSQL, Kafka and Redis (the e2e
 *    suite's `startStack`; deploy/local/deps.sh started if not running), and creates a workspace
 *    and a service key of it through the admin API.
 * 2. Bulk-loads `--logs` synthetic request logs over the last 30 days into that stack's database
 *    (`logs-scale/load.ts`, as `pnpm bench:logs` does): its largest synthetic organisation,
 *    workspace and key are the real ones, the rest belong to other synthetic organisations.
 *    log-export is stopped meanwhile. Then ANALYZE, and the rollup job makes every hour (as in
 *    `bench:logs`) before log-export starts again, so that its own job has nothing left to do
 *    while the explorer is timed.
 * 3. Serves the built console with `switchyard console` (`startConsoleServer`), behind a small
 *    ingress that sends API paths to their services (`console-logs/ingress.ts`).
 * 4. Drives headless Chromium (`console/test/chromium.ts`): signs in with the key, then for each
 *    case navigates to the logs explorer `--warmups` times, then `--runs` times timed, by the
 *    browser's own clock from navigation start to the first log row and to the whole first page.
 *
 * Writes `bench/results/console-latest.md` and `.data/bench/console.json`; stops everything and
 * drops the data at the end (`--keep`: stops the services, keeps the database).
 *
 *   pnpm bench:console [--logs 10000000] [--runs 20] [--warmups 3] [--keep]
 */
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createDataSource } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import {
  createServiceKey,
  createWorkspace,
  serviceOrder,
  startStack,
  type Stack,
} from '@switchyard/test-e2e';
import { launchChromium, type Browser, type Page } from '../../console/test/chromium.ts';
import { signInWithKey } from '../../console/test/harness.ts';
import { startConsoleServer, type ConsoleServer } from '../../packages/launcher/src/console-server.ts';
import { buildConsole, consoleBuildIsStale, consoleDist } from '../../scripts/console-build.ts';
import { logExportService } from '../../services/log-export/src/service.ts';
import {
  ROLLUP_GRACE_MS,
  RollupMaterialiser,
  floorHour,
} from '../../services/log-export/src/store/rollups.ts';
import { explorerSettled, readMarks, watchExplorer } from './console-logs/browser.ts';
import { startIngress, type Ingress } from './console-logs/ingress.ts';
import {
  caseResult,
  targetsOf,
  toMarkdown,
  type CaseResult,
  type ConsoleBenchResults,
  type Navigation,
} from './console-logs/report.ts';
import { HOUR_MS, count, loadLogs, preparePartitions } from './logs-scale/load.ts';
import { makeWorld } from './logs-scale/synthetic.ts';
import { writeBenchResults } from './report.ts';

type DataSource = ReturnType<typeof createDataSource>;

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const { values: args } = parseArgs({
  options: {
    logs: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '20' },
    warmups: { type: 'string', default: '3' },
    keep: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

const LOGS = count('logs', args.logs, 1_000, 100_000_000);
const RUNS = count('runs', args.runs, 1, 1_000);
const WARMUPS = count('warmups', args.warmups, 0, 100);
const DAYS = 30;
const HOURS = DAYS * 24;
const LOAD_WRITERS = 2;
/** The desktop window the explorer is measured in. */
const VIEWPORT = { width: 1280, height: 800 };
/** Deadlines: a navigation to its first page, and a service call of the set-up. */
const NAVIGATION_TIMEOUT_MS = 60_000;

/** What is measured: the explorer as it opens, and with filters in its URL (what it reads). */
const CASES: Array<{ label: string; path: string }> = [
  { label: 'no filter (last 24 hours)', path: '/logs' },
  { label: 'model and status (last 24 hours)', path: '/logs?model=gpt-4o&status=200' },
  { label: 'model and status class (last 30 days)', path: '/logs?range=30d&model=gpt-4o&status=5xx' },
];

function log(message: string): void {
  console.log(`[bench:console ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** One timed navigation to `path`, as the browser's clock saw it. */
async function navigate(page: Page, path: string): Promise<Navigation> {
  await page.goto(path, { waitUntil: 'commit', timeout: NAVIGATION_TIMEOUT_MS });
  const settled = await page.waitForFunction(explorerSettled, null, {
    timeout: NAVIGATION_TIMEOUT_MS,
    polling: 'raf',
  });
  await settled.dispose();
  const marks = await page.evaluate(readMarks);
  if (marks.failed) throw new Error(`${path}: ${marks.failed}`);
  const call = marks.logsCalls[0];
  if (!call) throw new Error(`${path}: the page showed logs without asking GET /v1/logs`);
  if (marks.firstRowMs === null || marks.firstPageMs === null) throw new Error(`${path}: no marks`);
  if (marks.rows === 0) throw new Error(`${path}: the page shows no logs`);
  return {
    firstRowMs: marks.firstRowMs,
    firstPageMs: marks.firstPageMs,
    logsSentMs: call.start,
    logsRequestMs: call.end - call.start,
    rows: marks.rows,
  };
}

/** How long log-export's rollup job may take to make what is left (an hour begun since). */
const ROLLUP_DEADLINE_MS = 10 * 60_000;
const ROLLUP_POLL_MS = 5_000;

/**
 * Waits until every hour the rollup job would make now (up to the last loaded one) is made and
 * none is left to make again: the steady state of a deployment, nothing running beside the
 * explorer's queries. Answers the seconds it took.
 */
async function rollupsCaughtUp(ds: DataSource, lastLoadedHourMs: number): Promise<number> {
  const started = performance.now();
  const deadline = Date.now() + ROLLUP_DEADLINE_MS;
  let lastLog = 0;
  for (;;) {
    // The newest hour the job makes now (store/rollups.ts), or the last loaded if older.
    const dueMs = Math.min(
      lastLoadedHourMs,
      floorHour(new Date(Date.now() - ROLLUP_GRACE_MS)).getTime() - HOUR_MS,
    );
    const [state] = (await ds.query(
      `SELECT max(bucket) AS newest, count(*) FILTER (WHERE version <> materialised_version AND bucket <= $1)::int AS dirty,
              count(*)::int AS made
         FROM log_export.rollup_hours`,
      [new Date(dueMs).toISOString()],
    )) as Array<{ newest: Date | null; dirty: number; made: number }>;
    if (state && state.newest && state.newest.getTime() >= dueMs && state.dirty === 0) {
      return (performance.now() - started) / 1_000;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `log-export's rollup job did not catch up within ${ROLLUP_DEADLINE_MS / 60_000} min: ` +
          `${state?.made ?? 0} hours made, newest ${state?.newest?.toISOString() ?? 'none'}, ${state?.dirty ?? 0} to make again`,
      );
    }
    if (Date.now() - lastLog >= 60_000) {
      lastLog = Date.now();
      log(`waiting for log-export's rollup job: ${state?.made ?? 0} hours made`);
    }
    await sleep(ROLLUP_POLL_MS);
  }
}

async function measure(page: Page): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const c of CASES) {
    for (let i = 0; i < WARMUPS; i++) await navigate(page, c.path);
    const navigations: Navigation[] = [];
    for (let i = 0; i < RUNS; i++) navigations.push(await navigate(page, c.path));
    const result = caseResult(c.label, c.path, WARMUPS, navigations);
    log(
      `${c.label}: ${result.rows} logs on the page; first row p50 ${result.firstRow.p50.toFixed(0)} ms, ` +
        `p95 ${result.firstRow.p95.toFixed(0)} ms; whole first page p50 ${result.firstPage.p50.toFixed(0)} ms, ` +
        `p95 ${result.firstPage.p95.toFixed(0)} ms`,
    );
    results.push(result);
  }
  return results;
}

let stack: Stack | undefined;
let consoleServer: ConsoleServer | undefined;
let ingress: Ingress | undefined;
let browser: Browser | undefined;
let failed = false;
try {
  if (consoleBuildIsStale()) {
    log('building the console');
    await buildConsole();
  }
  log('starting the services');
  stack = await startStack({
    upstreamKey: 'sk-bench-console',
    // The oldest synthetic day must outlive the run: retention would drop its partition.
    env: { LOG_RETENTION_DAYS: '365' },
  });
  const workspaceId = await createWorkspace(stack, 'Bench console');
  const key = await createServiceKey(stack, workspaceId, 'bench console');
  const self = await stack.request('GET', '/v1/auth/key', { key: key.key });
  if (self.status !== 200) throw new Error(`GET /v1/auth/key answered ${self.status}: ${self.text}`);
  const organisationId = self.body.organisation_id as string;

  const logger = createLogger('bench-console', 'error');
  logger.silent = true;
  const database = logExportService.database!;
  const ds = createDataSource({
    url: stack.database.url,
    schema: database.schema,
    entities: database.entities,
    migrations: database.migrations,
    poolSize: LOAD_WRITERS + 1,
    // A COPY of an hour and ANALYZE of the whole table run longer than a request's query may.
    queryTimeoutMs: null,
    logger,
  });
  await ds.initialize();
  let loadSeconds: number;
  let analyzeSeconds: number;
  let workspaceLogs: number;
  let rollupSeconds: number;
  try {
    const world = makeWorld({ organisationId, workspaceId, apiKeyId: key.id });
    const now = new Date();
    const firstHourMs = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - HOURS * HOUR_MS;
    // Loaded with log-export stopped, and rolled up here before it starts again: its rollup job
    // would otherwise make the hours while they are loaded (COPY marks no hour as changed) and
    // then, at most 24 hours every 30 s, while the explorer is timed.
    await stack.stopService('log-export');
    await preparePartitions(ds, firstHourMs, now);
    log(`loading ${int(LOGS)} logs over ${DAYS} days`);
    const loaded = await loadLogs(ds, {
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
    loadSeconds = loaded.seconds;
    log(
      `loaded in ${loadSeconds.toFixed(0)} s (${int(LOGS / loadSeconds)} logs/s), ${loaded.feedback} feedback`,
    );
    const t = performance.now();
    await ds.query('ANALYZE log_export.request_logs');
    await ds.query('ANALYZE log_export.feedback');
    analyzeSeconds = (performance.now() - t) / 1_000;
    const [row] = await ds.query(
      'SELECT count(*)::int AS n FROM log_export.request_logs WHERE workspace_id = $1',
      [workspaceId],
    );
    workspaceLogs = row.n;
    log(`ANALYZE in ${analyzeSeconds.toFixed(0)} s; ${int(workspaceLogs)} logs in the key's workspace`);
    log('rolling up');
    const rolling = performance.now();
    const rolled = await new RollupMaterialiser(ds.manager).run(new Date());
    rollupSeconds = (performance.now() - rolling) / 1_000;
    log(`rolled up ${rolled.hours.length} hours in ${rollupSeconds.toFixed(0)} s`);
    await stack.startService('log-export');
    await rollupsCaughtUp(ds, firstHourMs + (HOURS - 1) * HOUR_MS);
  } finally {
    await ds.destroy();
  }

  const served = stack;
  consoleServer = await startConsoleServer({
    HOST: '127.0.0.1',
    PORT: '0',
    CONSOLE_DIR: consoleDist,
    LOG_LEVEL: 'warn',
  });
  ingress = await startIngress((service) => served.url(service), `http://127.0.0.1:${consoleServer.port}`);
  log(`the console at ${ingress.url}`);

  browser = await launchChromium();
  const context = await browser.newContext({ baseURL: ingress.url, viewport: VIEWPORT });
  context.setDefaultTimeout(NAVIGATION_TIMEOUT_MS);
  await context.addInitScript(watchExplorer);
  const page = await context.newPage();
  await signInWithKey(page, key.key);
  log(`signed in; ${WARMUPS} warm-ups and ${RUNS} timed navigations per case`);
  const cases = await measure(page);
  await context.close();

  const pg = await stack.database.pool.query<{ version: string }>('SELECT version() AS version');
  const results: ConsoleBenchResults = {
    generatedAt: new Date().toISOString(),
    environment: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      chromium: browser.version(),
      postgres: String(pg.rows[0]?.version ?? 'PostgreSQL').split(' on ')[0]!,
    },
    logs: LOGS,
    workspaceLogs,
    days: DAYS,
    loadSeconds,
    analyzeSeconds,
    rollupSeconds,
    viewport: VIEWPORT,
    command:
      'pnpm bench:console' +
      (LOGS === 10_000_000 ? '' : ` --logs ${LOGS}`) +
      (RUNS === 20 ? '' : ` --runs ${RUNS}`) +
      (WARMUPS === 3 ? '' : ` --warmups ${WARMUPS}`),
    cases,
    targets: targetsOf(cases),
  };
  const markdown = toMarkdown(results);
  writeBenchResults(repoRoot, 'console', results, markdown);
} catch (err) {
  failed = true;
  console.error(err);
} finally {
  await browser?.close().catch(() => undefined);
  await ingress?.close().catch(() => undefined);
  await consoleServer?.close().catch(() => undefined);
  if (stack && args.keep) {
    for (const service of [...serviceOrder].reverse())
      await stack.stopService(service).catch(() => undefined);
    await stack.upstream.close().catch(() => undefined);
    await stack.database.pool.end().catch(() => undefined);
    log(`kept the database ${stack.database.name} (${stack.database.url.replace(/\/\/[^@]*@/, '//')})`);
  } else {
    await stack?.stop().catch((err: unknown) => console.error(err));
  }
}
process.exit(failed ? 1 : 0);
