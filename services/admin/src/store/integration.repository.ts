import { randomUUID } from 'node:crypto';
import { IsNull, type EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import { IntegrationEntity, IntegrationWorkspaceEntity, type Integration } from './entities.ts';

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

/** What an update may change. */
export type IntegrationChanges = Pick<
  Integration,
  'name' | 'description' | 'encryptedKey' | 'credentials' | 'configurations' | 'pricingAdjustments'
>;

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

  /**
   * Changes the live integration in one transaction, with its row locked: `change` is given
   * the integration as stored and answers the fields to store, so of concurrent updates each
   * applies to what the one before it stored and none is lost. An error `change` throws leaves
   * the integration as it was. Null when the integration is not live (archived meanwhile).
   */
  async update(
    id: string,
    change: (current: Integration) => IntegrationChanges,
  ): Promise<Integration | null> {
    return this.manager.transaction(async (tx) => {
      const repo = tx.getRepository(IntegrationEntity);
      const current = await repo.findOne({
        where: { id, status: 'active' },
        lock: { mode: 'pessimistic_write' },
      });
      if (!current) return null;
      const fields = { ...change(current), updatedAt: new Date() };
      await repo.update({ id }, fields);
      return { ...current, ...fields };
    });
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

  /**
   * The live integration's workspace access: the default of every workspace
   * (`global_workspace_access`) and the workspaces with a setting of their own, oldest first.
   * Null when the integration is not live.
   */
  async workspaceAccess(id: string): Promise<WorkspaceAccess | null> {
    const [integration] = (await this.manager.query(
      `SELECT global_workspace_access FROM admin.integrations WHERE id = $1 AND status = 'active'`,
      [id],
    )) as Array<{ global_workspace_access: boolean }>;
    if (!integration) return null;
    const workspaces = await this.manager.getRepository(IntegrationWorkspaceEntity).find({
      where: { integrationId: id },
      order: { updatedAt: 'ASC', workspaceId: 'ASC' },
    });
    return {
      global: integration.global_workspace_access,
      workspaces: workspaces.map(({ workspaceId, enabled }) => ({ workspaceId, enabled })),
    };
  }

  /**
   * Changes the live integration's workspace access in one transaction, with the integration
   * row locked: of concurrent changes each applies whole, one after the other. `override`
   * drops every workspace's own setting first. False when the integration is not live.
   */
  async setWorkspaceAccess(id: string, change: WorkspaceAccessChange): Promise<boolean> {
    return this.manager.transaction(async (tx) => {
      const locked = (await tx.query(
        `SELECT id FROM admin.integrations WHERE id = $1 AND status = 'active' FOR UPDATE`,
        [id],
      )) as unknown[];
      if (locked.length === 0) return false;
      if (change.global !== undefined) {
        await tx.query(
          `UPDATE admin.integrations SET global_workspace_access = $2, updated_at = now() WHERE id = $1`,
          [id, change.global],
        );
      }
      if (change.override) {
        await tx.query(`DELETE FROM admin.integration_workspaces WHERE integration_id = $1`, [id]);
      }
      if (change.workspaces.length > 0) {
        await tx.query(
          `INSERT INTO admin.integration_workspaces (integration_id, workspace_id, enabled, updated_at)
           SELECT $1, w.workspace_id, w.enabled, now()
             FROM unnest($2::uuid[], $3::boolean[]) AS w (workspace_id, enabled)
           ON CONFLICT (integration_id, workspace_id)
           DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at`,
          [id, change.workspaces.map((w) => w.workspaceId), change.workspaces.map((w) => w.enabled)],
        );
      }
      return true;
    });
  }

  /** Of these integrations, those the workspace may not use: its own setting, else the default, says no. */
  async deniedTo(ids: readonly string[], workspaceId: string): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = (await this.manager.query(
      `SELECT i.id FROM admin.integrations i
         LEFT JOIN admin.integration_workspaces w
           ON w.integration_id = i.id AND w.workspace_id::text = $2
        WHERE i.id = ANY($1::uuid[]) AND NOT COALESCE(w.enabled, i.global_workspace_access)`,
      [ids, workspaceId],
    )) as Array<{ id: string }>;
    return new Set(rows.map((row) => row.id));
  }
}

/** Which workspaces may use an integration: the default, and each workspace's own setting. */
export interface WorkspaceAccess {
  global: boolean;
  workspaces: Array<{ workspaceId: string; enabled: boolean }>;
}

export interface WorkspaceAccessChange {
  /** The new default; unchanged when undefined. */
  global: boolean | undefined;
  /** Drop every workspace's own setting before `workspaces` are set. */
  override: boolean;
  workspaces: Array<{ workspaceId: string; enabled: boolean }>;
}
