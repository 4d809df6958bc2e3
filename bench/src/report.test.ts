import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { LoadResult } from './load.ts';
import type { CpuUse } from './probe.ts';
import { RESULT_DIRS, evaluateTargets, pair, toMarkdown, writeResults, type BenchResults } from './report.ts';
import type { StreamResult } from './ttft.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

function load(reqPerSec: number, p50: number, p99: number, over: Partial<LoadResult> = {}): LoadResult {
  return {
    connections: 1,
    durationS: 10,
    requests: reqPerSec * 10,
    reqPerSec,
    latencyUs: { count: reqPerSec * 10, min: p50, mean: p50, p50, p90: p99, p99, max: p99 },
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    droppedSamples: 0,
    ...over,
  };
}

function cpu(othersMs: number): CpuUse {
  return {
    cpu: 1,
    gatewayMainMs: 5_000,
    gatewayMainWaitMs: 1_000,
    gatewayOtherThreadsMs: 500,
    upstreamMs: 1_000,
    upstreamMainWaitMs: 500,
    othersMs,
    stealMs: othersMs,
  };
}

const cost = { cpuMsPerRequest: 0.5, drainMs: 0 };
const rss: BenchResults['rss'] = { idleMiB: 110, peakMiB: 130, afterMiB: 115, samples: 10, phasePeakMiB: {} };

describe('benchmark targets', () => {
  it('holds when the gateway meets each goal in undisturbed runs, with the reference proxy beside it', () => {
    const c1 = pair(1, load(2_500, 250, 1_000), load(1_500, 700, 3_100), cost, {
      cpuUse: { direct: cpu(100), gateway: cpu(200) },
      reference: { result: load(2_000, 400, 1_800), cpuMsPerRequest: 0.3 },
    });
    const c32 = pair(32, load(10_000, 3_000, 9_000), load(1_500, 20_000, 60_000), cost);
    assert.equal(c1.addedP50Us, 450);
    assert.equal(c1.reference?.addedP50Us, 150);
    assert.equal(c1.reference?.addedP99Us, 800);
    assert.equal(c1.reference?.throughputRatio, 0.8);
    const targets = evaluateTargets([c1, c32], rss);
    const byName = Object.fromEntries(targets.map((t) => [t.name, t]));
    assert.equal(byName['added latency p50, concurrency 1']!.holds, true);
    assert.equal(byName['added latency p50, concurrency 1']!.reference, '+150 µs');
    assert.equal(byName['added latency p99, concurrency 1']!.holds, false);
    assert.equal(byName['added latency p99, concurrency 1']!.disturbed, false);
    assert.equal(byName['throughput gateway / direct, concurrency 32']!.holds, true);
    assert.equal(byName['gateway RSS peak under load']!.holds, true);
  });

  it('does not judge a latency goal against a disturbed direct run, however good it looks', () => {
    // The direct run was slowed by 2 s of other load on the CPU: the difference shrinks.
    const c1 = pair(1, load(1_200, 650, 3_800), load(800, 890, 5_900), cost, {
      cpuUse: { direct: cpu(2_000), gateway: cpu(100) },
    });
    const [p50] = evaluateTargets([c1], rss);
    assert.equal(p50!.name, 'added latency p50, concurrency 1');
    assert.equal(c1.addedP50Us, 240);
    assert.equal(p50!.holds, false);
    assert.equal(p50!.disturbed, true);
  });

  it('does not count a run with errors', () => {
    const c32 = pair(32, load(10_000, 3_000, 9_000), load(2_000, 15_000, 40_000, { errors: 3 }), cost);
    const throughput = evaluateTargets([c32], rss).find((t) => t.name.startsWith('throughput'))!;
    assert.equal(throughput.holds, false);
    assert.equal(throughput.disturbed, false);
  });
});

function stream(ttftP50: number, ttftP99: number): StreamResult {
  const summary = (p50: number, p99: number) => ({
    count: 300,
    min: p50,
    mean: p50,
    p50,
    p90: p99,
    p99,
    max: p99,
  });
  return {
    requests: 300,
    failures: 0,
    ttftUs: summary(ttftP50, ttftP99),
    totalUs: summary(ttftP50 + 30, ttftP99 + 30),
  };
}

/** A whole run's results: concurrency 1 disturbed in its direct run, concurrency 32 clean. */
function run(): BenchResults {
  const nonStreaming = [
    pair(1, load(3_000, 250, 1_200), load(700, 800, 7_700), cost, {
      cpuUse: { direct: cpu(2_000), gateway: cpu(100) },
      reference: { result: load(1_900, 470, 1_400), cpuMsPerRequest: 0.29 },
    }),
    pair(32, load(9_800, 3_000, 11_000), load(1_600, 18_000, 54_000), cost),
  ];
  const targets = evaluateTargets(nonStreaming, rss);
  const direct = stream(630, 3_300);
  const gateway = stream(1_800, 9_400);
  return {
    generatedAt: '2026-01-02T03:04:05.000Z',
    environment: { node: 'v20.19.0', platform: 'linux x64', cpus: 2, cpuModel: 'Test CPU' },
    config: {
      mode: 'distributed',
      placement: 'load generator on CPU 0; fake upstream and gateway on CPU 1',
      nodeOptions: '--max-old-space-size=384',
      durationS: 10,
      warmupS: 2,
      jitWarmupS: 30,
      concurrencies: [1, 32],
      streamRequests: 300,
      streamWarmup: 20,
      directModel: 'gpt-4o-mini',
      gatewayModel: '@bench/gpt-4o-mini',
      rssIntervalMs: 100,
    },
    nonStreaming,
    streaming: {
      concurrency: 1,
      direct,
      reference: stream(850, 6_600),
      gateway,
      overheadP50Us: gateway.ttftUs.p50 - direct.ttftUs.p50,
      overheadP99Us: gateway.ttftUs.p99 - direct.ttftUs.p99,
      gatewayCost: cost,
    },
    rss,
    targets,
    allTargetsHold: targets.every((t) => t.holds),
  };
}

describe('benchmark results files', () => {
  it('writes the report as toMarkdown renders it to <report>/latest.md and <data>/results.md, every number to results.json', (t) => {
    const root = mkdtempSync(join(tmpdir(), 'bench-results-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const results = run();
    const dirs = { data: join(root, RESULT_DIRS.data), report: join(root, RESULT_DIRS.report) };
    const { markdown, files } = writeResults(results, dirs);
    assert.equal(markdown, toMarkdown(results));
    assert.equal(files.latest, join(root, 'bench', 'results', 'latest.md'));
    assert.equal(readFileSync(files.latest, 'utf8'), markdown);
    assert.equal(files.results, join(root, '.data', 'bench', 'results.md'));
    assert.equal(readFileSync(files.results, 'utf8'), markdown);
    assert.deepEqual(JSON.parse(readFileSync(files.json, 'utf8')), JSON.parse(JSON.stringify(results)));
  });

  it('the manual names the files where they are written', () => {
    const manual = readFileSync(join(repoRoot, 'bench', 'README.md'), 'utf8');
    for (const file of [
      join(RESULT_DIRS.report, 'latest.md'),
      join(RESULT_DIRS.data, 'results.json'),
      join(RESULT_DIRS.data, 'results.md'),
    ])
      assert.ok(manual.includes(`\`${file}\``), `bench/README.md names ${file}`);
  });

  it('the report gives the environment, and each target as held, not held or not judged', () => {
    const report = toMarkdown(run());
    for (const line of [
      '- Date: 2026-01-02T03:04:05.000Z',
      '- Mode: distributed',
      '- CPUs: 2 (Test CPU)',
      '- Node: v20.19.0',
    ])
      assert.ok(report.includes(`\n${line}\n`), line);
    const row = (name: string) => report.split('\n').find((l) => l.startsWith(`| ${name} |`)) ?? '';
    assert.match(row('added latency p50, concurrency 1'), /\*\*not judged\*\* \(disturbed run\)/);
    assert.match(row('throughput gateway / direct, concurrency 32'), /\| yes \|/);
    assert.match(row('gateway RSS peak under load'), /\| yes \|/);
    const failing = toMarkdown({
      ...run(),
      rss: { ...rss, peakMiB: 151 },
      targets: evaluateTargets([], { ...rss, peakMiB: 151 }),
    });
    assert.match(
      failing.split('\n').find((l) => l.startsWith('| gateway RSS peak under load |')) ?? '',
      /\| \*\*no\*\* \|/,
    );
  });
});
