import type { MessageInitShape } from '@bufbuild/protobuf';
import { policy } from '@switchyard/proto';
import type { RequestFacts } from '@switchyard/rules';
import type { RateLimitStanding, UsageAmount } from '../domain/policy.ts';

/**
 * Leases: blocks of a limit that the policy service took from the shared counter for this
 * gateway, so that it admits the next requests like one it checked without a call. A lease
 * is counted in the shared counter the moment it is taken, so every replica sees it; it is
 * at most a share of what the limit has left (the policy service caps it), so near a limit
 * leases shrink to nothing and every request is checked. What a gateway does not use it
 * gives back once the lease has been idle for a moment, when a policy changes, and when it
 * stops.
 */

export interface PolicyLeaseOptions {
  /** The most requests one lease may be asked for; 0: no leases, every request is checked. */
  maxRequests: number;
  /** A lease not drawn on for this long is given back. */
  idleMs?: number;
  /** How long what a check said about a kind of request is used to admit more of it. */
  matchTtlMs?: number;
}

const DEFAULT_IDLE_MS = 1_000;
const DEFAULT_MATCH_TTL_MS = 10_000;
const MAX_MATCHES = 50_000;

/** The balance of one leased counter entity. */
interface Lease {
  organisationId: string;
  /** The hold the lease was taken with (its counter, entity and expiry). */
  hold: policy.Hold;
  balance: number;
  /** After this (the end of the limit's window or period) the lease admits nothing. */
  endsAtMs: number;
  lastUsedMs: number;
}

/** What a check said of one kind of request: the counters it takes from and the limits that apply. */
interface Match {
  holds: readonly policy.Hold[];
  /** The lease of each hold (same order). */
  leaseKeys: readonly string[];
  limits: readonly policy.LimitState[];
  /** The lease (in requests) of each limit state, or undefined (same order as `limits`). */
  limitLeases: ReadonlyArray<string | undefined>;
  validUntilMs: number;
  /** How many requests to ask for with the next lease (0 until the kind is seen twice). */
  want: number;
  lastSeenMs: number;
  /** Checks waiting for a lease being taken now. */
  waiting: number;
  refilling: Promise<unknown> | undefined;
}

/** A request admitted from leases: its holds and the rate limits it stands under. */
export interface LeasedAdmission {
  holds: policy.Hold[];
  standings: RateLimitStanding[];
}

type UnusedLease = MessageInitShape<typeof policy.AccrueRequestSchema>;

const leaseKeyOf = (hold: policy.Hold) => `${hold.counter}\n${hold.field}`;

function amountOf(hold: policy.Hold, estimate: UsageAmount): number {
  return hold.type === 'requests' ? 1 : hold.type === 'tokens' ? estimate.tokens : estimate.cost;
}

export class PolicyLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly matches = new Map<string, Match>();
  /** Organisation id → the metadata keys its policies read. */
  private readonly metadataKeys = new Map<string, readonly string[]>();
  private readonly idleMs: number;
  private readonly matchTtlMs: number;

  constructor(
    private readonly options: PolicyLeaseOptions,
    /** Where unused balances go back to the policy service. */
    private readonly giveBack: (unused: UnusedLease) => void,
    private readonly now: () => number,
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.matchTtlMs = options.matchTtlMs ?? DEFAULT_MATCH_TTL_MS;
  }

  get enabled(): boolean {
    return this.options.maxRequests > 0;
  }

  /** What decides alike: the facts conditions and group_by can read, metadata limited to the keys policies read. */
  fingerprint(facts: RequestFacts): string | undefined {
    const keys = this.metadataKeys.get(facts.organisationId);
    if (keys === undefined) return undefined;
    let fp = `${facts.organisationId}\n${facts.workspaceId}\n${facts.apiKeyId}\n${facts.userId}\n${facts.provider}\n${facts.model}`;
    for (const key of keys) fp += `\n${key}=${facts.metadata[key] ?? ''}`;
    return fp;
  }

  /** Admits a request from leases when every counter it takes from has enough; takes it from them. */
  admit(fp: string | undefined, estimate: UsageAmount): LeasedAdmission | undefined {
    if (fp === undefined) return undefined;
    const match = this.matches.get(fp);
    if (match === undefined) return undefined;
    const now = this.now();
    if (match.validUntilMs <= now) {
      this.matches.delete(fp);
      return undefined;
    }
    const { holds, leaseKeys } = match;
    for (let i = 0; i < holds.length; i++) {
      const lease = this.leases.get(leaseKeys[i]!);
      if (lease === undefined || lease.endsAtMs <= now || lease.balance < amountOf(holds[i]!, estimate))
        return undefined;
    }
    const taken: policy.Hold[] = [];
    for (let i = 0; i < holds.length; i++) {
      const hold = holds[i]!;
      const lease = this.leases.get(leaseKeys[i]!)!;
      const amount = amountOf(hold, estimate);
      lease.balance -= amount;
      lease.lastUsedMs = now;
      taken.push({ ...hold, held: amount, leased: 0 });
    }
    match.lastSeenMs = now;
    return { holds: taken, standings: this.standings(match) };
  }

  /** The rate limits of a match, with what this gateway holds of them added to what the shared counter has left. */
  private standings(match: Match): RateLimitStanding[] {
    const standings: RateLimitStanding[] = [];
    for (let i = 0; i < match.limits.length; i++) {
      const s = match.limits[i]!;
      if (s.kind !== policy.PolicyKind.RATE_LIMIT) continue;
      const key = match.limitLeases[i];
      const held = key === undefined ? 0 : (this.leases.get(key)?.balance ?? 0);
      standings.push({
        type: s.type,
        limit: s.limit,
        remaining: Math.min(s.limit, s.remaining + held),
        resetAtMs: Number(s.resetAtMs),
      });
    }
    return standings;
  }

  /** A lease being taken for this kind of request, to wait for instead of asking too; counts the waiter. */
  refilling(fp: string | undefined): Promise<unknown> | undefined {
    if (fp === undefined) return undefined;
    const match = this.matches.get(fp);
    if (match?.refilling === undefined) return undefined;
    match.waiting += 1;
    return match.refilling;
  }

  /**
   * How many more requests to ask for with a check of this kind: none the first time (a
   * request seen once in a while is checked alone), then twice as many at each new lease, and
   * at least as many as are waiting for it.
   */
  want(fp: string | undefined): number {
    if (!this.enabled || fp === undefined) return 0;
    const match = this.matches.get(fp);
    if (match === undefined) return 0;
    if (this.now() - match.lastSeenMs > this.idleMs) {
      match.want = 1;
      return 0;
    }
    return Math.min(this.options.maxRequests, Math.max(match.want, match.waiting));
  }

  /** Notes a check under way for a kind of request, which others may wait for. */
  taking(fp: string | undefined, check: Promise<unknown>): void {
    if (fp === undefined) return;
    const match = this.matches.get(fp);
    if (match === undefined || match.refilling !== undefined) return;
    match.refilling = check;
    const done = () => {
      if (match.refilling === check) {
        match.refilling = undefined;
        match.waiting = 0;
      }
    };
    check.then(done, done);
  }

  /**
   * Learns from an allowed check: the counters this kind of request takes from, and any lease
   * it got. Answers the rate limits the request stands under, leases counted as left; undefined
   * when it learnt nothing (the response's limits stand as they are).
   */
  record(
    facts: RequestFacts,
    response: policy.CheckResponse,
    asked: number,
  ): RateLimitStanding[] | undefined {
    if (!this.enabled) return undefined;
    this.metadataKeys.set(facts.organisationId, response.metadataKeys);
    const holds = response.reservation?.holds ?? [];
    if (holds.length === 0 || response.degraded) return undefined;
    const fp = this.fingerprint(facts)!;
    const now = this.now();
    let match = this.matches.get(fp);
    const leaseKeys = holds.map(leaseKeyOf);
    let endsAtMs = now + this.matchTtlMs;
    const limitLeases = response.limits.map((s) => {
      const at = Number(s.resetAtMs);
      if (at > 0 && at < endsAtMs) endsAtMs = at;
      const i = holds.findIndex((h) => h.policyId === s.policyId && h.field === s.valueKey);
      return i < 0 ? undefined : leaseKeys[i];
    });
    let granted = true;
    holds.forEach((hold, i) => {
      if (!(hold.leased > 0)) {
        granted = false;
        return;
      }
      const key = leaseKeys[i]!;
      const state = response.limits.find((s) => s.policyId === hold.policyId && s.valueKey === hold.field);
      const resetAt = Number(state?.resetAtMs ?? 0);
      const expiresAt = Number(hold.expiresAtMs);
      const leaseEnds = resetAt > 0 ? resetAt : expiresAt > 0 ? expiresAt : Infinity;
      const lease = this.leases.get(key);
      if (lease !== undefined) {
        lease.balance += hold.leased;
        lease.lastUsedMs = now;
      } else {
        this.leases.set(key, {
          organisationId: facts.organisationId,
          hold: { ...hold, held: 0, leased: 0 },
          balance: hold.leased,
          endsAtMs: leaseEnds,
          lastUsedMs: now,
        });
      }
    });
    const templates = holds.map((hold) => ({ ...hold, held: 0, leased: 0 }));
    if (match === undefined) {
      if (this.matches.size >= MAX_MATCHES) this.matches.delete(this.matches.keys().next().value!);
      match = {
        holds: templates,
        leaseKeys,
        limits: response.limits,
        limitLeases,
        validUntilMs: endsAtMs,
        want: 1,
        lastSeenMs: now,
        waiting: 0,
        refilling: undefined,
      };
      this.matches.set(fp, match);
      return this.standings(match);
    }
    match.holds = templates;
    match.leaseKeys = leaseKeys;
    match.limits = response.limits;
    match.limitLeases = limitLeases;
    match.validUntilMs = endsAtMs;
    match.lastSeenMs = now;
    if (asked > 0 && granted) match.want = Math.min(this.options.maxRequests, asked * 2);
    return this.standings(match);
  }

  /**
   * Settles a finished request's holds against this gateway's leases where it can: what it did
   * not use goes back into the lease, what it used beyond its hold is taken from the lease when
   * the lease has it. Answers the holds still to settle with the policy service.
   */
  settle(holds: readonly policy.Hold[], used: UsageAmount): policy.Hold[] {
    const now = this.now();
    const rest: policy.Hold[] = [];
    for (const hold of holds) {
      if (hold.type === 'requests') continue;
      const delta = (hold.type === 'tokens' ? used.tokens : used.cost) - hold.held;
      if (delta === 0) continue;
      const lease = this.leases.get(leaseKeyOf(hold));
      if (lease !== undefined && lease.endsAtMs > now && lease.balance >= delta) {
        lease.balance -= delta;
        continue;
      }
      rest.push(hold);
    }
    return rest;
  }

  /** Gives back leases idle for a while and forgets what has ended. */
  sweep(): void {
    const now = this.now();
    const idle = now - this.idleMs;
    const unused: Lease[] = [];
    for (const [key, lease] of this.leases) {
      if (lease.endsAtMs <= now) this.leases.delete(key);
      else if (lease.lastUsedMs <= idle) {
        this.leases.delete(key);
        unused.push(lease);
      }
    }
    this.giveBackAll(unused);
    for (const [fp, match] of this.matches) {
      if (match.validUntilMs <= now || match.lastSeenMs <= now - this.matchTtlMs) this.matches.delete(fp);
    }
  }

  /** Policies changed: gives back every lease and forgets every match. */
  releaseAll(): void {
    const now = this.now();
    const unused = [...this.leases.values()].filter((lease) => lease.endsAtMs > now);
    this.leases.clear();
    this.matches.clear();
    this.metadataKeys.clear();
    this.giveBackAll(unused);
  }

  /** How much of each lease this gateway holds (for tests and diagnostics). */
  balances(): Map<string, number> {
    return new Map([...this.leases].map(([key, lease]) => [key, lease.balance]));
  }

  private giveBackAll(unused: readonly Lease[]): void {
    const byOrganisation = new Map<string, policy.Hold[]>();
    for (const lease of unused) {
      if (!(lease.balance > 0)) continue;
      const holds = byOrganisation.get(lease.organisationId) ?? [];
      holds.push({ ...lease.hold, held: lease.balance });
      byOrganisation.set(lease.organisationId, holds);
    }
    for (const [organisationId, holds] of byOrganisation) {
      this.giveBack({ organisationId, reservation: { id: '', holds }, unused: true });
    }
  }
}
