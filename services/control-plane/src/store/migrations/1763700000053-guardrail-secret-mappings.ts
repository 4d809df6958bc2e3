import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A guardrail's secret mappings: headers of its webhook checks whose values come from admin's
 * secret references, resolved when gateways read the guardrail. Empty for every guardrail so far.
 */
export class GuardrailSecretMappings1763700000053 implements MigrationInterface {
  name = 'GuardrailSecretMappings1763700000053';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE control_plane.guardrails ADD COLUMN secret_mappings jsonb NOT NULL DEFAULT '[]'::jsonb`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE control_plane.guardrails DROP COLUMN secret_mappings`);
  }
}
