import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ApiKeyRotation1763700000009 implements MigrationInterface {
  name = 'ApiKeyRotation1763700000009';

  async up(q: QueryRunner): Promise<void> {
    // Named periods (weekly, monthly) are stored as their number of days.
    await q.query(`
      ALTER TABLE control_plane.api_keys
        ADD COLUMN rotation_period_days int CHECK (rotation_period_days BETWEEN 1 AND 365),
        ADD COLUMN next_rotation_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE control_plane.api_keys
        DROP COLUMN next_rotation_at,
        DROP COLUMN rotation_period_days`);
  }
}
