import type { MigrationInterface, QueryRunner } from 'typeorm';
import { grantWorkspaceScopes, revokeWorkspaceScopes } from './grant-scopes.ts';

const AGENT_SCOPES = ['create', 'read', 'list', 'update', 'delete'].map(
  (action) => `agent_integrations.${action}`,
);

/**
 * Agent integrations: an upstream agent's endpoint, how to call it (headers sealed) and its
 * agent card, of the organisation or of one workspace; and which workspaces may use an
 * organisation-level one.
 *
 * The scopes join the workspace scopes as the MCP ones did: an organisation admin key that can
 * read the organisation's settings gets them all; any other key `agent_integrations.<action>`
 * for each `configs.<action>` it holds.
 */
export class AgentIntegrations1763700000051 implements MigrationInterface {
  name = 'AgentIntegrations1763700000051';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.agent_integrations (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid REFERENCES control_plane.workspaces(id),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
        slug text NOT NULL,
        description text,
        url text NOT NULL,
        auth_type text NOT NULL CHECK (auth_type IN ('none', 'headers')),
        configurations jsonb NOT NULL DEFAULT '{}'::jsonb,
        agent_card jsonb,
        agent_card_fetched_at timestamptz,
        global_workspace_access boolean NOT NULL DEFAULT false,
        owner_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (organisation_id, slug)
      )`);
    await q.query(
      `CREATE INDEX agent_integrations_list_idx ON control_plane.agent_integrations (organisation_id, created_at DESC, id)`,
    );
    await q.query(`
      CREATE TABLE control_plane.agent_integration_workspaces (
        integration_id uuid NOT NULL REFERENCES control_plane.agent_integrations(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        enabled boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (integration_id, workspace_id)
      )`);
    await grantWorkspaceScopes(q, AGENT_SCOPES);
  }

  async down(q: QueryRunner): Promise<void> {
    await revokeWorkspaceScopes(q, AGENT_SCOPES);
    await q.query(`DROP TABLE control_plane.agent_integration_workspaces`);
    await q.query(`DROP TABLE control_plane.agent_integrations`);
  }
}
