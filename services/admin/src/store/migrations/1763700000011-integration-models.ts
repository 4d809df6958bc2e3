import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The models set on an integration, each with its own settings (custom host, custom headers):
 * one jsonb list per integration, so that a replacement is one update.
 */
export class IntegrationModels1763700000011 implements MigrationInterface {
  name = 'IntegrationModels1763700000011';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin.integrations ADD COLUMN models jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin.integrations DROP COLUMN models`);
  }
}
