import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which workspaces may use an organisation-level integration: a default for all of them
 * (`global_workspace_access`, on for every integration that exists, so none stops working)
 * and each workspace's own setting, which wins over the default.
 */
export class IntegrationWorkspaces1763700000012 implements MigrationInterface {
  name = 'IntegrationWorkspaces1763700000012';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE admin.integrations ADD COLUMN global_workspace_access boolean NOT NULL DEFAULT true`,
    );
    await q.query(`
      CREATE TABLE admin.integration_workspaces (
        integration_id uuid NOT NULL REFERENCES admin.integrations (id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL,
        enabled boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (integration_id, workspace_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.integration_workspaces`);
    await q.query(`ALTER TABLE admin.integrations DROP COLUMN global_workspace_access`);
  }
}
