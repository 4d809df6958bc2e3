import { randomBytes } from 'node:crypto';
import { BadRequest, Conflict, NotFound, type PageQuery, type CamelKeys } from '@switchyard/core';
import type { RoutingConfig } from '@switchyard/rules';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { z } from 'zod';
import type { ConfigVersion, SavedConfig } from '../store/config.entities.ts';
import type { ArchiveRefused, ConfigRepository } from '../store/config.repository.ts';
import type { WorkspaceService } from './workspace.service.ts';
import type { createConfigBody, updateConfigBody } from './config.schemas.ts';
import { assertGuardrailsExist, type GuardrailLookup } from './saved-config.ts';
import { configSlugFrom } from './slugs.ts';

/**
 * The body as sent, its config document parsed (see parseSavedConfig). `workspaceId` is
 * required with an organisation admin key; a workspace key's own workspace otherwise.
 */
export type CreateConfigInput = Omit<CamelKeys<z.output<typeof createConfigBody>>, 'config'> & {
  config: RoutingConfig;
};

/** Absent fields stay as they are; a config document given is parsed (see parseSavedConfig). */
export type UpdateConfigInput = Omit<CamelKeys<z.output<typeof updateConfigBody>>, 'config'> & {
  config?: RoutingConfig | undefined;
};

export interface ConfigWrite {
  config: SavedConfig;
  version: ConfigVersion;
}

/**
 * Saved routing configs: a workspace key works within its workspace, an organisation admin
 * key within any workspace of its organisation. Anything else is "not found".
 */
export class ConfigService {
  constructor(
    private readonly repo: ConfigRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly bus: EventBus,
    /** Whether a config may name a guardrail. */
    private readonly guardrailUsable: GuardrailLookup,
  ) {}

  async create(principal: Principal, input: CreateConfigInput): Promise<ConfigWrite> {
    const workspaceId = await this.workspaceFor(principal, input.workspaceId);
    await assertGuardrailsExist(input.config, principal.organisationId, workspaceId, this.guardrailUsable);
    const written = await this.repo.insert({
      organisationId: principal.organisationId,
      workspaceId,
      name: input.name,
      slug: input.slug ?? configSlugFrom(input.name, randomBytes(3).toString('hex')),
      config: input.config,
      isDefault: input.isDefault ? 1 : 0,
      actorId: actorOf(principal),
    });
    this.publish(written.config, events.ChangeAction.CREATED);
    return written;
  }

  /** By id or slug; archived configs are not found. */
  async get(principal: Principal, idOrSlug: string): Promise<SavedConfig> {
    const config = await this.repo.find(principal.organisationId, idOrSlug);
    if (
      !config ||
      config.status !== 'active' ||
      (principal.workspaceId !== null && config.workspaceId !== principal.workspaceId)
    ) {
      throw new NotFound(`Config '${idOrSlug}' not found.`);
    }
    return config;
  }

  /** The caller's workspace; an organisation admin key sees every workspace unless it names one. */
  async list(principal: Principal, page: PageQuery, workspaceId?: string): Promise<[SavedConfig[], number]> {
    const only = workspaceId
      ? (await this.workspaces.getWorkspace(principal, workspaceId)).id
      : (principal.workspaceId ?? undefined);
    return this.repo.listActive(principal.organisationId, page, only);
  }

  /** Every update writes a version, also one that changes only the name or status. */
  async update(principal: Principal, idOrSlug: string, changes: UpdateConfigInput): Promise<ConfigWrite> {
    const found = await this.get(principal, idOrSlug);
    if (changes.config) {
      await assertGuardrailsExist(
        changes.config,
        principal.organisationId,
        found.workspaceId,
        this.guardrailUsable,
      );
    }
    // Archiving (by DELETE, or by PUT with status archived: both come here) is refused while a
    // workspace's or an API key's default names this config, until that default is cleared.
    const written = await this.repo.update(found.id, changes, actorOf(principal));
    if (!written) throw new NotFound(`Config '${idOrSlug}' not found.`);
    if ('defaultOf' in written) {
      throw new Conflict(
        `Config '${found.slug}' is the ${written.defaultOf.field} of ${describeHolder(written.defaultOf)}: clear that default before archiving the config.`,
        { code: 'config_in_use' },
      );
    }
    const archived = written.config.status === 'archived';
    this.publish(written.config, archived ? events.ChangeAction.DELETED : events.ChangeAction.UPDATED);
    return written;
  }

  /** Archives: the config is no longer found, and its slug stays taken. */
  async archive(principal: Principal, idOrSlug: string): Promise<void> {
    await this.update(principal, idOrSlug, { status: 'archived' });
  }

  async listVersions(
    principal: Principal,
    idOrSlug: string,
    page: PageQuery,
  ): Promise<{ config: SavedConfig; versions: ConfigVersion[]; total: number }> {
    const config = await this.get(principal, idOrSlug);
    const [versions, total] = await this.repo.listVersions(config.id, page);
    return { config, versions, total };
  }

  /** What the gateway runs: the active config of the caller's workspace, or null. */
  findForWorkspace(
    organisationId: string,
    workspaceId: string,
    idOrSlug: string,
  ): Promise<SavedConfig | null> {
    return this.repo.findActiveInWorkspace(organisationId, workspaceId, idOrSlug);
  }

  private async workspaceFor(principal: Principal, requested: string | undefined): Promise<string> {
    if (requested) return (await this.workspaces.getWorkspace(principal, requested)).id;
    if (principal.workspaceId) return principal.workspaceId;
    throw new BadRequest('workspace_id is required with an organisation admin key.', {
      param: 'workspace_id',
    });
  }

  /** Gateways key saved configs by slug and by id: the event names both. */
  private publish(config: SavedConfig, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: 'config',
      entityId: config.id,
      organisationId: config.organisationId,
      workspaceId: config.workspaceId,
      action,
      cacheKey: `${config.organisationId}:${config.slug}`,
    });
  }
}

/** The user behind a user key, else the key itself. */
function actorOf(principal: Principal): string {
  return principal.userId ?? principal.apiKeyId;
}

/** Who holds a default naming a config, as an error names it. */
function describeHolder(holder: ArchiveRefused['defaultOf']): string {
  return holder.slug === null
    ? `${holder.owner} '${holder.id}'`
    : `${holder.owner} '${holder.slug}' (${holder.id})`;
}
