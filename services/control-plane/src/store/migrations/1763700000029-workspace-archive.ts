import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleted workspaces are archived, not dropped: keys, configs, logs and tokens still name
 * them. An archived workspace is found by nothing, and its slug is free for a new one.
 */
export class WorkspaceArchive1763700000029 implements MigrationInterface {
  name = 'WorkspaceArchive1763700000029';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.workspaces ADD COLUMN archived_at timestamptz`);
    await q.query(`ALTER TABLE control_plane.workspaces DROP CONSTRAINT workspaces_organisation_id_slug_key`);
    await q.query(`
      CREATE UNIQUE INDEX workspaces_active_slug_key ON control_plane.workspaces (organisation_id, slug)
        WHERE archived_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Fails while an archived workspace shares its slug with a live one.
    await q.query(`DROP INDEX control_plane.workspaces_active_slug_key`);
    await q.query(`
      ALTER TABLE control_plane.workspaces
        ADD CONSTRAINT workspaces_organisation_id_slug_key UNIQUE (organisation_id, slug)`);
    await q.query(`ALTER TABLE control_plane.workspaces DROP COLUMN archived_at`);
  }
}
