import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Configs1763700000004 implements MigrationInterface {
  name = 'Configs1763700000004';

  async up(q: QueryRunner): Promise<void> {
    // A config and its first version point at each other: the check waits for the commit.
    await q.query(`
      CREATE TABLE control_plane.configs (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid NOT NULL REFERENCES control_plane.workspaces(id),
        name text NOT NULL,
        slug text NOT NULL,
        config jsonb NOT NULL,
        status text NOT NULL CHECK (status IN ('active', 'archived')),
        is_default int NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
        owner_id uuid NOT NULL,
        updated_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        current_version_id uuid NOT NULL,
        UNIQUE (organisation_id, slug)
      )`);
    await q.query(`
      CREATE TABLE control_plane.config_versions (
        id uuid PRIMARY KEY,
        config_id uuid NOT NULL REFERENCES control_plane.configs(id),
        version int NOT NULL CHECK (version >= 1),
        config jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by uuid NOT NULL,
        UNIQUE (config_id, version)
      )`);
    await q.query(`
      ALTER TABLE control_plane.configs
        ADD CONSTRAINT configs_current_version_fk FOREIGN KEY (current_version_id)
        REFERENCES control_plane.config_versions(id) DEFERRABLE INITIALLY DEFERRED`);
    await q.query(
      `CREATE INDEX configs_workspace_idx ON control_plane.configs (organisation_id, workspace_id, created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.configs DROP CONSTRAINT configs_current_version_fk`);
    await q.query(`DROP TABLE control_plane.config_versions`);
    await q.query(`DROP TABLE control_plane.configs`);
  }
}
