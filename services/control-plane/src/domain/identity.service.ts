import { randomBytes } from 'node:crypto';
import {
  assertOrganisationAdmin,
  Conflict,
  Forbidden,
  NotFound,
  BadRequest,
  publishChange,
  scopesForKind,
  type EventBus,
  type Logger,
  type PageQuery,
  type Principal,
  type Scope,
} from '@switchyard/platform';
import { events } from '@switchyard/proto';
import type { SavedConfig } from '../store/config.entities.ts';
import type { IdentityRepository } from '../store/identity.repository.ts';
import type { KeySettingName, KeySettingValues } from '../store/key-settings.repository.ts';
import type { ApiKey, Organisation, Workspace } from '../store/entities.ts';
import {
  generateApiKey,
  grantedScopes,
  isUsable,
  keyMaterialOf,
  kindFor,
  nextRotationAfter,
  rotationSchedule,
  toPrincipal,
  userScopeCeiling,
  type RotationPolicy,
} from './api-keys.ts';
import {
  autoCreatedScopes,
  autoCreatesUserKeys,
  enforceRotation,
  mergeSecuritySettings,
} from './key-settings.ts';
import { slugFrom } from './slugs.ts';

export interface BootstrapResult {
  created: boolean;
  organisation: Organisation;
  workspace: Workspace | null;
  /** Present only when this call generated the key (it is never stored in clear). */
  adminKey?: string;
  workspaceKey?: string;
}

export interface CreateApiKeyInput {
  type: 'organisation' | 'workspace';
  subType: 'service' | 'user';
  name: string;
  description?: string | undefined;
  workspaceId?: string | undefined;
  /** Absent: every scope the key's kind (and, for a user key, the user's role) allows. */
  scopes?: string[] | undefined;
  expiresAt?: Date | undefined;
  userId?: string | undefined;
  rotationPolicy?: RotationPolicy | undefined;
}

/** Absent fields stay as they are; null clears. */
export interface UpdateApiKeyInput {
  name?: string | undefined;
  description?: string | null | undefined;
  scopes?: string[] | undefined;
  expiresAt?: Date | null | undefined;
  /** Replaces the policy as a whole. */
  rotationPolicy?: RotationPolicy | null | undefined;
}

/** A workspace as clients see it: defaults name the config by slug, whatever it is stored by. */
export interface WorkspaceDetails {
  workspace: Workspace;
  defaults: { userApiKeyConfig: string | null };
}

export interface UpdateWorkspaceInput {
  name?: string | undefined;
  /** Null clears it. */
  description?: string | null | undefined;
  /** A saved config of the same workspace, by id or slug; null clears the default. */
  userApiKeyConfig?: string | null | undefined;
  /** Overrides the organisation's user_api_key_auto_create; null follows it again. */
  userApiKeyAutoCreate?: boolean | null | undefined;
  /** Sections to set (null drops one); each must be open to override by the organisation. */
  securitySettings?: Record<string, object | string | number | boolean | null> | undefined;
}

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

/** Organisations, workspaces and API keys: the rules, over the repository. */
export class IdentityService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly configs: SavedConfigLookup,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly apiKeyPrefix: string,
    /** Bearer credentials that are not API keys (OAuth access tokens), resolved by hash like keys. */
    private readonly accessTokens?: { resolveAccessToken(hash: string): Promise<Principal | null> },
  ) {}

  /** The caller an API key's hash names, or else an OAuth access token's: every service resolves both here. */
  async resolveApiKey(keyHash: string): Promise<Principal | null> {
    const found = await this.repo.findApiKeyWithOwnersByHash(keyHash);
    if (found) return isUsable(found.apiKey) ? toPrincipal(found) : null;
    return (await this.accessTokens?.resolveAccessToken(keyHash)) ?? null;
  }

  /** For callers authenticated by a token that names its workspace (JWT): the workspace, if the organisation has it. */
  resolveWorkspace(organisation: string, idOrSlug: string) {
    return this.repo.findWorkspaceWithOrganisation(organisation, idOrSlug);
  }

  /**
   * Creates the first organisation, its default workspace and an admin key, once. Safe to
   * run from several replicas at the same time.
   */
  async bootstrap(options: {
    adminKey?: string | undefined;
    withWorkspaceKey: boolean;
  }): Promise<BootstrapResult> {
    return this.repo.transaction(async (repo) => {
      await repo.lockBootstrap();
      const existing = await repo.firstOrganisation();
      if (existing) return { created: false, organisation: existing, workspace: null };
      const organisation = await repo.createOrganisation('Default organisation', 'default');
      const workspace = await repo.createWorkspace({
        organisationId: organisation.id,
        name: 'Default workspace',
        slug: 'default',
        description: null,
      });
      const generated = options.adminKey ? undefined : generateApiKey(this.apiKeyPrefix);
      const adminKey = options.adminKey ?? generated!.key;
      await repo.insertApiKey({
        organisationId: organisation.id,
        workspaceId: null,
        kind: 'organisation_admin',
        name: 'Bootstrap admin key',
        description: 'Created when the organisation was bootstrapped.',
        scopes: [...scopesForKind('organisation_admin')],
        userId: null,
        expiresAt: null,
        ...keyMaterialOf(adminKey, this.apiKeyPrefix),
      });
      let workspaceKey: string | undefined;
      if (options.withWorkspaceKey) {
        const material = generateApiKey(this.apiKeyPrefix);
        await repo.insertApiKey({
          organisationId: organisation.id,
          workspaceId: workspace.id,
          kind: 'workspace_service',
          name: 'Default workspace key',
          description: null,
          scopes: [...scopesForKind('workspace_service')],
          userId: null,
          expiresAt: null,
          keyHash: material.keyHash,
          keyHint: material.keyHint,
        });
        workspaceKey = material.key;
      }
      this.logger.info('bootstrapped organisation', {
        organisation_id: organisation.id,
        workspace_id: workspace.id,
      });
      return { created: true, organisation, workspace, adminKey: generated?.key, workspaceKey };
    });
  }

  async createWorkspace(
    principal: Principal,
    input: { name: string; slug?: string | undefined; description?: string | undefined },
  ): Promise<WorkspaceDetails> {
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
    const reference = changes.userApiKeyConfig;
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
            (await this.repo.keySettings.find(workspace.organisationId))
              .workspace_security_settings_override ?? [],
          );
    const updated = await this.repo.updateWorkspace(workspace.id, {
      securitySettings,
      name: changes.name,
      description: changes.description,
      userApiKeyConfigId,
      userApiKeyAutoCreate: changes.userApiKeyAutoCreate,
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

  async createApiKey(
    principal: Principal,
    input: CreateApiKeyInput,
  ): Promise<{ apiKey: ApiKey; key: string }> {
    assertOrganisationAdmin(principal);
    if (input.type === 'organisation' && input.subType !== 'service') {
      throw new BadRequest('Organisation keys are service keys: use /v2/api-keys/organisation/service.', {
        param: 'sub-type',
      });
    }
    const isUserKey = input.subType === 'user';
    if (isUserKey && !input.userId) {
      throw new BadRequest('user_id is required for a user key: the member of the workspace it acts for.', {
        param: 'user_id',
      });
    }
    if (!isUserKey && input.userId) {
      throw new BadRequest('Only a user key belongs to a user: leave out user_id for a service key.', {
        param: 'user_id',
      });
    }
    let workspace: Workspace | null = null;
    if (input.type === 'workspace') {
      if (!input.workspaceId)
        throw new BadRequest('workspace_id is required for a workspace key.', { param: 'workspace_id' });
      workspace = await this.getWorkspace(principal, input.workspaceId);
    }
    const now = new Date();
    assertFuture(input.expiresAt, now, 'expires_at');
    const enforcedDays = isUserKey ? await this.enforcedRotationDays(principal.organisationId) : null;
    const schedule = this.rotationScheduleFor(
      enforceRotation(input.rotationPolicy, enforcedDays) ?? null,
      now,
    );
    const material = generateApiKey(this.apiKeyPrefix);
    const apiKey = await this.repo.transaction(async (repo) => {
      // Held until the key is written, so that removing the member at the same time also revokes it.
      const member = isUserKey ? await repo.lockWorkspaceMember(workspace!.id, input.userId!) : null;
      if (isUserKey && !member) {
        throw new NotFound(`User '${input.userId}' is not a member of workspace '${workspace!.slug}'.`, {
          param: 'user_id',
        });
      }
      const kind = kindFor(input.type, input.subType);
      return repo.insertApiKey({
        organisationId: principal.organisationId,
        workspaceId: workspace?.id ?? null,
        kind,
        name: input.name,
        description: input.description ?? null,
        scopes: grantedScopes(kind, input.scopes, member ? userScopeCeiling(member) : undefined),
        userId: input.userId ?? null,
        expiresAt: input.expiresAt ?? null,
        keyHash: material.keyHash,
        keyHint: material.keyHint,
        ...schedule,
      });
    });
    return { apiKey, key: material.key };
  }

  async getApiKey(principal: Principal, id: string): Promise<ApiKey> {
    const apiKey = await this.repo.findApiKey(principal.organisationId, id);
    if (!apiKey || (principal.workspaceId && apiKey.workspaceId !== principal.workspaceId)) {
      throw new NotFound(`API key '${id}' not found.`);
    }
    return apiKey;
  }

  /** The caller's keys (a workspace key's: its workspace's), only those of `ids` when given. */
  listApiKeys(principal: Principal, page: PageQuery, ids?: string[]): Promise<[ApiKey[], number]> {
    return this.repo.listApiKeys(principal.organisationId, page, {
      workspaceId: principal.workspaceId ?? undefined,
      ids,
    });
  }

  /** Organisation admin keys only. Caches holding the key drop it, so new scopes and expiry apply at once. */
  async updateApiKey(principal: Principal, id: string, changes: UpdateApiKeyInput): Promise<ApiKey> {
    assertOrganisationAdmin(principal);
    const current = await this.getApiKey(principal, id);
    if (current.status !== 'active') throw revoked(current);
    const now = new Date();
    assertFuture(changes.expiresAt, now, 'expires_at');
    const enforcedDays =
      current.kind === 'workspace_user' && changes.rotationPolicy !== undefined
        ? await this.enforcedRotationDays(current.organisationId)
        : null;
    const schedule =
      changes.rotationPolicy === undefined
        ? {}
        : this.rotationScheduleFor(enforceRotation(changes.rotationPolicy, enforcedDays) ?? null, now);
    const scopes = changes.scopes === undefined ? undefined : await this.scopesFor(current, changes.scopes);
    const updated = await this.repo.updateApiKey(current.id, {
      name: changes.name,
      description: changes.description,
      scopes,
      expiresAt: changes.expiresAt,
      ...schedule,
    });
    if (!updated) throw revoked(current);
    this.announceApiKey(updated, events.ChangeAction.UPDATED, updated.keyHash);
    return updated;
  }

  /** The organisation's key provisioning and rotation choices (absent = default). */
  keySettings(organisationId: string): Promise<KeySettingValues> {
    return this.repo.keySettings.find(organisationId);
  }

  /** Stores the set fields and drops the cleared ones; admin's organisation settings call this. */
  updateKeySettings(
    organisationId: string,
    set: KeySettingValues,
    clear: readonly KeySettingName[],
    updatedBy: string,
  ): Promise<KeySettingValues> {
    return this.repo.keySettings.update(organisationId, set, clear, updatedBy);
  }

  private async enforcedRotationDays(organisationId: string): Promise<number | null> {
    return (await this.repo.keySettings.find(organisationId)).user_api_key_rotation_period ?? null;
  }

  /**
   * Gives each member who just joined `workspace` a workspace-user key when the workspace (or
   * its organisation) auto-creates them: the organisation's auto-create scopes within the
   * member's role, the enforced rotation period. The secret is not shown to anyone; the user
   * rotates the key to get one. A member removed in the meantime gets none.
   */
  async provisionUserKeys(workspace: Workspace, userIds: readonly string[]): Promise<ApiKey[]> {
    const settings = await this.repo.keySettings.find(workspace.organisationId);
    if (!autoCreatesUserKeys(workspace, settings)) return [];
    const rotation = settings.user_api_key_rotation_period ?? null;
    const now = new Date();
    const created: ApiKey[] = [];
    for (const userId of userIds) {
      const apiKey = await this.repo.transaction(async (repo) => {
        const member = await repo.lockWorkspaceMember(workspace.id, userId);
        if (!member) return null;
        const ceiling = new Set<string>(userScopeCeiling(member));
        const material = generateApiKey(this.apiKeyPrefix);
        return repo.insertApiKey({
          organisationId: workspace.organisationId,
          workspaceId: workspace.id,
          kind: 'workspace_user',
          name: 'Auto-created user key',
          description: `Created when the user joined workspace '${workspace.slug}'.`,
          scopes: autoCreatedScopes(settings).filter((scope) => ceiling.has(scope)),
          userId,
          expiresAt: null,
          keyHash: material.keyHash,
          keyHint: material.keyHint,
          ...rotationSchedule({ periodDays: rotation, nextRotationAt: null }, now),
        });
      });
      if (apiKey) {
        created.push(apiKey);
        this.announceApiKey(apiKey, events.ChangeAction.CREATED, apiKey.keyHash);
      }
    }
    return created;
  }

  /** New scopes for an existing key, checked as at creation (a user key's against the user's current role). */
  private async scopesFor(apiKey: ApiKey, requested: string[]): Promise<Scope[]> {
    if (apiKey.kind !== 'workspace_user' || !apiKey.workspaceId || !apiKey.userId) {
      return grantedScopes(apiKey.kind, requested);
    }
    const member = await this.repo.lockWorkspaceMember(apiKey.workspaceId, apiKey.userId);
    if (!member) throw revoked(apiKey);
    return grantedScopes(apiKey.kind, requested, userScopeCeiling(member));
  }

  /**
   * A new secret for the same key: shown once in the result, and the old secret stops working
   * at once (every cache holding it drops it on the change event, and no lookup finds it). A
   * policy's next rotation moves to one period after now. Organisation admin keys only.
   */
  async rotateApiKey(
    principal: Principal,
    id: string,
  ): Promise<{ apiKey: ApiKey; key: string; rotatedAt: Date }> {
    assertOrganisationAdmin(principal);
    const found = await this.getApiKey(principal, id);
    const material = generateApiKey(this.apiKeyPrefix);
    const rotatedAt = new Date();
    const { apiKey, previousHash } = await this.repo.transaction(async (repo) => {
      // Under the row lock, so that of two concurrent rotations each drops the secret it replaced.
      const current = await repo.lockApiKey(found.id);
      if (!current || current.status !== 'active') throw revoked(found);
      if (!isUsable(current, rotatedAt.getTime())) {
        throw new Conflict(`API key '${found.id}' has expired: set a later expires_at before rotating it.`, {
          code: 'api_key_expired',
        });
      }
      const rotated = await repo.updateApiKey(current.id, {
        keyHash: material.keyHash,
        keyHint: material.keyHint,
        nextRotationAt: nextRotationAfter(current, rotatedAt),
      });
      return { apiKey: rotated!, previousHash: current.keyHash };
    });
    this.announceApiKey(apiKey, events.ChangeAction.UPDATED, previousHash);
    return { apiKey, key: material.key, rotatedAt };
  }

  /** Revokes at once: every cache holding the key drops it on the change event. */
  async revokeApiKey(principal: Principal, id: string): Promise<void> {
    assertOrganisationAdmin(principal);
    const apiKey = await this.getApiKey(principal, id);
    if (apiKey.id === principal.apiKeyId) throw new Forbidden('An API key cannot revoke itself.');
    // Only the call that revoked it announces it; a repeated or concurrent one has nothing to do.
    if (!(await this.repo.revokeApiKey(apiKey.id))) return;
    this.announceApiKey(apiKey, events.ChangeAction.DELETED, apiKey.keyHash);
  }

  /** Keys revoked along with a membership: every cache holding one drops it, as on DELETE /v2/api-keys/:id. */
  announceRevoked(apiKeys: readonly ApiKey[]): void {
    for (const apiKey of apiKeys) this.announceApiKey(apiKey, events.ChangeAction.DELETED, apiKey.keyHash);
  }

  /**
   * Checks a policy's own next_rotation_at and turns it into the schedule to store; null is
   * no policy. Organisation-enforced rotation belongs here too: a policy that differs from the
   * organisation's user_api_key_rotation_period is refused, and so is a next_rotation_at set
   * by hand while rotation is enforced. Organisation settings live in the admin service, which
   * this service does not call yet, so no period is enforced.
   */
  private rotationScheduleFor(policy: RotationPolicy | null, now: Date) {
    if (!policy) return { rotationPeriodDays: null, nextRotationAt: null };
    assertFuture(policy.nextRotationAt, now, 'rotation_policy.next_rotation_at');
    return rotationSchedule(policy, now);
  }

  /** Every cache keyed by `keyHash` drops its entry: the next use of that secret resolves afresh. */
  private announceApiKey(apiKey: ApiKey, action: events.ChangeAction, keyHash: string): void {
    publishChange(this.bus, {
      entity: 'api_key',
      entityId: apiKey.id,
      organisationId: apiKey.organisationId,
      workspaceId: apiKey.workspaceId ?? '',
      action,
      cacheKey: keyHash,
    });
  }
}

function configNotInWorkspace(reference: string, workspace: Workspace): NotFound {
  return new NotFound(`Config '${reference}' is not an active config of workspace '${workspace.slug}'.`, {
    param: USER_API_KEY_CONFIG,
  });
}

function assertFuture(date: Date | null | undefined, now: Date, param: string): void {
  if (date && date.getTime() <= now.getTime()) {
    throw new BadRequest(`${param} must be in the future.`, { param });
  }
}

function revoked(apiKey: ApiKey): Conflict {
  return new Conflict(`API key '${apiKey.id}' is revoked: it can no longer change.`, {
    code: 'api_key_revoked',
  });
}
