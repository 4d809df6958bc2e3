import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `audit_logs.list` joins the organisation scopes. Organisation admin keys that can read the
 * organisation's settings may read its audit log too: each such key gets the new scope.
 */
export class AuditLogScope1763700000014 implements MigrationInterface {
  name = 'AuditLogScope1763700000014';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE control_plane.api_keys
         SET scopes = scopes || '["audit_logs.list"]'::jsonb
       WHERE kind = 'organisation_admin'
         AND scopes @> '["organisation_settings.read"]'::jsonb
         AND NOT scopes @> '["audit_logs.list"]'::jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE control_plane.api_keys
         SET scopes = scopes - 'audit_logs.list'
       WHERE kind = 'organisation_admin'`);
  }
}
