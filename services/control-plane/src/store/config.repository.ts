import { randomUUID } from 'node:crypto';
import { In, type EntityManager, type QueryDeepPartialEntity } from 'typeorm';
import { Conflict } from '@switchyard/core';
import type { RoutingConfig } from '@switchyard/rules';
import { isUniqueViolation } from '@switchyard/adapters';
import {
  ConfigVersionEntity,
  SavedConfigEntity,
  type ConfigVersion,
  type SavedConfig,
  type SavedConfigStatus,
} from './config.entities.ts';
import { isUuid } from '../domain/ids.ts';

/*
 * TypeORM (entity repositories) for configs and versions; SQL for three statements: the
 * transaction-scoped advisory lock on a workspace's default config, the next version number
 * (max over the versions), and the workspace or API key whose default names a config (tables
 * this repository has no entity for).
 */

export interface NewSavedConfig {
  organisationId: string;
  workspaceId: string;
  name: string;
  slug: string;
  config: RoutingConfig;
  isDefault: number;
  /** Who writes: becomes the owner, the last updater and the version's author. */
  actorId: string;
}

export interface SavedConfigChanges {
  name?: string | undefined;
  config?: RoutingConfig | undefined;
  status?: SavedConfigStatus | undefined;
}

/**
 * A config that could not be archived: a default names it — a workspace's
 * (`defaults.user_api_key_config` or `defaults.config`) or an active API key's
 * (`defaults.config_id`; its slug is then null).
 */
export interface ArchiveRefused {
  defaultOf: { owner: 'workspace' | 'API key'; id: string; slug: string | null; field: string };
}

/** TypeORM's partial-row type cannot follow the `unknown` values a config document holds. */
const row = <T>(entity: T) => entity as QueryDeepPartialEntity<T>;

/** Saved routing configs and their versions. */
export class ConfigRepository {
  constructor(private readonly manager: EntityManager) {}

  transaction<T>(work: (repo: ConfigRepository) => Promise<T>): Promise<T> {
    return this.manager.transaction((manager) => work(new ConfigRepository(manager)));
  }

  /** A config and its first version, in one transaction. */
  async insert(input: NewSavedConfig): Promise<{ config: SavedConfig; version: ConfigVersion }> {
    return this.transaction(async (repo) => {
      const now = new Date();
      const { actorId, ...fields } = input;
      const version: ConfigVersion = {
        id: randomUUID(),
        configId: randomUUID(),
        version: 1,
        config: input.config,
        createdAt: now,
        createdBy: actorId,
      };
      const config: SavedConfig = {
        ...fields,
        id: version.configId,
        status: 'active',
        ownerId: actorId,
        updatedBy: actorId,
        createdAt: now,
        updatedAt: now,
        currentVersionId: version.id,
      };
      if (config.isDefault) await repo.clearDefault(config.workspaceId);
      try {
        await repo.manager.getRepository(SavedConfigEntity).insert(row(config));
      } catch (err) {
        if (isUniqueViolation(err))
          throw new Conflict(`A config with slug "${input.slug}" already exists.`, { param: 'slug' });
        throw err;
      }
      await repo.manager.getRepository(ConfigVersionEntity).insert(row(version));
      return { config, version };
    });
  }

  /**
   * Writes the next version of a config and applies the changes, in one transaction. The
   * row stays locked until the commit, so concurrent updates number their versions in turn.
   * Null when the config is gone or archived by then. An archive is refused while a
   * workspace default names the config: checked under the lock, so a default being set at
   * the same moment is either seen here or waits and then finds the config archived.
   */
  async update(
    id: string,
    changes: SavedConfigChanges,
    actorId: string,
  ): Promise<{ config: SavedConfig; version: ConfigVersion } | ArchiveRefused | null> {
    return this.transaction(async (repo) => {
      const current = await repo.manager
        .getRepository(SavedConfigEntity)
        .findOne({ where: { id, status: 'active' }, lock: { mode: 'pessimistic_write' } });
      if (!current) return null;
      if (changes.status === 'archived') {
        const [holder] = (await repo.manager.query(
          `(SELECT 'workspace' AS owner, id, slug, 'defaults.user_api_key_config' AS field
              FROM control_plane.workspaces WHERE user_api_key_config_id = $1 LIMIT 1)
           UNION ALL
           (SELECT 'workspace', id, slug, 'defaults.config'
              FROM control_plane.workspaces WHERE default_config_id = $1 LIMIT 1)
           UNION ALL
           (SELECT 'API key', id, NULL, 'defaults.config_id'
              FROM control_plane.api_keys WHERE default_config_id = $1 AND status = 'active' LIMIT 1)
           LIMIT 1`,
          [id],
        )) as ArchiveRefused['defaultOf'][];
        if (holder) return { defaultOf: holder };
      }
      const [{ last }] = (await repo.manager.query(
        `SELECT coalesce(max(version), 0)::int AS last FROM control_plane.config_versions WHERE config_id = $1`,
        [id],
      )) as [{ last: number }];
      const now = new Date();
      const version: ConfigVersion = {
        id: randomUUID(),
        configId: id,
        version: last + 1,
        config: changes.config ?? current.config,
        createdAt: now,
        createdBy: actorId,
      };
      await repo.manager.getRepository(ConfigVersionEntity).insert(row(version));
      const config: SavedConfig = {
        ...current,
        name: changes.name ?? current.name,
        status: changes.status ?? current.status,
        config: version.config,
        updatedBy: actorId,
        updatedAt: now,
        currentVersionId: version.id,
      };
      await repo.manager.getRepository(SavedConfigEntity).update(
        { id },
        row({
          name: config.name,
          status: config.status,
          config: config.config,
          updatedBy: config.updatedBy,
          updatedAt: config.updatedAt,
          currentVersionId: config.currentVersionId,
        }),
      );
      return { config, version };
    });
  }

  /** Takes the workspace's default-config lock until the commit, then unsets its default. */
  private async clearDefault(workspaceId: string): Promise<void> {
    await this.manager.query(`SELECT pg_advisory_xact_lock(hashtext('switchyard.config-default:' || $1))`, [
      workspaceId,
    ]);
    await this.manager
      .getRepository(SavedConfigEntity)
      .update({ workspaceId, isDefault: 1 }, { isDefault: 0 });
  }

  /** The slugs of these configs by id, archived ones included. */
  async slugsByIds(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const found = await this.manager
      .getRepository(SavedConfigEntity)
      .find({ where: { id: In([...ids]) }, select: { id: true, slug: true } });
    return new Map(found.map((config) => [config.id, config.slug]));
  }

  /** By id or slug within the organisation, archived ones included. */
  async find(organisationId: string, idOrSlug: string): Promise<SavedConfig | null> {
    const repo = this.manager.getRepository(SavedConfigEntity);
    return isUuid(idOrSlug)
      ? repo.findOneBy({ organisationId, id: idOrSlug })
      : repo.findOneBy({ organisationId, slug: idOrSlug });
  }

  /** The active config of one workspace; ids that are not UUIDs match nothing and never reach Postgres. */
  async findActiveInWorkspace(
    organisationId: string,
    workspaceId: string,
    idOrSlug: string,
  ): Promise<SavedConfig | null> {
    if (!isUuid(organisationId) || !isUuid(workspaceId)) return null;
    const scope = { organisationId, workspaceId, status: 'active' } as const;
    return this.manager
      .getRepository(SavedConfigEntity)
      .findOneBy(isUuid(idOrSlug) ? { ...scope, id: idOrSlug } : { ...scope, slug: idOrSlug });
  }

  /** Active configs, oldest first; of one workspace when given. */
  async listActive(
    organisationId: string,
    page: { offset: number; limit: number },
    workspaceId?: string,
  ): Promise<[SavedConfig[], number]> {
    return this.manager.getRepository(SavedConfigEntity).findAndCount({
      where: { organisationId, status: 'active', ...(workspaceId ? { workspaceId } : {}) },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /** Newest first. */
  async listVersions(
    configId: string,
    page: { offset: number; limit: number },
  ): Promise<[ConfigVersion[], number]> {
    return this.manager.getRepository(ConfigVersionEntity).findAndCount({
      where: { configId },
      order: { version: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
  }
}
