import type { MigrationInterface, QueryRunner } from 'typeorm';

export class WorkspaceDefaults1763700000008 implements MigrationInterface {
  name = 'WorkspaceDefaults1763700000008';

  async up(q: QueryRunner): Promise<void> {
    // Stored by id, shown by slug; archiving a config keeps its row, so the reference never dangles.
    await q.query(`
      ALTER TABLE control_plane.workspaces
        ADD COLUMN user_api_key_config_id uuid REFERENCES control_plane.configs(id)`);
    await q.query(`
      CREATE INDEX workspaces_user_api_key_config_idx ON control_plane.workspaces (user_api_key_config_id)
        WHERE user_api_key_config_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.workspaces DROP COLUMN user_api_key_config_id`);
  }
}
