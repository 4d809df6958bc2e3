import { randomBytes } from 'node:crypto';
import { NotFound, type CamelKeys, type PageQuery } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { z } from 'zod';
import type { SavedConfig } from '../store/config.entities.ts';
import type { Workspace } from '../store/entities.ts';
import type { IdentityRepository } from '../store/identity.repository.ts';
import { mergeSecuritySettings } from './key-settings.ts';
import type { KeySettingsService } from './key-settings.service.ts';
import { slugFrom } from './slugs.ts';
import type { createWorkspaceBody, updateWorkspaceBody } from './workspace.schemas.ts';

/** A workspace as clients see it: defaults name the config by slug, whatever it is stored by. */
export interface WorkspaceDetails {
  workspace: Workspace;
  defaults: { userApiKeyConfig: string | null };
}

export type CreateWorkspaceInput = CamelKeys<z.output<typeof createWorkspaceBody>>;

/**
 * Absent fields stay as they are. `defaults.user_api_key_config` names a saved config of the
 * same workspace by id or slug (null clears it); `settings.user_api_key_auto_create` overrides
 * the organisation's (null follows it again); each `securitySettings` section must be open to
 * override by the organisation (null drops one).
 */
export type UpdateWorkspaceInput = CamelKeys<z.output<typeof updateWorkspaceBody>>;

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

/** An organisation's workspaces: who may see which, their defaults and security settings. */
export class WorkspaceService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly configs: SavedConfigLookup,
    private readonly keySettings: Pick<KeySettingsService, 'overridableSecuritySections'>,
    private readonly bus: EventBus,
  ) {}

  /** For callers authenticated by a token that names its workspace (JWT): the workspace, if the organisation has it. */
  resolveWorkspace(organisation: string, idOrSlug: string) {
    return this.repo.findWorkspaceWithOrganisation(organisation, idOrSlug);
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
    return { workspace, defaults: { userApiKeyConfig: null } };
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

  /** Organisation admin keys only. A default config must be an active config of the same workspace. */
  async updateWorkspace(
    principal: Principal,
    idOrSlug: string,
    changes: UpdateWorkspaceInput,
  ): Promise<WorkspaceDetails> {
    assertOrganisationAdmin(principal);
    const workspace = await this.getWorkspace(principal, idOrSlug);
    const reference = changes.defaults?.user_api_key_config;
    let userApiKeyConfigId: string | null | undefined = reference === null ? null : undefined;
    if (reference) {
      const config = await this.configs.findActiveInWorkspace(
        workspace.organisationId,
        workspace.id,
        reference,
      );
      if (!config) throw configNotInWorkspace(reference, workspace);
      userApiKeyConfigId = config.id;
    }
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
      userApiKeyAutoCreate: changes.settings?.user_api_key_auto_create,
    });
    // Archived between the lookup and the write.
    if (!updated) throw configNotInWorkspace(reference!, workspace);
    this.announceWorkspace(updated, events.ChangeAction.UPDATED);
    const [details] = await this.withDefaults([updated]);
    return details!;
  }

  /** Defaults as clients name them: a config by its current slug. */
  private async withDefaults(workspaces: Workspace[]): Promise<WorkspaceDetails[]> {
    const slugs = await this.configs.slugsByIds(
      workspaces.flatMap((workspace) => workspace.userApiKeyConfigId ?? []),
    );
    return workspaces.map((workspace) => ({
      workspace,
      defaults: {
        userApiKeyConfig: workspace.userApiKeyConfigId
          ? (slugs.get(workspace.userApiKeyConfigId) ?? null)
          : null,
      },
    }));
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

function configNotInWorkspace(reference: string, workspace: Workspace): NotFound {
  return new NotFound(`Config '${reference}' is not an active config of workspace '${workspace.slug}'.`, {
    param: USER_API_KEY_CONFIG,
  });
}
