import type { MigrationInterface, QueryRunner } from 'typeorm';

const MCP_SCOPES = ['mcp_integrations', 'mcp_servers'].flatMap((resource) =>
  ['create', 'read', 'list', 'update', 'delete'].map((action) => `${resource}.${action}`),
);

/**
 * MCP integrations (an upstream MCP server's URL and credentials, of the organisation or of one
 * workspace), which workspaces may use an organisation-level one, the capabilities a sync read
 * from each, and the MCP servers: a workspace's instance of an integration, served by the
 * gateways at /mcp/{slug}, with its governance (tool access, key and user access, guardrails,
 * costs) on its row.
 *
 * The scopes join the workspace scopes as the policy scopes did: an organisation admin key that
 * can read the organisation's settings gets them all; any other key `mcp_*.<action>` for each
 * `configs.<action>` it holds.
 */
export class Mcp1763700000040 implements MigrationInterface {
  name = 'Mcp1763700000040';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.mcp_integrations (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid REFERENCES control_plane.workspaces(id),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
        slug text NOT NULL,
        description text,
        url text NOT NULL,
        auth_type text NOT NULL CHECK (auth_type IN ('none', 'headers', 'oauth_client_credentials')),
        transport text NOT NULL CHECK (transport IN ('http')),
        configurations jsonb NOT NULL DEFAULT '{}'::jsonb,
        global_workspace_access boolean NOT NULL DEFAULT false,
        owner_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        server_name text,
        server_version text,
        protocol_version text,
        capability_flags jsonb,
        sync_status text NOT NULL DEFAULT 'pending' CHECK (sync_status IN ('pending', 'syncing', 'synced', 'failed')),
        last_synced_at timestamptz,
        sync_error text,
        sync_claimed_until timestamptz,
        next_sync_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (organisation_id, slug)
      )`);
    await q.query(
      `CREATE INDEX mcp_integrations_next_sync_idx ON control_plane.mcp_integrations (next_sync_at)`,
    );
    await q.query(`
      CREATE TABLE control_plane.mcp_integration_workspaces (
        integration_id uuid NOT NULL REFERENCES control_plane.mcp_integrations(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        enabled boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (integration_id, workspace_id)
      )`);
    await q.query(`
      CREATE TABLE control_plane.mcp_capabilities (
        integration_id uuid NOT NULL REFERENCES control_plane.mcp_integrations(id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type IN ('tool', 'prompt', 'resource', 'resource_template')),
        name text NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        definition jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (integration_id, type, name)
      )`);
    await q.query(`
      CREATE TABLE control_plane.mcp_servers (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        integration_id uuid NOT NULL REFERENCES control_plane.mcp_integrations(id),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
        slug text NOT NULL,
        description text,
        owner_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        default_tool_access text NOT NULL DEFAULT 'allow' CHECK (default_tool_access IN ('allow', 'deny')),
        default_key_access text NOT NULL DEFAULT 'allow' CHECK (default_key_access IN ('allow', 'deny')),
        default_user_access text NOT NULL DEFAULT 'allow' CHECK (default_user_access IN ('allow', 'deny')),
        input_guardrails jsonb NOT NULL DEFAULT '[]'::jsonb,
        output_guardrails jsonb NOT NULL DEFAULT '[]'::jsonb,
        default_tool_cost double precision NOT NULL DEFAULT 0 CHECK (default_tool_cost >= 0),
        tool_settings jsonb NOT NULL DEFAULT '[]'::jsonb,
        capabilities jsonb NOT NULL DEFAULT '[]'::jsonb,
        key_access jsonb NOT NULL DEFAULT '[]'::jsonb,
        user_access jsonb NOT NULL DEFAULT '[]'::jsonb,
        UNIQUE (organisation_id, slug)
      )`);
    await q.query(
      `CREATE INDEX mcp_servers_workspace_idx ON control_plane.mcp_servers (organisation_id, workspace_id, created_at, id)`,
    );
    for (const scope of MCP_SCOPES) {
      const action = scope.slice(scope.indexOf('.') + 1);
      await q.query(
        `UPDATE control_plane.api_keys
            SET scopes = scopes || jsonb_build_array($1::text)
          WHERE NOT scopes @> jsonb_build_array($1::text)
            AND (
              (kind = 'organisation_admin' AND scopes @> '["organisation_settings.read"]'::jsonb)
              OR (kind <> 'organisation_admin' AND scopes @> jsonb_build_array('configs.' || $2::text))
            )`,
        [scope, action],
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE control_plane.api_keys SET scopes = scopes - $1::text[]`, [MCP_SCOPES]);
    await q.query(`DROP TABLE control_plane.mcp_servers`);
    await q.query(`DROP TABLE control_plane.mcp_capabilities`);
    await q.query(`DROP TABLE control_plane.mcp_integration_workspaces`);
    await q.query(`DROP TABLE control_plane.mcp_integrations`);
  }
}
