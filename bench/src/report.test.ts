import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { LoadResult } from './load.ts';
import type { CpuUse, GatewayRuntime } from './probe.ts';
import {
  GOALS,
  RESULT_DIRS,
  allHold,
  evaluateTargets,
  guardrailsStreams,
  mcpPair,
  pair,
  toMarkdown,
  writeResults,
  type BenchResults,
  type NonStreamingPair,
} from './report.ts';
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

function runtime(gcCount: number): GatewayRuntime {
  const pauses = { count: gcCount, totalMs: gcCount * 0.5, maxMs: 1.25 };
  return {
    gc: { ...pauses, byKind: { scavenge: pauses } },
    eventLoopDelayUs: { p50: 120, p99: 900, max: 4_000, samples: 1_000 },
    slowest: { thresholdUs: 3_000, count: 70, withGc: 7, gcMsInThem: 3.5, allWithGcShare: 0.01 },
  };
}

const POLICY_TARGETS = {
  throughput: 'throughput with policies / without, concurrency 32',
  p50: 'added p50 from policies, concurrency 1',
};

/**
 * Concurrency 1 and 32 with the gateway-with-policies path: the gateway at 1,000 req/s and p50
 * 1,000 µs at both, the policed gateway as given.
 */
function withPolicies(
  c1Policies: LoadResult,
  c32Policies: LoadResult,
  cpuUse: NonStreamingPair['cpuUse'] = undefined,
): NonStreamingPair[] {
  return [
    pair(1, load(3_000, 250, 1_000), load(1_000, 1_000, 3_000), cost, {
      cpuUse,
      policies: { result: c1Policies, gatewayCost: { cpuMsPerRequest: 0.55, drainMs: 300 } },
    }),
    pair(32, load(10_000, 3_000, 9_000), load(1_000, 1_000, 3_000), cost, {
      cpuUse,
      policies: { result: c32Policies, gatewayCost: cost },
    }),
  ];
}

const GUARDRAIL_TARGETS = {
  throughput: 'throughput with guardrails / without, concurrency 32',
  ttft: 'added TTFT p50 from guardrails, streaming',
};

/**
 * Concurrency 1 and 32 with the gateway-with-guardrails path: the gateway at 1,000 req/s and p50
 * 1,000 µs at both, the guarded gateway as given.
 */
function withGuardrails(
  c1Guardrails: LoadResult,
  c32Guardrails: LoadResult,
  cpuUse: NonStreamingPair['cpuUse'] = undefined,
): NonStreamingPair[] {
  return [
    pair(1, load(3_000, 250, 1_000), load(1_000, 1_000, 3_000), cost, {
      cpuUse,
      guardrails: { result: c1Guardrails, gatewayCost: { cpuMsPerRequest: 0.6, drainMs: 400 } },
    }),
    pair(32, load(10_000, 3_000, 9_000), load(1_000, 1_000, 3_000), cost, {
      cpuUse,
      guardrails: { result: c32Guardrails, gatewayCost: cost },
    }),
  ];
}

function targetsByName(nonStreaming: NonStreamingPair[], streaming?: Parameters<typeof evaluateTargets>[2]) {
  return Object.fromEntries(evaluateTargets(nonStreaming, rss, streaming).map((t) => [t.name, t]));
}

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

  it('sets the gateway with policies against the gateway without, and against direct', () => {
    const [c1] = withPolicies(load(950, 1_120, 3_400), load(900, 1_000, 3_000));
    assert.equal(c1!.policies!.policiesAddedP50Us, 120);
    assert.equal(c1!.policies!.policiesThroughputRatio, 0.95);
    assert.equal(c1!.policies!.addedP50Us, 870);
    assert.equal(c1!.policies!.addedP99Us, 2_400);
    assert.equal(c1!.policies!.throughputRatio, 0.317);
    assert.deepEqual(c1!.policies!.gatewayCost, { cpuMsPerRequest: 0.55, drainMs: 300 });
    // The gateway's own figures are those without policies.
    assert.equal(c1!.addedP50Us, 750);
  });

  it('holds the policy targets up to their goals and not beyond', () => {
    assert.equal(GOALS.policiesThroughputRatioAtC32, 0.9);
    assert.equal(GOALS.policiesAddedP50UsAtC1, 150);
    const atGoal = targetsByName(withPolicies(load(1_000, 1_150, 3_000), load(900, 1_000, 3_000)));
    assert.equal(atGoal[POLICY_TARGETS.throughput]!.measured, '90.0%');
    assert.equal(atGoal[POLICY_TARGETS.throughput]!.goal, '≥ 90.0%');
    assert.equal(atGoal[POLICY_TARGETS.throughput]!.holds, true);
    assert.equal(atGoal[POLICY_TARGETS.p50]!.measured, '+150 µs');
    assert.equal(atGoal[POLICY_TARGETS.p50]!.goal, '≤ 150 µs');
    assert.equal(atGoal[POLICY_TARGETS.p50]!.holds, true);

    const beyond = targetsByName(withPolicies(load(1_000, 1_151, 3_000), load(899, 1_000, 3_000)));
    assert.equal(beyond[POLICY_TARGETS.throughput]!.measured, '89.9%');
    assert.equal(beyond[POLICY_TARGETS.throughput]!.holds, false);
    assert.equal(beyond[POLICY_TARGETS.throughput]!.disturbed, false);
    assert.equal(beyond[POLICY_TARGETS.p50]!.measured, '+151 µs');
    assert.equal(beyond[POLICY_TARGETS.p50]!.holds, false);
    assert.equal(beyond[POLICY_TARGETS.p50]!.disturbed, false);

    // Faster with policies than without (run-to-run noise) holds too.
    const faster = targetsByName(withPolicies(load(1_000, 980, 3_000), load(1_050, 1_000, 3_000)));
    assert.equal(faster[POLICY_TARGETS.p50]!.measured, '−20 µs');
    assert.equal(faster[POLICY_TARGETS.p50]!.holds, true);
    assert.equal(faster[POLICY_TARGETS.throughput]!.holds, true);
  });

  it('does not count a policed run with errors or non-2xx answers', () => {
    const byName = targetsByName(
      withPolicies(load(1_000, 1_050, 3_000, { non2xx: 1 }), load(950, 1_000, 3_000, { errors: 2 })),
    );
    assert.equal(byName[POLICY_TARGETS.p50]!.holds, false);
    assert.equal(byName[POLICY_TARGETS.p50]!.disturbed, false);
    assert.equal(byName[POLICY_TARGETS.throughput]!.holds, false);
    // The gateway's own targets do not look at the policed runs.
    assert.equal(byName['throughput gateway / direct, concurrency 32']!.holds, true);
  });

  it('does not judge the policy targets when the gateway run with or without policies was disturbed', () => {
    const good = [load(1_000, 1_050, 3_000), load(950, 1_000, 3_000)] as const;
    for (const cpuUse of [
      { direct: cpu(100), gateway: cpu(100), policies: cpu(1_500) },
      { direct: cpu(100), gateway: cpu(1_500), policies: cpu(100) },
    ]) {
      const byName = targetsByName(withPolicies(...good, cpuUse));
      for (const name of Object.values(POLICY_TARGETS)) {
        assert.equal(byName[name]!.holds, false, name);
        assert.equal(byName[name]!.disturbed, true, name);
      }
    }
    // A disturbed direct run does not touch them: they do not compare with direct.
    const byName = targetsByName(
      withPolicies(...good, { direct: cpu(1_500), gateway: cpu(100), policies: cpu(100) }),
    );
    for (const name of Object.values(POLICY_TARGETS)) assert.equal(byName[name]!.holds, true, name);
    assert.equal(byName['added latency p50, concurrency 1']!.disturbed, true);
  });

  it('sets the gateway with guardrails against the gateway without, and against direct', () => {
    const [c1] = withGuardrails(load(900, 1_080, 3_500), load(900, 1_000, 3_000));
    assert.equal(c1!.guardrails!.guardrailsAddedP50Us, 80);
    assert.equal(c1!.guardrails!.guardrailsThroughputRatio, 0.9);
    assert.equal(c1!.guardrails!.addedP50Us, 830);
    assert.equal(c1!.guardrails!.addedP99Us, 2_500);
    assert.equal(c1!.guardrails!.throughputRatio, 0.3);
    assert.deepEqual(c1!.guardrails!.gatewayCost, { cpuMsPerRequest: 0.6, drainMs: 400 });
    assert.equal(c1!.policies, undefined);
    assert.equal(c1!.addedP50Us, 750);
  });

  it('holds the guardrail throughput target down to 85% and not below', () => {
    assert.equal(GOALS.guardrailsThroughputRatioAtC32, 0.85);
    const atGoal = targetsByName(withGuardrails(load(1_000, 1_000, 3_000), load(850, 1_000, 3_000)));
    assert.equal(atGoal[GUARDRAIL_TARGETS.throughput]!.measured, '85.0%');
    assert.equal(atGoal[GUARDRAIL_TARGETS.throughput]!.goal, '≥ 85.0%');
    assert.equal(atGoal[GUARDRAIL_TARGETS.throughput]!.holds, true);
    const below = targetsByName(withGuardrails(load(1_000, 1_000, 3_000), load(849, 1_000, 3_000)));
    assert.equal(below[GUARDRAIL_TARGETS.throughput]!.measured, '84.9%');
    assert.equal(below[GUARDRAIL_TARGETS.throughput]!.holds, false);
    assert.equal(below[GUARDRAIL_TARGETS.throughput]!.disturbed, false);
    // The policy targets stay away: that path did not run.
    assert.equal(below[POLICY_TARGETS.throughput], undefined);
  });

  it('does not count a guarded run with errors, and does not judge it when it or the gateway run was disturbed', () => {
    const errors = targetsByName(
      withGuardrails(load(1_000, 1_000, 3_000), load(950, 1_000, 3_000, { errors: 1 })),
    );
    assert.equal(errors[GUARDRAIL_TARGETS.throughput]!.holds, false);
    assert.equal(errors[GUARDRAIL_TARGETS.throughput]!.disturbed, false);
    assert.equal(errors['throughput gateway / direct, concurrency 32']!.holds, true);
    const good = [load(1_000, 1_000, 3_000), load(950, 1_000, 3_000)] as const;
    for (const cpuUse of [
      { direct: cpu(100), gateway: cpu(100), guardrails: cpu(1_500) },
      { direct: cpu(100), gateway: cpu(1_500), guardrails: cpu(100) },
    ]) {
      const target = targetsByName(withGuardrails(...good, cpuUse))[GUARDRAIL_TARGETS.throughput]!;
      assert.equal(target.holds, false);
      assert.equal(target.disturbed, true);
    }
    const directDisturbed = targetsByName(
      withGuardrails(...good, { direct: cpu(1_500), gateway: cpu(100), guardrails: cpu(100) }),
    );
    assert.equal(directDisturbed[GUARDRAIL_TARGETS.throughput]!.holds, true);
  });

  it('reports the TTFT the guardrails add with no goal, and it never fails the run', () => {
    const gateway = stream(1_800, 9_400);
    const guarded = guardrailsStreams(gateway, stream(1_950, 9_300), { cpuMsPerRequest: 0.9, drainMs: 100 });
    assert.equal(guarded.addedTtftP50Us, 150);
    assert.equal(guarded.addedTtftP99Us, -100);
    // Every judged goal met: the gateway adds +300 µs at p50 and +1,000 µs at p99 at concurrency 1.
    const nonStreaming = [
      pair(1, load(3_000, 600, 2_000), load(2_000, 900, 3_000), cost, {
        guardrails: { result: load(1_900, 950, 3_100), gatewayCost: cost },
      }),
      pair(32, load(10_000, 3_000, 9_000), load(1_000, 1_000, 3_000), cost, {
        guardrails: { result: load(900, 1_000, 3_000), gatewayCost: cost },
      }),
    ];
    const targets = evaluateTargets(nonStreaming, rss, { gateway, guardrails: guarded });
    assert.ok(targets.filter((t) => !t.reported).every((t) => t.holds));
    const ttft = targets.find((t) => t.name === GUARDRAIL_TARGETS.ttft)!;
    assert.deepEqual(
      { measured: ttft.measured, goal: ttft.goal, holds: ttft.holds, reported: ttft.reported },
      { measured: '+150 µs', goal: 'none (reported)', holds: false, reported: true },
    );
    assert.equal(allHold(targets), true);
    // A target that does not hold still fails the run.
    assert.equal(
      allHold(evaluateTargets(nonStreaming, { ...rss, peakMiB: 151 }, { gateway, guardrails: guarded })),
      false,
    );
    // Without the guarded streams there is nothing to report.
    assert.equal(targetsByName(nonStreaming, { gateway })[GUARDRAIL_TARGETS.ttft], undefined);
  });

  it('has no policy or guardrail targets without those paths', () => {
    const names = evaluateTargets(
      [
        pair(1, load(3_000, 250, 1_000), load(1_000, 1_000, 3_000), cost),
        pair(32, load(10_000, 3_000, 9_000), load(1_000, 1_000, 3_000), cost),
      ],
      rss,
    ).map((t) => t.name);
    assert.deepEqual(names, [
      'added latency p50, concurrency 1',
      'added latency p99, concurrency 1',
      'throughput gateway / direct, concurrency 32',
      'gateway RSS at idle',
      'gateway RSS peak under load',
    ]);
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

const INPUT_CHECKS = [
  { id: 'default.regexMatch', parameters: { rule: '\\bbench-deny-input\\b', flags: 'i', not: true } },
  { id: 'default.pii', parameters: {} },
  { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 10_000 } },
];
const OUTPUT_CHECKS = [
  {
    id: 'default.regexMatch',
    parameters: { rule: '\\bbench-deny-output\\b', flags: 'i', not: true, maxMatchLength: 32 },
  },
];

/**
 * A whole run's results: concurrency 1 disturbed in its direct run, concurrency 32 clean; with
 * the gateway-with-policies path unless `policies` is false, and the gateway-with-guardrails
 * path unless `guardrails` is false.
 */
function run({ policies = true, guardrails = true } = {}): BenchResults {
  const nonStreaming = [
    pair(1, load(3_000, 250, 1_200), load(700, 800, 7_700), cost, {
      cpuUse: {
        direct: cpu(2_000),
        gateway: cpu(100),
        ...(policies ? { policies: { ...cpu(120), gatewayMainMs: 5_400 } } : {}),
        ...(guardrails ? { guardrails: { ...cpu(130), gatewayMainMs: 5_700 } } : {}),
      },
      reference: { result: load(1_900, 470, 1_400), cpuMsPerRequest: 0.29 },
      runtime: runtime(40),
      policies: policies
        ? {
            result: load(690, 870, 7_900),
            gatewayCost: { cpuMsPerRequest: 0.57, drainMs: 1_200 },
            runtime: runtime(44),
          }
        : undefined,
      guardrails: guardrails
        ? {
            result: load(680, 880, 8_000),
            gatewayCost: { cpuMsPerRequest: 0.62, drainMs: 1_300 },
            runtime: runtime(47),
          }
        : undefined,
    }),
    pair(32, load(9_800, 3_000, 11_000), load(1_600, 18_000, 54_000), cost, {
      policies: policies
        ? { result: load(1_520, 19_000, 56_000, { non2xx: 2 }), gatewayCost: cost }
        : undefined,
      guardrails: guardrails ? { result: load(1_440, 20_000, 60_000), gatewayCost: cost } : undefined,
    }),
  ];
  const direct = stream(630, 3_300);
  const gateway = stream(1_800, 9_400);
  const streaming: BenchResults['streaming'] = {
    concurrency: 1,
    direct,
    reference: stream(850, 6_600),
    gateway,
    overheadP50Us: gateway.ttftUs.p50 - direct.ttftUs.p50,
    overheadP99Us: gateway.ttftUs.p99 - direct.ttftUs.p99,
    gatewayCost: cost,
    guardrails: guardrails
      ? guardrailsStreams(gateway, stream(1_990, 9_900), { cpuMsPerRequest: 0.93, drainMs: 200 })
      : undefined,
  };
  const targets = evaluateTargets(nonStreaming, rss, streaming);
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
      ...(policies
        ? { policies: { rateLimitPerHour: 1_000_000_000, usageLimitTokens: 1_000_000_000_000 } }
        : {}),
      ...(guardrails ? { guardrails: { input: INPUT_CHECKS, output: OUTPUT_CHECKS } } : {}),
    },
    nonStreaming,
    streaming,
    rss,
    targets,
    allTargetsHold: allHold(targets),
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

  it('the report gives the gateway with policies a row beside the gateway, and the policy targets', () => {
    const report = toMarkdown(run());
    const lines = report.split('\n');
    const nonStreaming = lines.slice(lines.indexOf('## Non-streaming `POST /v1/chat/completions`'));
    const rows = (concurrency: number) =>
      nonStreaming.filter((l) => l.startsWith(`| ${concurrency} | `)).map((l) => l.split(' | ')[1]);
    assert.deepEqual(rows(1).slice(0, 5), [
      'direct',
      'reference proxy',
      'gateway',
      'gateway with policies',
      'gateway with guardrails',
    ]);
    assert.deepEqual(rows(32).slice(0, 4), [
      'direct',
      'gateway',
      'gateway with policies',
      'gateway with guardrails',
    ]);
    assert.ok(
      lines.includes(
        '| 1 | gateway with policies | 690 | 870 | 7,900 | +620 | +6,700 | 23.0% | 0.57 | 1.2 | 0 / 0 |',
      ),
    );
    assert.ok(
      lines.includes(
        '| 32 | gateway with policies | 1,520 | 19,000 | 56,000 | +16,000 | +45,000 | 15.5% | 0.50 | 0.0 | 2 / 0 |',
      ),
    );
    assert.match(report, /one rate-limit policy \(requests, 1,000,000,000 per hour\)/);
    assert.match(report, /usage-limit policy \(tokens, 1,000,000,000,000\)/);
    // GC and event loop, and who used the CPU, per path.
    assert.ok(lines.some((l) => l.startsWith('| 1 | gateway | 40 | ')));
    assert.ok(lines.some((l) => l.startsWith('| 1 | gateway with policies | 44 | ')));
    assert.ok(lines.some((l) => l.startsWith('| 1 | gateway with policies | 5,400 | ')));

    const row = (name: string) => lines.find((l) => l.startsWith(`| ${name} |`)) ?? '';
    // +70 µs at concurrency 1 is within the goal, but the gateway run with policies is clean and
    // undisturbed only at concurrency 1; at 32 it had non-2xx answers.
    assert.equal(row(POLICY_TARGETS.p50), `| ${POLICY_TARGETS.p50} | +70 µs | ≤ 150 µs | yes |  |`);
    assert.equal(
      row(POLICY_TARGETS.throughput),
      `| ${POLICY_TARGETS.throughput} | 95.0% | ≥ 90.0% | **no** |  |`,
    );
    assert.match(
      report,
      /The policy targets are judged the same way on the gateway runs with and without policies\./,
    );
  });

  it('the report gives the gateway with guardrails its rows, streamed too, its guardrails, its target and the TTFT it adds', () => {
    const report = toMarkdown(run());
    const lines = report.split('\n');
    assert.ok(
      lines.includes(
        '| 1 | gateway with guardrails | 680 | 880 | 8,000 | +630 | +6,800 | 22.7% | 0.62 | 1.3 | 0 / 0 |',
      ),
    );
    assert.ok(
      lines.includes(
        '| 32 | gateway with guardrails | 1,440 | 20,000 | 60,000 | +17,000 | +49,000 | 14.7% | 0.50 | 0.0 | 0 / 0 |',
      ),
    );
    // GC and event loop, and who used the CPU.
    assert.ok(lines.some((l) => l.startsWith('| 1 | gateway with guardrails | 47 | ')));
    assert.ok(lines.some((l) => l.startsWith('| 1 | gateway with guardrails | 5,700 | ')));
    // Streaming: its row beside the gateway's, its overhead over direct, and what it adds to the gateway.
    const streamingAt = lines.indexOf('## Streaming (`stream: true`), time to first token, concurrency 1');
    // The table's rows, after its header and separator.
    const streamingTable = lines.slice(streamingAt + 4, lines.indexOf('', streamingAt + 2));
    assert.deepEqual(
      streamingTable.map((l) => l.split(' | ')[0]),
      [
        '| direct',
        '| reference proxy',
        '| gateway',
        '| gateway with guardrails',
        '| reference proxy overhead',
        '| gateway overhead',
        '| gateway with guardrails overhead',
      ],
    );
    assert.ok(lines.includes('| gateway with guardrails | 300 | 1,990 | 9,900 | 2,020 | 9,930 | 0 |'));
    assert.ok(lines.includes('| gateway with guardrails overhead | | +1,360 | +6,600 | +1,360 | +6,600 | |'));
    assert.match(
      report,
      /With guardrails: 0\.93 ms per streaming request, busy for 0\.2 s after the last one\. The guardrails add \+190 µs to the TTFT p50 and \+500 µs to the p99/,
    );
    // What the guardrails are.
    assert.match(
      report,
      /an input guardrail of 3 checks \(`default\.regexMatch` `\{"rule":"\\\\bbench-deny-input/,
    );
    assert.match(report, /`default\.pii` `\{\}`, `default\.wordCount` `\{"minWords":1,"maxWords":10000\}`\)/);
    assert.match(report, /output guardrail of 1 \(`default\.regexMatch` `\{[^`]*"maxMatchLength":32\}`\)/);
    assert.match(report, /The workspace of the other gateway paths is excluded from both defaults\./);

    const row = (name: string) => lines.find((l) => l.startsWith(`| ${name} |`)) ?? '';
    assert.equal(
      row(GUARDRAIL_TARGETS.throughput),
      `| ${GUARDRAIL_TARGETS.throughput} | 90.0% | ≥ 85.0% | yes |  |`,
    );
    assert.equal(
      row(GUARDRAIL_TARGETS.ttft),
      `| ${GUARDRAIL_TARGETS.ttft} | +190 µs | none (reported) | reported |  |`,
    );
    assert.match(
      report,
      /The guardrail target is judged the same way on the gateway runs with and without guardrails\. A figure with no goal is reported only\./,
    );
  });

  it('the report without the gateway-with-policies path has neither its rows nor its targets', () => {
    const report = toMarkdown(run({ policies: false }));
    assert.doesNotMatch(report, /with policies|from policies|policy targets/);
    assert.match(report, /with guardrails/);
    const lines = report.split('\n');
    assert.ok(
      lines.some((l) => l.startsWith('| 1 | gateway | 40 | ')),
      'the GC table has its gateway row',
    );
    for (const name of ['added latency p50, concurrency 1', 'throughput gateway / direct, concurrency 32'])
      assert.ok(
        lines.some((l) => l.startsWith(`| ${name} |`)),
        name,
      );
  });

  it('the report without the gateway-with-guardrails path has neither its rows nor its targets', () => {
    const report = toMarkdown(run({ guardrails: false }));
    assert.doesNotMatch(report, /with guardrails|from guardrails|guardrail target|reported/);
    assert.match(report, /with policies/);
    assert.equal(run({ guardrails: false }).targets.length, 7);
  });

  it('the manual lists every target the report judges or reports, with its goal', () => {
    const manual = readFileSync(join(repoRoot, 'bench', 'README.md'), 'utf8');
    const targets = run().targets;
    assert.equal(targets.length, 9);
    for (const t of targets) {
      // The manual writes whole percentages without the report's decimal.
      const goal = t.goal.replace(/\.0%$/, '%');
      assert.ok(
        manual.includes(`\n| ${t.name} | ${goal} |\n`),
        `bench/README.md lists "${t.name}" with ${goal}`,
      );
    }
  });
});

describe('MCP tool calls in the benchmark', () => {
  const mcp = [
    mcpPair(1, load(4_000, 200, 800), load(1_000, 900, 2_500), cost),
    mcpPair(32, load(8_000, 4_000, 9_000), load(1_200, 26_000, 70_000), cost),
  ];

  it('reports the added p50 and p99 and judges the throughput ratio at concurrency 32', () => {
    const targets = Object.fromEntries(evaluateTargets([], rss, undefined, mcp).map((t) => [t.name, t]));
    assert.equal(targets['MCP tool call added p50, concurrency 1']?.measured, '+700 µs');
    assert.equal(targets['MCP tool call added p50, concurrency 1']?.reported, true);
    assert.equal(targets['MCP tool call added p99, concurrency 1']?.measured, '+1,700 µs');
    const throughput = targets['MCP tool calls through the gateway / direct, concurrency 32']!;
    assert.equal(throughput.measured, '15.0%');
    assert.equal(throughput.holds, true);
    const slow = [mcpPair(32, load(8_000, 4_000, 9_000), load(400, 26_000, 70_000), cost)];
    const [slowTarget] = evaluateTargets([], rss, undefined, slow);
    assert.equal(slowTarget?.measured, '5.0%');
    assert.equal(slowTarget?.holds, false);
    const failing = [
      mcpPair(32, load(8_000, 4_000, 9_000), load(1_200, 26_000, 70_000, { non2xx: 3 }), cost),
    ];
    assert.equal(evaluateTargets([], rss, undefined, failing)[0]?.holds, false);
  });

  it('the report has a table of the MCP runs, direct and through the gateway at each concurrency', () => {
    const report = toMarkdown({ ...run(), mcp });
    const lines = report.split('\n');
    const section = lines.slice(lines.indexOf('## MCP `tools/call`'));
    assert.ok(section.length > 0 && lines.includes('## MCP `tools/call`'));
    const rows = section.filter((l) => /^\| (1|32) \| /.test(l)).map((l) => l.split(' | ').slice(0, 3));
    assert.deepEqual(rows, [
      ['| 1', 'direct', '4,000'],
      ['| 1', 'gateway', '1,000'],
      ['| 32', 'direct', '8,000'],
      ['| 32', 'gateway', '1,200'],
    ]);
    assert.ok(
      !toMarkdown(run()).includes('## MCP `tools/call`'),
      'no MCP section when the scenario did not run',
    );
  });
});
