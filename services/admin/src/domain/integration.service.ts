import {
  assertOrganisationAdmin,
  NotFound,
  maskSecret,
  publishChange,
  type EventBus,
  type Logger,
  type PageQuery,
  type Principal,
  type SecretBox,
} from '@switchyard/platform';
import { events } from '@switchyard/proto';
import type { IntegrationRepository } from '../store/integration.repository.ts';
import {
  SECRET_SETTINGS,
  type Integration,
  type IntegrationConfigurations,
  type PricingAdjustments,
} from '../store/entities.ts';
import { knownProviders, type ProviderId } from './providers.ts';

export interface CreateIntegrationInput {
  name: string;
  slug?: string | undefined;
  provider: ProviderId;
  key?: string | undefined;
  description?: string | undefined;
  workspaceId?: string | undefined;
  configurations: IntegrationConfigurations;
  pricingAdjustments?: PricingAdjustments | null;
}

export interface DecryptedIntegration {
  integration: Integration;
  apiKey: string;
  headers: Record<string, string>;
  settings: Record<string, string>;
}

/** Integrations hold provider credentials; the key is encrypted before it reaches the database. */
export class IntegrationService {
  constructor(
    private readonly repo: IntegrationRepository,
    private readonly secrets: SecretBox,
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  /** Announced like a deletion, so that gateways drop a cached "not found" for the slug at once. */
  async create(principal: Principal, input: CreateIntegrationInput): Promise<Integration> {
    assertOrganisationAdmin(principal);
    const integration = await this.repo.insert({
      organisationId: principal.organisationId,
      workspaceId: input.workspaceId ?? null,
      slug:
        input.slug ??
        input.name
          .toLowerCase()
          .replace(/[^a-z0-9_-]+/g, '-')
          .slice(0, 63),
      name: input.name,
      description: input.description ?? null,
      provider: input.provider,
      encryptedKey: input.key ? this.secrets.encrypt(input.key) : null,
      configurations: this.sealConfigurations(input.configurations),
      pricingAdjustments: input.pricingAdjustments ?? null,
    });
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

  list(principal: Principal, page: PageQuery): Promise<[Integration[], number]> {
    return this.repo.list(principal.organisationId, page, principal.workspaceId);
  }

  /** Archives the integration; gateways drop cached credentials on the change event. */
  async delete(principal: Principal, slug: string): Promise<void> {
    assertOrganisationAdmin(principal);
    const integration = await this.get(principal, slug);
    await this.repo.archive(integration.id);
    publishChange(this.bus, {
      entity: 'integration',
      entityId: integration.id,
      organisationId: integration.organisationId,
      workspaceId: integration.workspaceId ?? '',
      action: events.ChangeAction.DELETED,
      cacheKey: `${integration.organisationId}:${integration.slug}`,
    });
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

  /** Live integrations a workspace may use (at most 1000), for the gateway's model list. */
  listForWorkspace(organisationId: string, workspaceId: string): Promise<[Integration[], number]> {
    return this.repo.list(organisationId, { offset: 0, limit: 1000 }, workspaceId || null);
  }

  /** For the gateway only, over the authenticated service channel. */
  async credentials(
    organisationId: string,
    workspaceId: string,
    slug: string,
  ): Promise<DecryptedIntegration | null> {
    const integration = await this.repo.findLive(organisationId, slug, workspaceId || null);
    if (!integration) return null;
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
    return {
      integration,
      apiKey: integration.encryptedKey ? this.secrets.decrypt(integration.encryptedKey) : '',
      headers,
      settings,
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
      encryptedKey: null,
      configurations: {},
      pricingAdjustments: null,
    });
  }

  /** All-in-one convenience: a provider key in the environment becomes a ready integration. */
  async seedFromEnvironment(organisationId: string, processEnv: NodeJS.ProcessEnv): Promise<string[]> {
    const seeded: string[] = [];
    for (const [provider, source] of Object.entries(knownProviders)) {
      const key = source.envKey ? processEnv[source.envKey] : undefined;
      if (!key) continue;
      if (await this.repo.findLive(organisationId, provider, null)) continue;
      const baseUrl = apiRoot(provider, source.envBaseUrl ? processEnv[source.envBaseUrl] : undefined);
      await this.repo.insert({
        organisationId,
        workspaceId: null,
        slug: provider,
        name: `${provider} (from ${source.envKey})`,
        description: `Created from the ${source.envKey} environment variable.`,
        provider,
        encryptedKey: this.secrets.encrypt(key),
        configurations: baseUrl ? { custom_host: baseUrl } : {},
        pricingAdjustments: null,
      });
      seeded.push(provider);
      this.logger.info('integration created from environment', { provider, slug: provider });
    }
    return seeded;
  }
}

/** ANTHROPIC_BASE_URL follows the Anthropic SDK's convention (the host, without `/v1`). */
function apiRoot(provider: string, baseUrl: string | undefined): string | undefined {
  if (!baseUrl || provider !== 'anthropic') return baseUrl;
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
}
