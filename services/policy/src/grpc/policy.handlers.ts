import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';

/** How long a gateway may go without asking again about a key no policy applies to. */
export const SKIP_CHECKS_FOR_MS = 10_000;

/** The policy check sits on the gateway's hot path and nowhere else. */
export const policyCallers: CallerRules<typeof policy.PolicyService> = {
  check: ['gateway'],
  accrue: ['gateway'],
};

/**
 * The hot-path decision. Rate and usage limit policies are not defined in this release, so
 * no rule can deny: every request is allowed, and the gateway is told it may skip the check
 * for a while. The call, its deadline and the gateway's handling of a denial are in place.
 */
export function policyHandlers(): ServiceHandlers<typeof policy.PolicyService> {
  return {
    check: async () => ({ decision: policy.Decision.ALLOW, skipChecksForMs: SKIP_CHECKS_FOR_MS }),
    // Nothing is reserved while no policy can deny, so there is nothing to settle.
    accrue: async (request) => ({ allowed: true, reservation: request.reservation }),
  };
}
