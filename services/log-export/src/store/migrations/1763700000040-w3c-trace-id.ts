import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C trace a request belongs to, so that its log joins the trace. Nullable without a
 * default: adding it rewrites no partition.
 */
export class W3cTraceId1763700000040 implements MigrationInterface {
  name = 'W3cTraceId1763700000040';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs ADD COLUMN w3c_trace_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs DROP COLUMN w3c_trace_id`);
  }
}
