import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Guardrail definitions of an organisation, each of one workspace or (workspace_id null) of
 * the organisation, and their versions: one per change of checks or actions. A guardrail and
 * its first version point at each other, so that reference waits for the commit.
 */
export class Guardrails1763700000024 implements MigrationInterface {
  name = 'Guardrails1763700000024';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE control_plane.guardrails (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL REFERENCES control_plane.organisations(id),
        workspace_id uuid REFERENCES control_plane.workspaces(id),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
        slug text NOT NULL,
        checks jsonb NOT NULL CHECK (jsonb_typeof(checks) = 'array' AND jsonb_array_length(checks) >= 1),
        actions jsonb NOT NULL CHECK (jsonb_typeof(actions) = 'object'),
        status text NOT NULL CHECK (status IN ('active', 'archived')),
        owner_id uuid NOT NULL,
        updated_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        current_version_id uuid NOT NULL,
        UNIQUE (organisation_id, slug)
      )`);
    await q.query(`
      CREATE TABLE control_plane.guardrail_versions (
        id uuid PRIMARY KEY,
        guardrail_id uuid NOT NULL REFERENCES control_plane.guardrails(id),
        version int NOT NULL CHECK (version >= 1),
        checks jsonb NOT NULL,
        actions jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by uuid NOT NULL,
        UNIQUE (guardrail_id, version)
      )`);
    await q.query(`
      ALTER TABLE control_plane.guardrails
        ADD CONSTRAINT guardrails_current_version_fk FOREIGN KEY (current_version_id)
        REFERENCES control_plane.guardrail_versions(id) DEFERRABLE INITIALLY DEFERRED`);
    await q.query(
      `CREATE INDEX guardrails_organisation_idx ON control_plane.guardrails (organisation_id, status, created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.guardrails DROP CONSTRAINT guardrails_current_version_fk`);
    await q.query(`DROP TABLE control_plane.guardrail_versions`);
    await q.query(`DROP TABLE control_plane.guardrails`);
  }
}
