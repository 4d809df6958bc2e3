import type { MigrationInterface, QueryRunner } from 'typeorm';

const DAY_MS = 86_400_000;

/** Every column of a request log, in the order of the table. */
const COLUMNS = `id, organisation_id, workspace_id, api_key_id, trace_id, span_id, parent_span_id, span_name,
  metadata, method, path, provider, model, integration_slug, status, stream, created_at, latency_ms,
  request_body, response_body, usage, cost, error_message, cache_status, config_slug, route_path,
  retry_count, cache_namespace, cache_force_refresh, models_endpoint, policy, guardrails`;

/** The histogram bounds of request_rollups when it was made (see LATENCY_BUCKETS_MS). */
const LATENCY_BUCKETS_MS = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];

/**
 * Request logs partitioned by day of `created_at`, so that old days are dropped whole and
 * searches read only the days they ask for; the primary key becomes (id, created_at), as a
 * partitioned table's unique keys must hold the partition key (an event's time never changes,
 * so an event delivered twice is still stored once). The rows stored so far move over, each
 * day into its own partition. Also the hourly rollups analytics read, filled from those rows.
 */
export class PartitionedRequestLogs1763700000027 implements MigrationInterface {
  name = 'PartitionedRequestLogs1763700000027';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE log_export.request_logs RENAME TO request_logs_unpartitioned`);
    await q.query(`DROP INDEX log_export.request_logs_workspace_time, log_export.request_logs_trace`);
    await q.query(`ALTER TABLE log_export.request_logs_unpartitioned DROP CONSTRAINT request_logs_pkey`);
    await q.query(`
      CREATE TABLE log_export.request_logs (
        id text NOT NULL,
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
        cache_status text,
        config_slug text,
        route_path text,
        retry_count int NOT NULL DEFAULT 0,
        cache_namespace text,
        cache_force_refresh boolean NOT NULL DEFAULT false,
        models_endpoint boolean NOT NULL DEFAULT false,
        policy jsonb,
        guardrails jsonb,
        PRIMARY KEY (id, created_at)
      ) PARTITION BY RANGE (created_at)`);
    await q.query(
      `CREATE TABLE log_export.request_logs_default PARTITION OF log_export.request_logs DEFAULT`,
    );
    // Few indexes: each one is written for every log stored. The primary key also finds a log by id.
    await q.query(
      `CREATE INDEX request_logs_scope_time ON log_export.request_logs (organisation_id, workspace_id, created_at DESC)`,
    );
    await q.query(
      `CREATE INDEX request_logs_errors_time ON log_export.request_logs (organisation_id, workspace_id, created_at DESC) WHERE status >= 400`,
    );
    await q.query(
      `CREATE INDEX request_logs_trace ON log_export.request_logs (trace_id) WHERE trace_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX request_logs_api_key_time ON log_export.request_logs (api_key_id, created_at DESC)`,
    );

    const days: Array<{ day: string }> = await q.query(
      `SELECT DISTINCT floor(extract(epoch FROM created_at) / 86400)::bigint::text AS day
         FROM log_export.request_logs_unpartitioned`,
    );
    for (const { day } of days) {
      const from = new Date(Number(day) * DAY_MS);
      const to = new Date(from.getTime() + DAY_MS);
      const name = `request_logs_p${from.toISOString().slice(0, 10).replaceAll('-', '')}`;
      await q.query(
        `CREATE TABLE log_export.${name} PARTITION OF log_export.request_logs
           FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`,
      );
    }
    await q.query(
      `INSERT INTO log_export.request_logs (${COLUMNS}) SELECT ${COLUMNS} FROM log_export.request_logs_unpartitioned`,
    );
    await q.query(`DROP TABLE log_export.request_logs_unpartitioned`);

    await q.query(`
      CREATE TABLE log_export.request_rollups (
        bucket timestamptz NOT NULL,
        organisation_id uuid NOT NULL,
        workspace_id uuid NOT NULL,
        api_key_id uuid NOT NULL,
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
        PRIMARY KEY (organisation_id, workspace_id, bucket, api_key_id, provider, model, status, cache_status)
      )`);
    const histogram = [
      ...LATENCY_BUCKETS_MS.map(
        (bound, i) =>
          `count(*) FILTER (WHERE latency_ms ${i === 0 ? '' : `> ${LATENCY_BUCKETS_MS[i - 1]} AND latency_ms `}<= ${bound})`,
      ),
      `count(*) FILTER (WHERE latency_ms > ${LATENCY_BUCKETS_MS.at(-1)})`,
    ].join(', ');
    const tokens = (field: string) => `sum(coalesce((usage->>'${field}')::bigint, 0))`;
    await q.query(`
      INSERT INTO log_export.request_rollups
      SELECT date_trunc('hour', created_at, 'UTC'), organisation_id, workspace_id, api_key_id,
             coalesce(provider, ''), coalesce(model, ''), status, coalesce(cache_status, ''),
             count(*), count(*) FILTER (WHERE status >= 400), sum(cost),
             ${tokens('prompt_tokens')}, ${tokens('completion_tokens')}, ${tokens('total_tokens')},
             ${tokens('cached_tokens')}, ${tokens('reasoning_tokens')},
             sum(latency_ms), ARRAY[${histogram}]
        FROM log_export.request_logs
       GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE log_export.request_rollups`);
    await q.query(`ALTER TABLE log_export.request_logs RENAME TO request_logs_partitioned`);
    await q.query(`ALTER INDEX log_export.request_logs_trace RENAME TO request_logs_partitioned_trace`);
    await q.query(
      `CREATE TABLE log_export.request_logs (LIKE log_export.request_logs_partitioned INCLUDING DEFAULTS)`,
    );
    await q.query(
      `INSERT INTO log_export.request_logs (${COLUMNS}) SELECT ${COLUMNS} FROM log_export.request_logs_partitioned`,
    );
    await q.query(`DROP TABLE log_export.request_logs_partitioned`);
    await q.query(`ALTER TABLE log_export.request_logs ADD PRIMARY KEY (id)`);
    await q.query(
      `CREATE INDEX request_logs_workspace_time ON log_export.request_logs (workspace_id, created_at DESC)`,
    );
    await q.query(`CREATE INDEX request_logs_trace ON log_export.request_logs (workspace_id, trace_id)`);
  }
}
