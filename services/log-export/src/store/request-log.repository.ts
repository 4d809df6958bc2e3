import type { EntityManager } from 'typeorm';
import { RequestLogEntity, type RequestLog } from './entities.ts';

export class RequestLogRepository {
  constructor(private readonly manager: EntityManager) {}

  /** Inserts once; a replayed event with the same id changes nothing. */
  async insertOnce(log: RequestLog): Promise<boolean> {
    const result = await this.manager
      .createQueryBuilder()
      .insert()
      .into(RequestLogEntity)
      .values(log)
      .orIgnore()
      .execute();
    return (result.raw as unknown[]).length > 0;
  }

  async find(
    id: string,
    scope: { organisationId: string; workspaceId: string | null },
  ): Promise<RequestLog | null> {
    return this.manager
      .getRepository(RequestLogEntity)
      .findOneBy(
        scope.workspaceId
          ? { id, organisationId: scope.organisationId, workspaceId: scope.workspaceId }
          : { id, organisationId: scope.organisationId },
      );
  }
}
