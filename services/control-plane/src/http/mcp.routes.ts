import type { Request } from 'express';
import { NotImplemented, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { McpIntegrationService } from '../domain/mcp-integration.service.ts';
import type { McpServerService } from '../domain/mcp-server.service.ts';
import {
  capabilitiesBody,
  capabilitiesQuery,
  connectionsQuery,
  createMcpIntegrationBody,
  createMcpServerBody,
  keyAccessBody,
  listMcpIntegrationsQuery,
  listMcpServersQuery,
  mcpIntegrationWorkspacesBody,
  registryQuery,
  updateMcpIntegrationBody,
  updateMcpServerBody,
  userAccessBody,
  userAccessQuery,
} from '../domain/mcp.schemas.ts';
import {
  presentKeyAccess,
  presentMcpCapability,
  presentMcpIntegration,
  presentMcpMetadata,
  presentMcpServer,
  presentMcpServerListItem,
} from './mcp.presenters.ts';

/** Where gateways serve MCP servers: MCP_GATEWAY_BASE_URL, else the origin the request came to. */
export type GatewayBase = string | undefined;

function gatewayUrl(base: GatewayBase, req: Request, slug: string): string {
  const origin = base ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  return `${origin.replace(/\/+$/, '')}/mcp/${encodeURIComponent(slug)}`;
}

const withMore = <T>(data: T[], total: number, offset: number) => ({
  ...listBody(data, total),
  has_more: offset + data.length < total,
});

/** `/mcp-integrations`, mounted under `/v2`: upstream MCP servers and how to call them. */
export function mcpIntegrationRouter(integrations: McpIntegrationService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'mcp_integrations.create',
      summary:
        'Adds an MCP integration: an upstream MCP server (streamable HTTP) and its credentials. Its capabilities are read in the background (metadata `sync_status` "pending" until then).',
      query: 'none',
      body: createMcpIntegrationBody,
    },
    async (req, res, _next, input) => {
      const created = await integrations.create(requirePrincipal(req), input.body(req));
      res.json({ id: created.id, slug: created.slug });
    },
  );
  router.get(
    '/',
    {
      scope: 'mcp_integrations.list',
      summary:
        "Lists the MCP integrations the key can see: a workspace key its workspace's and the organisation's enabled for it.",
      query: listMcpIntegrationsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const page = input.page(req);
      const [found, total] = await integrations.list(requirePrincipal(req), input.query(req), page);
      res.json(withMore(found.map(presentMcpIntegration), total, page.offset));
    },
  );
  router.get(
    '/:id',
    {
      scope: 'mcp_integrations.read',
      summary: 'One MCP integration, by id or slug, its credentials masked.',
      query: 'none',
    },
    async (req, res) => {
      res.json(presentMcpIntegration(await integrations.get(requirePrincipal(req), req.params.id)));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'mcp_integrations.update',
      summary: 'Changes an MCP integration; a masked credential sent back keeps its stored value.',
      query: 'none',
      body: updateMcpIntegrationBody,
    },
    async (req, res, _next, input) => {
      const updated = await integrations.update(requirePrincipal(req), req.params.id, input.body(req));
      res.json({ id: updated.id, slug: updated.slug });
    },
  );
  router.delete(
    '/:id',
    {
      scope: 'mcp_integrations.delete',
      summary: 'Deletes an MCP integration no MCP server uses.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await integrations.delete(requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
  router.get(
    '/:id/workspaces',
    {
      scope: 'mcp_integrations.read',
      summary: 'Which workspaces may use an organisation-level MCP integration.',
      query: 'none',
    },
    async (req, res) => {
      const { integration, workspaces } = await integrations.workspaceAccess(
        requirePrincipal(req),
        req.params.id,
      );
      res.json({
        data: workspaces.map((w) => ({
          id: w.workspaceId,
          enabled: w.enabled,
          status: 'active',
          created_at: w.createdAt.toISOString(),
          last_updated_at: w.updatedAt.toISOString(),
        })),
        global_workspace_access:
          integration.workspaceId === null ? { enabled: integration.globalWorkspaceAccess } : null,
        total: workspaces.length,
      });
    },
  );
  router.put(
    '/:id/workspaces',
    {
      scope: 'mcp_integrations.update',
      summary: 'Enables or disables an organisation-level MCP integration per workspace, or for all of them.',
      query: 'none',
      body: mcpIntegrationWorkspacesBody,
    },
    async (req, res, _next, input) => {
      await integrations.setWorkspaceAccess(requirePrincipal(req), req.params.id, input.body(req));
      res.json({});
    },
  );
  router.get(
    '/:id/metadata',
    {
      scope: 'mcp_integrations.read',
      summary: 'What the last sync read of the upstream: its name, version, protocol and capability flags.',
      query: 'none',
    },
    async (req, res) => {
      res.json(presentMcpMetadata(await integrations.get(requirePrincipal(req), req.params.id)));
    },
  );
  router.post(
    '/:id/sync',
    {
      scope: 'mcp_integrations.update',
      summary: "Reads the upstream's capabilities now (within a deadline) and answers the metadata.",
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      res.json(presentMcpMetadata(await integrations.syncNow(requirePrincipal(req), req.params.id)));
    },
  );
  router.get(
    '/:id/capabilities',
    {
      scope: 'mcp_integrations.read',
      summary:
        'The tools, prompts, resources and resource templates the upstream offers, with their switches.',
      query: capabilitiesQuery,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const found = await integrations.capabilities(requirePrincipal(req), req.params.id, query);
      res.json({
        data: found.data.map(presentMcpCapability),
        counts: found.counts,
        total: found.total,
        has_more: (query.page - 1) * query.page_size + found.data.length < found.total,
      });
    },
  );
  router.put(
    '/:id/capabilities',
    {
      scope: 'mcp_integrations.update',
      summary: 'Switches capabilities on or off for every server of the integration.',
      query: 'none',
      body: capabilitiesBody,
    },
    async (req, res, _next, input) => {
      await integrations.switchCapabilities(
        requirePrincipal(req),
        req.params.id,
        input.body(req).capabilities,
      );
      res.json({ success: true });
    },
  );
  return router;
}

/** `/mcp-servers`, mounted under `/v2`: a workspace's MCP servers, served by gateways at /mcp/{slug}. */
export function mcpServerRouter(
  servers: McpServerService,
  bodyLimit: string,
  base: GatewayBase,
): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'mcp_servers.create',
      summary: 'Adds an MCP server to a workspace: an MCP integration enabled for it, with its governance.',
      query: 'none',
      body: createMcpServerBody,
    },
    async (req, res, _next, input) => {
      const created = await servers.create(requirePrincipal(req), input.body(req));
      res.json({ id: created.id, slug: created.slug });
    },
  );
  router.get(
    '/',
    {
      scope: 'mcp_servers.list',
      summary:
        "Lists the MCP servers the key can see: a workspace key its workspace's. `url` is where gateways serve each.",
      query: listMcpServersQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const page = input.page(req);
      const found = await servers.list(requirePrincipal(req), input.query(req), page);
      res.json(
        withMore(
          found.servers.map((server) => presentMcpServerListItem(server, gatewayUrl(base, req, server.slug))),
          found.total,
          page.offset,
        ),
      );
    },
  );
  router.get(
    '/:id',
    {
      scope: 'mcp_servers.read',
      summary: 'One MCP server, by id or slug, with its governance.',
      query: 'none',
    },
    async (req, res) => {
      const server = await servers.get(requirePrincipal(req), req.params.id);
      res.json(
        presentMcpServer(server, await servers.integrationOf(server), gatewayUrl(base, req, server.slug)),
      );
    },
  );
  router.put(
    '/:id',
    {
      scope: 'mcp_servers.update',
      summary: "Changes an MCP server's name, description or governance.",
      query: 'none',
      body: updateMcpServerBody,
    },
    async (req, res, _next, input) => {
      await servers.update(requirePrincipal(req), req.params.id, input.body(req));
      res.json({});
    },
  );
  router.delete(
    '/:id',
    { scope: 'mcp_servers.delete', summary: 'Deletes an MCP server.', query: 'none', body: 'none' },
    async (req, res) => {
      await servers.delete(requirePrincipal(req), req.params.id);
      res.json({});
    },
  );
  router.post(
    '/:id/test',
    {
      scope: 'mcp_servers.read',
      summary: 'Connects to the upstream and initialises an MCP session: whether it answers, and how fast.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      res.json(await servers.test(requirePrincipal(req), req.params.id));
    },
  );
  router.get(
    '/:id/capabilities',
    {
      scope: 'mcp_servers.read',
      summary: "The integration's capabilities with the server's own switches.",
      query: capabilitiesQuery,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const found = await servers.capabilities(requirePrincipal(req), req.params.id, query);
      res.json({
        data: found.data.map(presentMcpCapability),
        counts: found.counts,
        total: found.total,
        has_more: (query.page - 1) * query.page_size + found.data.length < found.total,
      });
    },
  );
  router.put(
    '/:id/capabilities',
    {
      scope: 'mcp_servers.update',
      summary:
        'Switches capabilities on or off at the server (with `default_tool_access` deny: the allow-list).',
      query: 'none',
      body: capabilitiesBody,
    },
    async (req, res, _next, input) => {
      await servers.switchCapabilities(requirePrincipal(req), req.params.id, input.body(req).capabilities);
      res.json({ success: true });
    },
  );
  router.get(
    '/:id/user-access',
    {
      scope: 'mcp_servers.read',
      summary: "Which of the workspace's users may use the server.",
      query: userAccessQuery,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const found = await servers.userAccess(requirePrincipal(req), req.params.id, query);
      res.json({
        data: found.data.map((u) => ({
          user_id: u.userId,
          first_name: u.firstName,
          last_name: u.lastName,
          enabled: u.enabled,
          has_override: u.hasOverride,
          connection_status: 'not_connected',
        })),
        default_user_access: found.defaultUserAccess,
        total: found.total,
        has_more: (query.page - 1) * query.page_size + found.data.length < found.total,
      });
    },
  );
  router.put(
    '/:id/user-access',
    {
      scope: 'mcp_servers.update',
      summary: 'Sets per-user access (merged by user) and the default for users without a setting.',
      query: 'none',
      body: userAccessBody,
    },
    async (req, res, _next, input) => {
      await servers.setUserAccess(requirePrincipal(req), req.params.id, input.body(req));
      res.json({ success: true });
    },
  );
  router.get(
    '/:id/key-access',
    {
      scope: 'mcp_servers.read',
      summary: 'Which API keys of the workspace may call which tools.',
      query: 'none',
    },
    async (req, res) => {
      res.json(presentKeyAccess(await servers.keyAccess(requirePrincipal(req), req.params.id)));
    },
  );
  router.put(
    '/:id/key-access',
    {
      scope: 'mcp_servers.update',
      summary:
        'Sets per-key access (merged by key, or replaced with `replace`) and the default for other keys.',
      query: 'none',
      body: keyAccessBody,
    },
    async (req, res, _next, input) => {
      const updated = await servers.setKeyAccess(requirePrincipal(req), req.params.id, input.body(req));
      res.json(presentKeyAccess(updated));
    },
  );
  router.get(
    '/:id/connections',
    {
      scope: 'mcp_servers.read',
      summary: "Users' upstream OAuth connections: none exist, as per-user upstream OAuth is not built.",
      query: connectionsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      input.query(req);
      await servers.get(requirePrincipal(req), req.params.id);
      res.json({ data: [], total: 0, has_more: false });
    },
  );
  router.delete(
    '/:id/connections',
    {
      scope: 'mcp_servers.update',
      summary: 'Not built: per-user upstream OAuth connections do not exist (501).',
      query: connectionsQuery,
      body: 'none',
    },
    async (req) => {
      await servers.get(requirePrincipal(req), req.params.id);
      throw new NotImplemented(
        'Per-user upstream OAuth connections are not built (auth_type `oauth_auto`): there is no connection to delete.',
      );
    },
  );
  return router;
}

/** `/mcp-registry`, mounted under `/v2`: the caller's MCP servers in the official MCP registry's list shape. */
export function mcpRegistryRouter(servers: McpServerService, base: GatewayBase): ScopedRouter {
  const router = new ScopedRouter();
  router.get(
    '/servers',
    {
      scope: 'mcp_servers.list',
      summary:
        'The MCP servers the key can use, as the MCP registry lists servers: `cursor` (opaque, from `metadata.nextCursor`), `limit` 1–100, `search`.',
      query: registryQuery,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const page = await servers.registry(requirePrincipal(req), query);
      res.json({
        servers: page.servers.map((server) => ({
          server: {
            name: server.slug,
            title: server.name,
            description: server.description ?? server.name,
            version: server.integration?.serverVersion ?? '0.0.0',
            remotes: [{ type: 'streamable-http', url: gatewayUrl(base, req, server.slug) }],
          },
          _meta: {
            'io.switchyard/server': {
              id: server.id,
              workspace_id: server.workspaceId,
              mcp_integration_id: server.integrationId,
              created_at: server.createdAt.toISOString(),
              updated_at: server.updatedAt.toISOString(),
            },
          },
        })),
        metadata: { nextCursor: page.nextCursor, count: page.servers.length },
      });
    },
  );
  return router;
}
