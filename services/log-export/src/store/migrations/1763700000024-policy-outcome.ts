import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What rate and usage limit policies did with a request: its decision, a denial, its holds. */
export class PolicyOutcome1763700000024 implements MigrationInterface {
  name = 'PolicyOutcome1763700000024';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs ADD COLUMN policy jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs DROP COLUMN policy`);
  }
}
