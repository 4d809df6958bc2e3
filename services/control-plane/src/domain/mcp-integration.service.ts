import { randomBytes } from 'node:crypto';
import {
  BadRequest,
  Conflict,
  NotImplemented,
  type Logger,
  type PageQuery,
  type SecretBox,
} from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { checkCustomHost, type Resolver } from '@switchyard/rules';
import type { z } from 'zod';
import type {
  McpCapability,
  McpCapabilitySwitch,
  McpCapabilityType,
  McpIntegration,
  McpRepository,
  McpStoredConfigurations,
  McpWorkspaceAccess,
} from '../store/mcp.repository.ts';
import type {
  createMcpIntegrationBody,
  listMcpIntegrationsQuery,
  mcpIntegrationWorkspacesBody,
  updateMcpIntegrationBody,
} from './mcp.schemas.ts';
import { IntegrationAccess } from './integration-access.ts';
import { readUpstream, syncErrorOf } from './mcp-client.ts';
import {
  openCredentials,
  sealConfigurations,
  withMappedCredentials,
  type McpUpstreamCredentials,
} from './mcp-secrets.ts';
import type { SecretMappingSource, StoredSecretMapping } from './secret-mapping.schemas.ts';
import type { WorkspaceService } from './workspace.service.ts';
import { resourceSlugFrom } from './slugs.ts';

export type CreateMcpIntegrationInput = z.output<typeof createMcpIntegrationBody>;
export type UpdateMcpIntegrationInput = z.output<typeof updateMcpIntegrationBody>;
export type ListMcpIntegrationsInput = z.output<typeof listMcpIntegrationsQuery>;
export type McpIntegrationWorkspacesInput = z.output<typeof mcpIntegrationWorkspacesBody>;

export interface McpHostOptions {
  /** TRUSTED_CUSTOM_HOSTS. */
  trusted: readonly string[];
  resolve: Resolver;
}

export interface McpSyncOptions {
  /** How long one sync may take. */
  timeoutMs: number;
  /** MCP_SYNC_INTERVAL_SECONDS: 0 syncs only on create and on demand. */
  intervalSeconds: number;
}

/** How many due integrations one scheduled round claims. */
const SYNC_BATCH = 10;
/** A sync's next attempt when the schedule is off: far enough never to come. */
const NEVER = new Date('9999-01-01T00:00:00Z');

const counts = (caps: McpCapability[]) => {
  const of = (type: McpCapabilityType) => {
    const all = caps.filter((c) => c.type === type);
    return { total: all.length, enabled: all.filter((c) => c.enabled).length };
  };
  return {
    tools: of('tool'),
    prompts: of('prompt'),
    resources: of('resource'),
    resource_templates: of('resource_template'),
  };
};
export type McpCapabilityCounts = ReturnType<typeof counts>;

function slugFromName(name: string): string {
  return resourceSlugFrom(name, 'mcp', randomBytes(3).toString('hex'));
}

export { slugFromName as mcpSlugFrom };

/**
 * MCP integrations: an upstream MCP server's URL and how to call it, of the organisation
 * (usable by the workspaces it is enabled for) or of one workspace. An organisation admin key
 * manages all of them; a workspace key its workspace's, and it reads the organisation-level
 * ones enabled for its workspace. Anything else is "not found". The capabilities an upstream
 * offers are read by a sync: on create (in the background), on demand and on a schedule.
 */
export class McpIntegrationService {
  /** Background syncs started by creates and updates, awaited by `stop` and by tests. */
  readonly pending = new Set<Promise<void>>();
  private readonly access: IntegrationAccess<McpIntegration>;

  constructor(
    private readonly repo: McpRepository,
    workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly bus: EventBus,
    private readonly secrets: SecretBox,
    private readonly hosts: McpHostOptions,
    private readonly sync: McpSyncOptions,
    /** Admin's secret references, which `secret_mappings` name. */
    private readonly mappings: SecretMappingSource,
    private readonly logger?: Pick<Logger, 'error' | 'warn'>,
  ) {
    this.access = new IntegrationAccess(
      'MCP integration',
      {
        find: (organisationId, ref) => repo.findIntegration(organisationId, ref),
        enabledForWorkspace: (integration, workspaceId) => repo.enabledForWorkspace(integration, workspaceId),
        workspaceAccess: (integrationId) => repo.workspaceAccess(integrationId),
      },
      workspaces,
    );
  }

  async create(principal: Principal, input: CreateMcpIntegrationInput): Promise<McpIntegration> {
    const authType = this.supported(input.auth_type, input.transport);
    const workspaceId = await this.access.workspaceFor(principal, input);
    await this.checkUrls(input.url, input.configurations?.token_url);
    const configurations = sealConfigurations(input.configurations ?? {}, this.secrets);
    const secretMappings = await this.mappings.check(
      { organisationId: principal.organisationId, workspaceId },
      input.secret_mappings ?? [],
      'secret_mappings',
    );
    if (secretMappings.length > 0) configurations.secretMappings = secretMappings;
    this.checkAuth(authType, configurations);
    const created = await this.access.insertWithSlug(
      input.slug,
      () => slugFromName(input.name),
      (slug) =>
        this.repo.insertIntegration({
          organisationId: principal.organisationId,
          workspaceId,
          name: input.name,
          slug,
          description: input.description ?? null,
          url: input.url,
          authType,
          transport: 'http',
          configurations,
          globalWorkspaceAccess: false,
          ownerId: actorOf(principal),
        }),
    );
    this.syncInBackground(created.id);
    return created;
  }

  /** By id or slug, when the caller may see it. */
  get(principal: Principal, ref: string): Promise<McpIntegration> {
    return this.access.get(principal, ref);
  }

  async list(
    principal: Principal,
    query: ListMcpIntegrationsInput,
    page: PageQuery,
  ): Promise<[Array<McpIntegration & { workspacesCount: number }>, number]> {
    const workspaceId = await this.access.listWorkspace(principal, query);
    return this.repo.listIntegrations(
      principal.organisationId,
      { workspaceId, type: query.type, search: query.search },
      page,
    );
  }

  async update(principal: Principal, ref: string, input: UpdateMcpIntegrationInput): Promise<McpIntegration> {
    const found = await this.access.writable(principal, ref);
    const authType =
      input.auth_type === undefined ? found.authType : this.supported(input.auth_type, input.transport);
    if (input.auth_type === undefined && input.transport !== undefined)
      this.supported('none', input.transport);
    await this.checkUrls(input.url, input.configurations?.token_url);
    const configurations =
      input.configurations === undefined
        ? { ...found.configurations }
        : sealConfigurations(input.configurations, this.secrets, found.configurations);
    const secretMappings: StoredSecretMapping[] =
      input.secret_mappings === undefined
        ? (found.configurations.secretMappings ?? [])
        : await this.mappings.check(found, input.secret_mappings, 'secret_mappings');
    delete configurations.secretMappings;
    if (secretMappings.length > 0) configurations.secretMappings = secretMappings;
    this.checkAuth(authType, configurations);
    const changesConfigurations = input.configurations !== undefined || input.secret_mappings !== undefined;
    const updated = await this.repo.updateIntegration(found.id, {
      name: input.name,
      description: input.description,
      url: input.url,
      authType: input.auth_type === undefined ? undefined : authType,
      configurations: changesConfigurations ? configurations : undefined,
    });
    if (!updated) throw this.access.notFound(ref);
    await this.announce(updated, events.ChangeAction.UPDATED);
    // A new URL or credentials may reach another server: read its capabilities again.
    if (input.url !== undefined || changesConfigurations || input.auth_type !== undefined) {
      this.syncInBackground(updated.id);
    }
    return updated;
  }

  /** Deletes the integration with its capabilities; one an MCP server still uses is a 409. */
  async delete(principal: Principal, ref: string): Promise<void> {
    const found = await this.access.writable(principal, ref);
    const deleted = await this.repo.deleteIntegration(found.id);
    if (deleted === null) {
      throw new Conflict('MCP servers use this integration: delete them first.', {
        code: 'mcp_integration_in_use',
      });
    }
    if (!deleted) throw this.access.notFound(ref);
  }

  workspaceAccess(
    principal: Principal,
    ref: string,
  ): Promise<{ integration: McpIntegration; workspaces: McpWorkspaceAccess[] }> {
    return this.access.workspaceAccess(principal, ref);
  }

  /** Which workspaces may use an organisation-level integration: an organisation admin key's to say. */
  async setWorkspaceAccess(
    principal: Principal,
    ref: string,
    input: McpIntegrationWorkspacesInput,
  ): Promise<void> {
    const { integration, change } = await this.access.workspaceAccessChange(
      principal,
      ref,
      input,
      (index) => `workspaces[${index}].id`,
    );
    await this.repo.setWorkspaceAccess(integration.id, change);
    await this.announce(integration, events.ChangeAction.UPDATED);
  }

  async capabilities(
    principal: Principal,
    ref: string,
    query: { page: number; page_size: number; type?: McpCapabilityType | undefined },
  ): Promise<{ data: McpCapability[]; total: number; counts: McpCapabilityCounts }> {
    const integration = await this.get(principal, ref);
    const [data, total] = await this.repo.listCapabilities(integration.id, query.type, {
      offset: (query.page - 1) * query.page_size,
      limit: query.page_size,
    });
    return { data, total, counts: counts(await this.repo.allCapabilities(integration.id)) };
  }

  async allCapabilities(
    integrationId: string,
  ): Promise<{ all: McpCapability[]; counts: McpCapabilityCounts }> {
    const all = await this.repo.allCapabilities(integrationId);
    return { all, counts: counts(all) };
  }

  async switchCapabilities(
    principal: Principal,
    ref: string,
    switches: McpCapabilitySwitch[],
  ): Promise<void> {
    const integration = await this.access.writable(principal, ref);
    const missing = await this.repo.switchCapabilities(integration.id, switches);
    if (missing.length > 0) {
      throw new BadRequest(`Not a capability of the integration: ${missing.slice(0, 5).join(', ')}.`, {
        param: 'capabilities',
        code: 'unknown_capability',
      });
    }
    await this.announce(integration, events.ChangeAction.UPDATED);
  }

  /** Reads the upstream now, and answers the integration as the sync left it. */
  async syncNow(principal: Principal, ref: string): Promise<McpIntegration> {
    const integration = await this.access.writable(principal, ref);
    await this.syncById(integration.id);
    return (await this.repo.integrationById(integration.id)) ?? integration;
  }

  /**
   * The upstream's credentials in the clear (the directory's and the sync's), the mapped ones
   * resolved from admin's secret references. Throws when a value cannot be decrypted or a
   * mapping cannot be resolved; the error never holds a value.
   */
  async credentials(integration: McpIntegration): Promise<McpUpstreamCredentials> {
    const opened = openCredentials(integration, this.secrets);
    const mappings = integration.configurations.secretMappings ?? [];
    if (mappings.length === 0) return opened;
    let values: Record<string, string>;
    try {
      values = await this.mappings.resolve(integration, mappings);
    } catch (err) {
      throw new Error(
        `the integration's secret mappings cannot be resolved: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    if (integration.authType !== 'oauth_client_credentials') {
      delete values.oauth_client_id;
      delete values.oauth_client_secret;
    }
    return withMappedCredentials(opened, values);
  }

  /** Syncs one integration; a failure is recorded on it, never thrown. */
  async syncById(id: string): Promise<void> {
    const integration = await this.repo.integrationById(id);
    if (!integration) return;
    let credentials: McpUpstreamCredentials | null = null;
    try {
      credentials = await this.credentials(integration);
      const result = await readUpstream(integration.url, credentials, {
        ...this.hosts,
        timeoutMs: this.sync.timeoutMs,
      });
      await this.repo.recordSync(id, result, this.nextSync());
      await this.announce(integration, events.ChangeAction.UPDATED);
    } catch (err) {
      const reason = syncErrorOf(err, credentials, this.sync.timeoutMs);
      this.logger?.warn('an MCP integration could not be synced', { mcp_integration_id: id, error: reason });
      await this.repo.recordSyncFailure(id, reason, this.nextSync()).catch(() => undefined);
    }
  }

  /** One scheduled round: claims the integrations due (none another replica holds) and syncs them. */
  async syncDue(): Promise<number> {
    const ids = await this.repo.claimDue(SYNC_BATCH, this.sync.timeoutMs * 2 + 5_000);
    for (const id of ids) await this.syncById(id);
    return ids.length;
  }

  /** Waits for the background syncs started so far. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private syncInBackground(id: string): void {
    const run = this.syncById(id).finally(() => this.pending.delete(run));
    this.pending.add(run);
  }

  private nextSync(): Date {
    return this.sync.intervalSeconds > 0 ? new Date(Date.now() + this.sync.intervalSeconds * 1000) : NEVER;
  }

  private supported(
    authType: CreateMcpIntegrationInput['auth_type'],
    transport: CreateMcpIntegrationInput['transport'] | undefined,
  ): McpIntegration['authType'] {
    if (transport === 'sse') {
      throw new NotImplemented(
        'Only the streamable HTTP transport (`http`) is supported: `sse` is not built.',
        {
          param: 'transport',
        },
      );
    }
    if (authType === 'oauth_auto') {
      throw new NotImplemented(
        'auth_type `oauth_auto` (per-user upstream OAuth) is not built: use `headers` or `oauth_client_credentials`.',
        { param: 'auth_type' },
      );
    }
    return authType;
  }

  private checkAuth(authType: McpIntegration['authType'], stored: McpStoredConfigurations): void {
    const mapped = new Set((stored.secretMappings ?? []).map((m) => m.target_field));
    if (
      authType === 'headers' &&
      Object.keys(stored.sealedHeaders ?? {}).length === 0 &&
      ![...mapped].some((target) => target.startsWith('custom_headers.'))
    ) {
      throw new BadRequest('auth_type `headers` needs at least one of configurations.custom_headers.', {
        param: 'configurations.custom_headers',
      });
    }
    if (authType === 'oauth_client_credentials') {
      for (const [field, value] of [
        ['token_url', stored.tokenUrl],
        ['client_id', stored.clientId],
        ['client_secret', stored.sealedClientSecret],
      ] as const) {
        if (!value && !mapped.has(`oauth_${field}`)) {
          throw new BadRequest(`auth_type \`oauth_client_credentials\` needs configurations.${field}.`, {
            param: `configurations.${field}`,
          });
        }
      }
    }
  }

  private async checkUrls(url: string | undefined, tokenUrl: string | undefined): Promise<void> {
    if (url !== undefined) await checkCustomHost(url, { ...this.hosts, param: 'url' });
    if (tokenUrl !== undefined) {
      await checkCustomHost(tokenUrl, { ...this.hosts, param: 'configurations.token_url' });
    }
  }

  /** Every server of the integration changes with it: gateways drop what they hold of them. */
  private async announce(integration: McpIntegration, action: events.ChangeAction): Promise<void> {
    for (const server of await this.repo.serversOfIntegration(integration.id)) {
      publishMcpServerChange(this.bus, server, action);
    }
  }
}

/** The change gateways listen for: entity "mcp_server", keyed by organisation and slug. */
export function publishMcpServerChange(
  bus: EventBus,
  server: { id: string; organisationId: string; workspaceId: string; slug: string },
  action: events.ChangeAction,
): void {
  publishChange(bus, {
    entity: 'mcp_server',
    entityId: server.id,
    organisationId: server.organisationId,
    workspaceId: server.workspaceId,
    action,
    cacheKey: `${server.organisationId}:${server.slug}`,
  });
}

/** The user behind a user key, else the key itself. */
export function actorOf(principal: Principal): string {
  return principal.userId ?? principal.apiKeyId;
}
