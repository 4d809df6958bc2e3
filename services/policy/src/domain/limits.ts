import type { MessageInitShape } from '@bufbuild/protobuf';
import { policy as wire } from '@switchyard/proto';
import type { LimitPolicy, PolicyKind } from './limit-policy.ts';
import type { LimitType, Period } from '@switchyard/rules';
import { resetAtMs, secondsUntil } from './periods.ts';

export type FailureMode = 'open' | 'closed';
export type LimitState = MessageInitShape<typeof wire.LimitStateSchema>;

/** How long a window or period's counter outlives its end, so late settlements still land. */
export const COUNTER_GRACE_MS = 60_000;

export const DENIAL_CODES: Record<PolicyKind, string> = {
  rate_limit: 'rate_limit_exceeded',
  usage_limit: 'usage_limit_exceeded',
};
export const UNAVAILABLE = 'policy_unavailable';

export const WIRE_KIND: Record<PolicyKind, wire.PolicyKind> = {
  rate_limit: wire.PolicyKind.RATE_LIMIT,
  usage_limit: wire.PolicyKind.USAGE_LIMIT,
};
export const WIRE_MODE: Record<FailureMode, wire.FailureMode> = {
  open: wire.FailureMode.OPEN,
  closed: wire.FailureMode.CLOSED,
};

/** One policy's counter of one entity in one window or period. */
export interface Counted {
  policy: LimitPolicy;
  period: Period;
  /** The counter's storage key (the organisation is its Redis hash tag). */
  key: string;
  /** The counted entity (value_key). */
  field: string;
  used: number;
}

/** `{<orgId>}:rl:<policyId>:<windowStartMs>` or `{<orgId>}:ul:<policyId>:<periodStartMs | all>`. */
export function counterKey(policy: LimitPolicy, period: Period): string {
  const start = Number.isFinite(period.endMs) ? String(period.startMs) : 'all';
  return `${organisationTag(policy.organisationId)}${policy.kind === 'rate_limit' ? 'rl' : 'ul'}:${policy.id}:${start}`;
}

/** The prefix of every counter key of an organisation. */
export function organisationTag(organisationId: string): string {
  return `{${organisationId}}:`;
}

/** How long a new counter lives from now: its period and the grace; 0 (never expires) when cumulative. */
export function counterTtlMs(period: Period, nowMs: number): number {
  return Number.isFinite(period.endMs) ? period.endMs + COUNTER_GRACE_MS - nowMs : 0;
}

/** When a counter expires (Unix epoch ms), 0 for never. */
export function counterExpiresAtMs(period: Period): number {
  return Number.isFinite(period.endMs) ? period.endMs + COUNTER_GRACE_MS : 0;
}

/** What is left of the limit as a fraction of it: the tightest limit has the least. */
function remainingFraction(limit: number, used: number): number {
  return limit > 0 ? Math.max(0, limit - used) / limit : 0;
}

/** Tightest first: least remaining fraction, then the later reset, then the policy id. */
export function tighterFirst(a: Counted, b: Counted): number {
  return (
    remainingFraction(a.policy.limit, a.used) - remainingFraction(b.policy.limit, b.used) ||
    endOrder(b.period) - endOrder(a.period) ||
    (a.policy.id < b.policy.id ? -1 : a.policy.id > b.policy.id ? 1 : 0)
  );
}

function endOrder(period: Period): number {
  return Number.isFinite(period.endMs) ? period.endMs : Number.MAX_SAFE_INTEGER;
}

export function limitState(counted: Counted, mode: FailureMode): LimitState {
  const { policy, period, field, used } = counted;
  return {
    policyId: policy.id,
    kind: WIRE_KIND[policy.kind],
    type: policy.type,
    limit: policy.limit,
    remaining: Math.max(0, policy.limit - used),
    resetAtMs: String(resetAtMs(period)),
    failureMode: WIRE_MODE[mode],
    valueKey: field,
    windowMs: String(policy.kind === 'rate_limit' ? period.endMs - period.startMs : 0),
  };
}

export function retryAfterSeconds(counted: Counted, nowMs: number): number {
  return secondsUntil(counted.period, nowMs);
}

const UNIT_NAMES = { rpm: 'minute', rph: 'hour', rpd: 'day' } as const;

function amount(type: LimitType, value: number): string {
  if (type === 'cost') return `${Number(value.toFixed(6))} USD`;
  return `${Number(value.toFixed(2))} ${type}`;
}

function per(policy: LimitPolicy): string {
  const { schedule } = policy;
  switch (schedule.kind) {
    case 'window':
      return `per ${UNIT_NAMES[schedule.unit]}`;
    case 'monthly':
      return 'per calendar month';
    case 'weekly':
      return 'per week';
    case 'days':
      return schedule.days === 1 ? 'per day' : `every ${schedule.days} days`;
    case 'cumulative':
      return 'in total';
  }
}

function resets(period: Period): string {
  return Number.isFinite(period.endMs)
    ? `It resets at ${new Date(period.endMs).toISOString()}.`
    : 'It does not reset: the credit limit has to be raised or the usage reset.';
}

/** Why a request (or a stream's next block) was refused: the policy, the entity, the limit, the reset. */
export function denialMessage(counted: Counted): string {
  const { policy, field, used } = counted;
  const label = policy.kind === 'rate_limit' ? 'Rate limit' : 'Usage limit';
  return (
    `${label} exceeded: policy "${policy.name}" (id ${policy.id}) allows ${amount(policy.type, policy.limit)} ` +
    `${per(policy)} for ${field || 'each request'}, and ${amount(policy.type, used)} are used. ${resets(counted.period)}`
  );
}
