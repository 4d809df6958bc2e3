import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Legacy plugin integrations: a plugin provider and its credentials (each value encrypted) instead of an AI provider. */
export class PluginCredentials1763700000007 implements MigrationInterface {
  name = 'PluginCredentials1763700000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin.integrations ALTER COLUMN provider DROP NOT NULL`);
    await q.query(`ALTER TABLE admin.integrations ADD COLUMN plugin_provider_id text`);
    await q.query(`ALTER TABLE admin.integrations ADD COLUMN encrypted_credentials jsonb`);
    await q.query(`
      ALTER TABLE admin.integrations ADD CONSTRAINT integrations_one_provider
        CHECK ((provider IS NULL) <> (plugin_provider_id IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM admin.integrations WHERE plugin_provider_id IS NOT NULL`);
    await q.query(`ALTER TABLE admin.integrations DROP CONSTRAINT integrations_one_provider`);
    await q.query(`ALTER TABLE admin.integrations DROP COLUMN encrypted_credentials`);
    await q.query(`ALTER TABLE admin.integrations DROP COLUMN plugin_provider_id`);
    await q.query(`ALTER TABLE admin.integrations ALTER COLUMN provider SET NOT NULL`);
  }
}
