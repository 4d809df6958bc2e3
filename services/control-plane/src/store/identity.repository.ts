import { randomUUID } from 'node:crypto';
import { In, IsNull, type EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import {
  ApiKeyEntity,
  OrganisationEntity,
  WorkspaceEntity,
  type ApiKey,
  type Organisation,
  type Workspace,
} from './entities.ts';
import type { OrganisationRole, WorkspaceRole } from '../domain/roles.ts';
import { SavedConfigEntity } from './config.entities.ts';
import { WorkspaceArchiveRepository, type ArchivedWorkspace } from './workspace-archive.repository.ts';
import { isUuid } from '../domain/ids.ts';

/*
 * TypeORM (entity repositories, one query builder) throughout, except three statements that
 * need SQL: the bootstrap's transaction-scoped advisory lock, the share lock on the saved
 * config a workspace default names (a row of another table, locked until the commit), and
 * lockWorkspaceMember, which joins three tables and share-locks only the membership row
 * (FOR SHARE OF).
 */

export interface ApiKeyWithOwners {
  apiKey: ApiKey;
  workspaceSlug: string | null;
  organisationCreatedAt: Date;
  /** Slugs of the active configs the key's and its workspace's defaults name; null where none. */
  defaultConfigs: { key: string | null; userKeys: string | null; workspace: string | null };
}

/** A key to store; without a rotation policy unless one is given. */
export type NewApiKey = Omit<
  ApiKey,
  | 'id'
  | 'createdAt'
  | 'updatedAt'
  | 'status'
  | 'rotationPeriodDays'
  | 'nextRotationAt'
  | 'defaultConfigId'
  | 'defaultMetadata'
  | 'allowConfigOverride'
> &
  Partial<
    Pick<
      ApiKey,
      'rotationPeriodDays' | 'nextRotationAt' | 'defaultConfigId' | 'defaultMetadata' | 'allowConfigOverride'
    >
  >;

export type ApiKeyChanges = Partial<
  Pick<
    ApiKey,
    | 'name'
    | 'description'
    | 'scopes'
    | 'expiresAt'
    | 'rotationPeriodDays'
    | 'nextRotationAt'
    | 'keyHash'
    | 'keyHint'
    | 'defaultConfigId'
    | 'defaultMetadata'
    | 'allowConfigOverride'
  >
>;

/** Organisations, workspaces and API keys. */
export class IdentityRepository {
  constructor(private readonly manager: EntityManager) {}

  transaction<T>(work: (repo: IdentityRepository) => Promise<T>): Promise<T> {
    return this.manager.transaction((manager) => work(new IdentityRepository(manager)));
  }

  /** Serialises concurrent bootstraps across replicas for the rest of the transaction. */
  async lockBootstrap(): Promise<void> {
    await this.manager.query(`SELECT pg_advisory_xact_lock(hashtext('switchyard.bootstrap'))`);
  }

  async firstOrganisation(): Promise<Organisation | null> {
    return this.manager.getRepository(OrganisationEntity).findOne({ where: {}, order: { createdAt: 'ASC' } });
  }

  async createOrganisation(name: string, slug: string): Promise<Organisation> {
    const organisation = { id: randomUUID(), name, slug, createdAt: new Date() };
    await this.manager.getRepository(OrganisationEntity).insert(organisation);
    return organisation;
  }

  async createWorkspace(
    input: Pick<Workspace, 'organisationId' | 'name' | 'slug' | 'description'>,
  ): Promise<Workspace> {
    const now = new Date();
    const workspace: Workspace = {
      id: randomUUID(),
      userApiKeyConfigId: null,
      defaultConfigId: null,
      userApiKeyAutoCreate: null,
      securitySettings: {},
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      ...input,
    };
    try {
      await this.manager.getRepository(WorkspaceEntity).insert(workspace);
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict(`A workspace with slug "${input.slug}" already exists.`, { param: 'slug' });
      throw err;
    }
    return workspace;
  }

  /** By id or slug, only within the organisation; archived (deleted) workspaces are not found. */
  async findWorkspace(organisationId: string, idOrSlug: string): Promise<Workspace | null> {
    const repo = this.manager.getRepository(WorkspaceEntity);
    if (isUuid(idOrSlug)) {
      const byId = await repo.findOneBy({ organisationId, id: idOrSlug, archivedAt: IsNull() });
      if (byId) return byId;
    }
    return repo.findOneBy({ organisationId, slug: idOrSlug, archivedAt: IsNull() });
  }

  /**
   * The slug of the active config a workspace's `defaults.config` names; null for none (or
   * for a workspace that is not there).
   */
  async workspaceDefaultConfig(workspaceId: string): Promise<string | null> {
    if (!isUuid(workspaceId)) return null;
    const row = await this.manager
      .getRepository(WorkspaceEntity)
      .createQueryBuilder('workspace')
      .innerJoin(
        SavedConfigEntity.options.name,
        'config',
        "config.id = workspace.defaultConfigId AND config.status = 'active'",
      )
      .select('config.slug', 'slug')
      .where('workspace.id = :workspaceId AND workspace.archivedAt IS NULL', { workspaceId })
      .getRawOne<{ slug: string }>();
    return row?.slug ?? null;
  }

  /** A workspace and its organisation, each by id or slug. */
  async findWorkspaceWithOrganisation(
    organisationIdOrSlug: string,
    idOrSlug: string,
  ): Promise<{ workspace: Workspace; organisation: Organisation } | null> {
    const organisations = this.manager.getRepository(OrganisationEntity);
    const organisation =
      (isUuid(organisationIdOrSlug) ? await organisations.findOneBy({ id: organisationIdOrSlug }) : null) ??
      (await organisations.findOneBy({ slug: organisationIdOrSlug }));
    if (!organisation) return null;
    const workspace = await this.findWorkspace(organisation.id, idOrSlug);
    return workspace ? { workspace, organisation } : null;
  }

  async listWorkspaces(
    organisationId: string,
    page: { offset: number; limit: number },
    onlyId?: string,
  ): Promise<[Workspace[], number]> {
    return this.manager.getRepository(WorkspaceEntity).findAndCount({
      where: { organisationId, archivedAt: IsNull(), ...(onlyId ? { id: onlyId } : {}) },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /**
   * Applies the changes; null when `userApiKeyConfigId` names a config that is not (or no
   * longer) active in this workspace. The config's row stays share-locked until the commit,
   * so a concurrent archive waits and then sees this default.
   */
  async updateWorkspace(
    id: string,
    changes: Partial<
      Pick<
        Workspace,
        | 'name'
        | 'description'
        | 'userApiKeyConfigId'
        | 'defaultConfigId'
        | 'userApiKeyAutoCreate'
        | 'securitySettings'
      >
    >,
  ): Promise<Workspace | null> {
    return this.transaction(async (repo) => {
      for (const configId of [changes.userApiKeyConfigId, changes.defaultConfigId]) {
        if (configId && !(await repo.lockActiveConfig(configId, id))) return null;
      }
      const workspaces = repo.manager.getRepository(WorkspaceEntity);
      await workspaces.update({ id }, { ...changes, updatedAt: new Date() });
      return workspaces.findOneByOrFail({ id });
    });
  }

  /** Deletes the workspace and everything of it in one transaction; null when it is archived already (see WorkspaceArchiveRepository). */
  archiveWorkspace(id: string, actorId: string): Promise<ArchivedWorkspace | null> {
    return new WorkspaceArchiveRepository(this.manager).archive(id, actorId);
  }

  /**
   * Share-locks an active config of the workspace until the commit, so that a default naming
   * it and its archiving (which checks for such defaults under its own lock) never both win.
   * False when the workspace has no such active config.
   */
  async lockActiveConfig(configId: string, workspaceId: string): Promise<boolean> {
    const active: unknown[] = await this.manager.query(
      `SELECT 1 FROM control_plane.configs
        WHERE id = $1 AND workspace_id = $2 AND status = 'active' FOR SHARE`,
      [configId, workspaceId],
    );
    return active.length > 0;
  }

  async insertApiKey(input: NewApiKey): Promise<ApiKey> {
    const now = new Date();
    const apiKey: ApiKey = {
      id: randomUUID(),
      status: 'active',
      createdAt: now,
      updatedAt: now,
      rotationPeriodDays: null,
      nextRotationAt: null,
      defaultConfigId: null,
      defaultMetadata: null,
      allowConfigOverride: true,
      ...input,
    };
    try {
      await this.manager.getRepository(ApiKeyEntity).insert(apiKey);
    } catch (err) {
      if (isUniqueViolation(err)) throw new Conflict('This API key already exists.');
      throw err;
    }
    return apiKey;
  }

  /** The key with what a principal needs of its workspace and organisation, in one query. */
  async findApiKeyWithOwnersByHash(keyHash: string): Promise<ApiKeyWithOwners | null> {
    const { entities, raw } = await this.manager
      .getRepository(ApiKeyEntity)
      .createQueryBuilder('key')
      .innerJoin(OrganisationEntity.options.name, 'organisation', 'organisation.id = key.organisationId')
      .leftJoin(WorkspaceEntity.options.name, 'workspace', 'workspace.id = key.workspaceId')
      .leftJoin(
        SavedConfigEntity.options.name,
        'key_config',
        "key_config.id = key.defaultConfigId AND key_config.status = 'active'",
      )
      .leftJoin(
        SavedConfigEntity.options.name,
        'user_config',
        "user_config.id = workspace.userApiKeyConfigId AND user_config.status = 'active'",
      )
      .leftJoin(
        SavedConfigEntity.options.name,
        'workspace_config',
        "workspace_config.id = workspace.defaultConfigId AND workspace_config.status = 'active'",
      )
      .addSelect([
        'organisation.createdAt',
        'workspace.slug',
        'key_config.slug',
        'user_config.slug',
        'workspace_config.slug',
      ])
      .where('key.keyHash = :keyHash', { keyHash })
      .getRawAndEntities<{
        organisation_created_at: Date | string;
        workspace_slug: string | null;
        key_config_slug: string | null;
        user_config_slug: string | null;
        workspace_config_slug: string | null;
      }>();
    const [apiKey] = entities;
    const [row] = raw;
    if (!apiKey || !row) return null;
    return {
      apiKey,
      workspaceSlug: row.workspace_slug,
      organisationCreatedAt: new Date(row.organisation_created_at),
      defaultConfigs: {
        key: row.key_config_slug,
        userKeys: row.user_config_slug,
        workspace: row.workspace_config_slug,
      },
    };
  }

  async findApiKey(organisationId: string, id: string): Promise<ApiKey | null> {
    if (!isUuid(id)) return null;
    return this.manager.getRepository(ApiKeyEntity).findOneBy({ organisationId, id });
  }

  async listApiKeys(
    organisationId: string,
    page: { offset: number; limit: number },
    only: { workspaceId?: string | undefined; ids?: string[] | undefined } = {},
  ): Promise<[ApiKey[], number]> {
    return this.manager.getRepository(ApiKeyEntity).findAndCount({
      where: {
        organisationId,
        ...(only.workspaceId ? { workspaceId: only.workspaceId } : {}),
        ...(only.ids ? { id: In(only.ids) } : {}),
      },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** The key, its row locked until the commit. */
  async lockApiKey(id: string): Promise<ApiKey | null> {
    return this.manager
      .getRepository(ApiKeyEntity)
      .findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  /** The key as changed; null when it is no longer active. */
  async updateApiKey(id: string, changes: ApiKeyChanges): Promise<ApiKey | null> {
    const keys = this.manager.getRepository(ApiKeyEntity);
    const { affected } = await keys.update({ id, status: 'active' }, { ...changes, updatedAt: new Date() });
    return affected ? keys.findOneBy({ id }) : null;
  }

  /** Revokes the active key; false when it was revoked already (by a concurrent call too). */
  async revokeApiKey(id: string): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(ApiKeyEntity)
      .update({ id, status: 'active' }, { status: 'revoked', updatedAt: new Date() });
    return Boolean(affected);
  }

  /**
   * Revokes the user's active workspace-user keys in the organisation (only in one workspace
   * when given) and returns them as they were, so that caches can drop their hashes.
   */
  async revokeUserApiKeys(organisationId: string, userId: string, workspaceId?: string): Promise<ApiKey[]> {
    const keys = this.manager.getRepository(ApiKeyEntity);
    const where = {
      organisationId,
      userId,
      kind: 'workspace_user' as const,
      status: 'active' as const,
      ...(workspaceId ? { workspaceId } : {}),
    };
    const active = await keys.find({ where, lock: { mode: 'pessimistic_write' } });
    if (active.length === 0) return [];
    await keys.update({ id: In(active.map((key) => key.id)) }, { status: 'revoked', updatedAt: new Date() });
    return active;
  }

  /**
   * Whether the user is a member of the workspace; the membership stays share-locked until the
   * commit, so a removal running at the same time waits and then revokes what this transaction writes.
   */
  /** The member's roles in the workspace and its organisation, or null when not a member; the membership row stays locked until the transaction ends. */
  async lockWorkspaceMember(
    workspaceId: string,
    userId: string,
  ): Promise<{ workspaceRole: WorkspaceRole; organisationRole: OrganisationRole } | null> {
    const rows: Array<{ workspace_role: WorkspaceRole; organisation_role: OrganisationRole }> =
      await this.manager.query(
        `SELECT wm.role AS workspace_role, om.role AS organisation_role
           FROM control_plane.workspace_members wm
           JOIN control_plane.workspaces w ON w.id = wm.workspace_id
           JOIN control_plane.organisation_members om
             ON om.organisation_id = w.organisation_id AND om.user_id = wm.user_id
          WHERE wm.workspace_id = $1 AND wm.user_id = $2
            FOR SHARE OF wm`,
        [workspaceId, userId],
      );
    const row = rows[0];
    return row ? { workspaceRole: row.workspace_role, organisationRole: row.organisation_role } : null;
  }
}
