import { BadRequest, Conflict, NotFound, type Logger, type PageQuery } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import type { EventBus } from '@switchyard/adapters';
import { events, type mcp } from '@switchyard/proto';
import type { z } from 'zod';
import type {
  McpCapability,
  McpCapabilitySwitch,
  McpCapabilityType,
  McpIntegration,
  McpKeyAccess,
  McpRepository,
  McpServer,
  McpServerChanges,
  McpToolSetting,
} from '../store/mcp.repository.ts';
import type {
  createMcpServerBody,
  keyAccessBody,
  listMcpServersQuery,
  updateMcpServerBody,
  userAccessBody,
} from './mcp.schemas.ts';
import { probeUpstream, syncErrorOf } from './mcp-client.ts';
import {
  actorOf,
  mcpSlugFrom,
  publishMcpServerChange,
  type McpCapabilityCounts,
  type McpHostOptions,
  type McpIntegrationService,
} from './mcp-integration.service.ts';
import type { McpUpstreamCredentials } from './mcp-secrets.ts';
import type { WorkspaceService } from './workspace.service.ts';

export type CreateMcpServerInput = z.output<typeof createMcpServerBody>;
export type UpdateMcpServerInput = z.output<typeof updateMcpServerBody>;
export type ListMcpServersInput = z.output<typeof listMcpServersQuery>;
export type UserAccessInput = z.output<typeof userAccessBody>;
export type KeyAccessInput = z.output<typeof keyAccessBody>;

/** Finds a guardrail by id or slug in an organisation (the guardrail repository's `find`). */
export type GuardrailLookup = (
  organisationId: string,
  ref: string,
) => Promise<{ id: string; workspaceId: string | null; status: string } | null>;

const SLUG_ATTEMPTS = 5;

/** A server's capability as the API shows it: the integration's, with the server's own switch. */
export interface McpServerCapability extends McpCapability {
  integrationEnabled: boolean;
}

export interface RegistryPage {
  servers: Array<McpServer & { integration: McpIntegration | null }>;
  nextCursor: string | null;
}

const encodeCursor = (createdAt: string, id: string) =>
  Buffer.from(JSON.stringify({ c: createdAt, i: id })).toString('base64url');

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      c?: unknown;
      i?: unknown;
    };
    if (
      typeof parsed.c === 'string' &&
      typeof parsed.i === 'string' &&
      /^[0-9a-f-]{36}$/i.test(parsed.i) &&
      !Number.isNaN(Date.parse(parsed.c))
    ) {
      return { createdAt: parsed.c, id: parsed.i };
    }
  } catch {
    // refused below
  }
  throw new BadRequest('The cursor is not one this API gave: start again without it.', {
    param: 'cursor',
    code: 'invalid_cursor',
  });
}

/**
 * MCP servers: a workspace's instance of an MCP integration enabled for it, served by the
 * gateways at /mcp/{slug} and governed here (which tools, which keys and users, guardrails and
 * costs). An organisation admin key manages any workspace's; a workspace key its own. Every
 * write announces an "mcp_server" change, so gateways drop what they hold of the server.
 */
export class McpServerService {
  constructor(
    private readonly repo: McpRepository,
    private readonly integrations: McpIntegrationService,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly guardrails: GuardrailLookup,
    private readonly bus: EventBus,
    private readonly hosts: McpHostOptions & { timeoutMs: number },
    private readonly logger?: Pick<Logger, 'error'>,
  ) {}

  async create(principal: Principal, input: CreateMcpServerInput): Promise<McpServer> {
    const workspaceId = await this.workspaceFor(principal, input.workspace_id);
    const integration = await this.integrationFor(principal, input.mcp_integration_id, workspaceId);
    const governance = await this.governance(principal.organisationId, workspaceId, input);
    for (let attempt = 0; attempt < (input.slug ? 1 : SLUG_ATTEMPTS); attempt++) {
      const created = await this.repo.insertServer({
        organisationId: principal.organisationId,
        workspaceId,
        integrationId: integration.id,
        name: input.name,
        slug: input.slug ?? mcpSlugFrom(input.name),
        description: input.description ?? null,
        ownerId: actorOf(principal),
        defaultToolAccess: input.default_tool_access ?? 'allow',
        defaultKeyAccess: 'allow',
        defaultUserAccess: 'allow',
        inputGuardrails: governance.inputGuardrails ?? [],
        outputGuardrails: governance.outputGuardrails ?? [],
        defaultToolCost: input.default_tool_cost ?? 0,
        toolSettings: governance.toolSettings ?? [],
        capabilities: [],
        keyAccess: [],
        userAccess: [],
      });
      if (created) {
        publishMcpServerChange(this.bus, created, events.ChangeAction.CREATED);
        return created;
      }
    }
    if (input.slug) {
      throw new Conflict(`The slug '${input.slug}' is taken in the organisation.`, {
        param: 'slug',
        code: 'slug_taken',
      });
    }
    throw new Conflict('Could not find a free slug for the MCP server: try again.', { code: 'slug_taken' });
  }

  async get(principal: Principal, ref: string): Promise<McpServer> {
    const found = await this.repo.findServer(principal.organisationId, ref);
    if (!found || (principal.workspaceId !== null && found.workspaceId !== principal.workspaceId)) {
      throw new NotFound(`MCP server '${ref}' not found.`);
    }
    return found;
  }

  async integrationOf(server: McpServer): Promise<McpIntegration | null> {
    return this.repo.integrationById(server.integrationId);
  }

  async list(principal: Principal, query: ListMcpServersInput, page: PageQuery) {
    const workspaceId = query.workspace_id
      ? (await this.workspaces.getWorkspace(principal, query.workspace_id)).id
      : (principal.workspaceId ?? undefined);
    const [servers, total] = await this.repo.listServers(
      principal.organisationId,
      { workspaceId, id: query.id, search: query.search },
      page,
    );
    const integrations = new Map<string, McpIntegration | null>();
    for (const server of servers) {
      if (!integrations.has(server.integrationId)) {
        integrations.set(server.integrationId, await this.repo.integrationById(server.integrationId));
      }
    }
    return {
      servers: servers.map((server) => ({
        ...server,
        integration: integrations.get(server.integrationId) ?? null,
      })),
      total,
    };
  }

  async update(principal: Principal, ref: string, input: UpdateMcpServerInput): Promise<McpServer> {
    const found = await this.get(principal, ref);
    const governance = await this.governance(principal.organisationId, found.workspaceId, input);
    return this.write(found, {
      name: input.name,
      description: input.description,
      defaultToolAccess: input.default_tool_access,
      defaultToolCost: input.default_tool_cost,
      ...governance,
    });
  }

  async delete(principal: Principal, ref: string): Promise<void> {
    const found = await this.get(principal, ref);
    if (!(await this.repo.deleteServer(found.id))) throw new NotFound(`MCP server '${ref}' not found.`);
    publishMcpServerChange(this.bus, found, events.ChangeAction.DELETED);
  }

  /** Connects to the upstream and initialises: whether the server can be reached, and how fast. */
  async test(principal: Principal, ref: string) {
    const server = await this.get(principal, ref);
    const integration = await this.repo.integrationById(server.integrationId);
    if (!integration) throw new NotFound(`MCP server '${ref}' not found.`);
    const started = Date.now();
    let credentials: McpUpstreamCredentials | null = null;
    try {
      credentials = await this.integrations.credentials(integration);
      const { serverName } = await probeUpstream(integration.url, credentials, this.hosts);
      return {
        success: true,
        status_code: 200,
        response_time_ms: Date.now() - started,
        url: integration.url,
        server_name: serverName ?? '',
        error: null,
      };
    } catch (err) {
      return {
        success: false,
        status_code: null,
        response_time_ms: Date.now() - started,
        url: integration.url,
        server_name: integration.serverName ?? '',
        error: syncErrorOf(err, credentials, this.hosts.timeoutMs),
      };
    }
  }

  /** The integration's capabilities with the server's switches: on at the server unless switched off there and at the integration. */
  async capabilities(
    principal: Principal,
    ref: string,
    query: { page: number; page_size: number; type?: McpCapabilityType | undefined },
  ): Promise<{ data: McpServerCapability[]; total: number; counts: McpCapabilityCounts }> {
    const server = await this.get(principal, ref);
    const { all } = await this.integrations.allCapabilities(server.integrationId);
    const switches = new Map(server.capabilities.map((s) => [`${s.type}:${s.name}`, s.enabled]));
    const merged = all.map((capability) => {
      const own = switches.get(`${capability.type}:${capability.name}`);
      const enabled =
        capability.enabled && (own ?? (capability.type !== 'tool' || server.defaultToolAccess === 'allow'));
      return { ...capability, enabled, integrationEnabled: capability.enabled };
    });
    const typed = query.type ? merged.filter((c) => c.type === query.type) : merged;
    const offset = (query.page - 1) * query.page_size;
    const count = (type: McpCapabilityType) => {
      const of = merged.filter((c) => c.type === type);
      return { total: of.length, enabled: of.filter((c) => c.enabled).length };
    };
    return {
      data: typed.slice(offset, offset + query.page_size),
      total: typed.length,
      counts: {
        tools: count('tool'),
        prompts: count('prompt'),
        resources: count('resource'),
        resource_templates: count('resource_template'),
      },
    };
  }

  /** Switches capabilities on or off at the server (merged by type and name). */
  async switchCapabilities(
    principal: Principal,
    ref: string,
    switches: McpCapabilitySwitch[],
  ): Promise<void> {
    const server = await this.get(principal, ref);
    const { all } = await this.integrations.allCapabilities(server.integrationId);
    const known = new Set(all.map((c) => `${c.type}:${c.name}`));
    const unknown = switches.filter((s) => !known.has(`${s.type}:${s.name}`));
    if (unknown.length > 0) {
      throw new BadRequest(
        `Not a capability of the server's integration: ${unknown
          .slice(0, 5)
          .map((s) => `${s.type} '${s.name}'`)
          .join(', ')}.`,
        { param: 'capabilities', code: 'unknown_capability' },
      );
    }
    const merged = new Map(server.capabilities.map((s) => [`${s.type}:${s.name}`, s]));
    for (const s of switches)
      merged.set(`${s.type}:${s.name}`, { type: s.type, name: s.name, enabled: s.enabled });
    await this.write(server, { capabilities: [...merged.values()] });
  }

  async userAccess(
    principal: Principal,
    ref: string,
    query: { page: number; page_size: number; search?: string | undefined },
  ) {
    const server = await this.get(principal, ref);
    const users = await this.repo.workspaceUsers(server.workspaceId, query.search);
    const overrides = new Map(server.userAccess.map((u) => [u.userId, u.enabled]));
    const rows = users.map((user) => ({
      ...user,
      enabled: overrides.get(user.userId) ?? server.defaultUserAccess === 'allow',
      hasOverride: overrides.has(user.userId),
    }));
    const offset = (query.page - 1) * query.page_size;
    return {
      data: rows.slice(offset, offset + query.page_size),
      total: rows.length,
      defaultUserAccess: server.defaultUserAccess,
    };
  }

  /** Merges per user (members of the server's workspace), and sets the default when given. */
  async setUserAccess(principal: Principal, ref: string, input: UserAccessInput): Promise<void> {
    const server = await this.get(principal, ref);
    const merged = new Map(server.userAccess.map((u) => [u.userId, u]));
    if (input.user_access?.length) {
      const members = new Set(
        (await this.repo.workspaceUsers(server.workspaceId, undefined)).map((u) => u.userId),
      );
      for (const [index, entry] of input.user_access.entries()) {
        if (!members.has(entry.user_id)) {
          throw new BadRequest(`User '${entry.user_id}' is not a member of the server's workspace.`, {
            param: `user_access[${index}].user_id`,
          });
        }
        merged.set(entry.user_id, { userId: entry.user_id, enabled: entry.enabled });
      }
    }
    await this.write(server, {
      userAccess: [...merged.values()],
      defaultUserAccess: input.default_user_access,
    });
  }

  async keyAccess(principal: Principal, ref: string) {
    const server = await this.get(principal, ref);
    return { defaultKeyAccess: server.defaultKeyAccess, keyAccess: server.keyAccess };
  }

  /** Merges per key (keys of the server's workspace), or replaces them all with `replace`. */
  async setKeyAccess(principal: Principal, ref: string, input: KeyAccessInput): Promise<McpServer> {
    const server = await this.get(principal, ref);
    const entries = input.key_access ?? [];
    const ofWorkspace = await this.repo.apiKeysOfWorkspace(
      server.workspaceId,
      entries.map((e) => e.api_key_id),
    );
    const merged = new Map<string, McpKeyAccess>(
      input.replace ? [] : server.keyAccess.map((k) => [k.apiKeyId, k]),
    );
    for (const [index, entry] of entries.entries()) {
      if (!ofWorkspace.has(entry.api_key_id)) {
        throw new BadRequest(`API key '${entry.api_key_id}' is not a key of the server's workspace.`, {
          param: `key_access[${index}].api_key_id`,
        });
      }
      merged.set(entry.api_key_id, {
        apiKeyId: entry.api_key_id,
        enabled: entry.enabled,
        allowedTools: [...new Set(entry.allowed_tools ?? [])],
        deniedTools: [...new Set(entry.denied_tools ?? [])],
      });
    }
    return this.write(server, {
      keyAccess: [...merged.values()],
      defaultKeyAccess: input.default_key_access,
    });
  }

  /** The servers the caller can use, in keyset order: a workspace key its workspace's. */
  async registry(
    principal: Principal,
    query: { cursor?: string | undefined; limit: number; search?: string | undefined },
  ): Promise<RegistryPage> {
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    const found = await this.repo.serversAfter(
      principal.organisationId,
      { workspaceId: principal.workspaceId ?? undefined, search: query.search },
      after,
      query.limit + 1,
    );
    const page = found.slice(0, query.limit);
    const last = page.at(-1);
    const servers = [];
    for (const server of page) {
      servers.push({ ...server, integration: await this.repo.integrationById(server.integrationId) });
    }
    return {
      servers,
      nextCursor: found.length > query.limit && last ? encodeCursor(last.createdAtKey, last.id) : null,
    };
  }

  /**
   * What a gateway needs to serve the server: its upstream with the credentials in the clear,
   * its tool switches, key and user access, guardrails and costs. Null when there is none.
   */
  async route(organisationId: string, ref: string): Promise<mcp.McpServerRoute | null> {
    const server = await this.repo.findServer(organisationId, ref);
    if (!server) return null;
    const integration = await this.repo.integrationById(server.integrationId);
    if (!integration) return null;
    let enabled =
      (await this.repo.workspaceActive(server.workspaceId)) &&
      (await this.repo.enabledForWorkspace(integration, server.workspaceId));
    let auth: McpUpstreamCredentials = {
      type: integration.authType,
      headers: {},
      tokenUrl: '',
      clientId: '',
      clientSecret: '',
      scope: '',
    };
    try {
      auth = await this.integrations.credentials(integration);
    } catch (err) {
      // Without its credentials the upstream cannot be called as configured: every call is refused.
      this.logger?.error('an MCP integration’s credentials cannot be had; its servers are disabled', {
        mcp_integration_id: integration.id,
        error: String(err),
      });
      enabled = false;
    }
    const { all } = await this.integrations.allCapabilities(integration.id);
    const tools = all.filter((c) => c.type === 'tool');
    const serverSwitches = server.capabilities.filter((c) => c.type === 'tool');
    const disabled = new Set([
      ...tools.filter((t) => !t.enabled).map((t) => t.name),
      ...serverSwitches.filter((s) => !s.enabled).map((s) => s.name),
    ]);
    const enabledTools = serverSwitches.filter((s) => s.enabled && !disabled.has(s.name)).map((s) => s.name);
    return {
      $typeName: 'switchyard.mcp.v1.McpServerRoute',
      id: server.id,
      slug: server.slug,
      name: server.name,
      organisationId: server.organisationId,
      workspaceId: server.workspaceId,
      integrationId: integration.id,
      integrationSlug: integration.slug,
      url: integration.url,
      auth: {
        $typeName: 'switchyard.mcp.v1.McpUpstreamAuth',
        type: auth.type,
        headers: auth.headers,
        tokenUrl: auth.tokenUrl,
        clientId: auth.clientId,
        clientSecret: auth.clientSecret,
        scope: auth.scope,
      },
      passthroughHeaders: integration.configurations.passthroughHeaders ?? [],
      enabled,
      defaultToolAccess: server.defaultToolAccess,
      enabledTools,
      disabledTools: [...disabled],
      defaultKeyAccess: server.defaultKeyAccess,
      keyAccess: server.keyAccess.map((k) => ({
        $typeName: 'switchyard.mcp.v1.McpKeyAccess',
        apiKeyId: k.apiKeyId,
        enabled: k.enabled,
        allowedTools: k.allowedTools,
        deniedTools: k.deniedTools,
      })),
      defaultUserAccess: server.defaultUserAccess,
      userAccess: server.userAccess.map((u) => ({
        $typeName: 'switchyard.mcp.v1.McpUserAccess',
        userId: u.userId,
        enabled: u.enabled,
      })),
      inputGuardrails: server.inputGuardrails,
      outputGuardrails: server.outputGuardrails,
      defaultToolCost: server.defaultToolCost,
      tools: server.toolSettings.map((t) => ({
        $typeName: 'switchyard.mcp.v1.McpToolSettings',
        name: t.name,
        hasCost: t.cost !== undefined,
        cost: t.cost ?? 0,
        inputGuardrails: t.inputGuardrails ?? [],
        outputGuardrails: t.outputGuardrails ?? [],
      })),
    };
  }

  private async write(server: McpServer, changes: McpServerChanges): Promise<McpServer> {
    const updated = await this.repo.updateServer(server.id, changes);
    if (!updated) throw new NotFound(`MCP server '${server.slug}' not found.`);
    publishMcpServerChange(this.bus, updated, events.ChangeAction.UPDATED);
    return updated;
  }

  private async workspaceFor(principal: Principal, ref: string | undefined): Promise<string> {
    if (ref) return (await this.workspaces.getWorkspace(principal, ref)).id;
    if (principal.workspaceId) return principal.workspaceId;
    throw new BadRequest(
      'An organisation admin key names the workspace of the MCP server: give workspace_id.',
      {
        param: 'workspace_id',
      },
    );
  }

  private async integrationFor(
    principal: Principal,
    ref: string,
    workspaceId: string,
  ): Promise<McpIntegration> {
    const integration = await this.repo.findIntegration(principal.organisationId, ref);
    if (
      !integration ||
      (integration.workspaceId !== null && integration.workspaceId !== workspaceId) ||
      (principal.workspaceId !== null &&
        !(await this.repo.enabledForWorkspace(integration, principal.workspaceId)))
    ) {
      throw new NotFound(`MCP integration '${ref}' not found.`, { param: 'mcp_integration_id' });
    }
    if (!(await this.repo.enabledForWorkspace(integration, workspaceId))) {
      throw new BadRequest(`MCP integration '${ref}' is not enabled for the workspace.`, {
        param: 'mcp_integration_id',
        code: 'mcp_integration_not_enabled',
      });
    }
    return integration;
  }

  /** Guardrail references resolved to ids (of the organisation or the workspace, active), per tool too. */
  private async governance(
    organisationId: string,
    workspaceId: string,
    input: {
      input_guardrails?: string[] | undefined;
      output_guardrails?: string[] | undefined;
      tool_settings?:
        | Array<{
            name: string;
            cost?: number | undefined;
            input_guardrails?: string[] | undefined;
            output_guardrails?: string[] | undefined;
          }>
        | undefined;
    },
  ): Promise<Pick<McpServerChanges, 'inputGuardrails' | 'outputGuardrails' | 'toolSettings'>> {
    const resolve = async (refs: string[] | undefined, param: string): Promise<string[] | undefined> => {
      if (refs === undefined) return undefined;
      const ids: string[] = [];
      for (const [index, ref] of refs.entries()) {
        const found = await this.guardrails(organisationId, ref);
        if (
          !found ||
          found.status !== 'active' ||
          (found.workspaceId !== null && found.workspaceId !== workspaceId)
        ) {
          throw new BadRequest(
            `Guardrail '${ref}' not found in the organisation or the server's workspace.`,
            {
              param: `${param}[${index}]`,
              code: 'guardrail_not_found',
            },
          );
        }
        if (!ids.includes(found.id)) ids.push(found.id);
      }
      return ids;
    };
    let toolSettings: McpToolSetting[] | undefined;
    if (input.tool_settings !== undefined) {
      toolSettings = [];
      const names = new Set<string>();
      for (const [index, tool] of input.tool_settings.entries()) {
        if (names.has(tool.name)) {
          throw new BadRequest(`Tool '${tool.name}' is named twice.`, {
            param: `tool_settings[${index}].name`,
          });
        }
        names.add(tool.name);
        toolSettings.push({
          name: tool.name,
          ...(tool.cost === undefined ? {} : { cost: tool.cost }),
          inputGuardrails:
            (await resolve(tool.input_guardrails, `tool_settings[${index}].input_guardrails`)) ?? [],
          outputGuardrails:
            (await resolve(tool.output_guardrails, `tool_settings[${index}].output_guardrails`)) ?? [],
        });
      }
    }
    return {
      inputGuardrails: await resolve(input.input_guardrails, 'input_guardrails'),
      outputGuardrails: await resolve(input.output_guardrails, 'output_guardrails'),
      toolSettings,
    };
  }
}
