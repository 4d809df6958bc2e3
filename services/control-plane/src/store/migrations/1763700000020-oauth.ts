import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OAuth 2.1 authorization server: registered clients, one-time authorization codes, and
 * access and refresh tokens. Secrets, codes and tokens are stored only as SHA-256 hashes.
 */
export class OAuth1763700000020 implements MigrationInterface {
  name = 'OAuth1763700000020';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.oauth_clients (
        client_id text PRIMARY KEY,
        client_secret_hash text,
        client_name text,
        redirect_uris jsonb NOT NULL,
        token_endpoint_auth_method text NOT NULL
          CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
        grant_types jsonb NOT NULL,
        response_types jsonb NOT NULL,
        scope text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK ((token_endpoint_auth_method = 'none') = (client_secret_hash IS NULL))
      )`);
    // The consenting caller is a member (user_id) or a JWT subject (subject, user_id null).
    await q.query(`
      CREATE TABLE control_plane.oauth_authorization_codes (
        code_hash text PRIMARY KEY,
        client_id text NOT NULL REFERENCES control_plane.oauth_clients(client_id) ON DELETE CASCADE,
        redirect_uri text NOT NULL,
        code_challenge text NOT NULL,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        user_id uuid,
        subject text,
        display_name text NOT NULL,
        scopes jsonb NOT NULL,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz,
        -- The tokens issued for the code: revoked when the code is presented again.
        family_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX oauth_authorization_codes_expires_idx ON control_plane.oauth_authorization_codes (expires_at)`,
    );
    // A family is every token descended from one authorization code through refreshes.
    await q.query(`
      CREATE TABLE control_plane.oauth_tokens (
        id uuid PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
        family_id uuid NOT NULL,
        client_id text NOT NULL REFERENCES control_plane.oauth_clients(client_id) ON DELETE CASCADE,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        user_id uuid,
        subject text,
        display_name text NOT NULL,
        scopes jsonb NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_tokens_family_idx ON control_plane.oauth_tokens (family_id)`);
    await q.query(`CREATE INDEX oauth_tokens_expires_idx ON control_plane.oauth_tokens (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.oauth_tokens`);
    await q.query(`DROP TABLE control_plane.oauth_authorization_codes`);
    await q.query(`DROP TABLE control_plane.oauth_clients`);
  }
}
