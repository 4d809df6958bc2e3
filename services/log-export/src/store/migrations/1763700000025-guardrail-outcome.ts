import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What each guardrail did with a request: its action, why, and every check's verdict. */
export class GuardrailOutcome1763700000025 implements MigrationInterface {
  name = 'GuardrailOutcome1763700000025';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs ADD COLUMN guardrails jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs DROP COLUMN guardrails`);
  }
}
