import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoadResult } from './load.ts';
import type { CpuUse } from './probe.ts';
import { evaluateTargets, pair, type BenchResults } from './report.ts';

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
