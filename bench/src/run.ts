/**
 * `pnpm bench`: the gateway against a direct fake OpenAI upstream, in one run. By default the
 * gateway runs as deployed (`--mode distributed`: its own process beside the other four
 * services, on real PostgreSQL, Kafka and Redis); `--mode all-in-one` measures the one-process mode.
 * Everything listens on 127.0.0.1; every loop is bounded in count and time; both child
 * processes and the temporary data folder are removed at the end, on failure and on Ctrl-C.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { gatewayService } from '@switchyard/gateway';
import { startStack, type Stack } from '@switchyard/test-e2e';
import { Child, freePort } from './children.ts';
import { Timeline, runLoad, stopActiveLoad, type LoadResult, type Target } from './load.ts';
import { profileMarkdown, readProfile, summarizeProfile, type ProfileWindow } from './profile.ts';
import {
  allHold,
  evaluateTargets,
  guardrailsStreams,
  mcpPair,
  pair,
  writeResults,
  DISTURBED_SHARE,
  RESULT_DIRS,
  type BenchGuardrailCheck,
  type BenchResults,
  type GatewayCost,
  type McpPair,
  type NonStreamingPair,
} from './report.ts';
import {
  applyPlacement,
  childrenOf,
  describePlacement,
  planPlacement,
  type PlacementPlan,
} from './placement.ts';
import { GatewayProbe, cpuUse, readCpuUse, runtimeOf, type CpuUse, type GatewayRuntime } from './probe.ts';
import { RssSampler, readCpuMs, toMiB, waitUntilIdle } from './rss.ts';
import { measureStreams, type StreamResult } from './ttft.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const outDir = join(repoRoot, RESULT_DIRS.data);

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    'jit-warmup': { type: 'string', default: '30' },
    'stream-requests': { type: 'string', default: '300' },
    profile: { type: 'boolean', default: false },
    'alloc-profile': { type: 'boolean', default: false },
    mode: { type: 'string', default: 'distributed' },
    placement: { type: 'string', default: 'cpus' },
    'node-options': { type: 'string', default: '' },
  },
  allowPositionals: false,
});

function bounded(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new Error(`--${name} must be a number from ${min} to ${max}, got ${raw}`);
  }
  return value;
}

const DURATION_S = bounded('duration', args.duration, 1, 60);
const WARMUP_S = bounded('warmup', args.warmup, 0, 10);
const JIT_WARMUP_S = bounded('jit-warmup', args['jit-warmup'], 0, 60);
/** Streaming requests through the gateway in the JIT warm-up. */
const JIT_WARMUP_STREAMS = 200;
const STREAM_REQUESTS = Math.round(bounded('stream-requests', args['stream-requests'], 10, 2000));
const STREAM_WARMUP = 20;
const CONCURRENCIES = [1, 32];
const RSS_INTERVAL_MS = 100;
const SLUG = 'bench';
const UPSTREAM_KEY = 'sk-bench-upstream-key';
const DIRECT_MODEL = 'gpt-4o-mini';
const GATEWAY_MODEL = `@${SLUG}/${DIRECT_MODEL}`;
/** What every benchmark request asks; the fake upstream answers `Echo: ` and the prompt. */
const PROMPT = 'Hello, Switchyard';
/**
 * The policies on the key of the gateway-with-policies path: far above what a run sends (a few
 * thousand requests a second for well under an hour, a few dozen tokens each), so that they are
 * checked and counted on every request but never deny.
 */
const POLICY_REQUESTS_PER_HOUR = 1_000_000_000;
const POLICY_TOKEN_LIMIT = 1_000_000_000_000;
/** How long the check request's counts may take to show in the key's limits. */
const POLICY_CHECK_MS = 10_000;
/** The pause after the policed key's check request, for what it set off to finish. */
const POLICY_SETTLE_MS = 1_000;
/**
 * The organisation's default guardrails on the gateway-with-guardrails path, both denying on a
 * failed check: three input checks and one output check that run on every request but never
 * fail on the benchmark's prompt (PROMPT) or the fake upstream's answer ("Echo: " and the
 * prompt). The markers are what the check requests send to see them deny.
 */
const GUARDRAIL_INPUT_MARKER = 'bench-deny-input';
const GUARDRAIL_OUTPUT_MARKER = 'bench-deny-output';
const GUARDRAIL_INPUT_CHECKS: BenchGuardrailCheck[] = [
  {
    id: 'default.regexMatch',
    parameters: { rule: `\\b${GUARDRAIL_INPUT_MARKER}\\b`, flags: 'i', not: true },
  },
  { id: 'default.pii', parameters: {} },
  { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 10_000 } },
];
// With a longest match, a stream is checked as it flows rather than held to its end.
const GUARDRAIL_OUTPUT_CHECKS: BenchGuardrailCheck[] = [
  {
    id: 'default.regexMatch',
    parameters: { rule: `\\b${GUARDRAIL_OUTPUT_MARKER}\\b`, flags: 'i', not: true, maxMatchLength: 32 },
  },
];
/** How long the organisation's new default guardrails may take to reach the gateway. */
const GUARDRAIL_CHECK_MS = 10_000;
/** The whole run ends by itself: phases are bounded, and this is the backstop. */
const OVERALL_LIMIT_MS = 15 * 60_000;

if (args.placement !== 'cpus' && args.placement !== 'none')
  throw new Error(`--placement must be cpus or none, got ${args.placement}`);
const PLACEMENT: PlacementPlan | undefined = args.placement === 'cpus' ? planPlacement() : undefined;

const children: Child[] = [];
let restorePlacement: (() => void) | undefined;
let dataDir: string | undefined;
let sampler: RssSampler | undefined;
let interrupted = false;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** Lets the gateway finish deferred work from the previous run so that it does not slow the next one. */
async function settle(pid: number): Promise<number> {
  // The CPU profiler's sampling costs a few % of a core on its own.
  const waited = await waitUntilIdle(pid, {
    maxMs: 30_000,
    windowMs: 500,
    maxShare: args.profile ? 0.2 : 0.05,
  });
  if (waited > 1_000)
    log(`gateway busy with deferred work; waited ${(waited / 1000).toFixed(1)} s for it to settle`);
  return waited;
}

/**
 * Gateway process CPU (all threads) per request from the start of a measured run until it has
 * settled afterwards, so that work deferred past the run (storing request logs) is included.
 */
async function gatewayCost(
  pid: number,
  cpuBeforeMs: number | undefined,
  requests: number,
): Promise<GatewayCost> {
  const drainMs = await settle(pid);
  const cpuAfterMs = readCpuMs(pid);
  const cpuMsPerRequest =
    cpuBeforeMs !== undefined && cpuAfterMs !== undefined && requests > 0
      ? Math.round(((cpuAfterMs - cpuBeforeMs) / requests) * 100) / 100
      : NaN;
  // The wait ends with one quiet window of 500 ms, which is not deferred work.
  return { cpuMsPerRequest, drainMs: Math.max(0, drainMs - 500) };
}

/**
 * Lets the platform behind the gateway (services consuming the request-log and usage events,
 * Kafka, PostgreSQL, Redis) work off what the previous run left it, so that it does not compete
 * with the next run, direct or not.
 */
async function settlePlatform(gateway: Gateway): Promise<void> {
  if (gateway.platformPids.length === 0 && gateway.sharedPids.length === 0) return;
  const pids = () => [
    ...gateway.platformPids,
    ...gateway.sharedPids.flatMap((pid) => [pid, ...childrenOf(pid)]),
  ];
  const waited = await waitUntilIdle(pids, { maxMs: 60_000, windowMs: 1_000, maxShare: 0.2 });
  if (waited > 1_500)
    log(
      `platform busy with the previous run's events; waited ${(waited / 1000).toFixed(1)} s for it to settle`,
    );
}

async function cleanup(): Promise<void> {
  restorePlacement?.();
  restorePlacement = undefined;
  sampler?.stop();
  stopActiveLoad();
  await Promise.all(children.map((child) => child.stop(15_000)));
  await stack?.stop();
  stack = undefined;
  if (dataDir) {
    rmSync(dataDir, { recursive: true, force: true });
    dataDir = undefined;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}

function checkInterrupted(): void {
  if (interrupted) throw new Error('interrupted');
}

/** Environment for a child: no provider keys or Switchyard settings from the caller's shell. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^SWITCHYARD_|_API_KEY$|_BASE_URL$|^AWS_|^AZURE_|^GOOGLE_/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

async function startUpstream(): Promise<{ child: Child; url: string; baseUrl: string }> {
  const child = new Child('fake upstream', ['--import', 'tsx', 'bench/src/fake-upstream.ts'], {
    cwd: repoRoot,
    env: childEnv({ BENCH_UPSTREAM_KEY: UPSTREAM_KEY }),
  });
  children.push(child);
  const { url, baseUrl } = await child.waitForListening(30_000);
  if (typeof baseUrl !== 'string') throw new Error('the fake upstream did not say its base URL');
  return { child, url, baseUrl };
}

/** The MCP upstream (`fake-mcp-upstream.ts`): an MCP server built with the MCP SDK. */
async function startMcpUpstream(): Promise<{ child: Child; url: string }> {
  const child = new Child('fake MCP upstream', ['--import', 'tsx', 'bench/src/fake-mcp-upstream.ts'], {
    cwd: repoRoot,
    env: childEnv({}),
  });
  children.push(child);
  const { url } = await child.waitForListening(30_000);
  return { child, url };
}

/** The reference proxy (`reference-proxy.ts`) in front of the fake upstream. */
async function startReferenceProxy(upstreamUrl: string): Promise<{ child: Child; url: string }> {
  // The gateway's NODE_OPTIONS (as the chart gives them) and its own V8 flags, so that V8 is set up alike.
  const v8Flags = gatewayService.v8Flags ?? [];
  const child = new Child(
    'reference proxy',
    [...v8Flags, '--import', 'tsx', 'bench/src/reference-proxy.ts'],
    {
      cwd: repoRoot,
      env: childEnv({
        BENCH_UPSTREAM_URL: upstreamUrl,
        ...(MODE === 'distributed' && SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: SERVICE_NODE_OPTIONS } : {}),
      }),
    },
  );
  children.push(child);
  const { url } = await child.waitForListening(30_000);
  return { child, url };
}

/**
 * The ways the benchmark calls the fake upstream: directly, through the reference proxy, through
 * the gateway, through the gateway with a key under policies, and through the gateway with a key
 * of a workspace under the organisation's default guardrails.
 */
type Path = 'direct' | 'reference' | 'gateway' | 'policies' | 'guardrails';
/** How the log and the memory phases name each path. */
const PATH_LABELS: Record<Path, string> = {
  direct: 'direct',
  reference: 'reference',
  gateway: 'gateway',
  policies: 'gateway with policies',
  guardrails: 'gateway with guardrails',
};

interface Gateway {
  pid: number;
  /** Where the gateway's routes are served. */
  url: string;
  /** Where admin's routes are served (the same server in all-in-one mode). */
  adminUrl: string;
  /** Where control-plane's `/v2` routes are served (the same server in all-in-one mode). */
  managementUrl: string;
  adminKey: string;
  /** The workspace of the benchmark's keys but the guarded one. */
  workspaceId: string;
  workspaceKey: string;
  /** The other services' processes (distributed mode). */
  platformPids: number[];
  /** Kafka, PostgreSQL (its backends are found at each use) and Redis, when they run here. */
  sharedPids: number[];
  /** The policy service and Redis: a request with policies waits for them (see placement.ts). */
  hotPathPids: number[];
  stop(timeoutMs: number): Promise<void>;
}

/** Kafka, PostgreSQL and Redis started by deploy/local/deps.sh, from their pid files. */
const REDIS_PID_FILE = '.data/redis/redis.pid';

function localDependencyPids(
  files = ['.data/kafka/kafka.pid', '.data/postgres/postmaster.pid', REDIS_PID_FILE],
): number[] {
  const pids: number[] = [];
  for (const file of files) {
    try {
      const pid = Number(readFileSync(join(repoRoot, file), 'utf8').split('\n')[0]);
      if (pid > 0 && existsSync(`/proc/${pid}`)) pids.push(pid);
    } catch {
      // Not started by deps.sh here (e.g. external dependencies).
    }
  }
  return pids;
}

function parseMode(raw: string | undefined): 'distributed' | 'all-in-one' {
  if (raw === 'all-in-one' || raw === 'distributed') return raw;
  throw new Error(`--mode must be distributed or all-in-one, got ${raw}`);
}
const MODE = parseMode(args.mode);
const profileDir = join(outDir, 'profile');
/** Where the gateway's probe (`gateway-probe.mjs`) writes its recordings. */
const probeDir = join(outDir, 'probe');
const probeModule = join(repoRoot, 'bench', 'src', 'gateway-probe.mjs');

function resetProbeDir(): void {
  rmSync(probeDir, { recursive: true, force: true });
  mkdirSync(probeDir, { recursive: true });
}

let stack: Stack | undefined;

function resetProfileDir(): void {
  rmSync(profileDir, { recursive: true, force: true });
  mkdirSync(profileDir, { recursive: true });
}

/**
 * NODE_OPTIONS the Helm chart's default values give the gateway (its own extraEnv, else the
 * defaults' one; a component's list replaces the defaults'), so the benchmark runs the gateway
 * with the same V8 settings as a deployment.
 */
function chartNodeOptions(): string {
  type EnvVar = { name?: string; value?: string };
  const values = parseYaml(readFileSync(join(repoRoot, 'helm', 'switchyard', 'values.yaml'), 'utf8')) as {
    defaults?: { extraEnv?: EnvVar[] };
    components?: { gateway?: { extraEnv?: EnvVar[] } };
  };
  const env = values.components?.gateway?.extraEnv ?? values.defaults?.extraEnv ?? [];
  return env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
}

/** NODE_OPTIONS of the service processes in distributed mode: the chart's, then --node-options. */
const SERVICE_NODE_OPTIONS = [chartNodeOptions(), args['node-options']].filter(Boolean).join(' ');

/** The five services as separate processes on real dependencies, as the e2e suite runs them. */
async function startDistributed(): Promise<Gateway> {
  // The services run from the production bundle, as the image runs them.
  log('building the production bundle');
  execFileSync('bash', ['scripts/bundle.sh', '.data/bench/bundle'], { cwd: repoRoot, stdio: 'ignore' });
  process.env.SWITCHYARD_BUNDLE_DIR = '.data/bench/bundle';
  // The probe records the gateway's GC pauses and event-loop delay (the other services load it
  // and leave it idle).
  resetProbeDir();
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    BENCH_PROBE: 'gateway',
    BENCH_PROBE_DIR: probeDir,
  };
  // The harness gives every service the same environment; the chart gives them all these too.
  const nodeOptions = SERVICE_NODE_OPTIONS ? [SERVICE_NODE_OPTIONS] : [];
  nodeOptions.push(`--import ${probeModule}`);
  if (args.profile) {
    // The gateway process profiles itself and writes the profile when it exits.
    resetProfileDir();
    nodeOptions.push(`--import ${join(repoRoot, 'bench', 'src', 'cpu-profile.mjs')}`);
    env.BENCH_CPU_PROFILE = 'gateway';
    env.BENCH_CPU_PROFILE_DIR = profileDir;
    if (args['alloc-profile']) env.BENCH_ALLOC_PROFILE = '1';
  }
  if (nodeOptions.length > 0) env.NODE_OPTIONS = nodeOptions.join(' ');
  stack = await startStack({ upstreamKey: UPSTREAM_KEY, env });
  const workspace = await stack.request<{ id: string }>('POST', '/v2/workspaces', {
    key: stack.adminKey,
    body: { name: 'Bench' },
  });
  const key = await stack.request<{ key: string }>('POST', '/v2/api-keys/workspace/service', {
    key: stack.adminKey,
    body: { name: 'bench', workspace_id: workspace.body.id },
  });
  const gatewayPid = stack.process('gateway').pid;
  if (workspace.status !== 200 || key.status !== 200 || !gatewayPid)
    throw new Error('could not prepare the stack');
  return {
    pid: gatewayPid,
    url: stack.url('gateway'),
    adminUrl: stack.url('admin'),
    managementUrl: stack.url('control-plane'),
    adminKey: stack.adminKey,
    workspaceId: workspace.body.id,
    workspaceKey: key.body.key,
    platformPids: (['control-plane', 'admin', 'policy', 'log-export'] as const)
      .map((service) => stack!.process(service).pid ?? 0)
      .filter((pid) => pid > 0),
    sharedPids: localDependencyPids(),
    hotPathPids: [stack.process('policy').pid ?? 0, ...localDependencyPids([REDIS_PID_FILE])].filter(
      (pid) => pid > 0,
    ),
    stop: () => stack!.stopService('gateway'),
  };
}

async function startGateway(): Promise<Gateway> {
  if (MODE === 'distributed') return startDistributed();
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const port = await freePort();
  resetProbeDir();
  const nodeArgs = ['--import', 'tsx', '--import', probeModule];
  if (args.profile) {
    resetProfileDir();
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  }
  const child = new Child(
    'gateway (all-in-one)',
    [...nodeArgs, 'packages/launcher/src/cli.ts', 'all-in-one'],
    {
      cwd: repoRoot,
      env: childEnv({
        HOST: '127.0.0.1',
        PORT: String(port),
        SWITCHYARD_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        BENCH_PROBE: 'all-in-one',
        BENCH_PROBE_DIR: probeDir,
        // The fake upstream the saved integration points at listens on loopback.
        TRUSTED_CUSTOM_HOSTS: '127.0.0.1',
      }),
    },
  );
  children.push(child);
  const found = await child.waitForOutput((lines) => {
    const text = lines.join('\n');
    const url = /running \(all-in-one\) at (http:\/\/\S+)/.exec(text)?.[1];
    const adminKey = /admin key:\s+(\S+)/.exec(text)?.[1];
    const workspaceKey = /workspace key:\s+(\S+)/.exec(text)?.[1];
    const workspaceId = /workspace:\s+(\S+)/.exec(text)?.[1];
    return url && adminKey && workspaceKey && workspaceId
      ? { url, adminKey, workspaceKey, workspaceId }
      : undefined;
  }, 180_000);
  return {
    pid: child.pid!,
    adminUrl: found.url,
    managementUrl: found.url,
    platformPids: [],
    sharedPids: [],
    hotPathPids: [],
    stop: (ms) => child.stop(ms),
    ...found,
  };
}

async function post(
  url: string,
  key: string,
  body: unknown,
  timeoutMs = 30_000,
): Promise<{ status: number; text: string; headers: Headers }> {
  return send('POST', url, key, body, timeoutMs);
}

async function put(url: string, key: string, body: unknown): Promise<{ status: number; text: string }> {
  return send('PUT', url, key, body, 30_000);
}

async function send(
  method: 'POST' | 'PUT',
  url: string,
  key: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

async function get(url: string, key: string, timeoutMs = 30_000): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * A second workspace key, made like the benchmark's first, with one rate-limit policy (requests
 * per hour) and one usage-limit policy (tokens) that apply to it alone and count per key; both
 * never deny in a run. Created with the admin key through control-plane's management API.
 */
async function createPolicedKey(gateway: Gateway): Promise<{ id: string; key: string }> {
  const created = await post(`${gateway.managementUrl}/v2/api-keys/workspace/service`, gateway.adminKey, {
    name: 'bench with policies',
    workspace_id: gateway.workspaceId,
  });
  if (created.status !== 200) throw new Error(`creating the policed key: ${created.status} ${created.text}`);
  const { id, key } = JSON.parse(created.text) as { id?: string; key?: string };
  if (!id || !key) throw new Error(`creating the policed key: no id or key in ${created.text.slice(0, 200)}`);
  const scope = { conditions: [{ key: 'api_key', value: id }], group_by: [{ key: 'api_key' }] };
  for (const [kind, body] of [
    [
      'rate-limits',
      { name: 'bench requests', ...scope, type: 'requests', unit: 'rph', value: POLICY_REQUESTS_PER_HOUR },
    ],
    ['usage-limits', { name: 'bench tokens', ...scope, type: 'tokens', credit_limit: POLICY_TOKEN_LIMIT }],
  ] as const) {
    const res = await post(`${gateway.managementUrl}/v2/policies/${kind}`, gateway.adminKey, body);
    if (res.status !== 200) throw new Error(`creating the ${kind} policy: ${res.status} ${res.text}`);
  }
  return { id, key };
}

/**
 * After the policed key's check request (which filled the caches its policies go through): a
 * moment for what it set off to finish, and evidence that the policies apply on the gateway path,
 * from the rate limit's `x-ratelimit-*` headers on the gateway's answer, else by waiting (bounded)
 * until the key's limits show the request counted. Only logs when neither shows it.
 */
async function confirmPolicies(gateway: Gateway, key: string, answer: Headers): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, POLICY_SETTLE_MS));
  if (answer.get('x-ratelimit-limit-requests') === String(POLICY_REQUESTS_PER_HOUR)) {
    log(
      `policies on the policed key: the gateway's answer carried the rate limit (${answer.get('x-ratelimit-remaining-requests')} requests left this hour)`,
    );
    return;
  }
  const deadline = Date.now() + POLICY_CHECK_MS;
  let seen = '';
  while (Date.now() < deadline) {
    const res = await get(`${gateway.managementUrl}/v2/policies/usage`, key, 5_000).catch((err: unknown) => ({
      status: 0,
      text: String(err),
    }));
    seen = `${res.status} ${res.text.slice(0, 300)}`;
    if (res.status === 200) {
      const limits = parseJson<{ data?: Array<{ kind?: string; limit?: number; remaining?: number }> }>(
        res.text,
      )?.data;
      const counted = limits?.find(
        (l) => l.kind === 'rate_limit' && typeof l.limit === 'number' && typeof l.remaining === 'number',
      );
      if (limits && limits.length >= 2 && counted && counted.remaining! < counted.limit!) {
        log(`policies on the policed key: ${limits.length} apply; the check request was counted`);
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  log(
    `warning: neither the gateway's answer nor the policed key's limits showed the policies applied (last answer: ${seen})`,
  );
}

/**
 * A key of a second workspace, under the organisation's default guardrails: an input guardrail
 * of GUARDRAIL_INPUT_CHECKS and an output guardrail of GUARDRAIL_OUTPUT_CHECKS, made the
 * organisation's defaults, with the benchmark's first workspace (the other gateway paths)
 * excluded from both. Created with the admin key: the guardrails, workspace and key through
 * control-plane's management API, the defaults and exclusions through admin's.
 */
async function createGuardedKey(gateway: Gateway): Promise<{ workspaceId: string; key: string }> {
  const ids: Record<'input' | 'output', string> = { input: '', output: '' };
  for (const [phase, checks] of [
    ['input', GUARDRAIL_INPUT_CHECKS],
    ['output', GUARDRAIL_OUTPUT_CHECKS],
  ] as const) {
    const res = await post(`${gateway.managementUrl}/v1/guardrails`, gateway.adminKey, {
      name: `bench ${phase}`,
      checks,
      actions: { deny: true },
    });
    const id = res.status === 200 ? parseJson<{ id?: string }>(res.text)?.id : undefined;
    if (!id) throw new Error(`creating the ${phase} guardrail: ${res.status} ${res.text.slice(0, 300)}`);
    ids[phase] = id;
  }
  const workspace = await post(`${gateway.managementUrl}/v2/workspaces`, gateway.adminKey, {
    name: 'Bench with guardrails',
  });
  const workspaceId = workspace.status === 200 ? parseJson<{ id?: string }>(workspace.text)?.id : undefined;
  if (!workspaceId)
    throw new Error(`creating the guarded workspace: ${workspace.status} ${workspace.text.slice(0, 300)}`);
  const created = await post(`${gateway.managementUrl}/v2/api-keys/workspace/service`, gateway.adminKey, {
    name: 'bench with guardrails',
    workspace_id: workspaceId,
  });
  const key = created.status === 200 ? parseJson<{ key?: string }>(created.text)?.key : undefined;
  if (!key) throw new Error(`creating the guarded key: ${created.status} ${created.text.slice(0, 300)}`);
  // The exclusions before the defaults, so that the first workspace is never under them.
  for (const phase of ['input', 'output'] as const) {
    const res = await put(
      `${gateway.adminUrl}/v1/workspace-exclusions/${phase}-guardrails`,
      gateway.adminKey,
      {
        workspace_ids: [gateway.workspaceId],
        override_existing: true,
      },
    );
    if (res.status !== 200)
      throw new Error(`excluding the first workspace from the ${phase} defaults: ${res.status} ${res.text}`);
  }
  const defaults = await put(`${gateway.adminUrl}/v1/admin/organisation/defaults`, gateway.adminKey, {
    input_guardrails: [ids.input],
    output_guardrails: [ids.output],
  });
  if (defaults.status !== 200)
    throw new Error(`making the guardrails the organisation's defaults: ${defaults.status} ${defaults.text}`);
  return { workspaceId, key };
}

/** One chat completion with `key` asking for `content`; `stream` reads the whole stream as text. */
function ask(gateway: Gateway, key: string, content: string, stream = false) {
  return post(`${gateway.url}/v1/chat/completions`, key, {
    model: GATEWAY_MODEL,
    messages: [{ role: 'user', content }],
    ...(stream ? { stream: true } : {}),
  });
}

/**
 * Evidence that the default guardrails run on the guarded key's requests and on no other gateway
 * path's: a prompt holding the input rule's marker is refused (446) with the guarded key, and an
 * answer echoing the output rule's marker is withheld (`finish_reason: content_filter`), streamed
 * or not; with the first workspace's key and the policed key both are answered as sent. The
 * guarded key is asked again (bounded) until the defaults have reached the gateway. Throws when
 * any of it does not hold: the guarded and unguarded paths would measure something else.
 */
async function confirmGuardrails(
  gateway: Gateway,
  guardedKey: string,
  unguardedKeys: string[],
): Promise<void> {
  const deadline = Date.now() + GUARDRAIL_CHECK_MS;
  let refused = await ask(gateway, guardedKey, `please ${GUARDRAIL_INPUT_MARKER}`);
  while (refused.status !== 446 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    refused = await ask(gateway, guardedKey, `please ${GUARDRAIL_INPUT_MARKER}`);
  }
  if (
    refused.status !== 446 ||
    parseJson<{ error?: { code?: string } }>(refused.text)?.error?.code !== 'guardrail_denied'
  )
    throw new Error(
      `the guarded key's prompt with the input marker was not refused by its guardrails: ${refused.status} ${refused.text.slice(0, 300)}`,
    );
  const withheld = await ask(gateway, guardedKey, GUARDRAIL_OUTPUT_MARKER);
  const finish = parseJson<{ choices?: Array<{ finish_reason?: string }> }>(withheld.text)?.choices?.[0]
    ?.finish_reason;
  if (
    withheld.status !== 200 ||
    finish !== 'content_filter' ||
    withheld.text.includes(GUARDRAIL_OUTPUT_MARKER)
  )
    throw new Error(
      `the guarded key's answer with the output marker was not withheld: ${withheld.status} ${withheld.text.slice(0, 300)}`,
    );
  const streamed = await ask(gateway, guardedKey, GUARDRAIL_OUTPUT_MARKER, true);
  if (
    streamed.status !== 200 ||
    !streamed.text.includes('"finish_reason":"content_filter"') ||
    streamed.text.includes(GUARDRAIL_OUTPUT_MARKER)
  )
    throw new Error(
      `the guarded key's stream with the output marker was not cut off: ${streamed.status} ${streamed.text.slice(0, 300)}`,
    );
  // The benchmark's own prompt passes them, now that they apply.
  for (const stream of [false, true]) {
    const res = await ask(gateway, guardedKey, PROMPT, stream);
    const answered = stream
      ? res.text.includes('"finish_reason":"stop"')
      : res.text.includes(`Echo: ${PROMPT}`);
    if (res.status !== 200 || !answered)
      throw new Error(
        `the guarded key's ${stream ? 'stream' : 'request'} with the benchmark's prompt did not pass its guardrails: ${res.status} ${res.text.slice(0, 300)}`,
      );
  }
  for (const key of unguardedKeys) {
    for (const content of [`please ${GUARDRAIL_INPUT_MARKER}`, GUARDRAIL_OUTPUT_MARKER]) {
      const res = await ask(gateway, key, content);
      if (res.status !== 200 || !res.text.includes(`Echo: ${content}`))
        throw new Error(
          `a key of the excluded workspace was checked by the default guardrails: ${res.status} ${res.text.slice(0, 300)}`,
        );
    }
  }
  log(
    'guardrails: the guarded key is refused on the input marker and cut off on the output marker, streamed or not; the other keys are not',
  );
}

/** The non-2xx answers of a run by status, e.g. ` (429: 3, 503: 1)`; empty when there were none. */
function statuses(result: LoadResult): string {
  const counts = Object.entries(result.non2xxByStatus ?? {});
  return counts.length > 0 ? ` (${counts.map(([status, count]) => `${status}: ${count}`).join(', ')})` : '';
}

function parseJson<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** Streamable HTTP asks a client to accept both a JSON answer and an event stream. */
const MCP_ACCEPT = 'application/json, text/event-stream';
/** The MCP scenario's request: `tools/call` of the fake MCP server's `echo` tool. */
const MCP_CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: PROMPT } },
});

/**
 * An MCP integration whose URL is the fake MCP upstream, made with the admin key, and an MCP
 * server of the benchmark's workspace on it: the gateway serves it at `/mcp/<slug>`.
 */
async function createMcpServer(gateway: Gateway, upstreamUrl: string): Promise<{ slug: string }> {
  const integration = await post(`${gateway.managementUrl}/v2/mcp-integrations`, gateway.adminKey, {
    name: 'Bench MCP upstream',
    slug: 'bench-mcp',
    url: upstreamUrl,
    auth_type: 'none',
    transport: 'http',
    workspace_id: gateway.workspaceId,
  });
  if (integration.status !== 200)
    throw new Error(`creating the MCP integration: ${integration.status} ${integration.text}`);
  const server = await post(`${gateway.managementUrl}/v2/mcp-servers`, gateway.adminKey, {
    name: 'Bench MCP server',
    slug: 'bench-mcp-server',
    mcp_integration_id: 'bench-mcp',
    workspace_id: gateway.workspaceId,
  });
  if (server.status !== 200) throw new Error(`creating the MCP server: ${server.status} ${server.text}`);
  return { slug: 'bench-mcp-server' };
}

function chatBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: PROMPT }],
    ...(stream ? { stream: true } : {}),
  });
}

async function main(): Promise<void> {
  const backstop = setTimeout(() => {
    log(`the run exceeded ${OVERALL_LIMIT_MS / 60_000} minutes; stopping`);
    void cleanup().finally(() => process.exit(1));
  }, OVERALL_LIMIT_MS);
  backstop.unref();

  log('starting the fake upstream and the gateway');
  const [upstream, mcpUpstream, gateway] = await Promise.all([
    startUpstream(),
    startMcpUpstream(),
    startGateway(),
  ]);
  const reference = await startReferenceProxy(upstream.url);
  log(
    `fake upstream at ${upstream.url}; reference proxy at ${reference.url}; gateway at ${gateway.url} (pid ${gateway.pid})`,
  );
  if (PLACEMENT) {
    restorePlacement = applyPlacement(
      PLACEMENT,
      {
        loadGenerator: [process.pid],
        systemUnderTest: [upstream.child.pid, mcpUpstream.child.pid, reference.child.pid, gateway.pid],
        platform: gateway.platformPids,
        shared: gateway.sharedPids,
        hotPath: gateway.hotPathPids,
      },
      log,
    );
  }
  log(describePlacement(PLACEMENT));
  sampler = new RssSampler(gateway.pid, RSS_INTERVAL_MS);
  sampler.start();

  const created = await post(`${gateway.adminUrl}/admin/v2/integrations`, gateway.adminKey, {
    name: 'Bench upstream',
    slug: SLUG,
    ai_provider_id: 'openai',
    key: UPSTREAM_KEY,
    configurations: { custom_host: upstream.baseUrl },
  });
  if (created.status !== 200) throw new Error(`creating the integration: ${created.status} ${created.text}`);
  // Before any model request, so that the policy service loads the organisation's policies with
  // these in them from the start.
  const policed = await createPolicedKey(gateway);
  log(
    `policed key ${policed.id}: rate limit ${POLICY_REQUESTS_PER_HOUR} requests per hour, usage limit ${POLICY_TOKEN_LIMIT} tokens`,
  );
  const guarded = await createGuardedKey(gateway);
  log(
    `guarded key of workspace ${guarded.workspaceId}: the organisation's default guardrails, ` +
      `${GUARDRAIL_INPUT_CHECKS.length} input checks and ${GUARDRAIL_OUTPUT_CHECKS.length} output check; ` +
      `workspace ${gateway.workspaceId} excluded`,
  );

  const direct = (stream: boolean): Target => ({
    url: `${upstream.url}/v1/chat/completions`,
    headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
    body: chatBody(DIRECT_MODEL, stream),
  });
  const viaReference = (stream: boolean): Target => ({
    ...direct(stream),
    url: `${reference.url}/v1/chat/completions`,
  });
  const viaGateway = (stream: boolean): Target => ({
    url: `${gateway.url}/v1/chat/completions`,
    headers: { authorization: `Bearer ${gateway.workspaceKey}` },
    body: chatBody(GATEWAY_MODEL, stream),
  });
  const viaPolicies = (stream: boolean): Target => ({
    ...viaGateway(stream),
    headers: { authorization: `Bearer ${policed.key}` },
  });
  const viaGuardrails = (stream: boolean): Target => ({
    ...viaGateway(stream),
    headers: { authorization: `Bearer ${guarded.key}` },
  });

  // One request of each kind first: a benchmark of error answers would be meaningless.
  const policedCheck = viaPolicies(false);
  let policedAnswer: Headers | undefined;
  for (const [name, target] of [
    ['direct', direct(false)],
    ['reference proxy', viaReference(false)],
    ['gateway', viaGateway(false)],
    ['gateway with policies', policedCheck],
    ['gateway with guardrails', viaGuardrails(false)],
  ] as const) {
    const res = await post(target.url, target.headers.authorization!.slice(7), JSON.parse(target.body));
    if (res.status !== 200 || !res.text.includes(`Echo: ${PROMPT}`)) {
      throw new Error(`${name} check request: ${res.status} ${res.text.slice(0, 500)}`);
    }
    if (target === policedCheck) policedAnswer = res.headers;
  }
  const mcpServer = await createMcpServer(gateway, mcpUpstream.url);
  log(`MCP server ${mcpServer.slug} in front of ${mcpUpstream.url}`);
  const mcpDirect: Target = { url: mcpUpstream.url, headers: { accept: MCP_ACCEPT }, body: MCP_CALL };
  const mcpViaGateway: Target = {
    url: `${gateway.url}/mcp/${mcpServer.slug}`,
    headers: { accept: MCP_ACCEPT, authorization: `Bearer ${gateway.workspaceKey}` },
    body: MCP_CALL,
  };
  for (const [name, target] of [
    ['MCP direct', mcpDirect],
    ['MCP through the gateway', mcpViaGateway],
  ] as const) {
    const res = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: target.body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (res.status !== 200 || !text.includes(`Echo: ${PROMPT}`)) {
      throw new Error(`${name} check request: ${res.status} ${text.slice(0, 500)}`);
    }
  }
  await confirmPolicies(gateway, policed.key, policedAnswer!);
  await confirmGuardrails(gateway, guarded.key, [gateway.workspaceKey, policed.key]);

  await settle(gateway.pid);
  sampler.setPhase('idle');
  const idleKiB = await sampler.settle(2_000);
  log(`gateway RSS at idle: ${toMiB(idleKiB)} MB`);

  // V8 compiles the gateway's hot code with TurboFan on background threads during its first
  // seconds of traffic; on the system-under-test CPU that compilation competes with the requests.
  // A deployed gateway is past it after its first seconds, so nothing is measured before it.
  if (JIT_WARMUP_S > 0) {
    checkInterrupted();
    sampler.setPhase('JIT warm-up');
    log(
      `JIT warm-up: gateway, reference proxy and gateway with guardrails, each concurrency 1 for ${JIT_WARMUP_S} s, ` +
        `then ${JIT_WARMUP_STREAMS} streaming requests; gateway with policies, concurrency 1 for ${JIT_WARMUP_S} s (not measured)`,
    );
    // The reference proxy gets the same, so that both are measured with their hot code compiled;
    // the guardrails' own code (checks, the stream guard) runs only on the guarded key.
    for (const via of [viaGateway, viaReference, viaGuardrails]) {
      await runLoad(via(false), 1, JIT_WARMUP_S);
      await measureStreams(via(true), {
        requests: 10,
        warmup: JIT_WARMUP_STREAMS,
        maxDurationMs: 60_000,
        perRequestTimeoutMs: 10_000,
        shouldStop: () => interrupted,
      });
    }
    // The policy check's own code (limits, reservations) runs only on the policed key; it has no
    // streaming scenario.
    checkInterrupted();
    await runLoad(viaPolicies(false), 1, JIT_WARMUP_S);
    checkInterrupted();
    await runLoad(mcpViaGateway, 1, JIT_WARMUP_S);
  }

  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  const gatewayWindows: ProfileWindow[] = [];
  const nonStreaming: NonStreamingPair[] = [];
  const costs: Record<number, Partial<Record<Path, GatewayCost>>> = {};
  const runtimes: Record<number, Partial<Record<Path, GatewayRuntime>>> = {};
  const probe = new GatewayProbe(gateway.pid, probeDir);
  // With the processes placed, who used the system-under-test CPU in each measured run.
  const sutCpu = PLACEMENT ? Number(PLACEMENT.systemUnderTest) : undefined;
  // The proxy in a path's columns: the reference proxy on its path, otherwise the gateway.
  const proxyPid = (path: Path) => (path === 'reference' ? reference.child.pid : gateway.pid);
  const throughGateway = (path: Path) => path === 'gateway' || path === 'policies' || path === 'guardrails';
  const readSut = (path: Path) =>
    sutCpu === undefined || !upstream.child.pid
      ? undefined
      : readCpuUse(sutCpu, proxyPid(path), upstream.child.pid);
  const cpuUses: Record<number, Partial<Record<Path, CpuUse>>> = {};
  const referenceCpu: Record<number, number> = {};
  for (const connections of CONCURRENCIES) {
    const results: Partial<Record<Path, LoadResult>> = {};
    for (const [name, target] of [
      ['direct', direct(false)],
      ['reference', viaReference(false)],
      ['gateway', viaGateway(false)],
      ['policies', viaPolicies(false)],
      ['guardrails', viaGuardrails(false)],
    ] as const) {
      const label = PATH_LABELS[name];
      checkInterrupted();
      await settle(gateway.pid);
      await settlePlatform(gateway);
      sampler.setPhase(`${label} c=${connections}`);
      if (WARMUP_S > 0) {
        log(`warm-up: ${label}, concurrency ${connections}, ${WARMUP_S} s`);
        await runLoad(target, connections, WARMUP_S);
      }
      checkInterrupted();
      log(`measuring: ${label}, concurrency ${connections}, ${DURATION_S} s`);
      // The probe's recording starts here (what it holds from the warm-up is dropped).
      if (throughGateway(name)) await probe.take();
      const timeline = throughGateway(name) ? new Timeline() : undefined;
      const startUs = nowUs();
      const cpuBeforeMs = readCpuMs(proxyPid(name));
      const sutBefore = readSut(name);
      const result = await runLoad(target, connections, DURATION_S, timeline);
      const sutAfter = readSut(name);
      if (sutBefore && sutAfter) (cpuUses[connections] ??= {})[name] = cpuUse(sutCpu!, sutBefore, sutAfter);
      const others = cpuUses[connections]?.[name]?.othersMs ?? 0;
      if (others > result.durationS * 1000 * DISTURBED_SHARE)
        log(`  disturbed: other processes and interrupts used ${others} ms of CPU ${sutCpu} during this run`);
      if (throughGateway(name)) {
        const endUs = nowUs();
        gatewayWindows.push({ name: `${label}, concurrency ${connections}`, startUs, endUs });
        const recorded = await probe.take();
        if (recorded) {
          const { endsUs, latenciesUs } = timeline!.view();
          (runtimes[connections] ??= {})[name] = runtimeOf(
            recorded,
            startUs,
            endUs,
            endsUs,
            latenciesUs,
            result.latencyUs.p99,
          );
        } else log('the gateway probe did not answer; no GC or event-loop numbers for this run');
        (costs[connections] ??= {})[name] = await gatewayCost(gateway.pid, cpuBeforeMs, result.requests);
      }
      if (name === 'reference') {
        const cpuAfterMs = readCpuMs(reference.child.pid);
        if (cpuBeforeMs !== undefined && cpuAfterMs !== undefined && result.requests > 0)
          referenceCpu[connections] = (cpuAfterMs - cpuBeforeMs) / result.requests;
      }
      log(
        `  ${Math.round(result.reqPerSec)} req/s, p50 ${result.latencyUs.p50} µs, p99 ${result.latencyUs.p99} µs` +
          (result.non2xx || result.errors
            ? `, non-2xx ${result.non2xx}${statuses(result)}, errors ${result.errors}`
            : ''),
      );
      results[name] = result;
    }
    nonStreaming.push(
      pair(connections, results.direct!, results.gateway!, costs[connections]!.gateway!, {
        runtime: runtimes[connections]?.gateway,
        cpuUse: cpuUses[connections],
        reference: { result: results.reference!, cpuMsPerRequest: referenceCpu[connections] ?? NaN },
        policies: {
          result: results.policies!,
          gatewayCost: costs[connections]!.policies!,
          runtime: runtimes[connections]?.policies,
        },
        guardrails: {
          result: results.guardrails!,
          gatewayCost: costs[connections]!.guardrails!,
          runtime: runtimes[connections]?.guardrails,
        },
      }),
    );
  }

  const streamPlan = {
    requests: STREAM_REQUESTS,
    warmup: STREAM_WARMUP,
    maxDurationMs: 120_000,
    perRequestTimeoutMs: 10_000,
    shouldStop: () => interrupted,
  };
  const streamCosts: Partial<Record<Path, GatewayCost>> = {};
  const streams: Partial<Record<Path, StreamResult>> = {};
  for (const [name, target] of [
    ['direct', direct(true)],
    ['reference', viaReference(true)],
    ['gateway', viaGateway(true)],
    ['guardrails', viaGuardrails(true)],
  ] as const) {
    const label = PATH_LABELS[name];
    checkInterrupted();
    await settle(gateway.pid);
    await settlePlatform(gateway);
    sampler.setPhase(`${label} streaming`);
    log(`streaming: ${label}, ${STREAM_REQUESTS} sequential requests (after ${STREAM_WARMUP} warm-up)`);
    const startUs = nowUs();
    const cpuBeforeMs = readCpuMs(gateway.pid);
    const result = await measureStreams(target, streamPlan);
    if (throughGateway(name)) {
      gatewayWindows.push({ name: `${label}, streaming`, startUs, endUs: nowUs() });
      streamCosts[name] = await gatewayCost(gateway.pid, cpuBeforeMs, result.requests + result.failures);
    }
    log(
      `  TTFT p50 ${result.ttftUs.p50} µs, p99 ${result.ttftUs.p99} µs${result.failures ? `, failures ${result.failures}` : ''}`,
    );
    streams[name] = result;
  }
  const streamDirect = streams.direct!;
  const streamReference = streams.reference!;
  const streamGateway = streams.gateway!;
  const streaming: BenchResults['streaming'] = {
    concurrency: 1,
    direct: streamDirect,
    reference: streamReference,
    gateway: streamGateway,
    overheadP50Us: streamGateway.ttftUs.p50 - streamDirect.ttftUs.p50,
    overheadP99Us: streamGateway.ttftUs.p99 - streamDirect.ttftUs.p99,
    gatewayCost: streamCosts.gateway!,
    guardrails: guardrailsStreams(streamGateway, streams.guardrails!, streamCosts.guardrails!),
  };
  checkInterrupted();

  const mcp: McpPair[] = [];
  for (const connections of CONCURRENCIES) {
    const runs: Partial<Record<'direct' | 'gateway', LoadResult>> = {};
    let mcpCost: GatewayCost | undefined;
    for (const [name, target] of [
      ['direct', mcpDirect],
      ['gateway', mcpViaGateway],
    ] as const) {
      const label = `MCP ${name}`;
      checkInterrupted();
      await settle(gateway.pid);
      await settlePlatform(gateway);
      sampler.setPhase(`${label} c=${connections}`);
      if (WARMUP_S > 0) await runLoad(target, connections, WARMUP_S);
      checkInterrupted();
      log(`measuring: ${label}, concurrency ${connections}, ${DURATION_S} s`);
      const cpuBeforeMs = readCpuMs(gateway.pid);
      const result = await runLoad(target, connections, DURATION_S);
      if (name === 'gateway') mcpCost = await gatewayCost(gateway.pid, cpuBeforeMs, result.requests);
      log(
        `  ${Math.round(result.reqPerSec)} req/s, p50 ${result.latencyUs.p50} µs, p99 ${result.latencyUs.p99} µs` +
          (result.non2xx || result.errors
            ? `, non-2xx ${result.non2xx}${statuses(result)}, errors ${result.errors}`
            : ''),
      );
      runs[name] = result;
    }
    mcp.push(mcpPair(connections, runs.direct!, runs.gateway!, mcpCost!));
  }

  await settle(gateway.pid);
  sampler.setPhase('after');
  const afterKiB = await sampler.settle(2_000);
  sampler.stop();

  const rss = {
    idleMiB: toMiB(idleKiB),
    peakMiB: toMiB(sampler.peakKiB),
    afterMiB: toMiB(afterKiB),
    samples: sampler.samples,
    phasePeakMiB: Object.fromEntries(Object.entries(sampler.phasePeakKiB).map(([k, v]) => [k, toMiB(v)])),
  };
  const targets = evaluateTargets(nonStreaming, rss, streaming, mcp);
  const results: BenchResults = {
    generatedAt: new Date().toISOString(),
    environment: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    },
    config: {
      mode: MODE,
      placement: describePlacement(PLACEMENT),
      nodeOptions: MODE === 'distributed' ? SERVICE_NODE_OPTIONS : '',
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      jitWarmupS: JIT_WARMUP_S,
      concurrencies: CONCURRENCIES,
      streamRequests: STREAM_REQUESTS,
      streamWarmup: STREAM_WARMUP,
      directModel: DIRECT_MODEL,
      gatewayModel: GATEWAY_MODEL,
      rssIntervalMs: RSS_INTERVAL_MS,
      policies: { rateLimitPerHour: POLICY_REQUESTS_PER_HOUR, usageLimitTokens: POLICY_TOKEN_LIMIT },
      guardrails: { input: GUARDRAIL_INPUT_CHECKS, output: GUARDRAIL_OUTPUT_CHECKS },
    },
    nonStreaming,
    streaming,
    mcp,
    rss,
    targets,
    allTargetsHold: allHold(targets),
  };

  const { markdown, files } = writeResults(results, {
    data: outDir,
    report: join(repoRoot, RESULT_DIRS.report),
  });
  process.stdout.write(`\n${markdown}\n`);
  log(
    `results written to ${[files.json, files.results, files.latest].map((f) => relative(repoRoot, f)).join(', ')}`,
  );

  if (args.profile) {
    await gateway.stop(30_000);
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: the gateway's main thread is its largest.
    const files = readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile') && f.split('.')[3] === String(gateway.pid))
      .map((f) => join(profileDir, f))
      .sort((a, b) => statSync(b).size - statSync(a).size);
    if (files[0]) {
      writeFileSync(join(profileDir, 'windows.json'), `${JSON.stringify(gatewayWindows, null, 2)}\n`);
      const profile = readProfile(files[0]);
      const summary = profileMarkdown(
        summarizeProfile(profile, repoRoot, { windows: gatewayWindows }),
        `Gateway (${MODE}) main thread during the measured gateway runs (warm-ups excluded)`,
        gatewayWindows.map((w) => ({
          name: w.name,
          summary: summarizeProfile(profile, repoRoot, { windows: [w], top: 12 }),
        })),
      );
      writeFileSync(join(outDir, 'profile.md'), summary);
      process.stdout.write(`\n${summary}\n`);
      log('profile summary written to .data/bench/profile.md (raw profile in .data/bench/profile/)');
    } else {
      log('no CPU profile was written by the gateway process');
    }
  }
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  exitCode = 1;
  log(`failed: ${err instanceof Error ? err.message : String(err)}`);
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);
