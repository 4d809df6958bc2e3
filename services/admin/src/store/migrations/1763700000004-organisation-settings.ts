import type { MigrationInterface, QueryRunner } from 'typeorm';

export class OrganisationSettings1763700000004 implements MigrationInterface {
  name = 'OrganisationSettings1763700000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE admin.organisation_settings (
        organisation_id uuid PRIMARY KEY,
        settings jsonb NOT NULL DEFAULT '{}',
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by text NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE admin.organisation_settings`);
  }
}
