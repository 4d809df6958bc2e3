import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  TARGET_P95_MS,
  caseResult,
  percentilesOf,
  targetsOf,
  toMarkdown,
  type ConsoleBenchResults,
  type Navigation,
} from './report.ts';

/** A navigation whose first page came at `ms`, the first row 5 ms before it. */
const nav = (ms: number, rows = 50): Navigation => ({
  firstRowMs: ms - 5,
  firstPageMs: ms,
  logsSentMs: ms / 2,
  logsRequestMs: ms / 4,
  rows,
});

describe('bench:console report', () => {
  it('takes nearest-rank p50 and p95 whatever the order of the samples', () => {
    const ms = Array.from({ length: 20 }, (_, i) => (i + 1) * 10).reverse();
    assert.deepEqual(percentilesOf(ms), { p50: 100, p95: 190 });
    assert.deepEqual(percentilesOf([7]), { p50: 7, p95: 7 });
    assert.throws(() => percentilesOf([]), /no samples/);
  });

  it('sums up a case from its navigations', () => {
    const c = caseResult('no filter', '/logs', 3, [nav(400), nav(200), nav(300)]);
    assert.equal(c.runs, 3);
    assert.equal(c.warmups, 3);
    assert.equal(c.rows, 50);
    assert.deepEqual(c.firstPage, { p50: 300, p95: 400 });
    assert.deepEqual(c.firstRow, { p50: 295, p95: 395 });
    assert.deepEqual(c.logsSent, { p50: 150, p95: 200 });
  });

  it('holds the target to the slowest case, and names it', () => {
    const fast = caseResult('fast', '/logs', 0, [nav(300)]);
    const slow = caseResult('slow', '/logs?model=x', 0, [nav(TARGET_P95_MS + 1)]);
    const [failing] = targetsOf([fast, slow]);
    assert.equal(failing!.holds, false);
    assert.equal(failing!.measured, `${TARGET_P95_MS + 1} ms (slow)`);
    const [holding] = targetsOf([fast, caseResult('at the target', '/logs', 0, [nav(TARGET_P95_MS)])]);
    assert.equal(holding!.holds, true);
  });

  it('writes a table row per case with as many cells as the header, and the targets', () => {
    const cases = [
      caseResult('no filter', '/logs', 3, [nav(400)]),
      caseResult('two filters', '/logs?a=1', 3, [nav(900, 8)]),
    ];
    const results: ConsoleBenchResults = {
      generatedAt: '2026-01-01T00:00:00.000Z',
      environment: {
        cpus: 2,
        cpuModel: 'cpu',
        memoryGiB: 8,
        node: 'v20',
        chromium: '1.0',
        postgres: 'PostgreSQL 15',
      },
      logs: 10_000_000,
      workspaceLogs: 3_000_000,
      days: 30,
      loadSeconds: 1_000,
      analyzeSeconds: 10,
      rollupSeconds: 600,
      viewport: { width: 1280, height: 800 },
      command: 'pnpm bench:console',
      cases,
      targets: targetsOf(cases),
    };
    const markdown = toMarkdown(results);
    const table = markdown.split('\n').filter((l) => l.startsWith('| ') && l.includes('`/logs'));
    const header = markdown.split('\n').find((l) => l.startsWith('| case |'))!;
    const cells = (line: string) => line.split(' | ').length;
    assert.equal(table.length, 2);
    for (const row of table) assert.equal(cells(row), cells(header));
    assert.match(
      table[1]!,
      /^\| two filters \| `\/logs\?a=1` \| 8 \| 895 \/ 895 \| 900 \/ 900 \| 450 \/ 450 \| 225 \/ 225 \| 1 \| 3 \|$/,
    );
    assert.match(markdown, /10,000,000 over the last 30 days, 3,000,000 of them/);
    assert.match(markdown, /10,000 logs\/s/);
    assert.match(
      markdown,
      /\| logs explorer first page in the browser ≤ 1000 ms \(p95, slowest case\) \| 900 ms \(two filters\) \| yes \|/,
    );
  });
});
