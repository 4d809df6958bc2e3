import type { MessageInitShape } from '@bufbuild/protobuf';
import { Counter } from 'prom-client';
import { ServiceUnavailable, type Logger, type Metrics } from '@switchyard/core';
import type { ServiceClient } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import type { PolicyCheck, PolicyCheckRequest } from '../domain/ports.ts';
import {
  PolicyRefusal,
  SKIPPED_HOLD,
  addRateLimitHeaders,
  type AccrueVerdict,
  type PolicyAdjustmentFields,
  type PolicyDecision,
  type PolicyHold,
  type RateLimitStanding,
  type UsageAmount,
} from '../domain/policy.ts';
import { LocalRateLimiter, windowOf, type LocalTaking, type RememberedRateLimit } from './local-limiter.ts';
import { PolicyLeases } from './policy-leases.ts';

export interface PolicyGateOptions {
  /** The deadline of a check, and of a stream's question for more. */
  timeoutMs: number;
  /** A key the gate has never seen a policy answer for, while the policy service cannot answer: let it through (else 503). */
  failOpen: boolean;
  /** The gateway's header prefix (`<prefix>policy-id` names the policy that refused a request). */
  headerPrefix?: string;
  /** Where the failure policy's decisions are counted. */
  metrics?: Metrics | undefined;
  /** The most requests one lease may be asked for (default 256); 0: every request is checked. */
  leaseRequests?: number;
  /** A lease not drawn on for this long is given back (default 1 s). */
  leaseIdleMs?: number;
  now?: () => number;
}

const LEASE_ADMISSIONS = 'switchyard_gateway_policy_lease_admissions_total';
/** How often idle leases are given back. */
const LEASE_SWEEP_MS = 250;

/** How long a batch of settlements, sent after the answers, may take. */
const SETTLE_DEADLINE_MS = 5_000;
/**
 * Settlements of finished requests wait this long to go out together in one Settle call, or
 * until this many wait: the requests never wait for them, and the gateway makes one call for
 * many instead of one each.
 */
const SETTLE_BATCH_MS = 5;
const SETTLE_BATCH_MAX = 500;
/** At most one log line per kind of trouble in this time. */
const WARNING_INTERVAL_MS = 10_000;
/** Keys whose limits are remembered for when the policy service is away; the oldest go first. */
const MAX_REMEMBERED_KEYS = 50_000;
const MAX_SKIPPED_KEYS = 100_000;

const FAILED_OPEN_HOLD: PolicyHold = Object.freeze({ ...SKIPPED_HOLD, decision: 'failed_open' as const });
const ALLOWED: AccrueVerdict = Object.freeze({ allowed: true, policyId: '', code: '', message: '' });

const kindName = (kind: policy.PolicyKind) =>
  kind === policy.PolicyKind.RATE_LIMIT
    ? 'rate_limit'
    : kind === policy.PolicyKind.USAGE_LIMIT
      ? 'usage_limit'
      : 'unknown';

/** The rate limits among limit states, as the header helper reads them. */
function* rateStandings(limits: readonly policy.LimitState[]): Generator<RateLimitStanding> {
  for (const s of limits) {
    if (s.kind !== policy.PolicyKind.RATE_LIMIT) continue;
    yield { type: s.type, limit: s.limit, remaining: s.remaining, resetAtMs: Number(s.resetAtMs) };
  }
}

/** What the gate last saw of a key's limits. */
interface Remembered {
  states: readonly policy.LimitState[];
  /** The rate limits, to apply locally; made on first use. */
  rate?: RememberedRateLimit[];
  seenAtMs: number;
}

/**
 * The failure policy's decisions while the policy service cannot answer, by the kind of limit
 * that decided (`rate_limit`, `usage_limit`, `none` for a key no limit applies to, `unseen`
 * for a key never seen) and the mode applied (`open`, `closed`). Registered with the
 * process's metrics registry as a counter.
 */
class FallbackDecisions {
  name = 'switchyard_gateway_policy_fallback_decisions_total';
  readonly help =
    'Requests the gateway decided on its own while the policy service could not answer, by the kind of limit that decided and the failure mode applied.';
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly labelNames = ['kind', 'mode'] as const;
  private readonly counts = new Map<string, { labels: { kind: string; mode: string }; value: number }>();

  inc(kind: string, mode: 'open' | 'closed'): void {
    const key = `${kind}/${mode}`;
    const entry = this.counts.get(key);
    if (entry) entry.value += 1;
    else this.counts.set(key, { labels: { kind, mode }, value: 1 });
  }

  value(kind: string, mode: 'open' | 'closed'): number {
    return this.counts.get(`${kind}/${mode}`)?.value ?? 0;
  }

  get() {
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.counts.values()].map(({ labels, value }) => ({ labels: { ...labels }, value })),
    });
  }

  reset(): void {
    this.counts.clear();
  }
}

/**
 * At most one policy call per routed attempt, bounded by a deadline, and none while the
 * policy service has said that nothing applies to the key. An admitted request gets its
 * hold (to meter a stream and settle when it is over); a refused one, the refusal to answer
 * with. When the policy service cannot answer, the limits last seen for the key decide:
 * any with failure mode closed refuses (503), otherwise rate limits are counted here in
 * fixed windows and usage limits let through; a key never seen follows `failOpen`.
 */
export class PolicyGate implements PolicyCheck {
  /** API key id → until when no policy applies to it. */
  private readonly unrestricted = new Map<string, number>();
  /** API key id → the limits last seen to apply to it. */
  private readonly remembered = new Map<string, Remembered>();
  private readonly settlements: Array<MessageInitShape<typeof policy.AccrueRequestSchema>> = [];
  private settleTimer: NodeJS.Timeout | undefined;
  private readonly local = new LocalRateLimiter();
  private readonly warnedAt = new Map<string, number>();
  readonly fallbacks = new FallbackDecisions();
  private readonly policyIdHeader: string;
  /** The gate's clock (Unix epoch ms): holds and leases expire by it. */
  readonly now: () => number;
  readonly leases: PolicyLeases;
  private readonly sweeper: NodeJS.Timeout;
  /** Requests admitted on a lease, without a call. */
  readonly leaseAdmissions: Counter;

  constructor(
    readonly client: ServiceClient<typeof policy.PolicyService>,
    private readonly logger: Logger,
    readonly options: PolicyGateOptions,
  ) {
    this.policyIdHeader = `${options.headerPrefix ?? 'x-vendor-'}policy-id`;
    this.now = options.now ?? Date.now;
    this.leases = new PolicyLeases(
      { maxRequests: options.leaseRequests ?? 256, idleMs: options.leaseIdleMs },
      (unused) => this.settleLater(unused),
      this.now,
    );
    this.sweeper = setInterval(() => this.leases.sweep(), LEASE_SWEEP_MS);
    this.sweeper.unref();
    const registry = options.metrics?.registry;
    if (registry && !registry.getSingleMetric(this.fallbacks.name)) {
      registry.registerMetric(this.fallbacks as unknown as Parameters<typeof registry.registerMetric>[0]);
    }
    this.leaseAdmissions =
      (registry?.getSingleMetric(LEASE_ADMISSIONS) as Counter | undefined) ??
      new Counter({
        name: LEASE_ADMISSIONS,
        help: 'Requests the gateway admitted on a lease of their limits (taken ahead from the shared counters), without asking the policy service.',
        registers: registry ? [registry] : [],
      });
  }

  async check(request: PolicyCheckRequest): Promise<PolicyHold> {
    const { principal } = request;
    const target = request.target ?? 'llm';
    // What the policy service says of a key's model calls says nothing of its tool calls:
    // each target is remembered (and skipped) on its own.
    const keyId = slotOf(request);
    const skipUntil = this.unrestricted.get(keyId);
    if (skipUntil !== undefined) {
      if (skipUntil > this.now()) return SKIPPED_HOLD;
      this.unrestricted.delete(keyId);
    }
    const estimate = request.estimate();
    const asked = {
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId ?? '',
      apiKeyId: principal.apiKeyId,
      provider: request.provider,
      model: request.model,
      metadata: request.metadata,
      userId: principal.userId ?? '',
      estimate,
      requestId: request.requestId,
      target,
      mcpServer: request.mcpServer ?? '',
      toolName: request.toolName ?? '',
      lease: 0,
    };
    // A request like others checked just now is admitted from what they leased, without a
    // call; one that finds the lease empty while another is being taken waits for that one.
    // Tool calls are always checked: their leases would need the server and tool in the
    // fingerprint.
    const fp = this.leases.enabled && target === 'llm' ? this.leases.fingerprint(asked) : undefined;
    let leased = this.leases.admit(fp, estimate);
    if (leased === undefined) {
      const refill = this.leases.refilling(fp);
      if (refill !== undefined) {
        // The policy service did not answer that check: this one is decided as it would be.
        const failed = await refill.then(
          () => undefined,
          (err: unknown) => err ?? new Error('policy check failed'),
        );
        if (failed !== undefined) return this.unanswered(request, estimate, failed);
        leased = this.leases.admit(fp, estimate);
      }
    }
    if (leased !== undefined) {
      this.leaseAdmissions.inc();
      return new RemoteHold(
        this,
        principal.organisationId,
        { $typeName: 'switchyard.policy.v1.Reservation', id: '', holds: leased.holds },
        'allowed',
        addRateLimitHeaders({}, leased.standings, this.now()),
      );
    }
    asked.lease = this.leases.want(fp);
    let response: policy.CheckResponse;
    try {
      const call = this.ask(asked);
      if (asked.lease > 0) this.leases.taking(fp, call);
      response = await call;
    } catch (err) {
      return this.unanswered(request, estimate, err);
    }
    const { limits } = response;
    if (response.decision === policy.Decision.DENY) {
      if (limits.length > 0 && !this.remembered.has(keyId)) this.remember(keyId, limits);
      throw this.refusal(response);
    }
    if (response.skipChecksForMs > 0) {
      if (this.unrestricted.size >= MAX_SKIPPED_KEYS) this.unrestricted.clear();
      this.unrestricted.set(keyId, this.now() + response.skipChecksForMs);
    }
    this.remember(keyId, limits);
    const holds = response.reservation?.holds ?? [];
    if (holds.length === 0 && limits.length === 0) return response.degraded ? FAILED_OPEN_HOLD : SKIPPED_HOLD;
    const standings = target === 'llm' ? this.leases.record(asked, response, asked.lease) : undefined;
    const headers =
      limits.length > 0 ? addRateLimitHeaders({}, standings ?? rateStandings(limits), this.now()) : {};
    return new RemoteHold(
      this,
      principal.organisationId,
      response.reservation ?? { $typeName: 'switchyard.policy.v1.Reservation', id: '', holds: [] },
      response.degraded ? 'failed_open' : 'allowed',
      headers,
    );
  }

  /**
   * Asks the policy service. A check cut off by a policy process that went away (its
   * connection dropped) is asked once more, of another replica, within what is left of the
   * deadline. Had the first counted it, it counts twice: limits err on the strict side, never
   * the lenient one.
   */
  private async ask(
    asked: MessageInitShape<typeof policy.CheckRequestSchema>,
  ): Promise<policy.CheckResponse> {
    const started = performance.now();
    try {
      return await this.client.check(asked, { deadlineMs: this.options.timeoutMs });
    } catch (err) {
      const left = this.options.timeoutMs - (performance.now() - started);
      if (!connectionLost(err) || left < MIN_RETRY_MS) throw err;
      return await this.client.check(asked, { deadlineMs: left });
    }
  }

  /** A policy changed: ask again for every key, and give back every lease. */
  policiesChanged(): void {
    this.unrestricted.clear();
    this.leases.releaseAll();
  }

  /** Gives back every lease and sends the settlements waiting: before the policy client closes. */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.leases.releaseAll();
    await this.flushSettlements();
  }

  /** Queues a finished request's settlement; it goes out with the others within SETTLE_BATCH_MS. */
  settleLater(settlement: MessageInitShape<typeof policy.AccrueRequestSchema>): void {
    this.settlements.push(settlement);
    if (this.settlements.length >= SETTLE_BATCH_MAX) void this.flushSettlements();
    else this.settleTimer ??= setTimeout(() => void this.flushSettlements(), SETTLE_BATCH_MS);
  }

  /** Sends the settlements waiting now; resolves once the policy service took them or failed to. */
  async flushSettlements(): Promise<void> {
    clearTimeout(this.settleTimer);
    this.settleTimer = undefined;
    const settlements = this.settlements.splice(0);
    if (settlements.length === 0) return;
    try {
      await this.client.settle(
        { settlements },
        { deadlineMs: Math.max(this.options.timeoutMs, SETTLE_DEADLINE_MS) },
      );
    } catch (err) {
      this.warn('settle', 'could not settle reservations with the policy service', {
        settlements: settlements.length,
        error: String(err),
      });
    }
  }

  /** Logs a kind of trouble at most once per interval. */
  warn(kind: string, message: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - (this.warnedAt.get(kind) ?? 0) < WARNING_INTERVAL_MS) return;
    this.warnedAt.set(kind, now);
    this.logger.warn(message, fields);
  }

  private remember(keyId: string, states: readonly policy.LimitState[]): void {
    const seen = this.remembered.get(keyId);
    if (seen !== undefined) {
      // In place: the per-request cost of remembering is two assignments.
      seen.states = states;
      seen.rate = undefined;
      seen.seenAtMs = this.now();
      return;
    }
    if (this.remembered.size >= MAX_REMEMBERED_KEYS)
      this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(keyId, { states, seenAtMs: this.now() });
  }

  private refusal(response: policy.CheckResponse): PolicyRefusal {
    const policyId = response.policyId;
    const headers = addRateLimitHeaders({}, rateStandings(response.limits), this.now());
    if (policyId) headers[this.policyIdHeader] = policyId;
    if (response.code === 'policy_unavailable') {
      return PolicyRefusal.unavailable(
        response.message || 'The policy store is unavailable and the policy fails closed.',
        policyId,
        headers,
      );
    }
    const denying = response.limits.find((s) => s.policyId === policyId) ?? response.limits[0];
    const usageLimit =
      response.code === 'usage_limit_exceeded' || denying?.kind === policy.PolicyKind.USAGE_LIMIT;
    // A usage limit that never resets: there is no time to wait for.
    const retryAfter =
      response.retryAfterSeconds === 0 && usageLimit ? undefined : response.retryAfterSeconds;
    return PolicyRefusal.denied(
      response.message || `Request denied by policy ${policyId || '(unnamed)'}.`,
      response.code || (usageLimit ? 'usage_limit_exceeded' : 'rate_limit_exceeded'),
      policyId,
      retryAfter,
      headers,
      usageLimit ? (denying?.type === 'cost' ? 'budget' : 'usage_limit') : 'rate_limit',
    );
  }

  /** The policy service did not answer: the failure policy decides from the limits last seen for the key. */
  private unanswered(request: PolicyCheckRequest, estimate: UsageAmount, err: unknown): PolicyHold {
    const keyId = slotOf(request);
    const seen = this.remembered.get(keyId);
    const fields = { api_key_id: request.principal.apiKeyId, error: String(err) };
    if (seen === undefined) {
      const mode = this.options.failOpen ? 'open' : 'closed';
      this.fallbacks.inc('unseen', mode);
      this.warn(
        `unseen/${mode}`,
        `policy service unavailable; ${mode === 'open' ? 'allowing' : 'refusing'} requests of keys not seen before (POLICY_FAIL_OPEN)`,
        fields,
      );
      if (!this.options.failOpen) {
        throw PolicyRefusal.unavailable('The policy service is unavailable.', '', {});
      }
      return FAILED_OPEN_HOLD;
    }
    const closed = seen.states.find((s) => s.failureMode === policy.FailureMode.CLOSED);
    if (closed) {
      const kind = kindName(closed.kind);
      this.fallbacks.inc(kind, 'closed');
      this.warn(
        `${kind}/closed`,
        'policy service unavailable; refusing requests under limits that fail closed',
        {
          ...fields,
          policy_id: closed.policyId,
        },
      );
      throw PolicyRefusal.unavailable(
        `The policy service is unavailable and policy ${closed.policyId} fails closed.`,
        closed.policyId,
        { [this.policyIdHeader]: closed.policyId },
      );
    }
    const rate = (seen.rate ??= seen.states
      .filter(
        (s) => s.kind === policy.PolicyKind.RATE_LIMIT && (s.type === 'requests' || s.type === 'tokens'),
      )
      .map((s) => ({
        policyId: s.policyId,
        type: s.type,
        limit: s.limit,
        valueKey: s.valueKey,
        windowMs: Number(s.windowMs) || windowOf(Number(s.resetAtMs), seen.seenAtMs),
      })));
    const kind = rate.length > 0 ? 'rate_limit' : seen.states.length > 0 ? 'usage_limit' : 'none';
    this.fallbacks.inc(kind, 'open');
    this.warn(
      `${kind}/open`,
      'policy service unavailable; deciding with the limits last seen (failure mode open)',
      fields,
    );
    if (rate.length === 0) return FAILED_OPEN_HOLD;
    const now = this.now();
    const decision = this.local.take(rate, estimate.tokens, now);
    const headers = addRateLimitHeaders({}, decision.standings, now);
    if (!decision.admitted) {
      headers[this.policyIdHeader] = decision.limit.policyId;
      throw PolicyRefusal.denied(
        `Rate limit of policy ${decision.limit.policyId} reached for ${decision.limit.valueKey} (${decision.limit.limit} ${decision.limit.type} per window, counted by this gateway while the policy service is unavailable).`,
        'rate_limit_exceeded',
        decision.limit.policyId,
        Math.ceil((decision.resetAtMs - now) / 1000),
        headers,
      );
    }
    return new LocalHold(this.local, decision.taken, headers);
  }
}

/** Where a key's policy answers are remembered: its id for model calls, with the target for others. */
function slotOf(request: PolicyCheckRequest): string {
  const target = request.target ?? 'llm';
  return target === 'llm' ? request.principal.apiKeyId : `${request.principal.apiKeyId}\n${target}`;
}

/** Less time than this left of the deadline: a lost check is not asked again. */
const MIN_RETRY_MS = 20;
/** gRPC's UNAVAILABLE: the connection to the server failed or dropped (not a deadline). */
const GRPC_UNAVAILABLE = 14;

function connectionLost(err: unknown): boolean {
  return (
    err instanceof ServiceUnavailable &&
    (err.cause as { code?: unknown } | undefined)?.code === GRPC_UNAVAILABLE
  );
}

/** What the policy service reserved for an admitted request, settled with Accrue. */
class RemoteHold implements PolicyHold {
  policyId = '';
  code = '';
  metered: boolean;
  heldTokens = Infinity;
  heldCost = Infinity;
  private settledWith: UsageAmount | undefined;
  private settled = false;

  constructor(
    private readonly gate: PolicyGate,
    private readonly organisationId: string,
    private reservation: policy.Reservation,
    public decision: PolicyDecision,
    readonly headers: Record<string, string>,
  ) {
    this.measure();
    this.metered = this.heldTokens !== Infinity || this.heldCost !== Infinity;
  }

  private measure(): void {
    let tokens = Infinity;
    let cost = Infinity;
    for (const hold of this.reservation.holds) {
      if (hold.type === 'tokens') tokens = Math.min(tokens, hold.held);
      else if (hold.type === 'cost') cost = Math.min(cost, hold.held);
    }
    this.heldTokens = tokens;
    this.heldCost = cost;
  }

  async accrue(used: UsageAmount): Promise<AccrueVerdict> {
    let response: policy.AccrueResponse;
    try {
      response = await this.gate.client.accrue(
        { reservation: this.reservation, used, final: false, organisationId: this.organisationId },
        { deadlineMs: this.gate.options.timeoutMs },
      );
    } catch (err) {
      this.gate.warn('accrue', 'policy service unavailable mid-stream; the stream goes on', {
        error: String(err),
      });
      return ALLOWED;
    }
    if (response.reservation) {
      this.reservation = response.reservation;
      this.measure();
    }
    if (response.allowed) return ALLOWED;
    this.decision = 'exhausted';
    this.policyId = response.policyId;
    this.code = response.code || 'usage_limit_exceeded';
    return { allowed: false, policyId: response.policyId, code: this.code, message: response.message };
  }

  settle(used: UsageAmount | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.settledWith = used;
    if (used === undefined || !this.metered) return;
    const now = this.gate.now();
    const live = this.reservation.holds.filter(
      // 0: the counter of a usage limit that never resets, which never expires.
      (h) => h.expiresAtMs === '0' || Number(h.expiresAtMs) > now,
    );
    // What the gateway's leases can take up or take back is settled here; the rest goes out.
    const rest = this.gate.leases.settle(live, used);
    if (rest.length === 0) return;
    this.gate.settleLater({
      reservation: { id: this.reservation.id, holds: rest },
      used,
      final: true,
      organisationId: this.organisationId,
    });
  }

  adjustments(): PolicyAdjustmentFields[] {
    const used = this.settledWith;
    return this.reservation.holds.map((h) => ({
      policyId: h.policyId,
      type: h.type,
      held: h.held,
      used:
        used === undefined || h.type === 'requests' ? h.held : h.type === 'tokens' ? used.tokens : used.cost,
    }));
  }
}

/** What the gateway's own limiter took while the policy service was away. */
class LocalHold implements PolicyHold {
  readonly decision = 'failed_open' as const;
  readonly policyId = '';
  readonly code = '';
  readonly metered = false;
  readonly heldTokens = Infinity;
  readonly heldCost = Infinity;
  private settledWith: UsageAmount | undefined;
  private settled = false;

  constructor(
    private readonly limiter: LocalRateLimiter,
    private readonly taken: LocalTaking[],
    readonly headers: Record<string, string>,
  ) {}

  accrue(): Promise<AccrueVerdict> {
    return Promise.resolve(ALLOWED);
  }

  settle(used: UsageAmount | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.settledWith = used;
    if (used === undefined) return;
    for (const taking of this.taken) this.limiter.settle(taking, used.tokens);
  }

  adjustments(): PolicyAdjustmentFields[] {
    const used = this.settledWith;
    return this.taken.map((t) => ({
      policyId: t.limit.policyId,
      type: t.limit.type,
      held: t.held,
      used: used === undefined || t.limit.type === 'requests' ? t.held : used.tokens,
    }));
  }
}
