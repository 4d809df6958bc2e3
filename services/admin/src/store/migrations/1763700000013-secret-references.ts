import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organisation's secret references: where a secret is kept (AWS Secrets Manager, HashiCorp
 * Vault, Azure Key Vault) and how to fetch it, the secret fields of its auth config as SecretBox
 * ciphertext. A slug names one reference of an organisation. Integrations map their key or
 * settings to references: one jsonb list per integration, each entry naming a reference by id.
 */
export class SecretReferences1763700000013 implements MigrationInterface {
  name = 'SecretReferences1763700000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.secret_references (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        name text NOT NULL,
        slug text NOT NULL,
        description text,
        manager_type text NOT NULL CHECK (manager_type IN ('aws_sm', 'azure_kv', 'hashicorp_vault')),
        auth_config jsonb NOT NULL,
        secret_path text NOT NULL,
        secret_key text,
        allow_all_workspaces boolean NOT NULL DEFAULT true,
        allowed_workspaces jsonb NOT NULL DEFAULT '[]',
        tags jsonb,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE UNIQUE INDEX secret_references_slug ON admin.secret_references (organisation_id, slug)`,
    );
    await q.query(
      `CREATE INDEX secret_references_by_organisation ON admin.secret_references (organisation_id, created_at, id)`,
    );
    await q.query(`ALTER TABLE admin.integrations ADD COLUMN secret_mappings jsonb NOT NULL DEFAULT '[]'`);
    await q.query(
      `CREATE INDEX integrations_secret_mappings ON admin.integrations USING gin (secret_mappings jsonb_path_ops)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX admin.integrations_secret_mappings`);
    await q.query(`ALTER TABLE admin.integrations DROP COLUMN secret_mappings`);
    await q.query(`DROP TABLE admin.secret_references`);
  }
}
