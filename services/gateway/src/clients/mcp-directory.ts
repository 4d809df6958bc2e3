import { RemoteCache } from '@switchyard/core';
import type { ServiceClient } from '@switchyard/runtime';
import type { mcp } from '@switchyard/proto';

/** Where the MCP gateway finds a server by organisation and slug (or id); null when there is none. */
export interface McpServerSource {
  find(organisationId: string, slug: string): Promise<mcp.McpServerRoute | null>;
}

/**
 * MCP servers as control-plane stores them, read once per organisation and slug and then
 * served from memory; a server not found is remembered briefly (it may be created a moment
 * later). Dropped when an "mcp_server" change event names the organisation, and after the TTL
 * should an event be missed.
 */
export class McpDirectory implements McpServerSource {
  private readonly cache: RemoteCache<mcp.McpServerRoute>;

  constructor(
    private readonly client: ServiceClient<typeof mcp.McpDirectoryService>,
    options: { ttlMs?: number; negativeTtlMs?: number; deadlineMs?: number } = {},
  ) {
    this.cache = new RemoteCache({
      ttlMs: options.ttlMs ?? 60_000,
      negativeTtlMs: options.negativeTtlMs ?? 2_000,
    });
    this.deadlineMs = options.deadlineMs ?? 2_000;
  }

  private readonly deadlineMs: number;

  find(organisationId: string, slug: string): Promise<mcp.McpServerRoute | null> {
    return this.cache.get(`${organisationId}|${slug}`, async () => {
      const { server } = await this.client.getMcpServer(
        { organisationId, idOrSlug: slug },
        { deadlineMs: this.deadlineMs },
      );
      return server ?? null;
    });
  }

  invalidateOrganisation(organisationId: string): void {
    this.cache.invalidatePrefix(`${organisationId}|`);
  }
}
