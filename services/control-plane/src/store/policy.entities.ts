import type { LimitTarget, PeriodicReset, RateLimitType, RateUnit, UsageLimitType } from '@switchyard/rules';
import { EntitySchema } from 'typeorm';

export type { PeriodicReset, RateLimitType, UsageLimitType };
export type PolicyStatus = 'active' | 'archived';
/** What a policy counts on: model calls, or MCP tool calls (stored and returned, not enforced on model calls). */
export type PolicyTarget = LimitTarget;
export type RateLimitUnit = RateUnit;

/** All must hold for a policy to apply; `excludes` inverts one. */
export interface PolicyCondition {
  key: string;
  value: string;
  excludes: boolean;
}

/** One part of what a counter counts, e.g. `api_key` or `metadata.team`. */
export interface PolicyGroupBy {
  key: string;
}

/** What both kinds of policy hold. */
interface PolicyFields {
  id: string;
  organisationId: string;
  /** Null for an organisation-wide policy. */
  workspaceId: string | null;
  name: string | null;
  description: string | null;
  conditions: PolicyCondition[];
  groupBy: PolicyGroupBy[];
  target: PolicyTarget;
  status: PolicyStatus;
  /** The user, else the API key, that created the policy. */
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

/** Caps how many requests or tokens each counted entity may use per fixed window. */
export interface RateLimitPolicy extends PolicyFields {
  type: RateLimitType;
  unit: RateLimitUnit;
  /** Per window; a positive integer. */
  value: number;
}

/** Caps the cost, tokens or requests each counted entity may use per period (or ever). */
export interface UsageLimitPolicy extends PolicyFields {
  type: UsageLimitType;
  creditLimit: number;
  alertThreshold: number | null;
  /** With periodicResetDays null both: cumulative, never resets. */
  periodicReset: PeriodicReset | null;
  periodicResetDays: number | null;
  /** A UTC midnight that day-based periods count from. */
  resetAnchorAt: Date;
  /** When usage was last reset by hand (an entity's, or one value's), null if never. */
  lastResetAt: Date | null;
}

const common = {
  id: { type: 'uuid', primary: true },
  organisationId: { name: 'organisation_id', type: 'uuid' },
  workspaceId: { name: 'workspace_id', type: 'uuid', nullable: true },
  name: { type: 'text', nullable: true },
  description: { type: 'text', nullable: true },
  conditions: { type: 'jsonb' },
  groupBy: { name: 'group_by', type: 'jsonb' },
  target: { type: 'text' },
  status: { type: 'text' },
  createdBy: { name: 'created_by', type: 'uuid' },
  createdAt: { name: 'created_at', type: 'timestamptz', createDate: true },
  updatedAt: { name: 'last_updated_at', type: 'timestamptz', updateDate: true },
} as const;

/** Stored as double precision: TypeORM hands numeric columns back as text. */
const number = { type: 'double precision' } as const;

export const RateLimitPolicyEntity = new EntitySchema<RateLimitPolicy>({
  name: 'RateLimitPolicy',
  tableName: 'rate_limit_policies',
  columns: {
    ...common,
    type: { type: 'text' },
    unit: { type: 'text' },
    value: { type: 'bigint', transformer: { to: (v: number) => v, from: (v: string | null) => Number(v) } },
  },
});

export const UsageLimitPolicyEntity = new EntitySchema<UsageLimitPolicy>({
  name: 'UsageLimitPolicy',
  tableName: 'usage_limit_policies',
  columns: {
    ...common,
    type: { type: 'text' },
    creditLimit: { name: 'credit_limit', ...number },
    alertThreshold: { name: 'alert_threshold', ...number, nullable: true },
    periodicReset: { name: 'periodic_reset', type: 'text', nullable: true },
    periodicResetDays: { name: 'periodic_reset_days', type: 'int', nullable: true },
    resetAnchorAt: { name: 'next_usage_reset_at', type: 'timestamptz' },
    lastResetAt: { name: 'last_reset_at', type: 'timestamptz', nullable: true },
  },
});

export const policyEntities = [RateLimitPolicyEntity, UsageLimitPolicyEntity];
