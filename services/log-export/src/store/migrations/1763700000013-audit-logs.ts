import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The audit log: one row per successful management write, keyed by its event id (an event seen twice is stored once). */
export class AuditLogs1763700000013 implements MigrationInterface {
  name = 'AuditLogs1763700000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE log_export.audit_logs (
        id text PRIMARY KEY,
        organisation_id uuid NOT NULL,
        workspace_id text,
        api_key_id text,
        user_id text,
        auth_method text NOT NULL,
        key_name text,
        method text NOT NULL,
        route text NOT NULL,
        path text NOT NULL,
        scope text,
        status int NOT NULL,
        resource_id text,
        occurred_at timestamptz NOT NULL,
        client_ip text,
        user_agent text,
        request_id text,
        service text NOT NULL
      )`);
    await q.query(
      `CREATE INDEX audit_logs_organisation_time ON log_export.audit_logs (organisation_id, occurred_at DESC, id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE log_export.audit_logs`);
  }
}
