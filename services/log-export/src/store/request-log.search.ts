import type { EntityManager } from 'typeorm';
import type {
  RequestLog,
  RequestLogGuardrail,
  RequestLogMcp,
  RequestLogPrompt,
  RequestLogPolicy,
  RequestLogUsage,
} from './entities.ts';

/* SQL only: one newest-first page of request logs, without their bodies, by keyset. */

/** A status range, `min` to `max` inclusive: one code (`429`) or a class (`4xx` is 400 to 499). */
export interface StatusRange {
  min: number;
  max: number;
}

/** What a page of logs is narrowed to; every list holds alternatives, every field must hold. */
export interface RequestLogFilter {
  organisationId: string;
  /** Null: every workspace of the organisation. */
  workspaceId: string | null;
  /** `created_at` from `from` (inclusive) to `to` (exclusive). */
  from: Date;
  to: Date;
  statuses?: StatusRange[] | undefined;
  models?: string[] | undefined;
  providers?: string[] | undefined;
  traceId?: string | undefined;
  /** Every pair must be in the log's metadata. */
  metadata?: Record<string, string> | undefined;
  apiKeyId?: string | undefined;
  costMin?: number | undefined;
  costMax?: number | undefined;
  latencyMin?: number | undefined;
  latencyMax?: number | undefined;
  cacheStatuses?: string[] | undefined;
  /** Logs on which at least one guardrail run ended with one of these actions. */
  guardrailActions?: string[] | undefined;
  policyDecisions?: string[] | undefined;
  /** MCP calls to one of these servers (by slug). */
  mcpServers?: string[] | undefined;
  /** MCP calls of one of these tools. */
  toolNames?: string[] | undefined;
  /** Prompt completions of one of these saved prompts (by id or slug). */
  promptIds?: string[] | undefined;
  /** Token counts of the log's usage, each bound inclusive. */
  totalTokensMin?: number | undefined;
  totalTokensMax?: number | undefined;
  promptTokensMin?: number | undefined;
  promptTokensMax?: number | undefined;
  completionTokensMin?: number | undefined;
  completionTokensMax?: number | undefined;
  /** Provider and model pairs, any of them. */
  providerModels?: Array<{ provider: string; model: string }> | undefined;
  integrationSlugs?: string[] | undefined;
  configSlugs?: string[] | undefined;
  /** The weighted mean of the feedback on the log's trace (sum of value × weight over sum of weight); logs without feedback are left out. */
  weightedFeedbackMin?: number | undefined;
  weightedFeedbackMax?: number | undefined;
}

/** Where the previous page ended: its last log's `created_at` (to the microsecond) and id. */
export interface RequestLogKey {
  at: string;
  id: string;
}

/** A log as a list shows it: everything but the request and response bodies. */
export type RequestLogSummary = Omit<RequestLog, 'requestBody' | 'responseBody'> & {
  /** `created_at` to the microsecond, as a key the next page starts after. */
  key: RequestLogKey;
};

interface SummaryRow {
  id: string;
  organisation_id: string;
  workspace_id: string;
  api_key_id: string;
  trace_id: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  metadata: Record<string, string>;
  method: string;
  path: string;
  provider: string | null;
  model: string | null;
  integration_slug: string | null;
  status: number;
  stream: boolean;
  created_at: Date;
  latency_ms: number;
  usage: RequestLogUsage;
  cost: number;
  error_message: string | null;
  cache_status: string | null;
  config_slug: string | null;
  route_path: string | null;
  retry_count: number;
  cache_namespace: string | null;
  cache_force_refresh: boolean;
  models_endpoint: boolean;
  policy: RequestLogPolicy | null;
  guardrails: RequestLogGuardrail[] | null;
  w3c_trace_id: string | null;
  mcp: RequestLogMcp | null;
  prompt: RequestLogPrompt | null;
  key_at: string;
}

/** Every column but the bodies, which a list never reads (they are most of a row's bytes). */
const SUMMARY_COLUMNS = `l.id, l.organisation_id, l.workspace_id, l.api_key_id, l.trace_id, l.span_id,
  l.parent_span_id, l.span_name, l.metadata, l.method, l.path, l.provider, l.model, l.integration_slug,
  l.status, l.stream, l.created_at, l.latency_ms, l.usage, l.cost, l.error_message, l.cache_status,
  l.config_slug, l.route_path, l.retry_count, l.cache_namespace, l.cache_force_refresh,
  l.models_endpoint, l.policy, l.guardrails, l.w3c_trace_id, l.mcp, l.prompt,
  to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at`;

const NEWEST_FIRST = 'ORDER BY created_at DESC, id DESC';

function fromRow(row: SummaryRow): RequestLogSummary {
  return {
    id: row.id,
    organisationId: row.organisation_id,
    workspaceId: row.workspace_id,
    apiKeyId: row.api_key_id,
    traceId: row.trace_id,
    spanId: row.span_id,
    parentSpanId: row.parent_span_id,
    spanName: row.span_name,
    metadata: row.metadata,
    method: row.method,
    path: row.path,
    provider: row.provider,
    model: row.model,
    integrationSlug: row.integration_slug,
    status: row.status,
    stream: row.stream,
    createdAt: new Date(row.created_at),
    latencyMs: row.latency_ms,
    usage: row.usage,
    cost: Number(row.cost),
    errorMessage: row.error_message,
    cacheStatus: row.cache_status,
    configSlug: row.config_slug,
    routePath: row.route_path,
    retryCount: row.retry_count,
    cacheNamespace: row.cache_namespace,
    cacheForceRefresh: row.cache_force_refresh,
    modelsEndpoint: row.models_endpoint,
    policy: row.policy,
    guardrails: row.guardrails,
    w3cTraceId: row.w3c_trace_id,
    mcp: row.mcp,
    prompt: row.prompt,
    key: { at: row.key_at, id: row.id },
  };
}

/** The conditions of a filter on `request_logs l` (all but the workspace), with their parameters. */
function conditionsOf(
  filter: RequestLogFilter,
  after: RequestLogKey | undefined,
  params: unknown[],
): string[] {
  const p = (value: unknown) => param(params, value);
  const where = [
    `l.organisation_id = ${p(filter.organisationId)}`,
    `l.created_at >= ${p(filter.from.toISOString())}`,
    `l.created_at < ${p(filter.to.toISOString())}`,
  ];
  if (after) {
    // The bound on created_at alone is what the index can seek to; the id orders a shared instant.
    const at = p(after.at);
    where.push(
      `l.created_at <= ${at}::timestamptz`,
      `(l.created_at < ${at}::timestamptz OR l.id < ${p(after.id)})`,
    );
  }
  if (filter.statuses?.length) {
    const codes = filter.statuses.filter((s) => s.min === s.max).map((s) => s.min);
    const ranges = filter.statuses.filter((s) => s.min !== s.max);
    const alternatives = ranges.map((s) => `(l.status >= ${p(s.min)} AND l.status <= ${p(s.max)})`);
    if (codes.length > 0) alternatives.push(`l.status = ANY(${p(codes)}::int[])`);
    where.push(`(${alternatives.join(' OR ')})`);
    // Errors only: said outright, so that the planner can take the index of errors.
    if (filter.statuses.every((s) => s.min >= 400)) where.push('l.status >= 400');
  }
  if (filter.models?.length) where.push(`l.model = ANY(${p(filter.models)}::text[])`);
  if (filter.providers?.length) where.push(`l.provider = ANY(${p(filter.providers)}::text[])`);
  if (filter.traceId !== undefined) where.push(`l.trace_id = ${p(filter.traceId)}`);
  if (filter.metadata && Object.keys(filter.metadata).length > 0) {
    where.push(`l.metadata @> ${p(JSON.stringify(filter.metadata))}::jsonb`);
  }
  if (filter.apiKeyId !== undefined) where.push(`l.api_key_id = ${p(filter.apiKeyId)}::uuid`);
  if (filter.costMin !== undefined) where.push(`l.cost >= ${p(filter.costMin)}`);
  if (filter.costMax !== undefined) where.push(`l.cost <= ${p(filter.costMax)}`);
  if (filter.latencyMin !== undefined) where.push(`l.latency_ms >= ${p(filter.latencyMin)}`);
  if (filter.latencyMax !== undefined) where.push(`l.latency_ms <= ${p(filter.latencyMax)}`);
  if (filter.cacheStatuses?.length) where.push(`l.cache_status = ANY(${p(filter.cacheStatuses)}::text[])`);
  if (filter.guardrailActions?.length) {
    const runs = filter.guardrailActions.map((action) => JSON.stringify([{ action }]));
    where.push(`l.guardrails @> ANY(${p(runs)}::jsonb[])`);
  }
  if (filter.policyDecisions?.length) {
    where.push(`l.policy->>'decision' = ANY(${p(filter.policyDecisions)}::text[])`);
  }
  if (filter.mcpServers?.length) where.push(`l.mcp->>'server_slug' = ANY(${p(filter.mcpServers)}::text[])`);
  if (filter.toolNames?.length) where.push(`l.mcp->>'tool_name' = ANY(${p(filter.toolNames)}::text[])`);
  if (filter.promptIds?.length) {
    const ids = p(filter.promptIds);
    where.push(
      `(l.prompt->>'prompt_id' = ANY(${ids}::text[]) OR l.prompt->>'prompt_slug' = ANY(${ids}::text[]))`,
    );
  }
  const tokens = [
    ['total_tokens', filter.totalTokensMin, filter.totalTokensMax],
    ['prompt_tokens', filter.promptTokensMin, filter.promptTokensMax],
    ['completion_tokens', filter.completionTokensMin, filter.completionTokensMax],
  ] as const;
  for (const [key, min, max] of tokens) {
    if (min !== undefined) where.push(`(l.usage->>'${key}')::bigint >= ${p(min)}`);
    if (max !== undefined) where.push(`(l.usage->>'${key}')::bigint <= ${p(max)}`);
  }
  if (filter.providerModels?.length) {
    const pairs = filter.providerModels.map(({ provider, model }) => JSON.stringify([provider, model]));
    where.push(`jsonb_build_array(l.provider, l.model) = ANY(${p(pairs)}::jsonb[])`);
  }
  if (filter.integrationSlugs?.length) {
    where.push(`l.integration_slug = ANY(${p(filter.integrationSlugs)}::text[])`);
  }
  if (filter.configSlugs?.length) where.push(`l.config_slug = ANY(${p(filter.configSlugs)}::text[])`);
  if (filter.weightedFeedbackMin !== undefined || filter.weightedFeedbackMax !== undefined) {
    const mean = `(SELECT sum(f.value * f.weight) / nullif(sum(f.weight), 0) FROM log_export.feedback f
                    WHERE f.organisation_id = l.organisation_id AND f.trace_id = l.trace_id
                      AND (f.workspace_id IS NULL OR f.workspace_id = l.workspace_id))`;
    if (filter.weightedFeedbackMin !== undefined) where.push(`${mean} >= ${p(filter.weightedFeedbackMin)}`);
    if (filter.weightedFeedbackMax !== undefined) where.push(`${mean} <= ${p(filter.weightedFeedbackMax)}`);
  }
  return where;
}

/**
 * Reads pages of request logs newest first, keyed on (created_at, id): a page starts after
 * the key where the last one ended, so rows sharing an instant are neither repeated nor
 * skipped, and no page costs more than its own rows (no OFFSET).
 *
 * The indexes it is written for (see the partitioning migration): (organisation_id,
 * workspace_id, created_at DESC) on every daily partition, the same for errors only, one on
 * (api_key_id, created_at DESC) and one on trace_id. The time range prunes the partitions
 * read; within a workspace the scope index hands rows over newest first, so a page reads
 * about `limit` rows divided by the share of rows the other filters keep.
 */
export class RequestLogSearch {
  constructor(private readonly manager: EntityManager) {}

  async page(
    filter: RequestLogFilter,
    after: RequestLogKey | undefined,
    limit: number,
  ): Promise<RequestLogSummary[]> {
    return (await this.read(filter, after, limit, SUMMARY_COLUMNS)).map(fromRow);
  }

  /** As `page`, with the request and response bodies: what an export writes. */
  async pageWithBodies(
    filter: RequestLogFilter,
    after: RequestLogKey | undefined,
    limit: number,
  ): Promise<Array<RequestLog & { key: RequestLogKey }>> {
    const rows = await this.read(filter, after, limit, `${SUMMARY_COLUMNS}, l.request_body, l.response_body`);
    return rows.map((row) => ({
      ...fromRow(row),
      requestBody: row.request_body ?? '',
      responseBody: row.response_body ?? '',
    }));
  }

  /** How many logs the filter matches; null when counting them takes longer than `deadlineMs`. */
  async count(filter: RequestLogFilter, deadlineMs: number): Promise<number | null> {
    const params: unknown[] = [];
    const where = conditionsOf(filter, undefined, params);
    if (filter.workspaceId !== null)
      where.push(`l.workspace_id = ${param(params, filter.workspaceId)}::uuid`);
    try {
      return await this.manager.transaction(async (m) => {
        await m.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.trunc(deadlineMs))}`);
        const [row] = (await m.query(
          `SELECT count(*)::bigint AS n FROM log_export.request_logs l WHERE ${where.join(' AND ')}`,
          params,
        )) as Array<{ n: string }>;
        return Number(row?.n ?? 0);
      });
    } catch (err) {
      // 57014: cancelled by the statement timeout.
      if ((err as { driverError?: { code?: string } }).driverError?.code === '57014') return null;
      throw err;
    }
  }

  private async read(
    filter: RequestLogFilter,
    after: RequestLogKey | undefined,
    limit: number,
    columns: string,
  ): Promise<Array<SummaryRow & { request_body?: string; response_body?: string }>> {
    const params: unknown[] = [];
    const where = conditionsOf(filter, after, params);
    let sql: string;
    if (filter.workspaceId !== null) {
      where.push(`l.workspace_id = ${param(params, filter.workspaceId)}::uuid`);
      sql = `SELECT ${columns} FROM log_export.request_logs l
              WHERE ${where.join(' AND ')}
              ORDER BY l.created_at DESC, l.id DESC LIMIT ${param(params, limit)}`;
    } else if (filter.apiKeyId !== undefined || filter.traceId !== undefined) {
      // Their own indexes find these rows across workspaces.
      sql = `SELECT ${columns} FROM log_export.request_logs l
              WHERE ${where.join(' AND ')}
              ORDER BY l.created_at DESC, l.id DESC LIMIT ${param(params, limit)}`;
    } else {
      // The whole organisation: the scope index is ordered by time within each workspace only,
      // so each workspace's newest page is read on its own and the pages merged. The
      // organisation's workspaces come from log_workspaces (noted with every batch, never pruned),
      // one index step each.
      const organisation = '$1'; // the first condition's
      const n = param(params, limit);
      sql = `WITH RECURSIVE workspaces AS (
               (SELECT workspace_id FROM log_export.log_workspaces
                 WHERE organisation_id = ${organisation} ORDER BY workspace_id LIMIT 1)
               UNION ALL
               SELECT (SELECT r.workspace_id FROM log_export.log_workspaces r
                        WHERE r.organisation_id = ${organisation} AND r.workspace_id > w.workspace_id
                        ORDER BY r.workspace_id LIMIT 1)
                 FROM workspaces w WHERE w.workspace_id IS NOT NULL
             )
             SELECT page.* FROM workspaces w CROSS JOIN LATERAL (
               SELECT ${columns} FROM log_export.request_logs l
                WHERE l.workspace_id = w.workspace_id AND ${where.join(' AND ')}
                ORDER BY l.created_at DESC, l.id DESC LIMIT ${n}
             ) page
             ${NEWEST_FIRST} LIMIT ${n}`;
    }
    // A page reads few rows, but the planner's estimate for a selective filter can be high
    // enough to compile the query first (JIT), which costs far more than the page itself.
    const rows = await this.manager.transaction(async (m) => {
      await m.query('SET LOCAL jit = off');
      return (await m.query(sql, params)) as Array<
        SummaryRow & { request_body?: string; response_body?: string }
      >;
    });
    return rows;
  }
}

/** Adds a query parameter; answers its placeholder. */
function param(params: unknown[], value: unknown): string {
  params.push(value);
  return `$${params.length}`;
}
