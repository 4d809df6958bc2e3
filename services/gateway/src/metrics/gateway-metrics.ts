import { type Counter, Gauge, type GaugeConfiguration, type Histogram, type Registry } from 'prom-client';
import { counterOnce, histogramOnce, statusClass, type Metrics } from '@switchyard/core';
import type { EventBus } from '@switchyard/adapters';
import { providerRegistry } from '@switchyard/rules';
import { PRICES } from '../pricing/prices.ts';

/** What the event bus tells of its publish buffer. */
type PublishStats = ReturnType<EventBus['stats']>;

/** The service label of every gateway series (in all-in-one too, where the HTTP series say `all-in-one`). */
const SERVICE = 'gateway';

/** The cache's verdicts on a chat completion; requests the cache does not apply to are DISABLED. */
export type CacheLabel = 'HIT' | 'MISS' | 'REFRESH' | 'DISABLED';
const CACHE_LABELS: ReadonlySet<string> = new Set<CacheLabel>(['HIT', 'MISS', 'REFRESH', 'DISABLED']);

/** What rate and usage limits did with a request: `none` when it never reached a policy check. */
export type PolicyLabel = 'allowed' | 'denied' | 'none';

/** Why policy refused a request, or ended its stream. */
export type DenialReason = 'rate_limit' | 'usage_limit' | 'budget' | 'policy_unavailable';

const PROVIDER_KINDS: ReadonlySet<string> = new Set(providerRegistry.map((provider) => provider.id));

/** The provider label: a provider kind of the registry, `none` when no provider was chosen, else `other`. */
export function providerLabel(provider: string | undefined): string {
  if (!provider) return 'none';
  return PROVIDER_KINDS.has(provider) ? provider : 'other';
}

/**
 * The model label: the model's name when the provider's price table lists it under that very
 * name, `none` when the request named no model, else `other` — never a name a caller made up,
 * so the series stay as few as the price table's entries.
 */
export function modelLabel(provider: string | undefined, model: string | undefined): string {
  if (!model) return 'none';
  const prices = provider ? PRICES[provider] : undefined;
  return prices && Object.hasOwn(prices, model) ? model : 'other';
}

const cacheLabel = (cache: string | undefined): string =>
  cache !== undefined && CACHE_LABELS.has(cache) ? cache : 'DISABLED';

/** Seconds: from a few milliseconds (a cached answer) to the longest generation a provider allows. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
/** Seconds until a stream's first chunk. */
const FIRST_TOKEN_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30];

type McpLabels = 'service' | 'server' | 'method' | 'outcome';

/** What became of one JSON-RPC request through the MCP gateway. */
export type McpOutcome =
  | 'ok'
  | 'tool_error'
  | 'forbidden'
  | 'rate_limited'
  | 'guardrail_denied'
  | 'not_found'
  | 'upstream_error'
  | 'invalid'
  | 'error';

/** The MCP methods counted under their own name; any other is `other`. */
const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
]);

/** The most MCP servers named in the MCP series; more are counted as `other`. */
const MAX_MCP_SERVER_LABELS = 200;

type RequestLabels =
  'service' | 'route' | 'status_class' | 'provider' | 'model' | 'cache_status' | 'policy_decision';
type TargetLabels = 'service' | 'route' | 'provider' | 'model';

/** What one finished request is counted as. */
export interface FinishedRequest {
  route: string;
  status: number;
  provider: string | undefined;
  model: string | undefined;
  cacheStatus: string | undefined;
  policy: PolicyLabel;
  seconds: number;
  /** The answer's usage, when it reported one. */
  inputTokens: number;
  outputTokens: number;
  /** USD, as the price table prices it (0 for a cached or failed answer). */
  cost: number;
}

/**
 * The gateway's series on the process's registry: requests, upstream calls, first tokens,
 * tokens and cost, retries and fallbacks, guardrail verdicts, policy denials, and the event
 * buffer. Every label comes from a fixed set (see providerLabel, modelLabel), so the number of
 * series stays bounded whatever the traffic. Made once per registry (see gatewayMetrics).
 */
export class GatewayMetrics {
  readonly requestDuration: Histogram<RequestLabels>;
  readonly upstreamDuration: Histogram<TargetLabels | 'status_class'>;
  readonly firstToken: Histogram<TargetLabels | 'cache_status'>;
  readonly tokens: Counter<TargetLabels | 'cache_status' | 'direction'>;
  readonly cost: Counter<TargetLabels>;
  readonly retries: Counter<TargetLabels>;
  readonly fallbacks: Counter<TargetLabels>;
  readonly guardrailVerdicts: Counter<'service' | 'route' | 'guardrail_phase' | 'verdict'>;
  readonly policyDenials: Counter<'service' | 'route' | 'reason'>;
  readonly mcpCalls: Counter<McpLabels>;
  readonly mcpDuration: Histogram<McpLabels>;
  readonly batchRecords: Counter<'service' | 'operation' | 'outcome'>;
  /** The MCP server labels handed out so far (see mcpServerLabel). */
  private readonly mcpServers = new Set<string>();
  /** Where the event buffer's depth and drops are read from at each scrape. */
  private events: (() => PublishStats) | undefined;

  constructor(registry: Registry) {
    this.requestDuration = histogramOnce(registry, {
      name: 'switchyard_gateway_request_duration_seconds',
      help: 'Data-plane requests from arrival until the answer was sent, by route template, status class, provider, model, cache status and policy decision.',
      labelNames: [
        'service',
        'route',
        'status_class',
        'provider',
        'model',
        'cache_status',
        'policy_decision',
      ],
      buckets: REQUEST_BUCKETS,
    });
    this.upstreamDuration = histogramOnce(registry, {
      name: 'switchyard_gateway_upstream_duration_seconds',
      help: "Time spent waiting on the provider per attempt: until a stream's head, or a whole JSON answer; by the status class it answered (failures to connect and timeouts included).",
      labelNames: ['service', 'route', 'provider', 'model', 'status_class'],
      buckets: REQUEST_BUCKETS,
    });
    this.firstToken = histogramOnce(registry, {
      name: 'switchyard_gateway_time_to_first_token_seconds',
      help: "Streamed answers: from the request's arrival until its first chunk was sent to the client.",
      labelNames: ['service', 'route', 'provider', 'model', 'cache_status'],
      buckets: FIRST_TOKEN_BUCKETS,
    });
    this.tokens = counterOnce(registry, {
      name: 'switchyard_gateway_tokens_total',
      help: "Tokens the answers' usage reported, by direction (input: prompt, output: completion); cached answers are counted under cache_status HIT.",
      labelNames: ['service', 'route', 'provider', 'model', 'cache_status', 'direction'],
    });
    this.cost = counterOnce(registry, {
      name: 'switchyard_gateway_cost_total',
      help: "What the answers cost at the gateway's list prices, in USD (integration price multipliers applied; cached and failed answers cost nothing).",
      labelNames: ['service', 'route', 'provider', 'model'],
    });
    this.retries = counterOnce(registry, {
      name: 'switchyard_gateway_retries_total',
      help: "Retries a config's retry settings made, by the target retried.",
      labelNames: ['service', 'route', 'provider', 'model'],
    });
    this.fallbacks = counterOnce(registry, {
      name: 'switchyard_gateway_fallbacks_total',
      help: 'Times a fallback strategy moved on to its next target, by the target that failed.',
      labelNames: ['service', 'route', 'provider', 'model'],
    });
    this.guardrailVerdicts = counterOnce(registry, {
      name: 'switchyard_gateway_guardrail_verdicts_total',
      help: 'Guardrail runs, by phase (input, output) and verdict (allow, warn, redact, deny).',
      labelNames: ['service', 'route', 'guardrail_phase', 'verdict'],
    });
    this.policyDenials = counterOnce(registry, {
      name: 'switchyard_gateway_policy_denials_total',
      help: 'Requests refused by rate or usage limits, and streams they ended, by reason (rate_limit, usage_limit, budget: a cost limit, policy_unavailable: a limit that fails closed).',
      labelNames: ['service', 'route', 'reason'],
    });
    this.mcpCalls = counterOnce(registry, {
      name: 'switchyard_gateway_mcp_calls_total',
      help: 'JSON-RPC requests through the MCP gateway, by MCP server, method (tools/call, tools/list, initialize, … ; other methods `other`) and outcome (ok, tool_error, forbidden, rate_limited, guardrail_denied, not_found, upstream_error, invalid, error).',
      labelNames: ['service', 'server', 'method', 'outcome'],
    });
    this.mcpDuration = histogramOnce(registry, {
      name: 'switchyard_gateway_mcp_call_duration_seconds',
      help: 'JSON-RPC requests through the MCP gateway from arrival until answered, by MCP server, method and outcome.',
      labelNames: ['service', 'server', 'method', 'outcome'],
      buckets: REQUEST_BUCKETS,
    });
    this.batchRecords = counterOnce(registry, {
      name: 'switchyard_gateway_batch_records_total',
      help: "Calls to control-plane's batch records, by operation (record: a batch answer passed through; read: a batch's record looked up) and outcome (ok, failed: unreachable, past its deadline or refused).",
      labelNames: ['service', 'operation', 'outcome'],
    });
    gauge(registry, {
      name: 'switchyard_gateway_event_buffer_depth',
      help: "Request log and usage events waiting in the process's publish buffer for the broker.",
      collect: (gauge) => {
        const stats = this.events?.();
        if (stats) gauge.set(stats.buffered);
      },
    });
    gauge(registry, {
      name: 'switchyard_gateway_event_buffer_spilled',
      help: 'Events waiting in the spill file, past what the memory buffer holds.',
      collect: (gauge) => {
        const stats = this.events?.();
        if (stats) gauge.set(stats.spilled);
      },
    });
    const events = () => this.events?.();
    let dropsSeen = 0;
    counterOnce(registry, {
      name: 'switchyard_gateway_events_dropped_total',
      help: 'Events dropped: the buffer (and spill file) full, or an event larger than the broker accepts.',
      // Read at each scrape: the buffer counts its drops itself, off the hot path.
      collect() {
        const dropped = events()?.dropped;
        if (dropped !== undefined && dropped > dropsSeen) {
          this.inc(dropped - dropsSeen);
          dropsSeen = dropped;
        }
      },
    });
  }

  /** The publish buffer whose depth and drops are reported (the process's event bus). */
  watchEvents(stats: () => PublishStats): void {
    this.events ??= stats;
  }

  /** A finished request: its duration, and its tokens and cost when its answer reported usage. */
  finished(request: FinishedRequest): void {
    const provider = providerLabel(request.provider);
    const model = modelLabel(request.provider, request.model);
    const cache = cacheLabel(request.cacheStatus);
    this.requestDuration.observe(
      {
        service: SERVICE,
        route: request.route,
        status_class: statusClass(request.status),
        provider,
        model,
        cache_status: cache,
        policy_decision: request.policy,
      },
      request.seconds,
    );
    if (request.inputTokens > 0) {
      this.tokens.inc(
        { service: SERVICE, route: request.route, provider, model, cache_status: cache, direction: 'input' },
        request.inputTokens,
      );
    }
    if (request.outputTokens > 0) {
      this.tokens.inc(
        { service: SERVICE, route: request.route, provider, model, cache_status: cache, direction: 'output' },
        request.outputTokens,
      );
    }
    if (request.cost > 0) {
      this.cost.inc({ service: SERVICE, route: request.route, provider, model }, request.cost);
    }
  }

  /** One call to a provider, answered with `status` (or failed with it) after `seconds`. */
  upstream(
    route: string,
    provider: string,
    model: string | undefined,
    status: number,
    seconds: number,
  ): void {
    this.upstreamDuration.observe(
      {
        service: SERVICE,
        route,
        provider: providerLabel(provider),
        model: modelLabel(provider, model),
        status_class: statusClass(status),
      },
      seconds,
    );
  }

  /** A stream's first chunk went to the client `seconds` after the request arrived. */
  firstChunk(
    route: string,
    provider: string | undefined,
    model: string | undefined,
    cacheStatus: string | undefined,
    seconds: number,
  ): void {
    this.firstToken.observe(
      {
        service: SERVICE,
        route,
        provider: providerLabel(provider),
        model: modelLabel(provider, model),
        cache_status: cacheLabel(cacheStatus),
      },
      seconds,
    );
  }

  retried(route: string, provider: string | undefined, model: string | undefined): void {
    this.retries.inc(this.target(route, provider, model));
  }

  fellBack(route: string, provider: string | undefined, model: string | undefined): void {
    this.fallbacks.inc(this.target(route, provider, model));
  }

  guardrailVerdict(route: string, phase: 'input' | 'output', verdict: string): void {
    this.guardrailVerdicts.inc({ service: SERVICE, route, guardrail_phase: phase, verdict });
  }

  /** One call to control-plane's batch records. */
  batchRecord(operation: 'record' | 'read', outcome: 'ok' | 'failed'): void {
    this.batchRecords.inc({ service: SERVICE, operation, outcome });
  }

  policyDenied(route: string, reason: DenialReason): void {
    this.policyDenials.inc({ service: SERVICE, route, reason });
  }

  /** One JSON-RPC request through the MCP gateway, answered after `seconds`. */
  mcpCall(server: string, method: string, outcome: McpOutcome, seconds: number): void {
    const labels = {
      service: SERVICE,
      server: this.mcpServerLabel(server),
      method: MCP_METHODS.has(method) ? method : 'other',
      outcome,
    };
    this.mcpCalls.inc(labels);
    this.mcpDuration.observe(labels, seconds);
  }

  /**
   * The server label: the server's slug for the first MAX_MCP_SERVER_LABELS servers seen, then
   * `other`, so that the series stay bounded however many servers organisations register.
   */
  private mcpServerLabel(server: string): string {
    if (this.mcpServers.has(server)) return server;
    if (this.mcpServers.size >= MAX_MCP_SERVER_LABELS) return 'other';
    this.mcpServers.add(server);
    return server;
  }

  private target(route: string, provider: string | undefined, model: string | undefined) {
    return { service: SERVICE, route, provider: providerLabel(provider), model: modelLabel(provider, model) };
  }
}

const made = new WeakMap<Registry, GatewayMetrics>();

/**
 * The gateway's series on the process's registry, registered once however often the service
 * is created on it (all-in-one, tests); `events` is the publish buffer to report on.
 */
export function gatewayMetrics(metrics: Metrics, events?: () => PublishStats): GatewayMetrics {
  let gateway = made.get(metrics.registry);
  if (!gateway) made.set(metrics.registry, (gateway = new GatewayMetrics(metrics.registry)));
  if (events) gateway.watchEvents(events);
  return gateway;
}

function gauge(
  registry: Registry,
  configuration: Omit<GaugeConfiguration<string>, 'collect'> & { collect: (gauge: Gauge) => void },
): Gauge {
  const existing = registry.getSingleMetric(configuration.name) as Gauge | undefined;
  if (existing) return existing;
  const { collect, ...rest } = configuration;
  return new Gauge({
    ...rest,
    registers: [registry],
    collect() {
      collect(this);
    },
  });
}
