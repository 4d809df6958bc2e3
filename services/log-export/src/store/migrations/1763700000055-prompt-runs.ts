import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Saved prompts on the request log: the prompt (id and slug) and version a prompt completion
 * ran. Nullable without a default: adding it rewrites no partition.
 */
export class PromptRuns1763700000055 implements MigrationInterface {
  name = 'PromptRuns1763700000055';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs ADD COLUMN prompt jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs DROP COLUMN prompt`);
  }
}
