import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The cache namespace, force-refresh and models-endpoint headers a request was sent with. */
export class RequestOptions1763700000007 implements MigrationInterface {
  name = 'RequestOptions1763700000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE log_export.request_logs
        ADD COLUMN cache_namespace text,
        ADD COLUMN cache_force_refresh boolean NOT NULL DEFAULT false,
        ADD COLUMN models_endpoint boolean NOT NULL DEFAULT false
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE log_export.request_logs
        DROP COLUMN cache_namespace, DROP COLUMN cache_force_refresh, DROP COLUMN models_endpoint
    `);
  }
}
