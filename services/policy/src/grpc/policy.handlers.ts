import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { policy } from '@switchyard/proto';
import type { LimitEnforcer } from '../domain/limit-enforcer.ts';

/** The policy check sits on the gateway's hot path and nowhere else. */
export const policyCallers: CallerRules<typeof policy.PolicyService> = {
  check: ['gateway'],
  accrue: ['gateway'],
  settle: ['gateway'],
};

export function policyHandlers(enforcer: LimitEnforcer): ServiceHandlers<typeof policy.PolicyService> {
  return {
    check: (request) => enforcer.check(request),
    accrue: (request) => enforcer.accrue(request),
    settle: async (request) => {
      await enforcer.settle(request.settlements);
      return {};
    },
  };
}
