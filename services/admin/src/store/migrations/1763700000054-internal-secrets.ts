import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets Switchyard keeps itself: manager type `internal`, whose value is held in
 * `encrypted_value` as SecretBox ciphertext (of its JSON: a string or an object of scalars) and
 * which has no path. Every other manager keeps a path and no value.
 */
export class InternalSecrets1763700000054 implements MigrationInterface {
  name = 'InternalSecrets1763700000054';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE admin.secret_references DROP CONSTRAINT IF EXISTS secret_references_manager_type_check`,
    );
    await q.query(`ALTER TABLE admin.secret_references ADD COLUMN encrypted_value text`);
    await q.query(`ALTER TABLE admin.secret_references ALTER COLUMN secret_path DROP NOT NULL`);
    await q.query(`
      ALTER TABLE admin.secret_references
        ADD CONSTRAINT secret_references_manager_type_check
          CHECK (manager_type IN ('internal', 'aws_sm', 'azure_kv', 'hashicorp_vault')),
        ADD CONSTRAINT secret_references_internal_value CHECK (
          CASE WHEN manager_type = 'internal'
            THEN encrypted_value IS NOT NULL AND secret_path IS NULL
            ELSE encrypted_value IS NULL AND secret_path IS NOT NULL
          END)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM admin.secret_references WHERE manager_type = 'internal'`);
    await q.query(
      `ALTER TABLE admin.secret_references DROP CONSTRAINT secret_references_internal_value, DROP CONSTRAINT secret_references_manager_type_check`,
    );
    await q.query(`ALTER TABLE admin.secret_references ALTER COLUMN secret_path SET NOT NULL`);
    await q.query(`ALTER TABLE admin.secret_references DROP COLUMN encrypted_value`);
    await q.query(`
      ALTER TABLE admin.secret_references ADD CONSTRAINT secret_references_manager_type_check
        CHECK (manager_type IN ('aws_sm', 'azure_kv', 'hashicorp_vault'))`);
  }
}
