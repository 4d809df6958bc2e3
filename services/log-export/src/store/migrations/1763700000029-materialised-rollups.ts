import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rollups made from stored logs by a background job rather than kept up to date by every
 * batch stored (see store/rollups.ts): the state of each hour, the daily rollups without the
 * API key, the hourly rollups of metadata values, and the workspaces that have logs. The
 * hours rolled up so far (from the start of their first day) are left to the job to redo, so
 * that the daily and metadata rollups of those hours are made too.
 */
export class MaterialisedRollups1763700000029 implements MigrationInterface {
  name = 'MaterialisedRollups1763700000029';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE log_export.rollup_hours (
        bucket timestamptz PRIMARY KEY,
        version bigint NOT NULL DEFAULT 1,
        materialised_version bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`
      CREATE TABLE log_export.request_rollups_daily (
        bucket timestamptz NOT NULL,
        organisation_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        provider text NOT NULL,
        model text NOT NULL,
        status int NOT NULL,
        cache_status text NOT NULL,
        requests bigint NOT NULL,
        errors bigint NOT NULL,
        cost double precision NOT NULL,
        prompt_tokens bigint NOT NULL,
        completion_tokens bigint NOT NULL,
        total_tokens bigint NOT NULL,
        cached_tokens bigint NOT NULL,
        reasoning_tokens bigint NOT NULL,
        latency_ms_sum bigint NOT NULL,
        latency_ms_histogram bigint[] NOT NULL,
        PRIMARY KEY (organisation_id, workspace_id, bucket, provider, model, status, cache_status)
      )`);
    await q.query(`
      CREATE TABLE log_export.metadata_rollups (
        bucket timestamptz NOT NULL,
        organisation_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        requests bigint NOT NULL,
        cost double precision NOT NULL,
        total_tokens bigint NOT NULL,
        last_seen timestamptz NOT NULL,
        workspace_feedback_requests bigint NOT NULL,
        workspace_feedback_weighted double precision NOT NULL,
        organisation_feedback_requests bigint NOT NULL,
        organisation_feedback_weighted double precision NOT NULL,
        PRIMARY KEY (organisation_id, key, workspace_id, bucket, value)
      )`);
    await q.query(`
      CREATE TABLE log_export.log_workspaces (
        organisation_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        PRIMARY KEY (organisation_id, workspace_id)
      )`);
    await q.query(`
      INSERT INTO log_export.log_workspaces
      SELECT DISTINCT organisation_id, workspace_id FROM log_export.request_rollups`);
    // Every hour from the first day rolled up to the last hour rolled up, so that days can be whole.
    await q.query(`
      INSERT INTO log_export.rollup_hours (bucket)
      SELECT generate_series(date_trunc('day', min(bucket), 'UTC'), max(bucket), interval '1 hour')
        FROM log_export.request_rollups`);
    await q.query(`CREATE INDEX request_rollups_bucket ON log_export.request_rollups (bucket)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX log_export.request_rollups_bucket`);
    await q.query(`DROP TABLE log_export.log_workspaces`);
    await q.query(`DROP TABLE log_export.metadata_rollups`);
    await q.query(`DROP TABLE log_export.request_rollups_daily`);
    await q.query(`DROP TABLE log_export.rollup_hours`);
  }
}
