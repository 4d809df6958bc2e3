import { randomUUID } from 'node:crypto';
import { IsNull, type EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import { IntegrationEntity, type Integration } from './entities.ts';

/**
 * One model set on an integration (PUT .../integration-models), as stored in the
 * integration's `models` column. Custom header values are not credentials: stored as given.
 */
export interface IntegrationModelSetting {
  slug: string;
  enabled: boolean;
  is_custom: boolean | null;
  is_finetune: boolean | null;
  base_model_slug: string | null;
  configurations: { custom_host?: string };
  custom_headers: Record<string, string>;
}

export class IntegrationRepository {
  constructor(private readonly manager: EntityManager) {}

  async insert(input: Omit<Integration, 'id' | 'createdAt' | 'updatedAt' | 'status'>): Promise<Integration> {
    const now = new Date();
    const integration: Integration = {
      id: randomUUID(),
      status: 'active',
      createdAt: now,
      updatedAt: now,
      ...input,
    };
    try {
      await this.manager.getRepository(IntegrationEntity).insert(integration);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict(`An integration with slug "${input.slug}" already exists.`, { param: 'slug' });
      throw err;
    }
    return integration;
  }

  /** The live integration with this slug that the workspace (or, with null, the organisation) may use. */
  async findLive(
    organisationId: string,
    slug: string,
    workspaceId: string | null,
  ): Promise<Integration | null> {
    const integration = await this.manager
      .getRepository(IntegrationEntity)
      .findOneBy({ organisationId, slug, status: 'active' });
    if (!integration) return null;
    if (workspaceId && integration.workspaceId && integration.workspaceId !== workspaceId) return null;
    return integration;
  }

  /** The live integration with this id, as findLive limits it to the workspace. */
  async findLiveById(
    organisationId: string,
    id: string,
    workspaceId: string | null,
  ): Promise<Integration | null> {
    const integration = await this.manager
      .getRepository(IntegrationEntity)
      .findOneBy({ organisationId, id, status: 'active' });
    if (!integration) return null;
    if (workspaceId && integration.workspaceId && integration.workspaceId !== workspaceId) return null;
    return integration;
  }

  async list(
    organisationId: string,
    page: { offset: number; limit: number },
    workspaceId: string | null,
  ): Promise<[Integration[], number]> {
    const base = { organisationId, status: 'active' as const };
    return this.manager.getRepository(IntegrationEntity).findAndCount({
      where: workspaceId
        ? [
            { ...base, workspaceId: IsNull() },
            { ...base, workspaceId },
          ]
        : base,
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  async update(
    id: string,
    fields: Pick<Integration, 'name' | 'description' | 'encryptedKey' | 'credentials'>,
  ): Promise<Integration> {
    const repo = this.manager.getRepository(IntegrationEntity);
    await repo.update({ id }, { ...fields, updatedAt: new Date() });
    return (await repo.findOneBy({ id }))!;
  }

  /** Archives the live integration; false when it was archived already (by a concurrent call too). */
  async archive(id: string): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(IntegrationEntity)
      .update({ id, status: 'active' }, { status: 'archived', updatedAt: new Date() });
    return Boolean(affected);
  }

  /**
   * Replaces the live integration's models in one statement: of concurrent replacements one
   * whole list stays. False when the integration was archived meanwhile.
   */
  async setModels(id: string, models: IntegrationModelSetting[]): Promise<boolean> {
    const [, affected] = (await this.manager.query(
      `UPDATE admin.integrations SET models = $2::jsonb, updated_at = now()
        WHERE id = $1 AND status = 'active'`,
      [id, JSON.stringify(models)],
    )) as [unknown, number];
    return affected > 0;
  }

  /** The models set on each of these integrations, by integration id (absent: none set). */
  async modelsOf(ids: readonly string[]): Promise<Map<string, IntegrationModelSetting[]>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.manager.query(
      `SELECT id, models FROM admin.integrations WHERE id = ANY($1::uuid[])`,
      [ids],
    )) as Array<{ id: string; models: IntegrationModelSetting[] }>;
    return new Map(rows.map((row) => [row.id, row.models]));
  }
}
