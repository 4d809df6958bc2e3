import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoadResult } from './load.ts';
import type { CpuUse, GatewayRuntime } from './probe.ts';
import type { StreamResult } from './ttft.ts';

/** What the gateway process spent on a run: CPU per request and how long it stayed busy after the load. */
export interface GatewayCost {
  /** Gateway process CPU time (all threads) from the start of the run until it settled, per request, ms. */
  cpuMsPerRequest: number;
  /** How long after the load stopped the process kept working (deferred work), ms. */
  drainMs: number;
}

/** The reference proxy's run (`reference-proxy.ts`): Node's HTTP server and client alone. */
export interface ReferenceRun {
  result: LoadResult;
  /** Reference proxy process CPU time (all threads) during the run, per request, ms. */
  cpuMsPerRequest: number;
  /** Reference proxy p50 minus direct p50, µs. */
  addedP50Us: number;
  addedP99Us: number;
  /** Reference proxy req/s divided by direct req/s. */
  throughputRatio: number;
}

/** A gateway run with something more to do per request (policies, guardrails), in the same run. */
interface GatewayVariantRun {
  result: LoadResult;
  gatewayCost: GatewayCost;
  /** The gateway's GC pauses and event-loop delay during the measured run. */
  gatewayRuntime?: GatewayRuntime | undefined;
  /** p50 minus direct p50, µs. */
  addedP50Us: number;
  addedP99Us: number;
  /** req/s divided by direct req/s. */
  throughputRatio: number;
}

/**
 * The gateway run with policies: the same requests with a second workspace key on which one
 * rate-limit and one usage-limit policy apply (`run.ts`), in the same run.
 */
export interface PoliciesRun extends GatewayVariantRun {
  /** p50 minus the gateway's p50 without policies (what the policies add), µs. */
  policiesAddedP50Us: number;
  /** req/s divided by the gateway's req/s without policies. */
  policiesThroughputRatio: number;
}

/**
 * The gateway run with guardrails: the same requests with a key of a second workspace, to
 * which the organisation's default input and output guardrails apply (`run.ts`), in the same run.
 */
export interface GuardrailsRun extends GatewayVariantRun {
  /** p50 minus the gateway's p50 without guardrails (what the guardrails add), µs. */
  guardrailsAddedP50Us: number;
  /** req/s divided by the gateway's req/s without guardrails. */
  guardrailsThroughputRatio: number;
}

/** The streams through the gateway with guardrails, set against those through the gateway without. */
export interface GuardrailsStreams {
  result: StreamResult;
  /** Gateway process CPU per streaming request with guardrails, and its busy time after them. */
  gatewayCost: GatewayCost;
  /** TTFT p50 minus the gateway's without guardrails (what the guardrails add), µs. */
  addedTtftP50Us: number;
  addedTtftP99Us: number;
}

/** A guardrail check as the benchmark defines it: its id and parameters. */
export interface BenchGuardrailCheck {
  id: string;
  parameters: Record<string, unknown>;
}

export interface NonStreamingPair {
  concurrency: number;
  direct: LoadResult;
  gateway: LoadResult;
  /** The same load through the reference proxy, in the same run. */
  reference?: ReferenceRun | undefined;
  /** The same load through the gateway with policies on the key, in the same run. */
  policies?: PoliciesRun | undefined;
  /** The same load through the gateway with the organisation's default guardrails, in the same run. */
  guardrails?: GuardrailsRun | undefined;
  /** Gateway p50 minus direct p50 (a difference of percentiles), µs. */
  addedP50Us: number;
  addedP99Us: number;
  /** Gateway req/s divided by direct req/s. */
  throughputRatio: number;
  gatewayCost: GatewayCost;
  /** The gateway's GC pauses and event-loop delay during the measured gateway run. */
  gatewayRuntime?: GatewayRuntime | undefined;
  /**
   * Who used the system-under-test CPU during each measured run (with the processes placed); the
   * proxy columns are the reference proxy's on its path and the gateway's otherwise.
   */
  cpuUse?: Partial<Record<PathName, CpuUse>> | undefined;
}

export interface Target {
  name: string;
  measured: string;
  goal: string;
  holds: boolean;
  /** The same measure for the reference proxy in the same run, where it has one. */
  reference?: string | undefined;
  /**
   * Set when the runs it compares were disturbed (others used more than DISTURBED_SHARE of the
   * system-under-test CPU): such a target is not judged, `holds` is false.
   */
  disturbed?: boolean;
  /** A figure shown among the targets with no goal: never judged, `holds` is false and counts for nothing. */
  reported?: boolean;
}

/**
 * MCP tool calls at one concurrency: `tools/call` of the fake MCP server's tool sent to it
 * directly, and through the gateway's MCP route (`/mcp/<server>`) with a workspace key.
 */
export interface McpPair {
  concurrency: number;
  direct: LoadResult;
  gateway: LoadResult;
  gatewayCost: GatewayCost;
  addedP50Us: number;
  addedP99Us: number;
  throughputRatio: number;
}

export function mcpPair(
  concurrency: number,
  direct: LoadResult,
  gateway: LoadResult,
  gatewayCost: GatewayCost,
): McpPair {
  return { concurrency, direct, gateway, gatewayCost, ...added(direct, gateway) };
}

export interface BenchResults {
  generatedAt: string;
  environment: { node: string; platform: string; cpus: number; cpuModel: string };
  config: {
    mode: string;
    /** Which CPUs the load generator, the system under test and the platform ran on. */
    placement: string;
    /** NODE_OPTIONS of the gateway process (distributed mode: the Helm chart's). */
    nodeOptions: string;
    durationS: number;
    warmupS: number;
    /** Traffic through the gateway before the first scenario (not measured), s. */
    jitWarmupS: number;
    concurrencies: number[];
    streamRequests: number;
    streamWarmup: number;
    directModel: string;
    gatewayModel: string;
    rssIntervalMs: number;
    /** The policies on the key of the gateway-with-policies path, when it ran. */
    policies?: { rateLimitPerHour: number; usageLimitTokens: number } | undefined;
    /** The organisation's default guardrails on the gateway-with-guardrails path, when it ran. */
    guardrails?: { input: BenchGuardrailCheck[]; output: BenchGuardrailCheck[] } | undefined;
  };
  nonStreaming: NonStreamingPair[];
  streaming: {
    concurrency: 1;
    direct: StreamResult;
    reference?: StreamResult | undefined;
    gateway: StreamResult;
    overheadP50Us: number;
    overheadP99Us: number;
    gatewayCost: GatewayCost;
    /** The same streams through the gateway with guardrails, when that path ran. */
    guardrails?: GuardrailsStreams | undefined;
  };
  rss: {
    idleMiB: number;
    peakMiB: number;
    afterMiB: number;
    samples: number;
    phasePeakMiB: Record<string, number>;
  };
  /** MCP tool calls, direct and through the gateway, when that scenario ran. */
  mcp?: McpPair[] | undefined;
  targets: Target[];
  allTargetsHold: boolean;
}

const PATHS = ['direct', 'reference', 'gateway', 'policies', 'guardrails'] as const;
type PathName = (typeof PATHS)[number];
const PATH_NAMES: Record<PathName, string> = {
  direct: 'direct',
  reference: 'reference proxy',
  gateway: 'gateway',
  policies: 'gateway with policies',
  guardrails: 'gateway with guardrails',
};

/** A path's measured run in a pair, if the path ran. */
function runOf(p: NonStreamingPair, path: PathName): LoadResult | undefined {
  if (path === 'reference') return p.reference?.result;
  if (path === 'policies') return p.policies?.result;
  if (path === 'guardrails') return p.guardrails?.result;
  return p[path];
}

/** Share of a run's CPU time on the system-under-test CPU used by others above which a run is disturbed. */
export const DISTURBED_SHARE = 0.1;

export const GOALS = {
  addedP50UsAtC1: 500,
  addedP99UsAtC1: 2000,
  throughputRatioAtC32: 0.1,
  rssMiB: 150,
  /** Gateway with policies req/s divided by the gateway's without. */
  policiesThroughputRatioAtC32: 0.9,
  /** Gateway with policies p50 minus the gateway's without, µs. */
  policiesAddedP50UsAtC1: 150,
  /** Gateway with guardrails req/s divided by the gateway's without. */
  guardrailsThroughputRatioAtC32: 0.85,
  /** MCP tool calls through the gateway, req/s divided by direct: the model calls' goal. */
  mcpThroughputRatioAtC32: 0.1,
};

export function pair(
  concurrency: number,
  direct: LoadResult,
  gateway: LoadResult,
  gatewayCost: GatewayCost,
  extra: {
    runtime?: GatewayRuntime | undefined;
    cpuUse?: NonStreamingPair['cpuUse'];
    reference?: { result: LoadResult; cpuMsPerRequest: number } | undefined;
    policies?: VariantInput | undefined;
    guardrails?: VariantInput | undefined;
  } = {},
): NonStreamingPair {
  const reference = extra.reference;
  const policies = extra.policies;
  const guardrails = extra.guardrails;
  return {
    gatewayCost,
    gatewayRuntime: extra.runtime,
    cpuUse: extra.cpuUse,
    concurrency,
    direct,
    gateway,
    reference: reference && {
      result: reference.result,
      cpuMsPerRequest: Math.round(reference.cpuMsPerRequest * 100) / 100,
      ...added(direct, reference.result),
    },
    policies: policies && {
      ...variant(direct, policies),
      policiesAddedP50Us: policies.result.latencyUs.p50 - gateway.latencyUs.p50,
      policiesThroughputRatio: ratio(policies.result, gateway),
    },
    guardrails: guardrails && {
      ...variant(direct, guardrails),
      guardrailsAddedP50Us: guardrails.result.latencyUs.p50 - gateway.latencyUs.p50,
      guardrailsThroughputRatio: ratio(guardrails.result, gateway),
    },
    ...added(direct, gateway),
  };
}

/** A gateway variant's measured run, as `pair` takes it. */
interface VariantInput {
  result: LoadResult;
  gatewayCost: GatewayCost;
  runtime?: GatewayRuntime | undefined;
}

function variant(direct: LoadResult, run: VariantInput): GatewayVariantRun {
  return {
    result: run.result,
    gatewayCost: run.gatewayCost,
    gatewayRuntime: run.runtime,
    ...added(direct, run.result),
  };
}

/** The streams through the gateway with guardrails, against the gateway's without (`gateway`). */
export function guardrailsStreams(
  gateway: StreamResult,
  guarded: StreamResult,
  gatewayCost: GatewayCost,
): GuardrailsStreams {
  return {
    result: guarded,
    gatewayCost,
    addedTtftP50Us: guarded.ttftUs.p50 - gateway.ttftUs.p50,
    addedTtftP99Us: guarded.ttftUs.p99 - gateway.ttftUs.p99,
  };
}

/** `run`'s req/s divided by `base`'s, to 0.1%; 0 when `base` answered nothing. */
function ratio(run: LoadResult, base: LoadResult): number {
  return base.reqPerSec > 0 ? Math.round((run.reqPerSec / base.reqPerSec) * 1000) / 1000 : 0;
}

/** What a proxied path adds to the direct one: p50 and p99 differences, and the req/s ratio. */
function added(
  direct: LoadResult,
  proxied: LoadResult,
): { addedP50Us: number; addedP99Us: number; throughputRatio: number } {
  return {
    addedP50Us: proxied.latencyUs.p50 - direct.latencyUs.p50,
    addedP99Us: proxied.latencyUs.p99 - direct.latencyUs.p99,
    throughputRatio: ratio(proxied, direct),
  };
}

/**
 * The targets, judged on a run's figures, and the figures reported beside them with no goal;
 * `streaming` gives the added TTFT from guardrails when the gateway-with-guardrails path ran.
 */
export function evaluateTargets(
  nonStreaming: NonStreamingPair[],
  rss: BenchResults['rss'],
  streaming?: Pick<BenchResults['streaming'], 'gateway' | 'guardrails'>,
  mcp?: McpPair[],
): Target[] {
  const targets: Target[] = [];
  const c1 = nonStreaming.find((p) => p.concurrency === 1);
  const c32 = nonStreaming.find((p) => p.concurrency === 32);
  if (c1) {
    targets.push({
      name: 'added latency p50, concurrency 1',
      measured: `${signed(c1.addedP50Us)} µs`,
      goal: `≤ ${int(GOALS.addedP50UsAtC1)} µs`,
      holds: c1.addedP50Us <= GOALS.addedP50UsAtC1 && clean(c1) && !disturbed(c1),
      disturbed: disturbed(c1),
      reference: c1.reference && `${signed(c1.reference.addedP50Us)} µs`,
    });
    targets.push({
      name: 'added latency p99, concurrency 1',
      measured: `${signed(c1.addedP99Us)} µs`,
      goal: `≤ ${int(GOALS.addedP99UsAtC1)} µs`,
      holds: c1.addedP99Us <= GOALS.addedP99UsAtC1 && clean(c1) && !disturbed(c1),
      disturbed: disturbed(c1),
      reference: c1.reference && `${signed(c1.reference.addedP99Us)} µs`,
    });
  }
  if (c32) {
    targets.push({
      name: 'throughput gateway / direct, concurrency 32',
      measured: pct(c32.throughputRatio),
      goal: `≥ ${pct(GOALS.throughputRatioAtC32)}`,
      holds: c32.throughputRatio >= GOALS.throughputRatioAtC32 && clean(c32) && !disturbed(c32),
      disturbed: disturbed(c32),
      reference: c32.reference && pct(c32.reference.throughputRatio),
    });
  }
  // The policy targets compare the gateway with and without policies, not with direct.
  if (c32?.policies) {
    targets.push({
      name: 'throughput with policies / without, concurrency 32',
      measured: pct(c32.policies.policiesThroughputRatio),
      goal: `≥ ${pct(GOALS.policiesThroughputRatioAtC32)}`,
      holds:
        c32.policies.policiesThroughputRatio >= GOALS.policiesThroughputRatioAtC32 &&
        clean(c32, ['gateway', 'policies']) &&
        !disturbed(c32, ['gateway', 'policies']),
      disturbed: disturbed(c32, ['gateway', 'policies']),
    });
  }
  if (c1?.policies) {
    targets.push({
      name: 'added p50 from policies, concurrency 1',
      measured: `${signed(c1.policies.policiesAddedP50Us)} µs`,
      goal: `≤ ${int(GOALS.policiesAddedP50UsAtC1)} µs`,
      holds:
        c1.policies.policiesAddedP50Us <= GOALS.policiesAddedP50UsAtC1 &&
        clean(c1, ['gateway', 'policies']) &&
        !disturbed(c1, ['gateway', 'policies']),
      disturbed: disturbed(c1, ['gateway', 'policies']),
    });
  }
  // The guardrail target compares the gateway with and without guardrails, as the policy ones do.
  if (c32?.guardrails) {
    targets.push({
      name: 'throughput with guardrails / without, concurrency 32',
      measured: pct(c32.guardrails.guardrailsThroughputRatio),
      goal: `≥ ${pct(GOALS.guardrailsThroughputRatioAtC32)}`,
      holds:
        c32.guardrails.guardrailsThroughputRatio >= GOALS.guardrailsThroughputRatioAtC32 &&
        clean(c32, ['gateway', 'guardrails']) &&
        !disturbed(c32, ['gateway', 'guardrails']),
      disturbed: disturbed(c32, ['gateway', 'guardrails']),
    });
  }
  const guardedStreams = streaming?.guardrails;
  if (guardedStreams) {
    targets.push({
      name: 'added TTFT p50 from guardrails, streaming',
      measured: `${signed(guardedStreams.addedTtftP50Us)} µs`,
      goal: 'none (reported)',
      holds: false,
      reported: true,
    });
  }
  // MCP tool calls: what the gateway adds to a call, and the share of direct throughput it keeps.
  const mcpC1 = mcp?.find((p) => p.concurrency === 1);
  const mcpC32 = mcp?.find((p) => p.concurrency === 32);
  if (mcpC1) {
    for (const [name, value] of [
      ['MCP tool call added p50, concurrency 1', mcpC1.addedP50Us],
      ['MCP tool call added p99, concurrency 1', mcpC1.addedP99Us],
    ] as const) {
      targets.push({
        name,
        measured: `${signed(value)} µs`,
        goal: 'none (reported)',
        holds: false,
        reported: true,
      });
    }
  }
  if (mcpC32) {
    const errorless = (run: LoadResult) => run.non2xx === 0 && run.errors === 0;
    targets.push({
      name: 'MCP tool calls through the gateway / direct, concurrency 32',
      measured: pct(mcpC32.throughputRatio),
      goal: `≥ ${pct(GOALS.mcpThroughputRatioAtC32)}`,
      holds:
        mcpC32.throughputRatio >= GOALS.mcpThroughputRatioAtC32 &&
        errorless(mcpC32.direct) &&
        errorless(mcpC32.gateway),
    });
  }
  targets.push({
    name: 'gateway RSS at idle',
    measured: `${mb(rss.idleMiB)} MB`,
    goal: `≤ ${GOALS.rssMiB} MB`,
    holds: rss.idleMiB > 0 && rss.idleMiB <= GOALS.rssMiB,
  });
  targets.push({
    name: 'gateway RSS peak under load',
    measured: `${mb(rss.peakMiB)} MB`,
    goal: `≤ ${GOALS.rssMiB} MB`,
    holds: rss.peakMiB > 0 && rss.peakMiB <= GOALS.rssMiB,
  });
  return targets;
}

/**
 * Whether something other than the benchmark used more than DISTURBED_SHARE of the
 * system-under-test CPU in one of the compared runs (by default direct and gateway): the
 * difference between them then measures the machine's other load too, and a goal met that way
 * proves nothing.
 */
function disturbed(p: NonStreamingPair, paths: PathName[] = ['direct', 'gateway']): boolean {
  return paths.some((path) => {
    const run = runOf(p, path);
    return run !== undefined && (p.cpuUse?.[path]?.othersMs ?? 0) > run.durationS * 1000 * DISTURBED_SHARE;
  });
}

/** A run with errors or non-2xx answers (or a compared run missing) proves nothing about latency or throughput. */
function clean(p: NonStreamingPair, paths: PathName[] = ['direct', 'gateway']): boolean {
  return paths.every((path) => {
    const r = runOf(p, path);
    return r !== undefined && r.requests > 0 && r.errors === 0 && r.non2xx === 0;
  });
}

export function toMarkdown(r: BenchResults): string {
  const lines: string[] = [];
  lines.push('# Switchyard gateway benchmark', '');
  lines.push(
    `- Date: ${r.generatedAt}`,
    `- Mode: ${r.config.mode}`,
    `- CPUs: ${r.environment.cpus} (${r.environment.cpuModel})`,
    `- Node: ${r.environment.node}`,
    `- Platform: ${r.environment.platform}`,
    `- Placement: ${r.config.placement}`,
    '',
    (r.config.jitWarmupS > 0
      ? `Before the first scenario the gateway and the reference proxy each serve ${r.config.jitWarmupS} s of requests and streams, not measured, ` +
        `so that V8 has compiled its hot code. `
      : '') +
      `Non-streaming: ${r.config.durationS} s per run after a ${r.config.warmupS} s warm-up, autocannon, ` +
      `one request in flight per connection. Streaming: ${r.config.streamRequests} sequential requests per ` +
      `path after ${r.config.streamWarmup} warm-up requests. Before each run the gateway is left to finish ` +
      `deferred work (CPU < 5% of a core), and so are the services, Kafka, PostgreSQL and Redis behind it ` +
      `(together < 20% of a core, at most 60 s). Latencies in µs; "added" is gateway (or reference proxy) minus direct.`,
    '',
    'The reference proxy (`bench/src/reference-proxy.ts`) is the least a reverse proxy on Node.js does: a ' +
      "`node:http` server sending each request's bytes to the upstream through undici's `Agent` (the gateway's " +
      'HTTP client) and the answer back as it arrives, with no authentication, validation, routing, policy, ' +
      'cache, logging or events. It runs on the same CPU as the gateway, in the same run: what it adds is ' +
      "what Node's HTTP server and client alone cost on this machine.",
    '',
  );
  if (r.nonStreaming.some((p) => p.policies)) {
    const limits = r.config.policies;
    lines.push(
      'Gateway with policies: the same requests through the gateway with a second workspace key, on which one ' +
        `rate-limit policy (requests${limits ? `, ${int(limits.rateLimitPerHour)} per hour` : ''}) and one ` +
        `usage-limit policy (tokens${limits ? `, ${int(limits.usageLimitTokens)}` : ''}) apply, conditioned on ` +
        'and grouped by that key, both far above what the run uses so that they never deny. The gateway admits ' +
        'most of these requests on leases of the two limits, taken ahead from the shared counters and counted ' +
        'there (POLICY_LEASE_REQUESTS, default 256); the rest, and the first of each lease, are checked by the ' +
        'policy service against Redis. It runs right after ' +
        'the gateway without policies, with the same warm-up and settling; "from policies" is that path minus ' +
        'the gateway without policies.',
      '',
    );
  }
  if (r.nonStreaming.some((p) => p.guardrails) || r.streaming.guardrails) {
    const defaults = r.config.guardrails;
    const checks = (list: BenchGuardrailCheck[]) =>
      list.map((c) => `\`${c.id}\` \`${JSON.stringify(c.parameters)}\``).join(', ');
    lines.push(
      'Gateway with guardrails: the same requests, and the same streams, through the gateway with a key of a ' +
        "second workspace, to which the organisation's default guardrails apply: an input guardrail of " +
        `${defaults ? `${defaults.input.length} checks (${checks(defaults.input)})` : 'pure checks'} and an ` +
        `output guardrail of ${defaults ? `${defaults.output.length} (${checks(defaults.output)})` : 'one'}, ` +
        "both denying on a failed check, and none failing on the benchmark's prompt or the upstream's answer. " +
        'The workspace of the other gateway paths is excluded from both defaults. The output rule has a longest ' +
        'match (`maxMatchLength`), so a stream is checked as it flows, holding back only text a match could ' +
        "still cover. Its runs come after the other paths' at the same concurrency, with the same warm-up " +
        'and settling; "from guardrails" is that path minus the gateway without guardrails.',
      '',
    );
  }

  lines.push('## Non-streaming `POST /v1/chat/completions`', '');
  lines.push(
    '| concurrency | path | req/s | p50 (µs) | p99 (µs) | added p50 (µs) | added p99 (µs) | req/s / direct | proxy CPU per request (ms) | gateway busy after the run (s) | non-2xx / errors |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const p of r.nonStreaming) {
    lines.push(
      `| ${p.concurrency} | direct | ${int(p.direct.reqPerSec)} | ${int(p.direct.latencyUs.p50)} | ${int(p.direct.latencyUs.p99)} | | | | | | ${p.direct.non2xx} / ${p.direct.errors} |`,
    );
    const ref = p.reference;
    if (ref)
      lines.push(
        `| ${p.concurrency} | reference proxy | ${int(ref.result.reqPerSec)} | ${int(ref.result.latencyUs.p50)} | ${int(ref.result.latencyUs.p99)} | ${signed(ref.addedP50Us)} | ${signed(ref.addedP99Us)} | ${pct(ref.throughputRatio)} | ${ms(ref.cpuMsPerRequest)} | | ${ref.result.non2xx} / ${ref.result.errors} |`,
      );
    lines.push(
      `| ${p.concurrency} | gateway | ${int(p.gateway.reqPerSec)} | ${int(p.gateway.latencyUs.p50)} | ${int(p.gateway.latencyUs.p99)} | ${signed(p.addedP50Us)} | ${signed(p.addedP99Us)} | ${pct(p.throughputRatio)} | ${ms(p.gatewayCost.cpuMsPerRequest)} | ${seconds(p.gatewayCost.drainMs)} | ${p.gateway.non2xx} / ${p.gateway.errors} |`,
    );
    for (const [path, run] of [
      ['policies', p.policies],
      ['guardrails', p.guardrails],
    ] as const) {
      if (run)
        lines.push(
          `| ${p.concurrency} | ${PATH_NAMES[path]} | ${int(run.result.reqPerSec)} | ${int(run.result.latencyUs.p50)} | ${int(run.result.latencyUs.p99)} | ${signed(run.addedP50Us)} | ${signed(run.addedP99Us)} | ${pct(run.throughputRatio)} | ${ms(run.gatewayCost.cpuMsPerRequest)} | ${seconds(run.gatewayCost.drainMs)} | ${run.result.non2xx} / ${run.result.errors} |`,
        );
    }
  }
  lines.push('');

  const probed = r.nonStreaming.flatMap((p) => [
    ...(p.gatewayRuntime ? [{ concurrency: p.concurrency, path: 'gateway', runtime: p.gatewayRuntime }] : []),
    ...(p.policies?.gatewayRuntime
      ? [{ concurrency: p.concurrency, path: PATH_NAMES.policies, runtime: p.policies.gatewayRuntime }]
      : []),
    ...(p.guardrails?.gatewayRuntime
      ? [{ concurrency: p.concurrency, path: PATH_NAMES.guardrails, runtime: p.guardrails.gatewayRuntime }]
      : []),
  ]);
  if (probed.length > 0) {
    lines.push('## Gateway process during the non-streaming gateway runs', '');
    lines.push(
      'Garbage-collection pauses and event-loop delay recorded inside the gateway process during the ' +
        "measured run, and how many of the responses at or above the run's p99 were in flight while the " +
        'gateway paused for GC.',
      '',
      '| concurrency | path | GC pauses | GC total (ms) | longest pause (ms) | scavenges: count / total / longest (ms) | mark-compact: count / total / longest (ms) | event-loop delay p50 / p99 / max (µs) | responses ≥ p99 | of them during a GC pause (GC ms inside them) | all responses during a GC pause |',
      '|---:|---|---:|---:|---:|---|---|---|---:|---:|---:|',
    );
    for (const p of probed) {
      const g = p.runtime;
      const kind = (name: string) => {
        const k = g.gc.byKind[name];
        return k ? `${k.count} / ${ms(k.totalMs)} / ${ms(k.maxMs)}` : '0';
      };
      lines.push(
        `| ${p.concurrency} | ${p.path} | ${g.gc.count} | ${ms(g.gc.totalMs)} | ${ms(g.gc.maxMs)} | ${kind('scavenge')} | ${kind('mark-compact')} | ` +
          `${int(g.eventLoopDelayUs.p50)} / ${int(g.eventLoopDelayUs.p99)} / ${int(g.eventLoopDelayUs.max)} | ` +
          `${g.slowest.count} | ${g.slowest.withGc} (${ms(g.slowest.gcMsInThem)}) | ${pct(g.slowest.allWithGcShare)} |`,
      );
    }
    lines.push('');
  }

  const placed = r.nonStreaming.filter((p) => PATHS.some((path) => p.cpuUse?.[path]));
  if (placed.length > 0) {
    const cpu = PATHS.map((path) => placed[0]!.cpuUse![path]).find((u) => u !== undefined)!.cpu;
    lines.push(`## Who used CPU ${cpu} (the system under test) during the non-streaming runs`, '');
    lines.push(
      `From /proc over each measured run: CPU time of the proxy's main thread (the reference proxy's or the ` +
        `gateway's) and of its other threads, of the fake upstream, and of everything else on CPU ${cpu}; and how ` +
        `long the proxy's and the upstream's main threads were ready to run but waited for the CPU (run-queue ` +
        `wait); and the steal time of CPU ${cpu}, when the hypervisor ran something else on the host core ` +
        `behind it (part of CPU ${cpu}'s busy time; the kernel may also have charged part of it to the processes ` +
        `that were running, so it can exceed the time left to the others). In ms.`,
      '',
      '| concurrency | path | proxy main thread | proxy main thread waiting | proxy other threads | upstream | upstream main thread waiting | other processes and interrupts | steal |',
      '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const p of placed) {
      for (const path of PATHS) {
        const u = p.cpuUse![path];
        if (!u) continue;
        const proxied = path !== 'direct';
        lines.push(
          `| ${p.concurrency} | ${PATH_NAMES[path]} | ${proxied ? int(u.gatewayMainMs) : ''} | ${proxied ? int(u.gatewayMainWaitMs) : ''} | ` +
            `${proxied ? int(u.gatewayOtherThreadsMs) : ''} | ${int(u.upstreamMs)} | ${int(u.upstreamMainWaitMs)} | ${int(u.othersMs)} | ${int(u.stealMs)} |`,
        );
      }
    }
    const disturbed = placed.flatMap((p) =>
      PATHS.filter((path) => {
        const run = runOf(p, path);
        return run !== undefined && (p.cpuUse![path]?.othersMs ?? 0) > run.durationS * 1000 * DISTURBED_SHARE;
      }).map((path) => `${PATH_NAMES[path]} at concurrency ${p.concurrency}`),
    );
    lines.push('');
    if (disturbed.length > 0)
      lines.push(
        `**Disturbed**: other processes and interrupts used more than ${pct(DISTURBED_SHARE)} of CPU ${cpu} in ` +
          `${disturbed.join(', ')}; those latencies measure the machine's other load as well as the gateway.`,
        '',
      );
  }

  const s = r.streaming;
  lines.push('## Streaming (`stream: true`), time to first token, concurrency 1', '');
  const streamRow = (name: string, run: StreamResult) =>
    `| ${name} | ${run.requests} | ${int(run.ttftUs.p50)} | ${int(run.ttftUs.p99)} | ${int(run.totalUs.p50)} | ${int(run.totalUs.p99)} | ${run.failures} |`;
  const overheadRow = (name: string, run: StreamResult) =>
    `| ${name} | | ${signed(run.ttftUs.p50 - s.direct.ttftUs.p50)} | ${signed(run.ttftUs.p99 - s.direct.ttftUs.p99)} | ` +
    `${signed(run.totalUs.p50 - s.direct.totalUs.p50)} | ${signed(run.totalUs.p99 - s.direct.totalUs.p99)} | |`;
  lines.push(
    '| path | requests | TTFT p50 (µs) | TTFT p99 (µs) | whole stream p50 (µs) | whole stream p99 (µs) | failures |',
    '|---|---:|---:|---:|---:|---:|---:|',
    streamRow('direct', s.direct),
    ...(s.reference ? [streamRow('reference proxy', s.reference)] : []),
    streamRow('gateway', s.gateway),
    ...(s.guardrails ? [streamRow(PATH_NAMES.guardrails, s.guardrails.result)] : []),
    ...(s.reference ? [overheadRow('reference proxy overhead', s.reference)] : []),
    overheadRow('gateway overhead', s.gateway),
    ...(s.guardrails ? [overheadRow(`${PATH_NAMES.guardrails} overhead`, s.guardrails.result)] : []),
    '',
    `Gateway CPU per streaming request: ${ms(s.gatewayCost.cpuMsPerRequest)} ms; busy for ` +
      `${seconds(s.gatewayCost.drainMs)} s after the last one.`,
    '',
  );
  if (s.guardrails)
    lines.push(
      `With guardrails: ${ms(s.guardrails.gatewayCost.cpuMsPerRequest)} ms per streaming request, busy for ` +
        `${seconds(s.guardrails.gatewayCost.drainMs)} s after the last one. The guardrails add ` +
        `${signed(s.guardrails.addedTtftP50Us)} µs to the TTFT p50 and ${signed(s.guardrails.addedTtftP99Us)} µs ` +
        'to the p99 (gateway with guardrails minus gateway).',
      '',
    );

  if (r.mcp && r.mcp.length > 0) {
    lines.push('## MCP `tools/call`', '');
    lines.push(
      'A fake MCP server built with the MCP TypeScript SDK (`bench/src/fake-mcp-upstream.ts`, its own process on the ' +
        'system-under-test CPU, stateless streamable HTTP answered in JSON) is called with `tools/call` of its `echo` ' +
        "tool directly, and through the gateway's MCP route (`/mcp/<server>`) with a workspace key: authentication, " +
        "the server's directory entry, tool access, the policy check, the upstream call and the request-log event " +
        'for every call. Same warm-up, duration and settling as the model calls.',
      '',
      '| concurrency | path | req/s | p50 (µs) | p99 (µs) | added p50 (µs) | added p99 (µs) | req/s / direct | gateway CPU per call (ms) | non-2xx / errors |',
      '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const p of r.mcp) {
      lines.push(
        `| ${p.concurrency} | direct | ${int(p.direct.reqPerSec)} | ${int(p.direct.latencyUs.p50)} | ${int(p.direct.latencyUs.p99)} | | | | | ${p.direct.non2xx} / ${p.direct.errors} |`,
        `| ${p.concurrency} | gateway | ${int(p.gateway.reqPerSec)} | ${int(p.gateway.latencyUs.p50)} | ${int(p.gateway.latencyUs.p99)} | ${signed(p.addedP50Us)} | ${signed(p.addedP99Us)} | ${pct(p.throughputRatio)} | ${ms(p.gatewayCost.cpuMsPerRequest)} | ${p.gateway.non2xx} / ${p.gateway.errors} |`,
      );
    }
    lines.push('');
  }

  lines.push(`## Gateway process (${r.config.mode}) resident memory`, '');
  if (r.config.nodeOptions)
    lines.push(
      `Gateway \`NODE_OPTIONS\`: \`${r.config.nodeOptions}\` (the Helm chart's default values, given to every service process).`,
      '',
    );
  lines.push(
    `Idle ${mb(r.rss.idleMiB)} MB · peak ${mb(r.rss.peakMiB)} MB · after the runs ${mb(r.rss.afterMiB)} MB ` +
      `(VmRSS sampled every ${r.config.rssIntervalMs} ms, ${r.rss.samples} samples; MB = 2^20 bytes).`,
    '',
  );

  lines.push('## Targets', '');
  lines.push('| target | measured | goal | holds | reference proxy, same run |', '|---|---:|---:|---|---:|');
  for (const t of r.targets)
    lines.push(`| ${t.name} | ${t.measured} | ${t.goal} | ${verdict(t)} | ${t.reference ?? ''} |`);
  lines.push(
    '',
    'A latency or throughput target holds only when its direct and gateway runs had no errors and no ' +
      `non-2xx answers; it is not judged when others used more than ${pct(DISTURBED_SHARE)} of the ` +
      'system-under-test CPU in either run.' +
      (r.nonStreaming.some((p) => p.policies)
        ? ' The policy targets are judged the same way on the gateway runs with and without policies.'
        : '') +
      (r.nonStreaming.some((p) => p.guardrails)
        ? ' The guardrail target is judged the same way on the gateway runs with and without guardrails.'
        : '') +
      (r.targets.some((t) => t.reported) ? ' A figure with no goal is reported only.' : ''),
    '',
  );
  return `${lines.join('\n')}\n`;
}

/** What the targets table says of a target. */
function verdict(t: Target): string {
  if (t.reported) return 'reported';
  if (t.holds) return 'yes';
  return t.disturbed ? '**not judged** (disturbed run)' : '**no**';
}

/** Whether every target holds; figures reported with no goal do not count. */
export function allHold(targets: Target[]): boolean {
  return targets.every((t) => t.reported || t.holds);
}

/** Where a run's results go, relative to the repository's root (bench/README.md names them). */
export const RESULT_DIRS = {
  /** Every number of the run (results.json) and the report (results.md); not tracked. */
  data: join('.data', 'bench'),
  /** The current report (latest.md), tracked: each run replaces it. */
  report: join('bench', 'results'),
};

/**
 * Writes a benchmark's numbers to `.data/bench/<name>.json` and its report to
 * `bench/results/<name>-latest.md` (from the repository root), and prints the report.
 */
export function writeBenchResults(repoRoot: string, name: string, results: unknown, markdown: string): void {
  const dataDir = join(repoRoot, RESULT_DIRS.data);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(repoRoot, RESULT_DIRS.report, `${name}-latest.md`), markdown);
  console.log(`\n${markdown}`);
}

/** The "Targets" section of a report. */
export function targetsSection(
  targets: ReadonlyArray<{ target: string; measured: string; holds: boolean }>,
): string[] {
  return [
    '## Targets',
    '',
    '| target | measured | holds |',
    '|---|---|---|',
    ...targets.map((t) => `| ${t.target} | ${t.measured} | ${t.holds ? 'yes' : 'no'} |`),
    '',
  ];
}

export interface ResultFiles {
  /** `<data>/results.json` */
  json: string;
  /** `<data>/results.md` */
  results: string;
  /** `<report>/latest.md` */
  latest: string;
}

/**
 * Writes a run's results: every number to `<data>/results.json`, and the report as `toMarkdown`
 * renders it to `<data>/results.md` and to `<report>/latest.md`. Returns the report and the files.
 */
export function writeResults(
  r: BenchResults,
  dirs: { data: string; report: string },
): { markdown: string; files: ResultFiles } {
  const markdown = toMarkdown(r);
  const files: ResultFiles = {
    json: join(dirs.data, 'results.json'),
    results: join(dirs.data, 'results.md'),
    latest: join(dirs.report, 'latest.md'),
  };
  mkdirSync(dirs.data, { recursive: true });
  mkdirSync(dirs.report, { recursive: true });
  writeFileSync(files.json, `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(files.results, markdown);
  writeFileSync(files.latest, markdown);
  return { markdown, files };
}

function int(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a';
}

function signed(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${value >= 0 ? '+' : '−'}${int(Math.abs(value))}`;
}

function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'n/a';
}

function seconds(valueMs: number): string {
  return (valueMs / 1000).toFixed(1);
}

function mb(value: number): string {
  return value.toFixed(1);
}

function pct(ratio: number): string {
  return `${(ratio * 100).toFixed(1)}%`;
}
