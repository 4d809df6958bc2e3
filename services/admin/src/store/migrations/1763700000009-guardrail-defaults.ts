import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The organisation's default guardrails of each phase (control-plane's guardrail ids, in the
 * order they run) and the workspaces exempted from them. One row per organisation that ever
 * set either.
 */
export class GuardrailDefaults1763700000009 implements MigrationInterface {
  name = 'GuardrailDefaults1763700000009';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.organisation_guardrail_defaults (
        organisation_id uuid PRIMARY KEY,
        input_guardrail_ids uuid[] NOT NULL DEFAULT '{}',
        output_guardrail_ids uuid[] NOT NULL DEFAULT '{}',
        input_excluded_workspace_ids uuid[] NOT NULL DEFAULT '{}',
        output_excluded_workspace_ids uuid[] NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.organisation_guardrail_defaults`);
  }
}
