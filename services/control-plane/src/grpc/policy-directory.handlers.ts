import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import type { PolicyService } from '../domain/policy.service.ts';
import type { RateLimitPolicy, UsageLimitPolicy } from '../store/policy.entities.ts';

/** The policy service alone enforces policies, and so alone reads them. */
export const policyDirectoryCallers: CallerRules<typeof policy.PolicyDirectoryService> = {
  listPolicies: ['policy'],
};

function common(found: RateLimitPolicy | UsageLimitPolicy) {
  return {
    id: found.id,
    name: found.name ?? '',
    organisationId: found.organisationId,
    workspaceId: found.workspaceId ?? '',
    conditions: found.conditions.map(({ key, value, excludes }) => ({ key, value, excludes })),
    groupBy: found.groupBy.map(({ key }) => key),
    type: found.type,
    target: found.target,
  };
}

export function policyDirectoryHandlers(
  service: PolicyService,
): ServiceHandlers<typeof policy.PolicyDirectoryService> {
  return {
    listPolicies: async ({ organisationId }) => {
      const { rateLimits, usageLimits } = await service.activePolicies(organisationId);
      return {
        policies: [
          ...rateLimits.map((found) => ({
            ...common(found),
            kind: policy.PolicyKind.RATE_LIMIT,
            unit: found.unit,
            value: found.value,
          })),
          ...usageLimits.map((found) => ({
            ...common(found),
            kind: policy.PolicyKind.USAGE_LIMIT,
            creditLimit: found.creditLimit,
            alertThreshold: found.alertThreshold ?? 0,
            periodicReset: found.periodicReset ?? '',
            periodicResetDays: found.periodicResetDays ?? 0,
            resetAnchorMs: String(found.resetAnchorAt.getTime()),
          })),
        ],
      };
    },
  };
}
