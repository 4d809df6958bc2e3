import {
  BadRequest,
  Forbidden,
  NotFound,
  ServiceUnavailable,
  paramPath,
  type CamelKeys,
  type PageQuery,
} from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events, type policy } from '@switchyard/proto';
import { conditionKeysOf, isConditionKey } from '@switchyard/rules';
import type { ServiceClient } from '@switchyard/runtime';
import type { z } from 'zod';
import type {
  PolicyCondition,
  PolicyStatus,
  PolicyTarget,
  RateLimitPolicy,
  UsageLimitPolicy,
} from '../store/policy.entities.ts';
import type { PolicyKindName, PolicyKinds, PolicyRepository } from '../store/policy.repository.ts';
import type { ApiKeyService } from './api-key.service.ts';
import type { WorkspaceService } from './workspace.service.ts';
import type {
  createRateLimitBody,
  createUsageLimitBody,
  listEntitiesQuery,
  listRateLimitsQuery,
  listUsageLimitsQuery,
  updateRateLimitBody,
  updateUsageLimitBody,
} from './policy.schemas.ts';
import { utcMidnight } from './policy-rules.ts';

export type CreateRateLimitInput = CamelKeys<z.output<typeof createRateLimitBody>>;
export type UpdateRateLimitInput = CamelKeys<z.output<typeof updateRateLimitBody>>;
export type CreateUsageLimitInput = CamelKeys<z.output<typeof createUsageLimitBody>>;
export type UpdateUsageLimitInput = CamelKeys<z.output<typeof updateUsageLimitBody>>;
/** Either kind's list filters: `unit` is a rate limit's alone. */
export type ListPoliciesInput =
  CamelKeys<z.output<typeof listRateLimitsQuery>> | CamelKeys<z.output<typeof listUsageLimitsQuery>>;
export type ListEntitiesInput = CamelKeys<z.output<typeof listEntitiesQuery>>;

/** The policy service's usage ledger, as control-plane asks it. */
export type UsageLedger = Pick<
  ServiceClient<typeof policy.UsageLedgerService>,
  'listUsage' | 'resetUsage' | 'keyUsage'
>;

/** How long a management request waits for the policy service before answering 503. */
const LEDGER_DEADLINE_MS = 2_000;
/** The entities `include_usage` shows at most, asked for a page at a time. */
const USAGE_MAP_PAGE = 100;
const USAGE_MAP_MAX = 10_000;

export interface EntityUsage {
  id: string;
  valueKey: string;
  currentUsage: number;
  status: string;
}

/** Where a key stands under one policy that applies to it. */
export interface KeyLimit {
  policyId: string;
  policyName: string | null;
  kind: PolicyKindName;
  type: string;
  valueKey: string;
  limit: number;
  remaining: number;
  /** Null for a usage limit that never resets. */
  resetAt: Date | null;
}

/** A policy's fields both kinds share, as a write resolves them. */
type CommonInput = Pick<
  CreateRateLimitInput,
  'name' | 'description' | 'conditions' | 'groupBy' | 'target' | 'workspaceId'
>;

const NOUN: Record<PolicyKindName, string> = {
  rate_limit: 'Rate limit policy',
  usage_limit: 'Usage limit policy',
};

/**
 * Rate-limit and usage-limit policies: a workspace key works on its workspace's, an
 * organisation admin key on any workspace's and on the organisation-wide ones. Anything
 * else is "not found". Every write announces a "policy" change naming the organisation, on
 * which the policy service drops the policies it holds for it.
 */
export class PolicyService {
  constructor(
    private readonly repo: PolicyRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly apiKeys: Pick<ApiKeyService, 'getApiKey'>,
    private readonly ledger: UsageLedger,
    private readonly bus: EventBus,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createRateLimit(principal: Principal, input: CreateRateLimitInput): Promise<RateLimitPolicy> {
    const common = await this.commonFields(principal, input);
    const created = await this.repo.insert('rate_limit', {
      ...common,
      type: input.type,
      unit: input.unit,
      value: input.value,
    });
    this.publish(created, events.ChangeAction.CREATED);
    return created;
  }

  async createUsageLimit(principal: Principal, input: CreateUsageLimitInput): Promise<UsageLimitPolicy> {
    const common = await this.commonFields(principal, input);
    const created = await this.repo.insert('usage_limit', {
      ...common,
      type: input.type,
      creditLimit: input.creditLimit,
      alertThreshold: input.alertThreshold ?? null,
      periodicReset: input.periodicReset ?? null,
      periodicResetDays: input.periodicResetDays ?? null,
      resetAnchorAt: utcMidnight(input.nextUsageResetAt ?? this.now()),
      lastResetAt: null,
    });
    this.publish(created, events.ChangeAction.CREATED);
    return created;
  }

  /** One policy the caller may see, in `status` (active unless asked). */
  async get<K extends PolicyKindName>(
    kind: K,
    principal: Principal,
    id: string,
    status: PolicyStatus = 'active',
  ): Promise<PolicyKinds[K]> {
    const found = await this.repo.find(kind, principal.organisationId, id);
    if (
      !found ||
      found.status !== status ||
      (principal.workspaceId !== null && found.workspaceId !== principal.workspaceId)
    ) {
      throw new NotFound(`${NOUN[kind]} '${id}' not found.`);
    }
    return found;
  }

  /** The caller's workspace's; an organisation admin key's: all of them unless it names a workspace. */
  async list<K extends PolicyKindName>(
    kind: K,
    principal: Principal,
    query: ListPoliciesInput,
    page: PageQuery,
  ): Promise<[PolicyKinds[K][], number]> {
    const workspaceId = query.workspaceId
      ? (await this.workspaces.getWorkspace(principal, query.workspaceId)).id
      : (principal.workspaceId ?? undefined);
    return this.repo.list(kind, principal.organisationId, { ...query, workspaceId }, page);
  }

  async updateRateLimit(
    principal: Principal,
    id: string,
    changes: UpdateRateLimitInput,
  ): Promise<RateLimitPolicy> {
    const found = await this.get('rate_limit', principal, id);
    const conditions =
      changes.conditions && (await this.resolveConditions(principal, found.target, changes.conditions));
    const updated = await this.repo.update('rate_limit', found.id, () =>
      definedOnly({
        name: changes.name,
        description: changes.description,
        conditions,
        unit: changes.unit,
        value: changes.value,
      }),
    );
    return this.written('rate_limit', id, updated, events.ChangeAction.UPDATED);
  }

  /**
   * Checked against the policy as it stands when the row is locked: an alert threshold
   * stays below the credit limit; setting one kind of period removes the other. A value
   * whose usage is to be reset is reset first, so a refusal by the policy service changes
   * nothing.
   */
  async updateUsageLimit(
    principal: Principal,
    id: string,
    changes: UpdateUsageLimitInput,
  ): Promise<UsageLimitPolicy> {
    const found = await this.get('usage_limit', principal, id);
    const conditions =
      changes.conditions && (await this.resolveConditions(principal, found.target, changes.conditions));
    let resetAt: Date | undefined;
    if (changes.resetUsageForValue !== undefined) {
      // A value without usage in this period has nothing to reset: already at 0.
      await this.askLedger(() =>
        this.ledger.resetUsage(
          { organisationId: found.organisationId, policyId: found.id, entity: changes.resetUsageForValue },
          { deadlineMs: LEDGER_DEADLINE_MS },
        ),
      );
      resetAt = this.now();
    }
    const updated = await this.repo.update('usage_limit', found.id, (current) => {
      const creditLimit = changes.creditLimit ?? current.creditLimit;
      const alertThreshold =
        changes.alertThreshold === undefined ? current.alertThreshold : changes.alertThreshold;
      if (alertThreshold !== null && alertThreshold >= creditLimit) {
        const param = changes.alertThreshold === undefined ? 'credit_limit' : 'alert_threshold';
        throw new BadRequest(
          `Invalid body parameter '${param}': the alert threshold (${alertThreshold}) must be less than the credit limit (${creditLimit}).`,
          { param, code: 'invalid_parameter' },
        );
      }
      const periods: Partial<UsageLimitPolicy> = {};
      if (changes.periodicReset !== undefined) {
        periods.periodicReset = changes.periodicReset;
        if (changes.periodicReset !== null) periods.periodicResetDays = null;
      }
      if (changes.periodicResetDays !== undefined) {
        periods.periodicResetDays = changes.periodicResetDays;
        if (changes.periodicResetDays !== null) periods.periodicReset = null;
      }
      return definedOnly({
        name: changes.name,
        description: changes.description,
        conditions,
        creditLimit: changes.creditLimit,
        alertThreshold: changes.alertThreshold,
        ...periods,
        resetAnchorAt:
          changes.nextUsageResetAt === undefined
            ? undefined
            : utcMidnight(changes.nextUsageResetAt ?? current.createdAt),
        lastResetAt: resetAt,
      });
    });
    return this.written('usage_limit', id, updated, events.ChangeAction.UPDATED);
  }

  /** The policy is no longer found (nor applied), unless asked for with status archived. */
  async archive(kind: PolicyKindName, principal: Principal, id: string): Promise<void> {
    const found = await this.get(kind, principal, id);
    const archived = await this.repo.update(kind, found.id, () => ({ status: 'archived' }) as const);
    this.written(kind, id, archived, events.ChangeAction.DELETED);
  }

  /** The entities a usage limit counts, with their usage in the current period. */
  async listEntities(
    principal: Principal,
    id: string,
    query: ListEntitiesInput,
  ): Promise<{ entities: EntityUsage[]; total: number }> {
    const found = await this.get('usage_limit', principal, id);
    const answer = await this.askLedger(() =>
      this.ledger.listUsage(
        {
          organisationId: found.organisationId,
          policyId: found.id,
          status: query.status ?? '',
          search: query.search ?? '',
          page: query.currentPage,
          pageSize: query.pageSize,
        },
        { deadlineMs: LEDGER_DEADLINE_MS },
      ),
    );
    return { entities: answer.entities, total: answer.total };
  }

  /** Every counted entity's usage (up to USAGE_MAP_MAX), for `include_usage`. */
  async usageOf(policy: UsageLimitPolicy): Promise<EntityUsage[]> {
    const all: EntityUsage[] = [];
    for (let page = 0; all.length < USAGE_MAP_MAX; page++) {
      const answer = await this.askLedger(() =>
        this.ledger.listUsage(
          { organisationId: policy.organisationId, policyId: policy.id, page, pageSize: USAGE_MAP_PAGE },
          { deadlineMs: LEDGER_DEADLINE_MS },
        ),
      );
      all.push(...answer.entities);
      if (answer.entities.length < USAGE_MAP_PAGE || all.length >= answer.total) break;
    }
    return all;
  }

  /** Starts one entity's usage in the current period again from 0; 404 when it has none. */
  async resetEntity(principal: Principal, id: string, entityId: string): Promise<void> {
    const found = await this.get('usage_limit', principal, id);
    const { found: had } = await this.askLedger(() =>
      this.ledger.resetUsage(
        { organisationId: found.organisationId, policyId: found.id, entity: entityId },
        { deadlineMs: LEDGER_DEADLINE_MS },
      ),
    );
    if (!had) throw new NotFound(`Entity '${entityId}' has no usage under usage limit policy '${id}'.`);
    const updated = await this.repo.update('usage_limit', found.id, () => ({ lastResetAt: this.now() }));
    this.written('usage_limit', id, updated, events.ChangeAction.UPDATED);
  }

  /** The limits that apply to the calling key, and where it stands under each. */
  async keyUsage(principal: Principal): Promise<KeyLimit[]> {
    const { limits } = await this.askLedger(() =>
      this.ledger.keyUsage(
        {
          organisationId: principal.organisationId,
          workspaceId: principal.workspaceId ?? '',
          apiKeyId: principal.apiKeyId,
          userId: principal.userId ?? '',
        },
        { deadlineMs: LEDGER_DEADLINE_MS },
      ),
    );
    const names = new Map<string, string | null>();
    for (const kind of ['rate_limit', 'usage_limit'] as const) {
      for (const found of await this.repo.listActive(kind, principal.organisationId))
        names.set(found.id, found.name);
    }
    return limits.map((limit) => ({
      policyId: limit.policyId,
      policyName: names.get(limit.policyId) ?? null,
      kind: limit.kind === 1 ? 'rate_limit' : 'usage_limit',
      type: limit.type,
      valueKey: limit.valueKey,
      limit: limit.limit,
      remaining: limit.remaining,
      resetAt: limit.resetAtMs && limit.resetAtMs !== '0' ? new Date(Number(limit.resetAtMs)) : null,
    }));
  }

  /** What the policy service enforces: the organisation's active policies of both kinds. */
  async activePolicies(
    organisationId: string,
  ): Promise<{ rateLimits: RateLimitPolicy[]; usageLimits: UsageLimitPolicy[] }> {
    const [rateLimits, usageLimits] = await Promise.all([
      this.repo.listActive('rate_limit', organisationId),
      this.repo.listActive('usage_limit', organisationId),
    ]);
    return { rateLimits, usageLimits };
  }

  /** The policy's workspace, its conditions resolved, and who creates it. */
  private async commonFields(principal: Principal, input: CommonInput) {
    const workspaceId = await this.workspaceFor(principal, input.workspaceId);
    return {
      organisationId: principal.organisationId,
      workspaceId,
      name: input.name ?? null,
      description: input.description ?? null,
      conditions: await this.resolveConditions(principal, input.target, input.conditions),
      groupBy: input.groupBy,
      target: input.target,
      createdBy: principal.userId ?? principal.apiKeyId,
    };
  }

  /** Absent: a workspace key's own workspace, else organisation-wide; null: organisation-wide, an admin key's alone. */
  private async workspaceFor(
    principal: Principal,
    requested: string | null | undefined,
  ): Promise<string | null> {
    if (requested) return (await this.workspaces.getWorkspace(principal, requested)).id;
    if (requested === undefined || principal.workspaceId === null) return principal.workspaceId;
    throw new Forbidden('Only an organisation admin key can create an organisation-wide policy.', {
      param: 'workspace_id',
      code: 'admin_key_required',
    });
  }

  /**
   * Keys valid for the target; workspace_id values name a workspace the caller may see (a
   * slug is stored as its id), api_key values a key it may see, organisation_id the caller's
   * organisation. `*` matches any present value.
   */
  private async resolveConditions(
    principal: Principal,
    target: PolicyTarget,
    conditions: PolicyCondition[],
  ): Promise<PolicyCondition[]> {
    const resolved: PolicyCondition[] = [];
    for (const [index, condition] of conditions.entries()) {
      const invalid = (field: 'key' | 'value', why: string) => {
        const param = paramPath(['conditions', index, field]);
        return new BadRequest(`Invalid body parameter '${param}': ${why}`, {
          param,
          code: 'invalid_parameter',
        });
      };
      if (!isConditionKey(target, condition.key)) {
        throw invalid('key', `a policy of target '${target}' takes the keys ${conditionKeysOf(target)}.`);
      }
      let value = condition.value;
      if (value !== '*') {
        if (condition.key === 'workspace_id') {
          value = await this.workspaces.getWorkspace(principal, value).then(
            (workspace) => workspace.id,
            () => Promise.reject(invalid('value', `no workspace '${value}' in this organisation.`)),
          );
        } else if (condition.key === 'api_key') {
          await this.apiKeys
            .getApiKey(principal, value)
            .catch(() => Promise.reject(invalid('value', `no API key '${value}' in this organisation.`)));
        } else if (condition.key === 'organisation_id' && value !== principal.organisationId) {
          throw invalid('value', "an organisation_id condition names the key's own organisation.");
        }
      }
      resolved.push({ key: condition.key, value, excludes: condition.excludes });
    }
    return resolved;
  }

  /** A write's result, announced; 404 when the policy was archived meanwhile. */
  private written<K extends PolicyKindName>(
    kind: K,
    id: string,
    policy: PolicyKinds[K] | null,
    action: events.ChangeAction,
  ): PolicyKinds[K] {
    if (!policy) throw new NotFound(`${NOUN[kind]} '${id}' not found.`);
    this.publish(policy, action);
    return policy;
  }

  private publish(policy: RateLimitPolicy | UsageLimitPolicy, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: 'policy',
      entityId: policy.id,
      organisationId: policy.organisationId,
      workspaceId: policy.workspaceId ?? '',
      action,
      cacheKey: policy.organisationId,
    });
  }

  /** The policy service's answer; its absence or silence is the one 503. */
  private async askLedger<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof ServiceUnavailable) {
        throw new ServiceUnavailable('The policy service did not answer: usage is not available right now.', {
          cause: err,
        });
      }
      throw err;
    }
  }
}

/** The fields given a value: an update leaves the others as they are. */
function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
