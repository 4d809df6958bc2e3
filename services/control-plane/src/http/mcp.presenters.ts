import type { McpCapability, McpIntegration, McpServer } from '../store/mcp.repository.ts';
import { maskConfigurations } from '../domain/mcp-secrets.ts';
import type { McpServerCapability } from '../domain/mcp-server.service.ts';
import { integrationHead, integrationTail } from './integration.presenters.ts';

/** An MCP integration, its credentials masked. */
export function presentMcpIntegration(integration: McpIntegration & { workspacesCount?: number }) {
  return {
    ...integrationHead(integration),
    transport: integration.transport,
    configurations: maskConfigurations(integration.configurations),
    secret_mappings: integration.configurations.secretMappings ?? [],
    ...integrationTail(integration),
    sync_status: integration.syncStatus,
    ...(integration.workspacesCount === undefined ? {} : { workspaces_count: integration.workspacesCount }),
  };
}

export function presentMcpMetadata(integration: McpIntegration) {
  return {
    server_name: integration.serverName,
    server_version: integration.serverVersion,
    protocol_version: integration.protocolVersion,
    capability_flags: integration.capabilityFlags,
    sync_status: integration.syncStatus,
    last_synced_at: integration.lastSyncedAt?.toISOString() ?? null,
    sync_error: integration.syncError,
  };
}

export function presentMcpCapability(capability: McpCapability | McpServerCapability) {
  const d = capability.definition;
  const shown = {
    name: capability.name,
    type: capability.type,
    title: d.title ?? null,
    description: d.description ?? null,
    icons: d.icons ?? null,
    enabled: capability.enabled,
    ...('integrationEnabled' in capability ? { integration_enabled: capability.integrationEnabled } : {}),
    created_at: capability.createdAt.toISOString(),
    last_updated_at: capability.updatedAt.toISOString(),
    input_schema: d.input_schema ?? null,
    output_schema: d.output_schema ?? null,
    execution: d.execution ?? null,
    annotations: d.annotations ?? null,
    arguments: d.arguments ?? null,
    uri: d.uri ?? null,
    uri_template: d.uri_template ?? null,
    mime_type: d.mime_type ?? null,
    size: d.size ?? null,
  };
  return shown;
}

/** Our governance of a server, as its GET and list answer it. */
function governance(server: McpServer) {
  return {
    default_tool_access: server.defaultToolAccess,
    input_guardrails: server.inputGuardrails,
    output_guardrails: server.outputGuardrails,
    default_tool_cost: server.defaultToolCost,
    tool_settings: server.toolSettings.map((t) => ({
      name: t.name,
      ...(t.cost === undefined ? {} : { cost: t.cost }),
      input_guardrails: t.inputGuardrails ?? [],
      output_guardrails: t.outputGuardrails ?? [],
    })),
    default_key_access: server.defaultKeyAccess,
    default_user_access: server.defaultUserAccess,
  };
}

export function presentMcpServer(server: McpServer, integration: McpIntegration | null, gatewayUrl: string) {
  return {
    id: server.id,
    slug: server.slug,
    name: server.name,
    status: 'active',
    description: server.description,
    organisation_id: server.organisationId,
    workspace_id: server.workspaceId,
    owner_id: server.ownerId,
    created_at: server.createdAt.toISOString(),
    last_updated_at: server.updatedAt.toISOString(),
    url: gatewayUrl,
    mcp_integration_id: server.integrationId,
    mcp_integration_details: integration
      ? {
          id: integration.id,
          slug: integration.slug,
          status: 'active',
          configurations: maskConfigurations(integration.configurations),
          url: integration.url,
          transport: integration.transport,
          auth_type: integration.authType,
        }
      : null,
    ...governance(server),
  };
}

export function presentMcpServerListItem(
  server: McpServer & { workspaceName: string; workspaceSlug: string; integration: McpIntegration | null },
  gatewayUrl: string,
) {
  return {
    id: server.id,
    organisation_id: server.organisationId,
    name: server.name,
    description: server.description,
    status: 'active',
    created_at: server.createdAt.toISOString(),
    owner_id: server.ownerId,
    slug: server.slug,
    workspace_id: server.workspaceId,
    workspace_name: server.workspaceName,
    workspace_slug: server.workspaceSlug,
    mcp_integration_id: server.integrationId,
    mcp_integration_slug: server.integration?.slug ?? null,
    mcp_integration_url: server.integration?.url ?? null,
    auth_type: server.integration?.authType ?? 'none',
    url: gatewayUrl,
    ...governance(server),
  };
}

export function presentKeyAccess(access: { defaultKeyAccess: string; keyAccess: McpServer['keyAccess'] }) {
  return {
    default_key_access: access.defaultKeyAccess,
    key_access: access.keyAccess.map((k) => ({
      api_key_id: k.apiKeyId,
      enabled: k.enabled,
      allowed_tools: k.allowedTools,
      denied_tools: k.deniedTools,
    })),
  };
}
