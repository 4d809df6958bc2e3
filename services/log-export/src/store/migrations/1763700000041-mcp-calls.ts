import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * MCP tool calls on the request log: the server, integration, JSON-RPC method, tool and
 * outcome of a call through the MCP gateway. Nullable without a default: adding it rewrites
 * no partition.
 */
export class McpCalls1763700000041 implements MigrationInterface {
  name = 'McpCalls1763700000041';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs ADD COLUMN mcp jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs DROP COLUMN mcp`);
  }
}
