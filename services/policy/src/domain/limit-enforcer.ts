import type { MessageInitShape } from '@bufbuild/protobuf';
import type { CounterAdjustment, CounterTake, LimitCounterStore, TakeResult } from '@switchyard/adapters';
import { BadRequest, type Logger } from '@switchyard/core';
import { policy as wire } from '@switchyard/proto';
import { LIMIT_TARGETS, periodAt, type LimitTarget } from '@switchyard/rules';
import { appliesTo, couldApplyToKey, valueKey, type LimitPolicy, type PolicyKind } from './limit-policy.ts';
import {
  counterExpiresAtMs,
  counterKey,
  counterTtlMs,
  denialMessage,
  DENIAL_CODES,
  limitState,
  organisationTag,
  retryAfterSeconds,
  tighterFirst,
  UNAVAILABLE,
  WIRE_KIND,
  type Counted,
  type FailureMode,
} from './limits.ts';

/** The most settlements one Settle call may carry. */
const MAX_SETTLEMENTS = 10_000;

/** How long a gateway may go without asking again about a key no policy can apply to. */
export const SKIP_CHECKS_FOR_MS = 10_000;
/** The most requests one lease may be asked for. */
export const MAX_LEASE = 1_000;
/** A lease takes at most this share of what a limit has left, so that replicas share the rest. */
export const LEASE_SHARE = 1 / 16;
/** Marks a reservation taken by the local limiter while Redis was away: it is settled there too. */
const LOCAL_RESERVATION = 'local:';

export type CheckResponse = MessageInitShape<typeof wire.CheckResponseSchema>;
export type AccrueResponse = MessageInitShape<typeof wire.AccrueResponseSchema>;

/** An organisation's active policies; throws PoliciesUnavailable when none are known and none can be read. */
export interface PolicySource {
  policies(organisationId: string): Promise<readonly LimitPolicy[]>;
}

export class PoliciesUnavailable extends Error {}

export interface FailureModes {
  rate_limit: FailureMode;
  usage_limit: FailureMode;
}

/** What the enforcer reports to the metrics. */
export interface LimitObserver {
  decision(decision: 'allow' | 'deny' | 'skip', code: string): void;
  /** A store (or the policy directory) was unreachable and a failure mode decided. */
  failureMode(kind: PolicyKind | 'directory', mode: FailureMode): void;
  storeSeconds(operation: 'take' | 'settle', seconds: number): void;
}

export interface LimitEnforcerOptions {
  policies: PolicySource;
  /** Shared counters (Redis). */
  counters: LimitCounterStore;
  /** The in-process limiter that decides for `open` policies while the shared counters are away. */
  local: LimitCounterStore;
  failureModes: FailureModes;
  observer: LimitObserver;
  logger: Logger;
  now?: () => number;
  newId: () => string;
  /** The share of what a limit has left that one lease may take (default LEASE_SHARE). */
  leaseShare?: number;
}

/**
 * Check and Accrue: counts each request against every policy that applies to it in one
 * atomic take, holds its estimated tokens and cost, and settles them to what it used.
 */
export class LimitEnforcer {
  private readonly now: () => number;
  private lastWarning = 0;

  constructor(private readonly options: LimitEnforcerOptions) {
    this.now = options.now ?? Date.now;
  }

  async check(request: wire.CheckRequest): Promise<CheckResponse> {
    if (!request.organisationId)
      throw new BadRequest('organisation_id is required.', { param: 'organisation_id' });
    const tokens = amountOf(request.estimate?.tokens, 'estimate.tokens');
    const cost = amountOf(request.estimate?.cost, 'estimate.cost');
    let policies: readonly LimitPolicy[];
    try {
      policies = await this.options.policies.policies(request.organisationId);
    } catch (err) {
      if (!(err instanceof PoliciesUnavailable)) throw err;
      return this.withoutPolicies();
    }

    const target = targetOf(request.target);
    const nowMs = this.now();
    const applying: Counted[] = [];
    let couldApply = false;
    for (const policy of policies) {
      if (policy.target !== target) {
        // A tool call's cost is spent from the same budgets as model calls' cost.
        if (target !== 'mcp_tools' || policy.kind !== 'usage_limit' || policy.type !== 'cost') continue;
        if (cost === 0) {
          if (!couldApply && couldApplyToKey(policy, request)) couldApply = true;
          continue;
        }
      }
      if (appliesTo(policy, request, target)) {
        const period = periodAt(policy.schedule, nowMs);
        applying.push({
          policy,
          period,
          key: counterKey(policy, period),
          field: valueKey(policy, request),
          used: 0,
        });
      } else if (!couldApply && couldApplyToKey(policy, request)) couldApply = true;
    }
    if (applying.length === 0) {
      this.options.observer.decision(couldApply ? 'allow' : 'skip', '');
      return { decision: wire.Decision.ALLOW, skipChecksForMs: couldApply ? 0 : SKIP_CHECKS_FOR_MS };
    }

    const lease = Math.min(request.lease, MAX_LEASE);
    const share = this.options.leaseShare ?? LEASE_SHARE;
    const takes: CounterTake[] = applying.map(({ policy, period, key, field }) => {
      const amount = policy.type === 'requests' ? 1 : policy.type === 'tokens' ? tokens : cost;
      return {
        key,
        field,
        amount,
        limit: policy.limit,
        rule: policy.type === 'requests' ? 'count' : 'below',
        ttlMs: counterTtlMs(period, nowMs),
        extra: lease * amount,
        share,
      };
    });
    let result: TakeResult;
    let degraded = false;
    try {
      result = await this.timed('take', this.options.counters.take(takes));
    } catch (err) {
      degraded = true;
      this.warn('limit counters unreachable; the failure modes decide', err);
      const closed = this.failureModesOf(applying);
      if (closed) {
        this.options.observer.decision('deny', UNAVAILABLE);
        return {
          decision: wire.Decision.DENY,
          code: UNAVAILABLE,
          policyId: closed.id,
          message: `Limits of policy "${closed.name}" (id ${closed.id}) cannot be checked right now. Try again shortly.`,
          retryAfterSeconds: 1,
          degraded,
        };
      }
      // The local limiter leases nothing: what it admits is this process's alone.
      result = await this.options.local.take(takes.map((take) => ({ ...take, extra: 0 })));
    }

    for (let i = 0; i < applying.length; i++) applying[i]!.used = result.used[i]!;
    if (!result.admitted) {
      let denying: Counted | undefined;
      for (let i = 0; i < applying.length; i++) {
        const counted = applying[i]!;
        if (result.outcomes[i] === 'refused' && (!denying || tighterFirst(counted, denying) < 0))
          denying = counted;
      }
      const code = DENIAL_CODES[denying!.policy.kind];
      this.options.observer.decision('deny', code);
      return {
        decision: wire.Decision.DENY,
        code,
        policyId: denying!.policy.id,
        message: denialMessage(denying!),
        retryAfterSeconds: retryAfterSeconds(denying!, nowMs),
        limits: [limitState(denying!, this.modeOf(denying!.policy.kind))],
        degraded,
      };
    }

    const holds = applying.map(({ policy, period, key, field }, i) => ({
      policyId: policy.id,
      kind: WIRE_KIND[policy.kind],
      type: policy.type,
      counter: key,
      field,
      held: takes[i]!.amount,
      expiresAtMs: String(counterExpiresAtMs(period)),
      leased: result.granted[i] ?? 0,
    }));
    applying.sort(tighterFirst);
    this.options.observer.decision('allow', '');
    return {
      decision: wire.Decision.ALLOW,
      limits: applying.map((counted) => limitState(counted, this.modeOf(counted.policy.kind))),
      reservation: { id: (degraded ? LOCAL_RESERVATION : '') + this.options.newId(), holds },
      degraded,
      metadataKeys: metadataKeysOf(policies),
    };
  }

  async accrue(request: wire.AccrueRequest): Promise<AccrueResponse> {
    const reservation = request.reservation;
    if (!reservation || reservation.holds.length === 0) return { allowed: true, reservation };
    if (!request.organisationId)
      throw new BadRequest('organisation_id is required.', { param: 'organisation_id' });
    const tag = organisationTag(request.organisationId);
    for (const hold of reservation.holds) {
      // A hold names its counter: one of another organisation's is refused, not touched.
      if (!hold.counter.startsWith(tag)) {
        throw new BadRequest('A hold belongs to another organisation.', { param: 'reservation.holds' });
      }
    }
    const used = {
      tokens: amountOf(request.used?.tokens, 'used.tokens'),
      cost: amountOf(request.used?.cost, 'used.cost'),
    };
    const counters = reservation.id.startsWith(LOCAL_RESERVATION)
      ? this.options.local
      : this.options.counters;
    const nowMs = this.now();
    const live = (hold: wire.Hold) =>
      hold.type !== 'requests' && (hold.expiresAtMs === '0' || Number(hold.expiresAtMs) > nowMs);
    const usedBy = (hold: wire.Hold) => (hold.type === 'tokens' ? used.tokens : used.cost);

    if (request.unused) {
      // Lease balances nobody used: every live hold goes back whole, requests included.
      const adjustments: CounterAdjustment[] = [];
      for (const hold of reservation.holds) {
        const expired = hold.expiresAtMs !== '0' && Number(hold.expiresAtMs) <= nowMs;
        if (!expired && amountOf(hold.held, 'reservation.holds.held') > 0)
          adjustments.push({ key: hold.counter, field: hold.field, delta: -hold.held });
      }
      try {
        await this.timed('settle', counters.settle(adjustments));
      } catch (err) {
        this.warn('could not give back a lease', err);
      }
      return { allowed: true, reservation: { id: reservation.id, holds: [] } };
    }

    if (request.final) {
      const adjustments: CounterAdjustment[] = [];
      const holds = reservation.holds.map((hold) => {
        if (!live(hold)) return hold;
        const delta = usedBy(hold) - hold.held;
        if (delta !== 0) adjustments.push({ key: hold.counter, field: hold.field, delta });
        return { ...hold, held: usedBy(hold) };
      });
      try {
        await this.timed('settle', counters.settle(adjustments));
      } catch (err) {
        // The request is over either way; its holds lapse with their windows and periods.
        this.warn('could not settle a reservation', err);
      }
      return { allowed: true, reservation: { id: reservation.id, holds } };
    }

    const short = reservation.holds.filter((hold) => live(hold) && usedBy(hold) > hold.held);
    if (short.length === 0) return { allowed: true, reservation };
    let policies: readonly LimitPolicy[] = [];
    try {
      policies = await this.options.policies.policies(request.organisationId);
    } catch (err) {
      if (!(err instanceof PoliciesUnavailable)) throw err;
    }
    const policyOf = (hold: wire.Hold) => policies.find((p) => p.id === hold.policyId);
    // A stream asks about every other block, not every chunk: the shortfall and as much again.
    const takes: CounterTake[] = short.map((hold) => ({
      key: hold.counter,
      field: hold.field,
      amount: 2 * (usedBy(hold) - hold.held),
      // A policy archived meanwhile limits no more, but the usage still counts.
      limit: policyOf(hold)?.limit ?? Infinity,
      rule: 'below',
      ttlMs: 0,
      existingOnly: true,
    }));
    let result: TakeResult;
    try {
      result = await this.timed('take', counters.take(takes));
    } catch (err) {
      this.warn('limit counters unreachable; the failure modes decide', err);
      const closed = short.find((hold) => this.modeOf(kindOf(hold)) === 'closed');
      for (const hold of short) this.options.observer.failureMode(kindOf(hold), this.modeOf(kindOf(hold)));
      if (!closed) return { allowed: true, reservation };
      this.options.observer.decision('deny', UNAVAILABLE);
      return {
        allowed: false,
        reservation,
        policyId: closed.policyId,
        code: UNAVAILABLE,
        message: `Limits of policy ${closed.policyId} cannot be checked right now.`,
      };
    }
    if (!result.admitted) {
      const index = result.outcomes.indexOf('refused');
      const hold = short[index]!;
      const policy = policyOf(hold)!;
      const period = periodAt(policy.schedule, nowMs);
      const code = DENIAL_CODES[policy.kind];
      this.options.observer.decision('deny', code);
      return {
        allowed: false,
        reservation,
        policyId: policy.id,
        code,
        message: denialMessage({
          policy,
          period,
          key: hold.counter,
          field: hold.field,
          used: result.used[index]!,
        }),
      };
    }
    const grown = new Map(
      short.map((hold, i) => [hold, result.outcomes[i] === 'taken' ? takes[i]!.amount : 0]),
    );
    return {
      allowed: true,
      reservation: {
        id: reservation.id,
        holds: reservation.holds.map((hold) => {
          const more = grown.get(hold);
          return more ? { ...hold, held: hold.held + more } : hold;
        }),
      },
    };
  }

  /**
   * Settles finished requests, as Accrue with `final` would each. One that cannot be settled
   * (a hold of another organisation, say) is left out, not the others.
   */
  async settle(settlements: readonly wire.AccrueRequest[]): Promise<void> {
    if (settlements.length > MAX_SETTLEMENTS) {
      throw new BadRequest(`At most ${MAX_SETTLEMENTS} settlements a call.`, { param: 'settlements' });
    }
    const results = await Promise.allSettled(
      settlements.map((settlement) => this.accrue({ ...settlement, final: true })),
    );
    const refused = results.find((result) => result.status === 'rejected');
    if (refused) this.warn('a settlement was refused', refused.reason);
  }

  private modeOf(kind: PolicyKind): FailureMode {
    return this.options.failureModes[kind];
  }

  /** Counts the failure-mode decision of every policy kind that applies; the first closed policy, if any. */
  private failureModesOf(applying: readonly Counted[]): LimitPolicy | undefined {
    let closed: LimitPolicy | undefined;
    let seenRate = false;
    let seenUsage = false;
    for (const { policy } of applying) {
      const mode = this.modeOf(policy.kind);
      if (mode === 'closed') closed ??= policy;
      if (policy.kind === 'rate_limit' ? seenRate : seenUsage) continue;
      if (policy.kind === 'rate_limit') seenRate = true;
      else seenUsage = true;
      this.options.observer.failureMode(policy.kind, mode);
    }
    return closed;
  }

  /** No policies are known and none can be read: allow only when both kinds fail open. */
  private withoutPolicies(): CheckResponse {
    const { rate_limit: rate, usage_limit: usage } = this.options.failureModes;
    const mode = rate === 'open' && usage === 'open' ? 'open' : 'closed';
    this.options.observer.failureMode('directory', mode);
    if (mode === 'open') {
      this.options.observer.decision('allow', '');
      return { decision: wire.Decision.ALLOW, degraded: true };
    }
    this.options.observer.decision('deny', UNAVAILABLE);
    return {
      decision: wire.Decision.DENY,
      code: UNAVAILABLE,
      message: "The organisation's limit policies cannot be read right now. Try again shortly.",
      retryAfterSeconds: 1,
      degraded: true,
    };
  }

  private async timed<T>(operation: 'take' | 'settle', call: Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await call;
    } finally {
      this.options.observer.storeSeconds(operation, (performance.now() - started) / 1000);
    }
  }

  private warn(message: string, err: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 10_000) return;
    this.lastWarning = now;
    this.options.logger.warn(message, { error: String(err) });
  }
}

const metadataKeysCache = new WeakMap<readonly LimitPolicy[], string[]>();

/** The metadata keys an organisation's policies read, in conditions or group_by (without `metadata.`). */
function metadataKeysOf(policies: readonly LimitPolicy[]): string[] {
  let keys = metadataKeysCache.get(policies);
  if (keys) return keys;
  const names = new Set<string>();
  for (const policy of policies) {
    for (const { key } of policy.conditions)
      if (key.startsWith(METADATA)) names.add(key.slice(METADATA.length));
    for (const key of policy.groupBy) if (key.startsWith(METADATA)) names.add(key.slice(METADATA.length));
  }
  keys = [...names].sort();
  metadataKeysCache.set(policies, keys);
  return keys;
}

const METADATA = 'metadata.';

function kindOf(hold: wire.Hold): PolicyKind {
  return hold.kind === wire.PolicyKind.RATE_LIMIT ? 'rate_limit' : 'usage_limit';
}

/** The check's target: llm (the default) or mcp_tools. */
function targetOf(target: string): LimitTarget {
  if (target === '') return 'llm';
  if (!(LIMIT_TARGETS as readonly string[]).includes(target))
    throw new BadRequest(`target must be one of ${LIMIT_TARGETS.join(', ')}.`, { param: 'target' });
  return target as LimitTarget;
}

/** A non-negative, finite amount; absent is 0. */
function amountOf(value: number | undefined, param: string): number {
  if (value === undefined) return 0;
  if (!Number.isFinite(value) || value < 0)
    throw new BadRequest(`${param} must be a non-negative number.`, { param });
  return value;
}
