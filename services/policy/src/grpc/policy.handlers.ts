import type { ServiceHandlers } from '@switchyard/platform';
import { policy } from '@switchyard/proto';

/**
 * The hot-path decision. Rate and usage limit policies are not defined in this release, so
 * no rule can deny and every request is allowed; the call, its deadline and the gateway's
 * handling of a denial are already in place.
 */
export function policyHandlers(): ServiceHandlers<typeof policy.PolicyService> {
  return {
    check: async () => ({ decision: policy.Decision.ALLOW }),
  };
}
