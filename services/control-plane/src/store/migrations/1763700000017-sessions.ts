import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Sessions1763700000017 implements MigrationInterface {
  name = 'Sessions1763700000017';

  async up(q: QueryRunner): Promise<void> {
    // Browser sessions: the cookie's secret is stored only as its SHA-256.
    await q.query(`
      CREATE TABLE control_plane.sessions (
        id uuid PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        subject text NOT NULL,
        scopes jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        user_agent text,
        client_ip text
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.sessions`);
  }
}
