import type { MigrationInterface, QueryRunner } from 'typeorm';
import { grantWorkspaceScopes, revokeWorkspaceScopes } from './grant-scopes.ts';

const PROMPT_SCOPES = ['create', 'read', 'list', 'update', 'delete', 'render'].map(
  (action) => `prompts.${action}`,
);

/**
 * Prompts and prompt partials of a workspace (one table, told apart by `kind`), their
 * immutable numbered versions, and the other workspaces of the organisation each is shared
 * with. A slug is unique in the organisation among the live ones of its kind.
 *
 * The scopes join the workspace scopes as the MCP scopes did: an organisation admin key that
 * can read the organisation's settings gets them all; any other key `prompts.<action>` for
 * each `configs.<action>` it holds (`prompts.render` with `configs.read`).
 */
export class Prompts1763700000050 implements MigrationInterface {
  name = 'Prompts1763700000050';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.prompts (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        kind text NOT NULL CHECK (kind IN ('prompt', 'partial')),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
        slug text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
        default_version integer NOT NULL DEFAULT 1,
        owner_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX prompts_live_slug_idx ON control_plane.prompts (organisation_id, kind, slug) WHERE status = 'active'`,
    );
    await q.query(
      `CREATE INDEX prompts_workspace_idx ON control_plane.prompts (organisation_id, workspace_id, kind, created_at, id)`,
    );
    await q.query(`
      CREATE TABLE control_plane.prompt_versions (
        id uuid PRIMARY KEY,
        prompt_id uuid NOT NULL REFERENCES control_plane.prompts(id),
        version integer NOT NULL CHECK (version >= 1),
        template text NOT NULL,
        model text,
        virtual_key text,
        parameters jsonb NOT NULL DEFAULT '{}'::jsonb,
        functions jsonb,
        tools jsonb,
        tool_choice jsonb,
        template_metadata jsonb,
        description text,
        label_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (prompt_id, version)
      )`);
    await q.query(`
      CREATE TABLE control_plane.prompt_shares (
        prompt_id uuid NOT NULL REFERENCES control_plane.prompts(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (prompt_id, workspace_id)
      )`);
    await q.query(`CREATE INDEX prompt_shares_workspace_idx ON control_plane.prompt_shares (workspace_id)`);
    await grantWorkspaceScopes(q, PROMPT_SCOPES, (action) => (action === 'render' ? 'read' : action));
  }

  async down(q: QueryRunner): Promise<void> {
    await revokeWorkspaceScopes(q, PROMPT_SCOPES);
    await q.query(`DROP TABLE control_plane.prompt_shares`);
    await q.query(`DROP TABLE control_plane.prompt_versions`);
    await q.query(`DROP TABLE control_plane.prompts`);
  }
}
