import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WorkspaceSecuritySettings1763700000016 implements MigrationInterface {
  name = 'WorkspaceSecuritySettings1763700000016';

  async up(q: QueryRunner): Promise<void> {
    // Sections a workspace overrides; which sections it may override is the organisation's choice.
    await q.query(
      `ALTER TABLE control_plane.workspaces ADD COLUMN security_settings jsonb NOT NULL DEFAULT '{}'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.workspaces DROP COLUMN security_settings`);
  }
}
