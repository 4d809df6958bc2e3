import type { MessageInitShape } from '@bufbuild/protobuf';
import type { LimitCounterStore } from '@switchyard/adapters';
import { BadRequest, NotFound, ServiceUnavailable } from '@switchyard/core';
import type { policy as wire } from '@switchyard/proto';
import { periodAt } from '@switchyard/rules';
import { PoliciesUnavailable, type FailureModes, type PolicySource } from './limit-enforcer.ts';
import { couldApplyToKey, valueKey, type LimitPolicy } from './limit-policy.ts';
import { counterKey, limitState, tighterFirst, type Counted } from './limits.ts';
import { resetAtMs } from './periods.ts';

export const DEFAULT_PAGE_SIZE = 20;

/** The group_by keys naming what a tool call calls. */
const WHAT_IS_CALLED: ReadonlySet<string> = new Set(['mcp_server', 'tool_name']);
export const MAX_PAGE_SIZE = 1000;

/** The stable, URL-safe id of a counted entity. */
export function entityId(field: string): string {
  return Buffer.from(field, 'utf8').toString('base64url');
}

/** An entity given as its id or as its value_key (which always holds a `:`, an id never). */
function entityField(entity: string): string {
  return entity.includes(':') ? entity : Buffer.from(entity, 'base64url').toString('utf8');
}

/** Where each counted entity stands under a policy, for the management API. */
export class UsageLedger {
  private readonly now: () => number;

  constructor(
    private readonly options: {
      policies: PolicySource;
      counters: LimitCounterStore;
      failureModes: FailureModes;
      now?: () => number;
    },
  ) {
    this.now = options.now ?? Date.now;
  }

  async list(request: wire.ListUsageRequest): Promise<MessageInitShape<typeof wire.ListUsageResponseSchema>> {
    const status = request.status;
    if (status !== '' && status !== 'active' && status !== 'exhausted') {
      throw new BadRequest('status must be active or exhausted.', { param: 'status' });
    }
    if (request.pageSize > MAX_PAGE_SIZE) {
      throw new BadRequest(`page_size must be at most ${MAX_PAGE_SIZE}.`, { param: 'page_size' });
    }
    const policy = await this.policy(request.organisationId, request.policyId);
    const period = periodAt(policy.schedule, this.now());
    const size = request.pageSize || DEFAULT_PAGE_SIZE;
    const page = await this.counters((counters) =>
      counters.list(counterKey(policy, period), {
        limit: policy.limit,
        status: status || undefined,
        search: request.search || undefined,
        offset: (Math.max(1, request.page) - 1) * size,
        count: size,
      }),
    );
    const resets = Number.isFinite(period.endMs);
    return {
      entities: page.entities.map(({ field, used, exhausted }) => ({
        id: entityId(field),
        valueKey: field,
        currentUsage: used,
        status: exhausted ? 'exhausted' : 'active',
      })),
      total: page.total,
      periodStartMs: String(resets ? period.startMs : 0),
      nextResetMs: String(resetAtMs(period)),
    };
  }

  async reset(
    request: wire.ResetUsageRequest,
  ): Promise<MessageInitShape<typeof wire.ResetUsageResponseSchema>> {
    if (!request.entity) throw new BadRequest('entity is required.', { param: 'entity' });
    const policy = await this.policy(request.organisationId, request.policyId);
    const key = counterKey(policy, periodAt(policy.schedule, this.now()));
    return { found: await this.counters((counters) => counters.reset(key, entityField(request.entity))) };
  }

  /** Every policy that can count the key's requests, and the key's usage under it (tightest first). */
  async keyUsage(
    request: wire.KeyUsageRequest,
  ): Promise<MessageInitShape<typeof wire.KeyUsageResponseSchema>> {
    if (!request.apiKeyId) throw new BadRequest('api_key_id is required.', { param: 'api_key_id' });
    const facts = {
      organisationId: request.organisationId,
      workspaceId: request.workspaceId,
      apiKeyId: request.apiKeyId,
      userId: request.userId,
      provider: '',
      model: '',
      metadata: {},
    };
    const nowMs = this.now();
    const counted: Counted[] = [];
    for (const policy of await this.active(request.organisationId)) {
      // A tool-call limit counted per server or tool has no one counter for the key.
      if (policy.target !== 'llm' && policy.groupBy.some((key) => WHAT_IS_CALLED.has(key))) continue;
      if (!couldApplyToKey(policy, facts)) continue;
      const period = periodAt(policy.schedule, nowMs);
      counted.push({
        policy,
        period,
        key: counterKey(policy, period),
        field: valueKey(policy, facts),
        used: 0,
      });
    }
    const used = await this.counters((counters) => counters.read(counted));
    counted.forEach((c, i) => (c.used = used[i]!));
    counted.sort(tighterFirst);
    return { limits: counted.map((c) => limitState(c, this.options.failureModes[c.policy.kind])) };
  }

  private async active(organisationId: string): Promise<readonly LimitPolicy[]> {
    if (!organisationId) throw new BadRequest('organisation_id is required.', { param: 'organisation_id' });
    try {
      return await this.options.policies.policies(organisationId);
    } catch (err) {
      if (err instanceof PoliciesUnavailable)
        throw new ServiceUnavailable('Limit policies cannot be read right now.');
      throw err;
    }
  }

  /** The organisation's active policy; another organisation's, an archived or an unknown one is not found. */
  private async policy(organisationId: string, policyId: string): Promise<LimitPolicy> {
    if (!policyId) throw new BadRequest('policy_id is required.', { param: 'policy_id' });
    const found = (await this.active(organisationId)).find((p) => p.id === policyId);
    if (!found) throw new NotFound('Policy not found.', { param: 'policy_id' });
    return found;
  }

  private async counters<T>(call: (counters: LimitCounterStore) => Promise<T>): Promise<T> {
    try {
      return await call(this.options.counters);
    } catch (err) {
      throw new ServiceUnavailable('Usage counters are unavailable right now.', { cause: err });
    }
  }
}
