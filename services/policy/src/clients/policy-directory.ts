import type { Logger } from '@switchyard/core';
import type { ServiceClient } from '@switchyard/runtime';
import { policy as wire } from '@switchyard/proto';
import {
  LIMIT_TARGETS,
  type LimitTarget,
  type LimitType,
  RATE_LIMIT_TYPES,
  RATE_UNITS,
  type RateUnit,
  type Schedule,
  USAGE_LIMIT_TYPES,
  usageSchedule,
} from '@switchyard/rules';
import { PoliciesUnavailable, type PolicySource } from '../domain/limit-enforcer.ts';
import type { LimitPolicy } from '../domain/limit-policy.ts';

export interface PolicyDirectoryOptions {
  /** A backstop: policies are read again after this even without a change event. */
  ttlMs?: number;
  /** Organisations kept; the least recently read is dropped beyond. */
  maxOrganisations?: number;
  /** Deadline of one ListPolicies call. */
  deadlineMs?: number;
  /** After a failed read, how long the last known policies serve before control-plane is asked again. */
  retryAfterMs?: number;
  now?: () => number;
}

interface Entry {
  policies: readonly LimitPolicy[];
  expiresAt: number;
}

interface Pending {
  promise: Promise<readonly LimitPolicy[]>;
  /** A change event arrived while it was under way: its answer may be the old state. */
  stale: boolean;
}

/**
 * Each organisation's active policies, read from control-plane once and served from memory:
 * concurrent misses share one read, a "policy" change event naming the organisation drops
 * them, and while control-plane cannot be reached the last known policies serve on.
 */
export class PolicyDirectory implements PolicySource {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Pending>();
  private readonly ttlMs: number;
  private readonly maxOrganisations: number;
  private readonly deadlineMs: number;
  private readonly retryAfterMs: number;
  private readonly now: () => number;
  private lastWarning = 0;

  constructor(
    private readonly client: ServiceClient<typeof wire.PolicyDirectoryService>,
    private readonly logger: Logger,
    options: PolicyDirectoryOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.maxOrganisations = options.maxOrganisations ?? 10_000;
    this.deadlineMs = options.deadlineMs ?? 1_000;
    this.retryAfterMs = options.retryAfterMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  async policies(organisationId: string): Promise<readonly LimitPolicy[]> {
    const entry = this.entries.get(organisationId);
    if (entry && entry.expiresAt > this.now()) return entry.policies;
    let pending = this.inflight.get(organisationId);
    if (!pending) {
      const started = { stale: false } as Pending;
      started.promise = this.read(organisationId).finally(() => {
        if (this.inflight.get(organisationId) === started) this.inflight.delete(organisationId);
      });
      this.inflight.set(organisationId, started);
      pending = started;
    }
    try {
      const policies = await pending.promise;
      if (!pending.stale) this.remember(organisationId, policies, this.ttlMs);
      return policies;
    } catch (err) {
      const known = this.entries.get(organisationId);
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn('policy directory unreachable', { error: String(err), known: !!known });
      }
      if (!known)
        throw new PoliciesUnavailable('no policies known and control-plane unreachable', { cause: err });
      known.expiresAt = this.now() + this.retryAfterMs;
      return known.policies;
    }
  }

  /**
   * A policy of the organisation changed: the next request reads them again. The last known
   * ones stay only to serve while control-plane cannot be reached.
   */
  invalidate(organisationId: string): void {
    const entry = this.entries.get(organisationId);
    if (entry) entry.expiresAt = 0;
    const pending = this.inflight.get(organisationId);
    if (pending) {
      pending.stale = true;
      this.inflight.delete(organisationId);
    }
  }

  private async read(organisationId: string): Promise<readonly LimitPolicy[]> {
    const { policies } = await this.client.listPolicies({ organisationId }, { deadlineMs: this.deadlineMs });
    const parsed: LimitPolicy[] = [];
    for (const definition of policies) {
      const policy = limitPolicyFrom({
        ...definition,
        organisationId: definition.organisationId || organisationId,
      });
      // Another organisation's policy is never this one's, whatever control-plane answered.
      if (policy && policy.organisationId === organisationId) parsed.push(policy);
      else
        this.logger.warn('skipping a policy the policy service cannot enforce', { policyId: definition.id });
    }
    return parsed;
  }

  private remember(organisationId: string, policies: readonly LimitPolicy[], ttlMs: number): void {
    // Re-inserted last, so that the least recently read organisation is the first in the map.
    this.entries.delete(organisationId);
    if (this.entries.size >= this.maxOrganisations) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(organisationId, { policies, expiresAt: this.now() + ttlMs });
  }
}

const LIMIT_TYPES: Record<wire.PolicyKind, readonly LimitType[]> = {
  [wire.PolicyKind.UNSPECIFIED]: [],
  [wire.PolicyKind.RATE_LIMIT]: RATE_LIMIT_TYPES,
  [wire.PolicyKind.USAGE_LIMIT]: USAGE_LIMIT_TYPES,
};

/** A policy as control-plane stores it, in the terms it is enforced in; null when it cannot be. */
export function limitPolicyFrom(definition: wire.PolicyDefinition): LimitPolicy | null {
  const type = definition.type as LimitType;
  if (!LIMIT_TYPES[definition.kind]?.includes(type)) return null;
  const target = (definition.target || 'llm') as LimitTarget;
  if (!LIMIT_TARGETS.includes(target)) return null;
  if (definition.groupBy.length === 0) return null;
  const rate = definition.kind === wire.PolicyKind.RATE_LIMIT;
  const limit = rate ? definition.value : definition.creditLimit;
  if (!Number.isFinite(limit) || limit < 0) return null;
  let schedule: Schedule | null;
  if (rate) {
    const unit = definition.unit as RateUnit;
    schedule = RATE_UNITS.includes(unit) ? { kind: 'window', unit } : null;
  } else {
    schedule = usageSchedule(
      definition.periodicReset,
      definition.periodicResetDays,
      Number(definition.resetAnchorMs) || 0,
    );
  }
  if (!schedule) return null;
  return {
    id: definition.id,
    name: definition.name,
    kind: rate ? 'rate_limit' : 'usage_limit',
    organisationId: definition.organisationId,
    workspaceId: definition.workspaceId,
    conditions: definition.conditions.map(({ key, value, excludes }) => ({ key, value, excludes })),
    groupBy: [...definition.groupBy],
    type,
    target,
    limit,
    schedule,
  };
}
