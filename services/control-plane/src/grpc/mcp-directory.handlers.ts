import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import type { mcp } from '@switchyard/proto';
import type { McpServerService } from '../domain/mcp-server.service.ts';

/** The gateways serve MCP servers. */
export const mcpDirectoryCallers: CallerRules<typeof mcp.McpDirectoryService> = {
  getMcpServer: ['gateway'],
};

export function mcpDirectoryHandlers(
  service: McpServerService,
): ServiceHandlers<typeof mcp.McpDirectoryService> {
  return {
    getMcpServer: async ({ organisationId, idOrSlug }) => {
      if (!organisationId || !idOrSlug) return {};
      const server = await service.route(organisationId, idOrSlug);
      return server ? { server } : {};
    },
  };
}
