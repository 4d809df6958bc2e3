import type { MigrationInterface, QueryRunner } from 'typeorm';

export class PricingAdjustments1763700000003 implements MigrationInterface {
  name = 'PricingAdjustments1763700000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin.integrations ADD COLUMN pricing_adjustments jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE admin.integrations DROP COLUMN pricing_adjustments`);
  }
}
