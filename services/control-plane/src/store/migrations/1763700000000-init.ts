import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1763700000000 implements MigrationInterface {
  name = 'Init1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.organisations (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        slug text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE control_plane.workspaces (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        name text NOT NULL,
        slug text NOT NULL,
        description text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (organisation_id, slug)
      )`);
    await q.query(`
      CREATE TABLE control_plane.api_keys (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid REFERENCES control_plane.workspaces(id),
        kind text NOT NULL CHECK (kind IN ('organisation_admin', 'workspace_service', 'workspace_user')),
        name text NOT NULL,
        description text,
        key_hash text NOT NULL UNIQUE,
        key_hint text NOT NULL,
        scopes jsonb NOT NULL DEFAULT '[]',
        status text NOT NULL CHECK (status IN ('active', 'revoked')),
        user_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        CHECK ((kind = 'organisation_admin') = (workspace_id IS NULL))
      )`);
    await q.query(
      `CREATE INDEX api_keys_organisation_idx ON control_plane.api_keys (organisation_id, created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE control_plane.api_keys`);
    await q.query(`DROP TABLE control_plane.workspaces`);
    await q.query(`DROP TABLE control_plane.organisations`);
  }
}
