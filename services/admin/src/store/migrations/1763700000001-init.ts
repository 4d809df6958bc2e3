import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1763700000001 implements MigrationInterface {
  name = 'Init1763700000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.integrations (
        id uuid PRIMARY KEY,
        organisation_id uuid NOT NULL,
        workspace_id uuid,
        slug text NOT NULL,
        name text NOT NULL,
        description text,
        provider text NOT NULL,
        encrypted_key text,
        configurations jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL CHECK (status IN ('active', 'archived')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // A slug names one live integration per organisation; deleted ones are archived and free it.
    await q.query(
      `CREATE UNIQUE INDEX integrations_live_slug ON admin.integrations (organisation_id, slug) WHERE status = 'active'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.integrations`);
  }
}
