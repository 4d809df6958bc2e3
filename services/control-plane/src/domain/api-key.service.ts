import { Conflict, Forbidden, NotFound, BadRequest, type CamelKeys, type PageQuery } from '@switchyard/core';
import { assertOrganisationAdmin, callerDefaults, type Principal, type Scope } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { z } from 'zod';
import type { ApiKey, Workspace } from '../store/entities.ts';
import type { IdentityRepository } from '../store/identity.repository.ts';
import type { apiKeyPathParams, createApiKeyBody, updateApiKeyBody } from './api-key.schemas.ts';
import {
  generateApiKey,
  grantedScopes,
  isUsable,
  kindFor,
  nextRotationAfter,
  rotationSchedule,
  toPrincipal,
  userScopeCeiling,
  type RotationPolicy,
} from './api-keys.ts';
import { autoCreatedScopes, autoCreatesUserKeys, enforceRotation } from './key-settings.ts';
import type { KeySettingsService } from './key-settings.service.ts';
import type { SavedConfigLookup, WorkspaceService } from './workspace.service.ts';

type ApiKeyPath = z.output<typeof apiKeyPathParams>;

/**
 * The body as sent, and the key's type and sub-type from the path. Absent scopes: every scope
 * the key's kind (and, for a user key, the user's role) allows. A null rotation policy asks
 * for none, as an absent one does.
 */
export type CreateApiKeyInput = CamelKeys<z.output<typeof createApiKeyBody>> & {
  type: ApiKeyPath['type'];
  subType: ApiKeyPath['sub-type'];
};

/** Absent fields stay as they are; null clears. A rotation policy replaces the policy as a whole. */
export type UpdateApiKeyInput = CamelKeys<z.output<typeof updateApiKeyBody>>;

/** `defaults` as sent (snake_case inside, as camelKeys leaves nested objects). */
type DefaultsInput = NonNullable<UpdateApiKeyInput['defaults']>;

/** Where a key's defaults are named in errors. */
const DEFAULT_CONFIG_PARAM = 'defaults.config_id';

/**
 * API keys: issuing, changing, rotating and revoking them, the user keys members get on
 * joining a workspace, and resolving a key's hash to its caller. Every change is announced,
 * so that caches holding a key drop it at once.
 */
export class ApiKeyService {
  constructor(
    private readonly repo: IdentityRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly configs: Pick<SavedConfigLookup, 'findActiveInWorkspace' | 'slugsByIds'>,
    private readonly keySettings: Pick<KeySettingsService, 'find' | 'enforcedRotationDays'>,
    private readonly bus: EventBus,
    private readonly apiKeyPrefix: string,
    /** Bearer credentials that are not API keys (OAuth access tokens), resolved by hash like keys. */
    private readonly accessTokens?: { resolveAccessToken(hash: string): Promise<Principal | null> },
  ) {}

  /**
   * The caller an API key's hash names, or else an OAuth access token's (or a session's): every
   * service resolves both here. A caller that is not a key gets its workspace's default config.
   */
  async resolveApiKey(keyHash: string): Promise<Principal | null> {
    const found = await this.repo.findApiKeyWithOwnersByHash(keyHash);
    if (found) return isUsable(found.apiKey) ? toPrincipal(found) : null;
    const other = await this.accessTokens?.resolveAccessToken(keyHash);
    if (!other) return null;
    const defaults = other.workspaceId
      ? callerDefaults(await this.repo.workspaceDefaultConfig(other.workspaceId))
      : undefined;
    return defaults ? { ...other, defaults } : other;
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
      workspace = await this.workspaces.getWorkspace(principal, input.workspaceId);
    }
    const now = new Date();
    assertFuture(input.expiresAt, now, 'expires_at');
    const enforcedDays = isUserKey
      ? await this.keySettings.enforcedRotationDays(principal.organisationId)
      : null;
    const schedule = this.rotationScheduleFor(
      // Null (no policy) counts as absent here: an enforced period then applies rather than being refused.
      enforceRotation(input.rotationPolicy ?? undefined, enforcedDays) ?? null,
      now,
    );
    const defaults = await this.defaultsFor(workspace, input.defaults ?? undefined);
    const material = generateApiKey(this.apiKeyPrefix);
    const apiKey = await this.repo.transaction(async (repo) => {
      // Held until the key is written, so that removing the member at the same time also revokes it.
      const member = isUserKey ? await repo.lockWorkspaceMember(workspace!.id, input.userId!) : null;
      if (isUserKey && !member) {
        throw new NotFound(`User '${input.userId}' is not a member of workspace '${workspace!.slug}'.`, {
          param: 'user_id',
        });
      }
      await lockDefaultConfig(repo, workspace, defaults.defaultConfigId, input.defaults?.config_id);
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
        ...defaults,
      });
    });
    return { apiKey, key: material.key };
  }

  /** The slugs of the configs these keys' defaults name, by id, for presenting them (presentApiKey). */
  configSlugs(apiKeys: readonly ApiKey[]): Promise<Map<string, string>> {
    return this.configs.slugsByIds([...new Set(apiKeys.flatMap((apiKey) => apiKey.defaultConfigId ?? []))]);
  }

  /**
   * The stored form of `defaults`: the config checked to be an active config of the key's
   * workspace (an organisation key has none, so it may not name one). Absent fields are left
   * out, null ones cleared.
   */
  private async defaultsFor(
    workspace: Pick<Workspace, 'id' | 'organisationId' | 'slug'> | null,
    defaults: DefaultsInput | undefined,
  ): Promise<Partial<Pick<ApiKey, 'defaultConfigId' | 'defaultMetadata' | 'allowConfigOverride'>>> {
    if (defaults === undefined) return {};
    const stored: Partial<Pick<ApiKey, 'defaultConfigId' | 'defaultMetadata' | 'allowConfigOverride'>> = {};
    const reference = defaults.config_id;
    if (reference === null) stored.defaultConfigId = null;
    if (reference) {
      if (!workspace) {
        throw new BadRequest(
          'Only a workspace key can have a default config: configs belong to a workspace.',
          {
            param: DEFAULT_CONFIG_PARAM,
          },
        );
      }
      const config = await this.configs.findActiveInWorkspace(
        workspace.organisationId,
        workspace.id,
        reference,
      );
      if (!config) throw defaultConfigNotFound(reference, workspace);
      stored.defaultConfigId = config.id;
    }
    if (defaults.metadata !== undefined) {
      stored.defaultMetadata =
        defaults.metadata === null || Object.keys(defaults.metadata).length === 0 ? null : defaults.metadata;
    }
    if (defaults.allow_config_override !== undefined) {
      stored.allowConfigOverride = defaults.allow_config_override ?? true;
    }
    return stored;
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
        ? await this.keySettings.enforcedRotationDays(current.organisationId)
        : null;
    const schedule =
      changes.rotationPolicy === undefined
        ? {}
        : this.rotationScheduleFor(enforceRotation(changes.rotationPolicy, enforcedDays) ?? null, now);
    const scopes = changes.scopes === undefined ? undefined : await this.scopesFor(current, changes.scopes);
    const workspace =
      changes.defaults?.config_id && current.workspaceId
        ? await this.workspaces.getWorkspace(principal, current.workspaceId)
        : null;
    // A null `defaults` clears them all.
    const defaults = await this.defaultsFor(
      workspace,
      changes.defaults === null
        ? { config_id: null, metadata: null, allow_config_override: null }
        : changes.defaults,
    );
    const updated = await this.repo.transaction(async (repo) => {
      await lockDefaultConfig(repo, workspace, defaults.defaultConfigId, changes.defaults?.config_id);
      return repo.updateApiKey(current.id, {
        name: changes.name,
        description: changes.description,
        scopes,
        expiresAt: changes.expiresAt,
        ...schedule,
        ...defaults,
      });
    });
    if (!updated) throw revoked(current);
    this.announceApiKey(updated, events.ChangeAction.UPDATED, updated.keyHash);
    return updated;
  }

  /**
   * Gives each member who just joined `workspace` a workspace-user key when the workspace (or
   * its organisation) auto-creates them: the organisation's auto-create scopes within the
   * member's role, the enforced rotation period. The secret is not shown to anyone; the user
   * rotates the key to get one. A member removed in the meantime gets none.
   */
  async provisionUserKeys(workspace: Workspace, userIds: readonly string[]): Promise<ApiKey[]> {
    const settings = await this.keySettings.find(workspace.organisationId);
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

function assertFuture(date: Date | null | undefined, now: Date, param: string): void {
  if (date && date.getTime() <= now.getTime()) {
    throw new BadRequest(`${param} must be in the future.`, { param });
  }
}

/**
 * Holds the default config until the key is written (see IdentityRepository.lockActiveConfig):
 * one archived in the meantime is refused as one that was never there.
 */
async function lockDefaultConfig(
  repo: IdentityRepository,
  workspace: Pick<Workspace, 'id' | 'slug'> | null,
  configId: string | null | undefined,
  reference: string | null | undefined,
): Promise<void> {
  if (!configId || !workspace) return;
  if (!(await repo.lockActiveConfig(configId, workspace.id))) {
    throw defaultConfigNotFound(reference ?? configId, workspace);
  }
}

function defaultConfigNotFound(reference: string, workspace: Pick<Workspace, 'slug'>): NotFound {
  return new NotFound(`Config '${reference}' is not an active config of workspace '${workspace.slug}'.`, {
    param: DEFAULT_CONFIG_PARAM,
    code: 'config_not_found',
  });
}

function revoked(apiKey: ApiKey): Conflict {
  return new Conflict(`API key '${apiKey.id}' is revoked: it can no longer change.`, {
    code: 'api_key_revoked',
  });
}
