import type { MigrationInterface, QueryRunner } from 'typeorm';

export class KeySettings1763700000012 implements MigrationInterface {
  name = 'KeySettings1763700000012';

  async up(q: QueryRunner): Promise<void> {
    // An organisation's key provisioning and rotation choices; a missing field means the default.
    await q.query(`
      CREATE TABLE control_plane.organisation_key_settings (
        organisation_id uuid PRIMARY KEY REFERENCES control_plane.organisations(id),
        settings jsonb NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text
      )`);
    // A workspace may override the organisation's user_api_key_auto_create; null follows it.
    await q.query(`ALTER TABLE control_plane.workspaces ADD COLUMN user_api_key_auto_create boolean`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.workspaces DROP COLUMN user_api_key_auto_create`);
    await q.query(`DROP TABLE control_plane.organisation_key_settings`);
  }
}
