import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Init1763700000002 implements MigrationInterface {
  name = 'Init1763700000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE log_export.request_logs (
        id text PRIMARY KEY,
        organisation_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        api_key_id uuid NOT NULL,
        trace_id text,
        span_id text,
        parent_span_id text,
        span_name text,
        metadata jsonb NOT NULL DEFAULT '{}',
        method text NOT NULL,
        path text NOT NULL,
        provider text,
        model text,
        integration_slug text,
        status int NOT NULL,
        stream boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL,
        latency_ms int NOT NULL,
        request_body text NOT NULL,
        response_body text NOT NULL,
        usage jsonb NOT NULL DEFAULT '{}',
        cost double precision NOT NULL DEFAULT 0,
        error_message text,
        cache_status text
      )`);
    await q.query(
      `CREATE INDEX request_logs_workspace_time ON log_export.request_logs (workspace_id, created_at DESC)`,
    );
    await q.query(`CREATE INDEX request_logs_trace ON log_export.request_logs (workspace_id, trace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE log_export.request_logs`);
  }
}
