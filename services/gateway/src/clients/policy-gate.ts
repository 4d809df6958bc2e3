import { ServiceUnavailable, TooManyRequests, type Logger } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { ServiceClient } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import type { PolicyCheck } from '../domain/ports.ts';

export interface PolicyGateOptions {
  timeoutMs: number;
  /** When the policy service cannot answer in time, let the request through (and say so in the log). */
  failOpen: boolean;
}

/**
 * At most one policy call per request, bounded by a deadline, and none while the policy
 * service has said that nothing applies to the key.
 */
export class PolicyGate implements PolicyCheck {
  private lastWarning = 0;
  /** API key id → until when no policy applies to it. */
  private readonly unrestricted = new Map<string, number>();

  constructor(
    private readonly client: ServiceClient<typeof policy.PolicyService>,
    private readonly logger: Logger,
    private readonly options: PolicyGateOptions,
  ) {}

  async check(
    principal: Principal,
    provider: string,
    model: string,
    metadata: Record<string, string>,
  ): Promise<void> {
    const skipUntil = this.unrestricted.get(principal.apiKeyId);
    if (skipUntil !== undefined) {
      if (skipUntil > Date.now()) return;
      this.unrestricted.delete(principal.apiKeyId);
    }
    let response: policy.CheckResponse;
    try {
      response = await this.client.check(
        {
          organisationId: principal.organisationId,
          workspaceId: principal.workspaceId ?? '',
          apiKeyId: principal.apiKeyId,
          provider,
          model,
          metadata,
        },
        { deadlineMs: this.options.timeoutMs },
      );
    } catch (err) {
      if (!this.options.failOpen)
        throw new ServiceUnavailable('Policy service is unavailable.', { cause: err });
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn('policy check failed; allowing request (fail-open)', { error: String(err) });
      }
      return;
    }
    if (response.decision === policy.Decision.ALLOW && response.skipChecksForMs > 0) {
      if (this.unrestricted.size >= 100_000) this.unrestricted.clear();
      this.unrestricted.set(principal.apiKeyId, Date.now() + response.skipChecksForMs);
    }
    if (response.decision === policy.Decision.DENY) {
      throw new TooManyRequests(
        response.message || 'Request denied by policy.',
        response.retryAfterSeconds || 1,
        {
          code: response.code || 'policy_denied',
        },
      );
    }
  }

  /** A policy changed: ask again for every key. */
  forgetSkips(): void {
    this.unrestricted.clear();
  }
}
