import {
  BadRequest,
  Conflict,
  NotFound,
  NotImplemented,
  maskSecret,
  type Logger,
  type PageQuery,
  type SecretBox,
} from '@switchyard/core';
import { checkCustomHost, providerDescriptor, providerRegistry, type Resolver } from '@switchyard/rules';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type {
  IntegrationModelSetting,
  IntegrationRepository,
  WorkspaceAccess,
} from '../store/integration.repository.ts';
import type { Integration, IntegrationConfigurations } from '../store/entities.ts';
import {
  MAX_CREDENTIALS,
  SECRET_SETTINGS,
  checkProviderAuthOf,
  sendsBearerToken,
  type CreateIntegrationInput,
  type SetIntegrationModelsInput,
  type UpdateIntegrationInput,
  type UpdateIntegrationWorkspacesInput,
} from './integration.schemas.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';
import type { SecretReferenceService } from './secret-reference.service.ts';
import type { SecretMappingInput } from './secret-reference.schemas.ts';
import type { StoredSecretMapping } from '../store/secret-reference.repository.ts';

/** An integration with a base AI provider: one the gateway can send model calls to. */
export type ProviderIntegration = Integration & { provider: string };

const isProviderIntegration = (integration: Integration): integration is ProviderIntegration =>
  integration.provider !== null;

export interface DecryptedIntegration {
  integration: ProviderIntegration;
  apiKey: string;
  headers: Record<string, string>;
  settings: Record<string, string>;
  models: IntegrationModelSetting[];
}

/** One of an integration's models as its model list shows it: listed by its provider, set, or both. */
export interface ShownIntegrationModel extends IntegrationModelSetting {
  /** True when the model's settings were set (PUT .../integration-models). */
  set: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a saved custom host may point: the unsafe-host check's trusted hosts and resolver. */
export interface CustomHostPolicy {
  trusted: readonly string[];
  resolve: Resolver;
}

/** Integrations hold provider credentials; the key is encrypted before it reaches the database. */
export class IntegrationService {
  constructor(
    private readonly repo: IntegrationRepository,
    private readonly secrets: SecretBox,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly customHosts: CustomHostPolicy,
    private readonly workspaces: Pick<OrganisationDirectory, 'findWorkspace'>,
    /** Where mapped fields (`secret_mappings`) are checked and fetched from. */
    private readonly secretReferences?: SecretReferenceService,
  ) {}

  /**
   * Announced like a deletion, so that gateways drop a cached "not found" for the slug at once.
   * The workspace must be one of the caller's organisation, and a custom host must pass the
   * unsafe-host check, before anything is stored.
   */
  async create(principal: Principal, input: CreateIntegrationInput): Promise<Integration> {
    assertOrganisationAdmin(principal);
    const workspaceId =
      input.workspaceId === undefined ? null : await this.workspaceOf(principal, input.workspaceId);
    refuseManagedIdentity(input.configurations.azure_auth_mode);
    await this.checkHostSettings(input.configurations);
    const secretMappings = await this.checkSecretMappings(
      { organisationId: principal.organisationId, workspaceId, provider: input.aiProviderId ?? null },
      input.secretMappings,
    );
    const integration = await this.repo.insert({
      organisationId: principal.organisationId,
      workspaceId,
      slug:
        input.slug ??
        input.name
          .toLowerCase()
          .replace(/[^a-z0-9_-]+/g, '-')
          .slice(0, 63),
      name: input.name,
      description: input.description ?? null,
      // The wire's ai_provider_id is the integration's provider.
      provider: input.aiProviderId ?? null,
      pluginProviderId: input.pluginProviderId ?? null,
      encryptedKey: input.key ? this.secrets.encrypt(input.key) : null,
      credentials: input.credentials ? this.sealCredentials(input.credentials) : null,
      configurations: this.sealConfigurations(input.configurations),
      pricingAdjustments: input.pricingAdjustments ?? null,
    });
    if (secretMappings.length > 0) await this.secretReferences!.saveMappings(integration.id, secretMappings);
    publishChange(this.bus, {
      entity: 'integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: integration.workspaceId ?? '',
      action: events.ChangeAction.CREATED,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
    return integration;
  }

  async get(principal: Principal, slug: string): Promise<Integration> {
    const integration = await this.repo.findLive(principal.organisationId, slug, principal.workspaceId);
    if (!integration) throw new NotFound(`Integration '${slug}' not found.`);
    return integration;
  }

  /** By slug, or by id when no integration has that slug (the models routes take either). */
  private async getBySlugOrId(principal: Principal, slugOrId: string): Promise<Integration> {
    const bySlug = await this.repo.findLive(principal.organisationId, slugOrId, principal.workspaceId);
    if (bySlug) return bySlug;
    const byId = UUID.test(slugOrId)
      ? await this.repo.findLiveById(principal.organisationId, slugOrId, principal.workspaceId)
      : null;
    if (!byId) throw new NotFound(`Integration '${slugOrId}' not found.`);
    return byId;
  }

  list(principal: Principal, page: PageQuery): Promise<[Integration[], number]> {
    return this.repo.list(principal.organisationId, page, principal.workspaceId);
  }

  /** Archives the integration; gateways drop cached credentials on the change event. */
  async delete(principal: Principal, slug: string): Promise<void> {
    assertOrganisationAdmin(principal);
    const integration = await this.get(principal, slug);
    // Of concurrent deletes only the one whose update archived it succeeds, publishes and is audited.
    if (!(await this.repo.archive(integration.id))) throw new NotFound(`Integration '${slug}' not found.`);
    publishChange(this.bus, {
      entity: 'integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: integration.workspaceId ?? '',
      action: events.ChangeAction.DELETED,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
  }

  /**
   * Changes names, secrets, settings and pricing adjustments (null clears them). `key` only
   * for an AI provider integration, `credentials` only for a plugin integration, as are
   * `configurations`: each setting given replaces the stored one, null removes it, the others
   * are kept, and the result must pass the rules create applies (with the secret mappings
   * given, else those stored). Settings that send a bearer token in place of a key
   * (provider_auth_type oauthClientCredentials or wif, azure_auth_mode entra) drop a stored
   * key, which would no longer be sent. The stored integration is read and changed in one
   * locked step, so concurrent updates each apply whole. Gateways drop cached credentials,
   * and the multipliers with them, on the change event.
   */
  async update(principal: Principal, slug: string, input: UpdateIntegrationInput): Promise<Integration> {
    assertOrganisationAdmin(principal);
    const integration = await this.get(principal, slug);
    const plugin = integration.pluginProviderId !== null;
    if (plugin && input.key !== undefined) {
      throw new BadRequest("'key' is not used by a plugin integration: send its 'credentials'.", {
        param: 'key',
        code: 'invalid_parameter',
      });
    }
    if (plugin && input.configurations !== undefined) {
      throw new BadRequest("'configurations' are not used by a plugin integration: send its 'credentials'.", {
        param: 'configurations',
        code: 'invalid_parameter',
      });
    }
    if (!plugin && input.credentials !== undefined) {
      throw new BadRequest("'credentials' are taken only by plugin integrations (plugin_provider_id).", {
        param: 'credentials',
        code: 'invalid_parameter',
      });
    }
    const changes = input.configurations;
    if (changes !== undefined) {
      refuseManagedIdentity(changes.azure_auth_mode);
      await this.checkHostSettings(changes);
    }
    const secretMappings =
      input.secretMappings === undefined
        ? undefined
        : await this.checkSecretMappings(integration, input.secretMappings);
    // The key and settings are checked again when any of them may change; mapped fields may be left out.
    const checkAuth =
      integration.provider !== null &&
      (input.key !== undefined || changes !== undefined || secretMappings !== undefined);
    const mapped = checkAuth ? (secretMappings ?? (await this.secretMappings(integration))) : [];
    const updated = await this.repo.update(integration.id, (current) => {
      let encryptedKey = input.key === undefined ? current.encryptedKey : this.secrets.encrypt(input.key);
      const configurations =
        changes === undefined
          ? current.configurations
          : this.changedConfigurations(current.configurations, changes);
      if (checkAuth && current.provider !== null) {
        checkProviderAuthOf(current.provider, {
          key: input.key,
          configurations,
          secret_mappings: mapped,
        });
        if (sendsBearerToken(configurations)) encryptedKey = null;
      }
      return {
        name: input.name ?? current.name,
        description: input.description === undefined ? current.description : input.description,
        encryptedKey,
        credentials: this.changedCredentials(current.credentials, input.credentials),
        configurations,
        pricingAdjustments:
          input.pricingAdjustments === undefined ? current.pricingAdjustments : input.pricingAdjustments,
      };
    });
    if (!updated) throw new NotFound(`Integration '${slug}' not found.`);
    if (secretMappings !== undefined)
      await this.secretReferences!.saveMappings(integration.id, secretMappings);
    publishChange(this.bus, {
      entity: 'integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: integration.workspaceId ?? '',
      action: events.ChangeAction.UPDATED,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
    return updated;
  }

  /** A plugin integration's credentials with the changes applied: null removes one, a value is sealed and set. */
  private changedCredentials(
    stored: Record<string, string> | null,
    changes: Record<string, string | null> | undefined,
  ): Record<string, string> | null {
    if (changes === undefined) return stored;
    const credentials = { ...(stored ?? {}) };
    for (const [name, value] of Object.entries(changes)) {
      if (value === null) delete credentials[name];
      else credentials[name] = this.secrets.encrypt(value);
    }
    if (Object.keys(credentials).length > MAX_CREDENTIALS) {
      throw new BadRequest(`A plugin integration holds at most ${MAX_CREDENTIALS} credentials.`, {
        param: 'credentials',
        code: 'invalid_parameter',
      });
    }
    return credentials;
  }

  /**
   * The stored settings with the changes applied: null removes a setting, a value replaces it
   * (`headers` the whole header map), sealed as on create; those left out stay as stored.
   */
  private changedConfigurations(
    stored: IntegrationConfigurations,
    changes: NonNullable<UpdateIntegrationInput['configurations']>,
  ): IntegrationConfigurations {
    const kept: Record<string, unknown> = { ...stored };
    const given: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined) continue;
      delete kept[name];
      if (value !== null) given[name] = value;
    }
    return { ...kept, ...this.sealConfigurations(given as IntegrationConfigurations) };
  }

  /**
   * Replaces the models set on the integration, all at once: each custom host passes the
   * unsafe-host check first, and nothing is stored if one does not. Gateways drop the cached
   * integration on the change event.
   */
  async setModels(
    principal: Principal,
    slug: string,
    input: SetIntegrationModelsInput,
  ): Promise<ShownIntegrationModel[]> {
    assertOrganisationAdmin(principal);
    const integration = await this.getBySlugOrId(principal, slug);
    const models: IntegrationModelSetting[] = [];
    for (const [i, model] of input.models.entries()) {
      const configurations = model.configurations ?? {};
      await this.checkCustomHost(configurations.custom_host, `models[${i}].configurations.custom_host`);
      models.push({
        slug: model.slug,
        enabled: model.enabled,
        is_custom: model.is_custom ?? null,
        is_finetune: model.is_finetune ?? null,
        base_model_slug: model.base_model_slug ?? null,
        configurations,
        custom_headers: model.custom_headers,
      });
    }
    if (!(await this.repo.setModels(integration.id, models)))
      throw new NotFound(`Integration '${slug}' not found.`);
    publishChange(this.bus, {
      entity: 'integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: integration.workspaceId ?? '',
      action: events.ChangeAction.UPDATED,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
    return this.shownModels(integration, models);
  }

  /** The integration's models: those its provider lists prices for, and those set on it. */
  async models(principal: Principal, slug: string): Promise<ShownIntegrationModel[]> {
    const integration = await this.getBySlugOrId(principal, slug);
    const saved = (await this.repo.modelsOf([integration.id])).get(integration.id) ?? [];
    return this.shownModels(integration, saved);
  }

  /** Which workspaces may use the organisation-level integration (see setWorkspaceAccess). */
  async workspaceAccess(principal: Principal, slug: string): Promise<WorkspaceAccess> {
    assertOrganisationAdmin(principal);
    const integration = await this.organisationLevel(principal, slug);
    const access = await this.repo.workspaceAccess(integration.id);
    if (!access) throw new NotFound(`Integration '${slug}' not found.`);
    return access;
  }

  /**
   * Which workspaces of its organisation may use an organisation-level integration. Each
   * integration has a default for every workspace, `global_workspace_access`, and a workspace
   * may have a setting of its own, which wins: a workspace may use the integration when its own
   * setting is enabled, or, with none, when the default is. The default is on for every
   * integration until changed, so integrations that had no access settings (all those made
   * before they existed) stay open to all workspaces of their organisation, those created later
   * included. `override_existing_workspace_access` drops every workspace's own setting before
   * the given ones are set. A workspace-level integration is its workspace's alone: it has no
   * such access and is refused here.
   *
   * Usage and rate limits per workspace are not stored: a rate or usage limit policy's
   * conditions can name the workspace and the provider kind, not an integration, so they could
   * not be enforced; any given (not null nor empty) is answered 501 before anything changes.
   * The whole change is one transaction; gateways drop the cached integration on the change
   * event.
   */
  async setWorkspaceAccess(
    principal: Principal,
    slug: string,
    input: UpdateIntegrationWorkspacesInput,
  ): Promise<WorkspaceAccess> {
    assertOrganisationAdmin(principal);
    const integration = await this.organisationLevel(principal, slug);
    const given = input.global_workspace_access;
    if (given) refuseAccessLimits(given, 'global_workspace_access');
    input.workspaces.forEach((workspace, i) => {
      refuseAccessLimits(workspace, `workspaces[${i}]`);
      if (workspace.reset_usage) {
        throw new NotImplemented(
          'reset_usage: an integration holds no usage of its own per workspace to reset; reset the usage limit policy instead.',
          { param: `workspaces[${i}].reset_usage`, code: 'integration_workspace_limits_unsupported' },
        );
      }
    });
    const workspaces: Array<{ workspaceId: string; enabled: boolean }> = [];
    const seen = new Map<string, number>();
    for (const [i, workspace] of input.workspaces.entries()) {
      const found = await this.workspaces.findWorkspace(principal.organisationId, workspace.id);
      if (!found) {
        throw new NotFound(`Workspace '${workspace.id}' (workspaces[${i}]) not found.`, {
          param: `workspaces[${i}].id`,
          code: 'workspace_not_found',
        });
      }
      const earlier = seen.get(found.id);
      if (earlier !== undefined) {
        throw new BadRequest(`workspaces[${i}] names the same workspace as workspaces[${earlier}].`, {
          param: `workspaces[${i}].id`,
          code: 'invalid_parameter',
        });
      }
      seen.set(found.id, i);
      workspaces.push({ workspaceId: found.id, enabled: workspace.enabled });
    }
    const changed = await this.repo.setWorkspaceAccess(integration.id, {
      global: given?.enabled,
      override: input.override_existing_workspace_access,
      workspaces,
    });
    const access = changed ? await this.repo.workspaceAccess(integration.id) : null;
    if (!access) throw new NotFound(`Integration '${slug}' not found.`);
    publishChange(this.bus, {
      entity: 'integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: '',
      action: events.ChangeAction.UPDATED,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
    return access;
  }

  /** The integration by slug, when it is an organisation-level one: a workspace's own has no workspace access. */
  private async organisationLevel(principal: Principal, slug: string): Promise<Integration> {
    const integration = await this.get(principal, slug);
    if (integration.workspaceId !== null) {
      throw new Conflict(
        `Integration '${slug}' belongs to one workspace and only that workspace may use it: workspace access applies to organisation-level integrations.`,
        { param: 'slug', code: 'workspace_integration' },
      );
    }
    return integration;
  }

  /** The provider's listed models first (in its order), then the other models set, in theirs. */
  private shownModels(integration: Integration, saved: IntegrationModelSetting[]): ShownIntegrationModel[] {
    const bySlug = new Map(saved.map((model) => [model.slug, model]));
    const prices = integration.provider ? providerDescriptor(integration.provider)?.prices : undefined;
    const listed = prices && typeof prices !== 'string' ? Object.keys(prices) : [];
    const shown: ShownIntegrationModel[] = listed.map((slug) => {
      const model = bySlug.get(slug);
      if (model) return { ...model, set: true };
      return {
        slug,
        enabled: true,
        is_custom: false,
        is_finetune: false,
        base_model_slug: null,
        configurations: {},
        custom_headers: {},
        set: false,
      };
    });
    const listedSet = new Set(listed);
    for (const model of saved) {
      if (!listedSet.has(model.slug)) shown.push({ ...model, is_custom: model.is_custom ?? true, set: true });
    }
    return shown;
  }

  private async workspaceOf(principal: Principal, workspaceId: string): Promise<string> {
    const workspace = await this.workspaces.findWorkspace(principal.organisationId, workspaceId);
    if (!workspace) {
      throw new NotFound(`Workspace '${workspaceId}' not found.`, {
        param: 'workspace_id',
        code: 'workspace_not_found',
      });
    }
    return workspace.id;
  }

  /** Each mapping checked (see SecretReferenceService.checkMappings); none given: none. */
  private async checkSecretMappings(
    integration: Pick<Integration, 'organisationId' | 'workspaceId' | 'provider'>,
    mappings: readonly SecretMappingInput[] | undefined,
  ): Promise<StoredSecretMapping[]> {
    if (mappings === undefined || mappings.length === 0) return [];
    if (!this.secretReferences)
      throw new BadRequest("'secret_mappings' are not available here.", { param: 'secret_mappings' });
    return this.secretReferences.checkMappings(integration, mappings);
  }

  /** Which fields come from secret references, and from which: never a value. */
  async secretMappings(integration: Integration): Promise<StoredSecretMapping[]> {
    return this.secretReferences ? this.secretReferences.mappingsOf(integration.id) : [];
  }

  /**
   * Each host setting given must pass the unsafe-host check: the gateway connects to the
   * custom host and fetches tokens from the others, so they may point only where a custom
   * host may.
   */
  private async checkHostSettings(
    configurations: Partial<Record<HostSetting, string | null>>,
  ): Promise<void> {
    for (const name of HOST_SETTINGS) {
      await this.checkCustomHost(configurations[name] ?? undefined, `configurations.${name}`);
    }
  }

  /** The gateway checks again at each connection: a name may resolve elsewhere later. */
  private async checkCustomHost(customHost: string | undefined, param: string): Promise<void> {
    if (customHost === undefined) return;
    await checkCustomHost(customHost, { ...this.customHosts, param });
  }

  private sealCredentials(credentials: Record<string, string>): Record<string, string> {
    return Object.fromEntries(
      Object.entries(credentials).map(([name, value]) => [name, this.secrets.encrypt(value)]),
    );
  }

  /** Each credential of a plugin integration, masked; null for other integrations. */
  maskedCredentials(integration: Integration): Record<string, string> | null {
    if (!integration.credentials) return null;
    return Object.fromEntries(
      Object.entries(integration.credentials).map(([name, value]) => [
        name,
        maskSecret(this.secrets.decrypt(value)),
      ]),
    );
  }

  /** Header values and secret settings are credentials too: stored encrypted like the key. */
  private sealConfigurations(configurations: IntegrationConfigurations): IntegrationConfigurations {
    const sealed: IntegrationConfigurations = { ...configurations };
    if (configurations.headers) {
      sealed.headers = Object.fromEntries(
        Object.entries(configurations.headers).map(([name, value]) => [name, this.secrets.encrypt(value)]),
      );
    }
    for (const name of SECRET_SETTINGS) {
      const value = configurations[name];
      if (value) sealed[name] = this.secrets.encrypt(value);
    }
    return sealed;
  }

  maskedKey(integration: Integration): string | null {
    return integration.encryptedKey ? maskSecret(this.secrets.decrypt(integration.encryptedKey)) : null;
  }

  /** Every live integration of an organisation (at most 1000), for a system caller. */
  async ofOrganisation(organisationId: string): Promise<Integration[]> {
    const [list] = await this.repo.list(organisationId, { offset: 0, limit: 1000 }, null);
    return list;
  }

  /**
   * Live integrations a workspace may use (at most 1000), for the gateway's model list: those
   * of the organisation the workspace is denied (see setWorkspaceAccess) are left out.
   */
  async listForWorkspace(
    organisationId: string,
    workspaceId: string,
  ): Promise<[ProviderIntegration[], number]> {
    const [list] = await this.repo.list(organisationId, { offset: 0, limit: 1000 }, workspaceId || null);
    const providers = list.filter(isProviderIntegration);
    const denied = workspaceId
      ? await this.repo.deniedTo(
          providers.filter((i) => i.workspaceId === null).map((i) => i.id),
          workspaceId,
        )
      : new Set<string>();
    const usable = providers.filter((i) => !denied.has(i.id));
    return [usable, usable.length];
  }

  /** The models set on each of these integrations, by integration id. */
  modelSettings(integrations: readonly Integration[]): Promise<Map<string, IntegrationModelSetting[]>> {
    return this.repo.modelsOf(integrations.map((integration) => integration.id));
  }

  /**
   * For the gateway only, over the authenticated service channel. `workspace_denied` (and no
   * credentials) when the workspace may not use the organisation's integration.
   */
  async credentials(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<DecryptedIntegration | 'workspace_denied' | null> {
    const integration = await this.repo.findLive(organisationId, slug, workspaceId || null);
    // A plugin integration serves no model calls.
    if (!integration || !isProviderIntegration(integration)) return null;
    if (workspaceId && integration.workspaceId === null) {
      const denied = await this.repo.deniedTo([integration.id], workspaceId);
      if (denied.size > 0) return 'workspace_denied';
    }
    const { custom_host: _host, headers: sealedHeaders, ...rest } = integration.configurations;
    const headers = Object.fromEntries(
      Object.entries(sealedHeaders ?? {}).map(([name, value]) => [name, this.secrets.decrypt(value)]),
    );
    const settings: Record<string, string> = {};
    for (const [name, value] of Object.entries(rest)) {
      if (typeof value !== 'string') continue;
      settings[name] = (SECRET_SETTINGS as readonly string[]).includes(name)
        ? this.secrets.decrypt(value)
        : value;
    }
    const models = (await this.repo.modelsOf([integration.id])).get(integration.id) ?? [];
    // Mapped fields are fetched from their secret references and take the place of stored ones.
    const mapped = this.secretReferences
      ? await this.secretReferences.resolve(integration, workspaceId)
      : { settings: {} };
    return {
      integration,
      apiKey: mapped.key ?? (integration.encryptedKey ? this.secrets.decrypt(integration.encryptedKey) : ''),
      headers,
      settings: { ...settings, ...mapped.settings },
      models,
    };
  }

  /**
   * All-in-one: a saved `@mock` integration, so a first request works with saved resources
   * only (as it must where inline provider choice is blocked).
   */
  async ensureMockIntegration(organisationId: string): Promise<void> {
    if (await this.repo.findLive(organisationId, 'mock', null)) return;
    await this.repo.insert({
      organisationId,
      workspaceId: null,
      slug: 'mock',
      name: 'Mock provider',
      description: 'Deterministic answers with no provider account.',
      provider: 'mock',
      pluginProviderId: null,
      encryptedKey: null,
      credentials: null,
      configurations: {},
      pricingAdjustments: null,
    });
  }

  /** All-in-one convenience: a provider key in the environment becomes a ready integration. */
  async seedFromEnvironment(organisationId: string, processEnv: NodeJS.ProcessEnv): Promise<string[]> {
    const seeded: string[] = [];
    for (const { id: provider, env: source } of providerRegistry) {
      const key = source.apiKey ? processEnv[source.apiKey] : undefined;
      if (!key) continue;
      if (await this.repo.findLive(organisationId, provider, null)) continue;
      const fromEnv = source.baseUrl ? processEnv[source.baseUrl] : undefined;
      const baseUrl = fromEnv && source.apiRoot ? source.apiRoot(fromEnv) : fromEnv;
      await this.repo.insert({
        organisationId,
        workspaceId: null,
        slug: provider,
        name: `${provider} (from ${source.apiKey})`,
        description: `Created from the ${source.apiKey} environment variable.`,
        provider,
        pluginProviderId: null,
        encryptedKey: this.secrets.encrypt(key),
        credentials: null,
        configurations: baseUrl ? { custom_host: baseUrl } : {},
        pricingAdjustments: null,
      });
      seeded.push(provider);
      this.logger.info('integration created from environment', { provider, slug: provider });
    }
    return seeded;
  }
}

/** The settings naming a host the gateway connects to. */
const HOST_SETTINGS = [
  'custom_host',
  'oauth_token_endpoint',
  'wif_token_endpoint',
  'azure_authority_host',
] as const;
type HostSetting = (typeof HOST_SETTINGS)[number];

/** azure_auth_mode managed is not offered (see AZURE_AUTH_MODES): a 501 saying why. */
function refuseManagedIdentity(mode: string | null | undefined): void {
  if (mode !== 'managed') return;
  throw new NotImplemented(
    "azure_auth_mode managed is not supported: a managed identity's token comes from the cloud's instance metadata endpoint, which the gateway does not call. Use entra (a client id and secret) or wif.",
    { param: 'configurations.azure_auth_mode', code: 'azure_managed_identity_unsupported' },
  );
}

/** Per-workspace limits cannot be enforced (see IntegrationService.setWorkspaceAccess): null or empty only. */
function refuseAccessLimits(
  access: { usage_limits?: unknown[] | null | undefined; rate_limits?: unknown[] | null | undefined },
  param: string,
): void {
  for (const name of ['usage_limits', 'rate_limits'] as const) {
    const limits = access[name];
    if (limits && limits.length > 0) {
      throw new NotImplemented(
        `${param}.${name}: limits per workspace on an integration are not supported, since a usage or rate limit policy cannot name an integration; send null, or set a policy with a workspace_id condition.`,
        { param: `${param}.${name}`, code: 'integration_workspace_limits_unsupported' },
      );
    }
  }
}
