import { randomBytes } from 'node:crypto';
import { BadRequest, Conflict, NotFound, type CamelKeys, type PageQuery } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { z } from 'zod';
import type { SavedConfig } from '../store/config.entities.ts';
import type { Organisation, Workspace } from '../store/entities.ts';
import type { IdentityRepository } from '../store/identity.repository.ts';
import { mergeSecuritySettings } from './key-settings.ts';
import type { KeySettingsService } from './key-settings.service.ts';
import { slugFrom } from './slugs.ts';
import type { ArchivedWorkspace } from '../store/workspace-archive.repository.ts';
import type { createWorkspaceBody, deleteWorkspaceBody, updateWorkspaceBody } from './workspace.schemas.ts';

/**
 * A workspace as clients see it: defaults name configs by slug, whatever they are stored by.
 * `userApiKeyConfig` applies to its user keys without a default config of their own, `config`
 * to every key without one (after `userApiKeyConfig` for user keys).
 */
export interface WorkspaceDetails {
  workspace: Workspace;
  defaults: { userApiKeyConfig: string | null; config: string | null };
}

export type CreateWorkspaceInput = CamelKeys<z.output<typeof createWorkspaceBody>>;

/**
 * Absent fields stay as they are. `defaults.user_api_key_config` and `defaults.config` name a
 * saved config of the same workspace by id or slug (null clears one); `settings.user_api_key_auto_create` overrides
 * the organisation's (null follows it again); each `securitySettings` section must be open to
 * override by the organisation (null drops one).
 */
export type UpdateWorkspaceInput = CamelKeys<z.output<typeof updateWorkspaceBody>>;

export type DeleteWorkspaceInput = CamelKeys<z.output<typeof deleteWorkspaceBody>>;

/** What workspace defaults need of saved configs. */
export interface SavedConfigLookup {
  findActiveInWorkspace(
    organisationId: string,
    workspaceId: string,
    idOrSlug: string,
  ): Promise<SavedConfig | null>;
  slugsByIds(ids: readonly string[]): Promise<Map<string, string>>;
}

const USER_API_KEY_CONFIG = 'defaults.user_api_key_config';
const DEFAULT_CONFIG = 'defaults.config';

/** The workspace an organisation starts with; see key-settings.ts. */
const DEFAULT_WORKSPACE_SLUG = 'default';

/** An organisation's workspaces: who may see which, their defaults and security settings. */
export class WorkspaceService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly configs: SavedConfigLookup,
    private readonly keySettings: Pick<KeySettingsService, 'overridableSecuritySections'>,
    private readonly bus: EventBus,
  ) {}

  /**
   * For callers authenticated by a token that names its workspace (JWT): the workspace, if the
   * organisation has it, and the slug of its default config (null for none), which such callers'
   * requests run with when they name no config or provider.
   */
  async resolveWorkspace(
    organisation: string,
    idOrSlug: string,
  ): Promise<{ workspace: Workspace; organisation: Organisation; defaultConfig: string | null } | null> {
    const found = await this.repo.findWorkspaceWithOrganisation(organisation, idOrSlug);
    if (!found) return null;
    const defaultConfig = found.workspace.defaultConfigId
      ? await this.repo.workspaceDefaultConfig(found.workspace.id)
      : null;
    return { ...found, defaultConfig };
  }

  async createWorkspace(principal: Principal, input: CreateWorkspaceInput): Promise<WorkspaceDetails> {
    assertOrganisationAdmin(principal);
    const workspace = await this.repo.createWorkspace({
      organisationId: principal.organisationId,
      name: input.name,
      slug: input.slug ?? slugFrom(input.name, randomBytes(3).toString('hex')),
      description: input.description ?? null,
    });
    this.announceWorkspace(workspace, events.ChangeAction.CREATED);
    return { workspace, defaults: { userApiKeyConfig: null, config: null } };
  }

  /** A workspace key sees only its own workspace; anything else is "not found". */
  async getWorkspace(principal: Principal, idOrSlug: string): Promise<Workspace> {
    const workspace = await this.repo.findWorkspace(principal.organisationId, idOrSlug);
    if (!workspace || (principal.workspaceId && workspace.id !== principal.workspaceId)) {
      throw new NotFound(`Workspace '${idOrSlug}' not found.`);
    }
    return workspace;
  }

  async showWorkspace(principal: Principal, idOrSlug: string): Promise<WorkspaceDetails> {
    const [details] = await this.withDefaults([await this.getWorkspace(principal, idOrSlug)]);
    return details!;
  }

  async listWorkspaces(principal: Principal, page: PageQuery): Promise<[WorkspaceDetails[], number]> {
    const [workspaces, total] = await this.repo.listWorkspaces(
      principal.organisationId,
      page,
      principal.workspaceId ?? undefined,
    );
    return [await this.withDefaults(workspaces), total];
  }

  /**
   * Organisation admin keys only. A default config must be an active config of the same
   * workspace. A change of defaults is announced with the workspace: gateways drop the keys of
   * the workspace they hold, whose principals carry the defaults.
   */
  async updateWorkspace(
    principal: Principal,
    idOrSlug: string,
    changes: UpdateWorkspaceInput,
  ): Promise<WorkspaceDetails> {
    assertOrganisationAdmin(principal);
    const workspace = await this.getWorkspace(principal, idOrSlug);
    const userApiKeyConfigId = await this.defaultConfigId(
      workspace,
      changes.defaults?.user_api_key_config,
      USER_API_KEY_CONFIG,
    );
    const defaultConfigId = await this.defaultConfigId(workspace, changes.defaults?.config, DEFAULT_CONFIG);
    const securitySettings =
      changes.securitySettings === undefined
        ? undefined
        : mergeSecuritySettings(
            workspace.securitySettings,
            changes.securitySettings,
            await this.keySettings.overridableSecuritySections(workspace.organisationId),
          );
    const updated = await this.repo.updateWorkspace(workspace.id, {
      securitySettings,
      name: changes.name,
      description: changes.description,
      userApiKeyConfigId,
      defaultConfigId,
      userApiKeyAutoCreate: changes.settings?.user_api_key_auto_create,
    });
    // Archived between the lookup and the write.
    if (!updated) {
      const [reference, param] = changes.defaults?.user_api_key_config
        ? [changes.defaults.user_api_key_config, USER_API_KEY_CONFIG]
        : [changes.defaults?.config ?? '', DEFAULT_CONFIG];
      throw configNotInWorkspace(reference, workspace, param);
    }
    this.announceWorkspace(updated, events.ChangeAction.UPDATED);
    const [details] = await this.withDefaults([updated]);
    return details!;
  }

  /**
   * Deletes a workspace: organisation admin keys only; a workspace of another organisation is
   * "not found", as is one deleted already (of concurrent deletes, one succeeds).
   *
   * Blocks (409): the organisation's default workspace (slug `default`, the one the
   * organisation starts with and `default_workspace_user_api_key_auto_create` speaks of); and
   * a workspace that shares prompts or partials with other workspaces (code
   * `workspace_has_shared_prompts`, naming them): they must be unshared first. That check runs
   * in the delete's transaction with the workspace row locked, a lock every share takes too, so
   * a share made meanwhile is either seen or waits and finds the workspace gone. Nothing else
   * blocks: a workspace's default config must be one of its own configs, its configs name
   * guardrails of their own workspace or of the organisation, and its policies, keys, members,
   * tokens and sessions are its own.
   *
   * Cascades, in one transaction with the workspace row locked: the workspace is archived (no
   * get, list, key or JWT finds it again, and its slug is free); its API keys are revoked, its
   * OAuth tokens and browser sessions too; its configs, guardrails, rate-limit and usage-limit
   * policies are archived by the same repository writes their own deletes use; its members
   * are removed; its prompts and partials are archived, and the shares of other workspaces'
   * prompts with it removed. After the commit each change is announced as the per-item deletes announce
   * it, so gateways drop the keys, tokens, configs, guardrails and policies they hold at once.
   *
   * Left alone: integrations (admin service), whose workspace access may still name the
   * workspace. Control-plane has no path to admin, and such access is harmless: nothing can
   * authenticate into an archived workspace any more.
   */
  async deleteWorkspace(principal: Principal, idOrSlug: string, input: DeleteWorkspaceInput): Promise<void> {
    assertOrganisationAdmin(principal);
    const workspace = await this.getWorkspace(principal, idOrSlug);
    if (input.name !== undefined && input.name !== workspace.name) {
      throw new BadRequest(`name must be the workspace's name, '${workspace.name}', to delete it.`, {
        param: 'name',
      });
    }
    if (workspace.slug === DEFAULT_WORKSPACE_SLUG) {
      throw new Conflict(
        `Workspace '${workspace.slug}' is the organisation's default workspace and cannot be deleted.`,
        { code: 'default_workspace' },
      );
    }
    const archived = await this.repo.archiveWorkspace(workspace.id, principal.userId ?? principal.apiKeyId);
    if (!archived) throw new NotFound(`Workspace '${idOrSlug}' not found.`);
    this.announceArchived(archived);
  }

  /** The id of the config a default names (undefined: unchanged, null: cleared), checked to be an active config of the workspace. */
  private async defaultConfigId(
    workspace: Workspace,
    reference: string | null | undefined,
    param: string,
  ): Promise<string | null | undefined> {
    if (!reference) return reference === null ? null : undefined;
    const config = await this.configs.findActiveInWorkspace(
      workspace.organisationId,
      workspace.id,
      reference,
    );
    if (!config) throw configNotInWorkspace(reference, workspace, param);
    return config.id;
  }

  /** Defaults as clients name them: a config by its current slug. */
  private async withDefaults(workspaces: Workspace[]): Promise<WorkspaceDetails[]> {
    const slugs = await this.configs.slugsByIds(
      workspaces
        .flatMap((workspace) => [workspace.userApiKeyConfigId, workspace.defaultConfigId])
        .flatMap((id) => id ?? []),
    );
    const slugOf = (id: string | null) => (id ? (slugs.get(id) ?? null) : null);
    return workspaces.map((workspace) => ({
      workspace,
      defaults: {
        userApiKeyConfig: slugOf(workspace.userApiKeyConfigId),
        config: slugOf(workspace.defaultConfigId),
      },
    }));
  }

  /** Each change as its own delete announces it: caches keyed by a key's or token's hash, a config's or guardrail's slug, drop them. */
  private announceArchived(archived: ArchivedWorkspace): void {
    const { workspace } = archived;
    const deleted = events.ChangeAction.DELETED;
    const owner = { organisationId: workspace.organisationId, workspaceId: workspace.id, action: deleted };
    const changes: Array<{ entity: string; entityId: string; cacheKey?: string }> = [
      ...archived.apiKeys.map((k) => ({ entity: 'api_key', entityId: k.id, cacheKey: k.keyHash })),
      ...archived.oauthTokens.map((t) => ({ entity: 'oauth_token', entityId: t.id, cacheKey: t.tokenHash })),
      // Sessions are announced as api_key changes keyed by their hash, as closing one is.
      ...archived.sessions.map((s) => ({ entity: 'api_key', entityId: workspace.id, cacheKey: s.tokenHash })),
      ...archived.configs.map((c) => ({
        entity: 'config',
        entityId: c.id,
        cacheKey: `${c.organisationId}:${c.slug}`,
      })),
      ...archived.guardrails.map((g) => ({
        entity: 'guardrail',
        entityId: g.id,
        cacheKey: `${g.organisationId}:${g.slug}`,
      })),
      ...archived.policies.map((p) => ({ entity: 'policy', entityId: p.id, cacheKey: p.organisationId })),
      ...archived.members.map((userId) => ({ entity: 'workspace_member', entityId: userId })),
      ...archived.prompts.map((p) => ({
        entity: p.kind === 'prompt' ? 'prompt' : 'prompt_partial',
        entityId: p.id,
        cacheKey: `${p.organisationId}:${p.slug}`,
      })),
    ];
    for (const change of changes) publishChange(this.bus, { ...owner, ...change });
    this.announceWorkspace(workspace, deleted);
  }

  private announceWorkspace(workspace: Workspace, action: events.ChangeAction): void {
    publishChange(this.bus, {
      entity: 'workspace',
      entityId: workspace.id,
      organisationId: workspace.organisationId,
      workspaceId: workspace.id,
      action,
    });
  }
}

function configNotInWorkspace(reference: string, workspace: Workspace, param: string): NotFound {
  return new NotFound(`Config '${reference}' is not an active config of workspace '${workspace.slug}'.`, {
    param,
  });
}
