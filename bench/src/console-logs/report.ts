import { targetsSection } from '../report.ts';
/**
 * The figures and the report of `pnpm bench:console`: per case, the browser's times from
 * navigation start to the first log row and to the whole first page, their p50 and p95, and
 * whether the target holds.
 */
import { nearestRank } from '../stats.ts';

/** The target of the issue: the logs explorer's first page in the browser, p95 of the slowest case. */
export const TARGET_P95_MS = 1_000;

/** One navigation, as the browser's own clock (performance.now from navigation start) saw it. */
export interface Navigation {
  /** The first log row in the table, at the next animation frame. */
  firstRowMs: number;
  /** The first page: every row of it in the table and "N logs shown" below, at the next frame. */
  firstPageMs: number;
  /** When the app sent GET /v1/logs (resource timing's startTime): the page loaded and started. */
  logsSentMs: number;
  /** How long GET /v1/logs took, from its start to its responseEnd. */
  logsRequestMs: number;
  /** Logs on the first page. */
  rows: number;
}

export interface Percentiles {
  p50: number;
  p95: number;
}

export interface CaseResult {
  label: string;
  path: string;
  runs: number;
  warmups: number;
  /** Logs on the first page (the same on every run). */
  rows: number;
  firstRow: Percentiles;
  firstPage: Percentiles;
  logsSent: Percentiles;
  logsRequest: Percentiles;
}

export interface ConsoleBenchResults {
  generatedAt: string;
  environment: {
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    node: string;
    chromium: string;
    postgres: string;
  };
  logs: number;
  workspaceLogs: number;
  days: number;
  loadSeconds: number;
  analyzeSeconds: number;
  /** How long the rollup job took, after the load, to make every loaded hour. */
  rollupSeconds: number;
  viewport: { width: number; height: number };
  command: string;
  cases: CaseResult[];
  targets: Array<{ target: string; measured: string; holds: boolean }>;
}

/** Nearest-rank p50 and p95 of milliseconds. */
export function percentilesOf(ms: readonly number[]): Percentiles {
  if (ms.length === 0) throw new Error('no samples');
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: nearestRank(sorted, 50), p95: nearestRank(sorted, 95) };
}

export function caseResult(
  label: string,
  path: string,
  warmups: number,
  navigations: readonly Navigation[],
): CaseResult {
  return {
    label,
    path,
    runs: navigations.length,
    warmups,
    rows: navigations[0]?.rows ?? 0,
    firstRow: percentilesOf(navigations.map((n) => n.firstRowMs)),
    firstPage: percentilesOf(navigations.map((n) => n.firstPageMs)),
    logsSent: percentilesOf(navigations.map((n) => n.logsSentMs)),
    logsRequest: percentilesOf(navigations.map((n) => n.logsRequestMs)),
  };
}

export function targetsOf(cases: readonly CaseResult[]): ConsoleBenchResults['targets'] {
  const slowest = cases.reduce((worst, c) => (c.firstPage.p95 > worst.firstPage.p95 ? c : worst));
  return [
    {
      target: `logs explorer first page in the browser ≤ ${TARGET_P95_MS} ms (p95, slowest case)`,
      measured: `${slowest.firstPage.p95.toFixed(0)} ms (${slowest.label})`,
      holds: slowest.firstPage.p95 <= TARGET_P95_MS,
    },
  ];
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (p: Percentiles) => `${p.p50.toFixed(0)} / ${p.p95.toFixed(0)}`;

export function toMarkdown(r: ConsoleBenchResults): string {
  const e = r.environment;
  return [
    '# Switchyard console: the logs explorer over many logs, in a real browser',
    '',
    `- Date: ${r.generatedAt}`,
    `- Machine: ${e.cpus} CPUs (${e.cpuModel}), ${e.memoryGiB} GiB memory`,
    `- Node: ${e.node}; ${e.postgres}; Chromium ${e.chromium} (headless, ${r.viewport.width}×${r.viewport.height})`,
    `- Logs: ${int(r.logs)} over the last ${r.days} days, ${int(r.workspaceLogs)} of them in the signed-in key's workspace ` +
      `(the rest in other synthetic organisations and workspaces); loaded in ${r.loadSeconds.toFixed(0)} s ` +
      `(${int(r.logs / Math.max(r.loadSeconds, 0.001))} logs/s, COPY, with log-export stopped), ANALYZE ${r.analyzeSeconds.toFixed(0)} s; ` +
      `rollups of every hour made in ${r.rollupSeconds.toFixed(0)} s before log-export started again (its job idle while timed)`,
    '',
    `Command: \`${r.command}\`. The five services run as separate processes on real PostgreSQL, Kafka and ` +
      'Redis (the e2e harness); the built console is served by `switchyard console`, behind an ingress that ' +
      'sends API paths to their services, as the Helm chart does. Chromium signs in with a workspace key, then ' +
      'each run is a full navigation to the URL (a new page load: the app starts, reads the identity, asks ' +
      "for the first page; the HTTP cache holds the app's files, as for a returning user). Times are the " +
      "browser's own clock from navigation start: the first log row in the table and the whole first page " +
      '(its rows in the table, which is virtualised and renders the rows in view, and "N logs shown" below it) ' +
      'at the next animation frame; and, from resource timing, when the app sent `GET /v1/logs` (the page ' +
      'loaded, the app started and read the identity) and how long that call took.',
    '',
    '| case | URL | logs on the page | first row p50 / p95 (ms) | whole first page p50 / p95 (ms) | GET /v1/logs sent at p50 / p95 (ms) | GET /v1/logs took p50 / p95 (ms) | runs | warm-ups |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.label} | \`${c.path}\` | ${c.rows} | ${ms(c.firstRow)} | ${ms(c.firstPage)} | ${ms(c.logsSent)} | ${ms(c.logsRequest)} | ${c.runs} | ${c.warmups} |`,
    ),
    '',
    ...targetsSection(r.targets),
  ].join('\n');
}
