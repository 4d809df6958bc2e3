import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Which saved config a request ran with, the target that answered and its retries. */
export class Route1763700000006 implements MigrationInterface {
  name = 'Route1763700000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE log_export.request_logs
        ADD COLUMN config_slug text,
        ADD COLUMN route_path text,
        ADD COLUMN retry_count int NOT NULL DEFAULT 0
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE log_export.request_logs
        DROP COLUMN config_slug, DROP COLUMN route_path, DROP COLUMN retry_count
    `);
  }
}
