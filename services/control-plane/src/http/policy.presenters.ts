import type { RateLimitPolicy, UsageLimitPolicy } from '../store/policy.entities.ts';
import type { EntityUsage, KeyLimit } from '../domain/policy.service.ts';
import { currentPeriod, lastResetAt } from '../domain/policy-rules.ts';

function presentCommon(policy: RateLimitPolicy | UsageLimitPolicy) {
  return {
    id: policy.id,
    name: policy.name,
    description: policy.description,
    conditions: policy.conditions.map(({ key, value, excludes }) => ({ key, value, excludes })),
    group_by: policy.groupBy.map(({ key }) => ({ key })),
    type: policy.type,
    target: policy.target,
    status: policy.status,
    workspace_id: policy.workspaceId,
    organisation_id: policy.organisationId,
    created_at: policy.createdAt.toISOString(),
    last_updated_at: policy.updatedAt.toISOString(),
  };
}

export function presentRateLimit(policy: RateLimitPolicy) {
  return {
    ...presentCommon(policy),
    unit: policy.unit,
    value: policy.value,
    object: 'policy_rate_limits' as const,
  };
}

/**
 * `next_usage_reset_at` is when the current period ends (null when the limit never resets);
 * `last_reset_at` when the current period began, or the last reset by hand if later.
 */
export function presentUsageLimit(policy: UsageLimitPolicy, now: Date = new Date()) {
  return {
    ...presentCommon(policy),
    credit_limit: policy.creditLimit,
    alert_threshold: policy.alertThreshold,
    periodic_reset: policy.periodicReset,
    periodic_reset_days: policy.periodicResetDays,
    next_usage_reset_at: currentPeriod(policy, now)?.end.toISOString() ?? null,
    last_reset_at: lastResetAt(policy, now)?.toISOString() ?? null,
    object: 'policy_usage_limits' as const,
  };
}

export function presentEntity(entity: EntityUsage) {
  return {
    id: entity.id,
    value_key: entity.valueKey,
    current_usage: entity.currentUsage,
    status: entity.status,
  };
}

/** `{value_key: {current_usage, status}}`, for `include_usage`. */
export function presentUsageMap(entities: EntityUsage[]) {
  return Object.fromEntries(
    entities.map((entity) => [
      entity.valueKey,
      { current_usage: entity.currentUsage, status: entity.status },
    ]),
  );
}

export function presentKeyLimit(limit: KeyLimit) {
  return {
    policy_id: limit.policyId,
    policy_name: limit.policyName,
    kind: limit.kind,
    type: limit.type,
    value_key: limit.valueKey,
    limit: limit.limit,
    remaining: limit.remaining,
    reset_at: limit.resetAt?.toISOString() ?? null,
    object: 'policy_limit' as const,
  };
}
