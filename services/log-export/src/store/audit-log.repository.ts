import type { EntityManager } from 'typeorm';
import { AuditLogEntity, type AuditLog } from './entities.ts';

/** What an audit log query narrows to; the organisation always. */
export interface AuditLogFilter {
  organisationId: string;
  workspaceId?: string | undefined;
  userId?: string | undefined;
  apiKeyId?: string | undefined;
  method?: string | undefined;
  route?: string | undefined;
  /** Inclusive. */
  from?: Date | undefined;
  /** Exclusive. */
  to?: Date | undefined;
}

export class AuditLogRepository {
  constructor(private readonly manager: EntityManager) {}

  /** Inserts once; a replayed event with the same id changes nothing. */
  async insertOnce(entry: AuditLog): Promise<boolean> {
    const result = await this.manager
      .createQueryBuilder()
      .insert()
      .into(AuditLogEntity)
      .values(entry)
      .orIgnore()
      .execute();
    return (result.raw as unknown[]).length > 0;
  }

  /** Newest first, then by id, so pages are stable. */
  async list(filter: AuditLogFilter, page: { offset: number; limit: number }): Promise<[AuditLog[], number]> {
    const query = this.manager
      .getRepository(AuditLogEntity)
      .createQueryBuilder('a')
      .where('a.organisation_id = :organisationId', { organisationId: filter.organisationId });
    if (filter.workspaceId !== undefined) {
      query.andWhere('a.workspace_id = :workspaceId', { workspaceId: filter.workspaceId });
    }
    if (filter.userId !== undefined) query.andWhere('a.user_id = :userId', { userId: filter.userId });
    if (filter.apiKeyId !== undefined)
      query.andWhere('a.api_key_id = :apiKeyId', { apiKeyId: filter.apiKeyId });
    if (filter.method !== undefined) query.andWhere('a.method = :method', { method: filter.method });
    if (filter.route !== undefined) query.andWhere('a.route = :route', { route: filter.route });
    if (filter.from !== undefined) query.andWhere('a.occurred_at >= :from', { from: filter.from });
    if (filter.to !== undefined) query.andWhere('a.occurred_at < :to', { to: filter.to });
    return query
      .orderBy('a.occurred_at', 'DESC')
      .addOrderBy('a.id', 'DESC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }
}
