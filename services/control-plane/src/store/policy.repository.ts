import { randomUUID } from 'node:crypto';
import {
  ILike,
  IsNull,
  type EntityManager,
  type FindOptionsWhere,
  type QueryDeepPartialEntity,
} from 'typeorm';
import {
  RateLimitPolicyEntity,
  UsageLimitPolicyEntity,
  type PolicyStatus,
  type RateLimitPolicy,
  type UsageLimitPolicy,
} from './policy.entities.ts';
import { isUuid } from '../domain/ids.ts';

/* TypeORM (entity repositories) only; an update reads the row under a lock and writes it back in one transaction. */

export interface PolicyKinds {
  rate_limit: RateLimitPolicy;
  usage_limit: UsageLimitPolicy;
}
export type PolicyKindName = keyof PolicyKinds;

const entityOf = { rate_limit: RateLimitPolicyEntity, usage_limit: UsageLimitPolicyEntity } as const;

export type NewPolicy<K extends PolicyKindName> = Omit<
  PolicyKinds[K],
  'id' | 'status' | 'createdAt' | 'updatedAt'
>;

export interface PolicyFilter {
  status: PolicyStatus;
  /** A workspace's policies; null: organisation-wide ones; absent: all. */
  workspaceId?: string | null | undefined;
  target?: string | undefined;
  type?: string | undefined;
  unit?: string | undefined;
  /** Part of the name, any case. */
  search?: string | undefined;
}

/** TypeORM's partial-row type cannot follow the jsonb arrays a policy holds. */
const row = <T>(entity: T) => entity as QueryDeepPartialEntity<T>;

/** `%` and `_` in a search are themselves, not patterns. */
const likeText = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Rate-limit and usage-limit policies. */
export class PolicyRepository {
  constructor(private readonly manager: EntityManager) {}

  private repo<K extends PolicyKindName>(kind: K, manager = this.manager) {
    return manager.getRepository<PolicyKinds[K]>(entityOf[kind] as never);
  }

  async insert<K extends PolicyKindName>(kind: K, input: NewPolicy<K>): Promise<PolicyKinds[K]> {
    const now = new Date();
    const policy = {
      ...input,
      id: randomUUID(),
      status: 'active',
      createdAt: now,
      updatedAt: now,
    } as PolicyKinds[K];
    await this.repo(kind).insert(row(policy));
    return policy;
  }

  /** By id within the organisation, archived ones included; ids that are not UUIDs match nothing. */
  async find<K extends PolicyKindName>(
    kind: K,
    organisationId: string,
    id: string,
  ): Promise<PolicyKinds[K] | null> {
    if (!isUuid(id)) return null;
    return this.repo(kind).findOneBy({ organisationId, id } as FindOptionsWhere<PolicyKinds[K]>);
  }

  /** Oldest first. */
  async list<K extends PolicyKindName>(
    kind: K,
    organisationId: string,
    filter: PolicyFilter,
    page: { offset: number; limit: number },
  ): Promise<[PolicyKinds[K][], number]> {
    const where: Record<string, unknown> = { organisationId, status: filter.status };
    if (filter.workspaceId !== undefined) where.workspaceId = filter.workspaceId ?? IsNull();
    if (filter.target) where.target = filter.target;
    if (filter.type) where.type = filter.type;
    if (filter.unit) where.unit = filter.unit;
    if (filter.search) where.name = ILike(`%${likeText(filter.search)}%`);
    return this.repo(kind).findAndCount({
      where: where as FindOptionsWhere<PolicyKinds[K]>,
      order: { createdAt: 'ASC', id: 'ASC' } as never,
      skip: page.offset,
      take: page.limit,
    });
  }

  /** Every active policy of the organisation, oldest first. */
  async listActive<K extends PolicyKindName>(kind: K, organisationId: string): Promise<PolicyKinds[K][]> {
    if (!isUuid(organisationId)) return [];
    return this.repo(kind).find({
      where: { organisationId, status: 'active' } as FindOptionsWhere<PolicyKinds[K]>,
      order: { createdAt: 'ASC', id: 'ASC' } as never,
    });
  }

  /**
   * Applies the changes `change` makes of the active policy as it stands, in one transaction
   * with the row locked, so concurrent writes apply one after the other, each to the other's
   * result. Null when the policy is gone or archived by then; `change` may throw to refuse.
   */
  async update<K extends PolicyKindName>(
    kind: K,
    id: string,
    change: (current: PolicyKinds[K]) => Partial<PolicyKinds[K]>,
  ): Promise<PolicyKinds[K] | null> {
    return this.manager.transaction(async (manager) => {
      const repo = this.repo(kind, manager);
      const current = await repo.findOne({
        where: { id, status: 'active' } as FindOptionsWhere<PolicyKinds[K]>,
        lock: { mode: 'pessimistic_write' },
      });
      if (!current) return null;
      const changes = { ...change(current), updatedAt: new Date() };
      await repo.update({ id } as FindOptionsWhere<PolicyKinds[K]>, row(changes as PolicyKinds[K]));
      return { ...current, ...changes };
    });
  }
}
