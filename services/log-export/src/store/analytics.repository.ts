import type { EntityManager } from 'typeorm';
import {
  HISTOGRAM_SUMS as ROLLUP_HISTOGRAM_SUMS,
  LATENCY_BUCKETS_MS,
  METADATA_KEY_MAX,
  METADATA_VALUE_MAX,
} from './rollups.ts';

/*
 * SQL only: what analytics read, from the rollups wherever they hold the answer (the hours and
 * days the rollup job has made and nothing has changed since, see store/rollups.ts), and from
 * the logs for the rest of the range.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Whose requests are counted: always one organisation, and one workspace of it when given. */
export interface AnalyticsScope {
  organisationId: string;
  workspaceId: string | null;
}

/** The time covered, `from` included and `to` not, and the length of a graph's data point. */
export interface AnalyticsRange {
  from: Date;
  to: Date;
  unit: 'hour' | 'day';
}

/**
 * Which requests are counted. The first group the rollups hold; any of the rest is read
 * from the request logs themselves. Cost bounds are in USD, as stored.
 */
export interface AnalyticsFilter {
  apiKeyIds?: string[] | undefined;
  providers?: string[] | undefined;
  models?: string[] | undefined;
  /** `provider__model` pairs. */
  aiOrgModels?: string[] | undefined;
  statusCodes?: number[] | undefined;
  cacheStatuses?: string[] | undefined;

  metadata?: Record<string, string> | undefined;
  traceIds?: string[] | undefined;
  spanIds?: string[] | undefined;
  configs?: string[] | undefined;
  totalUnitsMin?: number | undefined;
  totalUnitsMax?: number | undefined;
  costMin?: number | undefined;
  costMax?: number | undefined;
  promptTokensMin?: number | undefined;
  promptTokensMax?: number | undefined;
  completionTokensMin?: number | undefined;
  completionTokensMax?: number | undefined;
}

/** Whether the filter names anything the rollups do not hold, so that only the logs can answer. */
export function needsLogs(filter: AnalyticsFilter): boolean {
  return (
    filter.metadata !== undefined ||
    filter.traceIds !== undefined ||
    filter.spanIds !== undefined ||
    filter.configs !== undefined ||
    filter.totalUnitsMin !== undefined ||
    filter.totalUnitsMax !== undefined ||
    filter.costMin !== undefined ||
    filter.costMax !== undefined ||
    filter.promptTokensMin !== undefined ||
    filter.promptTokensMax !== undefined ||
    filter.completionTokensMin !== undefined ||
    filter.completionTokensMax !== undefined
  );
}

/** Sums of one data point: the same for rollups and logs. Latencies in ms, cost in USD. */
export interface BucketTotals {
  at: Date;
  requests: number;
  errors: number;
  cost: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  latencyMsSum: number;
  /** Counts per LATENCY_BUCKETS_MS bound, then the count above the last. */
  histogram: number[];
  hits: number;
  misses: number;
  hitLatencyMsSum: number;
  missLatencyMsSum: number;
}

/** Totals of one group (a model, a provider, an API key, a workspace). */
export interface GroupTotals {
  key: string;
  requests: number;
  errors: number;
  cost: number;
  totalTokens: number;
  latencyMsSum: number;
}

/** Numbered SQL parameters, collected as the statement is written. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const TOKENS = (field: string) => `coalesce((usage->>'${field}')::bigint, 0)`;

/** A log as a rollup row of one request, so that one statement reads either. */
const LOG_AS_ROLLUP = `
  date_trunc('hour', created_at, 'UTC') AS bucket, workspace_id, api_key_id,
  coalesce(provider, '') AS provider, coalesce(model, '') AS model, status,
  coalesce(cache_status, '') AS cache_status, 1::bigint AS requests,
  (status >= 400)::int::bigint AS errors, cost,
  ${TOKENS('prompt_tokens')} AS prompt_tokens, ${TOKENS('completion_tokens')} AS completion_tokens,
  ${TOKENS('total_tokens')} AS total_tokens, latency_ms::bigint AS latency_ms_sum,
  ARRAY[${[
    ...LATENCY_BUCKETS_MS.map(
      (bound, i) =>
        `(latency_ms ${i === 0 ? '' : `> ${LATENCY_BUCKETS_MS[i - 1]} AND latency_ms `}<= ${bound})::int`,
    ),
    `(latency_ms > ${LATENCY_BUCKETS_MS.at(-1)})::int`,
  ].join(', ')}]::bigint[] AS latency_ms_histogram`;

const ROLLUP_COLUMNS = `bucket, workspace_id, api_key_id, provider, model, status, cache_status, requests,
  errors, cost, prompt_tokens, completion_tokens, total_tokens, latency_ms_sum, latency_ms_histogram`;

const HISTOGRAM_SUMS = `${ROLLUP_HISTOGRAM_SUMS}::float8[]`;

/** A daily rollup row as an hourly one: its API key is not known. */
const DAILY_COLUMNS = ROLLUP_COLUMNS.replace('api_key_id', 'NULL::uuid AS api_key_id');

/** The filters both tables hold, with `column` naming each as the table's rows give it. */
function commonFilters(p: Params, filter: AnalyticsFilter, column: (name: string) => string): string[] {
  const where: string[] = [];
  if (filter.apiKeyIds) where.push(`api_key_id = ANY(${p.add(filter.apiKeyIds)}::uuid[])`);
  if (filter.providers) where.push(`${column('provider')} = ANY(${p.add(filter.providers)}::text[])`);
  if (filter.models) where.push(`${column('model')} = ANY(${p.add(filter.models)}::text[])`);
  if (filter.aiOrgModels) {
    where.push(
      `(${column('provider')} || '__' || ${column('model')}) = ANY(${p.add(filter.aiOrgModels)}::text[])`,
    );
  }
  if (filter.statusCodes) where.push(`status = ANY(${p.add(filter.statusCodes)}::int[])`);
  if (filter.cacheStatuses) {
    where.push(`${column('cache_status')} = ANY(${p.add(filter.cacheStatuses)}::text[])`);
  }
  return where;
}

/**
 * The conditions on request logs of the scope, the time `from` (included) to `to` (not) and
 * the filter: the organisation, workspace and time lead, as the logs' indexes and daily
 * partitions have them.
 */
function logConditions(
  p: Params,
  scope: AnalyticsScope,
  from: Date,
  to: Date,
  filter: AnalyticsFilter,
): string {
  const where = [`organisation_id = ${p.add(scope.organisationId)}::uuid`];
  if (scope.workspaceId) where.push(`workspace_id = ${p.add(scope.workspaceId)}::uuid`);
  where.push(`created_at >= ${p.add(from.toISOString())}::timestamptz`);
  where.push(`created_at < ${p.add(to.toISOString())}::timestamptz`);
  where.push(...commonFilters(p, filter, (name) => `coalesce(${name}, '')`));
  if (filter.metadata) where.push(`metadata @> ${p.add(JSON.stringify(filter.metadata))}::jsonb`);
  if (filter.traceIds) where.push(`trace_id = ANY(${p.add(filter.traceIds)}::text[])`);
  if (filter.spanIds) where.push(`span_id = ANY(${p.add(filter.spanIds)}::text[])`);
  if (filter.configs) where.push(`config_slug = ANY(${p.add(filter.configs)}::text[])`);
  const bound = (expression: string, op: string, value: number | undefined) => {
    if (value !== undefined) where.push(`${expression} ${op} ${p.add(value)}`);
  };
  bound(TOKENS('total_tokens'), '>=', filter.totalUnitsMin);
  bound(TOKENS('total_tokens'), '<=', filter.totalUnitsMax);
  bound('cost', '>=', filter.costMin);
  bound('cost', '<=', filter.costMax);
  bound(TOKENS('prompt_tokens'), '>=', filter.promptTokensMin);
  bound(TOKENS('prompt_tokens'), '<=', filter.promptTokensMax);
  bound(TOKENS('completion_tokens'), '>=', filter.completionTokensMin);
  bound(TOKENS('completion_tokens'), '<=', filter.completionTokensMax);
  return where.join(' AND ');
}

const ceilHour = (at: Date) => new Date(Math.ceil(at.getTime() / HOUR_MS) * HOUR_MS);
const floorHour = (at: Date) => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

/** From (included) to (not). */
type Interval = [Date, Date];

/** Which parts of a range are read from where: clean days, clean hours, and the logs. */
export interface Coverage {
  days: Interval[];
  hours: Interval[];
  logs: Interval[];
}

/** Adjacent intervals as one. */
function merged(intervals: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const [from, to] of intervals) {
    const last = out.at(-1);
    if (last && last[1].getTime() === from.getTime()) last[1] = to;
    else out.push([from, to]);
  }
  return out;
}

/**
 * Splits `[from, to)` by the clean hours given (hour starts, in ms): whole days of clean
 * hours when `days` is set, the remaining clean hours, and what is left for the logs.
 */
export function coverageOf(from: Date, to: Date, clean: ReadonlySet<number>, days: boolean): Coverage {
  const dayParts: Interval[] = [];
  const hourParts: Interval[] = [];
  const logParts: Interval[] = [];
  const firstHour = ceilHour(from);
  const lastHour = floorHour(to);
  if (firstHour >= lastHour) return { days: [], hours: [], logs: [[from, to]] };
  if (from < firstHour) logParts.push([from, firstHour]);
  for (let t = firstHour.getTime(); t < lastHour.getTime();) {
    if (days && t % DAY_MS === 0 && t + DAY_MS <= lastHour.getTime()) {
      let whole = true;
      for (let h = t; h < t + DAY_MS && whole; h += HOUR_MS) whole = clean.has(h);
      if (whole) {
        dayParts.push([new Date(t), new Date(t + DAY_MS)]);
        t += DAY_MS;
        continue;
      }
    }
    (clean.has(t) ? hourParts : logParts).push([new Date(t), new Date(t + HOUR_MS)]);
    t += HOUR_MS;
  }
  if (lastHour < to) logParts.push([lastHour, to]);
  return {
    days: merged(dayParts),
    hours: merged(hourParts),
    logs: merged(logParts.sort((a, b) => a[0].getTime() - b[0].getTime())),
  };
}

/** `column` in any of the intervals. */
function inIntervals(p: Params, column: string, intervals: Interval[]): string {
  return `(${intervals
    .map(
      ([from, to]) =>
        `${column} >= ${p.add(from.toISOString())}::timestamptz AND ${column} < ${p.add(to.toISOString())}::timestamptz`,
    )
    .join(' OR ')})`;
}

/** The scope's conditions on a rollup table. */
function rollupScope(p: Params, scope: AnalyticsScope): string[] {
  const where = [`organisation_id = ${p.add(scope.organisationId)}::uuid`];
  if (scope.workspaceId) where.push(`workspace_id = ${p.add(scope.workspaceId)}::uuid`);
  return where;
}

/**
 * Rollup-shaped rows of the requests counted: clean days from the daily rollups, clean hours
 * from the hourly ones, and the rest (or everything, when the filter needs them) from the
 * logs, so that the answer is exact whatever the range's bounds.
 */
function requestRows(p: Params, scope: AnalyticsScope, coverage: Coverage, filter: AnalyticsFilter): string {
  const branches: string[] = [];
  const fromRollups = (table: string, columns: string, intervals: Interval[]) => {
    if (intervals.length === 0) return;
    const where = [
      ...rollupScope(p, scope),
      inIntervals(p, 'bucket', intervals),
      ...commonFilters(p, filter, (name) => name),
    ];
    branches.push(`SELECT ${columns} FROM log_export.${table} WHERE ${where.join(' AND ')}`);
  };
  fromRollups('request_rollups_daily', DAILY_COLUMNS, coverage.days);
  fromRollups('request_rollups', ROLLUP_COLUMNS, coverage.hours);
  for (const [from, to] of coverage.logs) {
    branches.push(
      `SELECT ${LOG_AS_ROLLUP} FROM log_export.request_logs WHERE ${logConditions(p, scope, from, to, filter)}`,
    );
  }
  return branches.join(' UNION ALL ');
}

/** The time of a data point of `unit`, from an hour or a log's time. */
const pointOf = (unit: AnalyticsRange['unit'], column: string) => `date_trunc('${unit}', ${column}, 'UTC')`;

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export interface RescuedCount {
  at: Date;
  retries: number;
  count: number;
}

export interface StatusCount {
  at: Date | null;
  status: number;
  count: number;
}

export interface UserPoint {
  /** Null for the whole range. */
  at: Date | null;
  users: number;
  requests: number;
}

export interface UserGroup {
  user: string;
  requests: number;
  cost: number;
}

export interface MetadataGroup {
  value: string;
  requests: number;
  cost: number;
  avgTokens: number;
  avgWeightedFeedback: number | null;
  requestsWithFeedback: number;
  lastSeen: Date;
}

export interface ModelSavings {
  at: Date;
  provider: string;
  model: string;
  hits: number;
}

export interface ModelCost {
  provider: string;
  model: string;
  /** Average cost in USD of the requests answered by the provider (not from the cache) that succeeded. */
  avgCost: number;
}

export interface FeedbackPoint {
  at: Date | null;
  count: number;
  weightedSum: number;
}

export interface FeedbackScore {
  value: number;
  count: number;
}

export interface FeedbackModel {
  model: string;
  count: number;
  avgWeighted: number;
}

/** A page of groups and how many groups there are in all. */
export type GroupPage<T> = [T[], number];

export class AnalyticsRepository {
  constructor(private readonly manager: EntityManager) {}

  /**
   * Where each part of the range is read from. Daily rollups serve when `days` is set (data
   * points of a day, or none) and the filter names no API key, which they do not hold.
   */
  private async coverage(range: AnalyticsRange, filter: AnalyticsFilter, days: boolean): Promise<Coverage> {
    if (needsLogs(filter)) return { days: [], hours: [], logs: [[range.from, range.to]] };
    const clean = (await this.manager.query(
      `SELECT bucket FROM log_export.rollup_hours
        WHERE bucket >= $1 AND bucket < $2 AND version = materialised_version`,
      [ceilHour(range.from).toISOString(), floorHour(range.to).toISOString()],
    )) as Array<{ bucket: Date }>;
    return coverageOf(
      range.from,
      range.to,
      new Set(clean.map((row) => row.bucket.getTime())),
      days && filter.apiKeyIds === undefined,
    );
  }

  /**
   * Runs a read. JIT compilation is off: these statements read few rows, though the planner
   * may think otherwise of those over logs, and compiling costs more than running them.
   */
  private query(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    return this.manager.transaction(async (m) => {
      await m.query('SET LOCAL jit = off');
      return (await m.query(sql, params)) as Array<Record<string, unknown>>;
    });
  }

  /** The sums of each data point that holds requests, oldest first. */
  async totals(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
  ): Promise<BucketTotals[]> {
    const p = new Params();
    const rows = requestRows(p, scope, await this.coverage(range, filter, range.unit === 'day'), filter);
    const hit = `cache_status = 'HIT'`;
    const miss = `cache_status = 'MISS'`;
    const result = (await this.query(
      `SELECT ${pointOf(range.unit, 'bucket')} AS at,
              sum(requests)::float8 AS requests, sum(errors)::float8 AS errors, sum(cost)::float8 AS cost,
              sum(prompt_tokens)::float8 AS prompt_tokens, sum(completion_tokens)::float8 AS completion_tokens,
              sum(total_tokens)::float8 AS total_tokens, sum(latency_ms_sum)::float8 AS latency_ms_sum,
              ${HISTOGRAM_SUMS} AS histogram,
              sum(requests) FILTER (WHERE ${hit})::float8 AS hits,
              sum(requests) FILTER (WHERE ${miss})::float8 AS misses,
              sum(latency_ms_sum) FILTER (WHERE ${hit})::float8 AS hit_latency,
              sum(latency_ms_sum) FILTER (WHERE ${miss})::float8 AS miss_latency
         FROM (${rows}) r
        GROUP BY 1 ORDER BY 1`,
      p.values,
    )) as Array<Record<string, unknown>>;
    return result.map((row) => ({
      at: row.at as Date,
      requests: num(row.requests),
      errors: num(row.errors),
      cost: num(row.cost),
      promptTokens: num(row.prompt_tokens),
      completionTokens: num(row.completion_tokens),
      totalTokens: num(row.total_tokens),
      latencyMsSum: num(row.latency_ms_sum),
      histogram: (row.histogram as Array<number | null>).map(num),
      hits: num(row.hits),
      misses: num(row.misses),
      hitLatencyMsSum: num(row.hit_latency),
      missLatencyMsSum: num(row.miss_latency),
    }));
  }

  /** Failed requests (status 400 and above) per status, per data point, or over the whole range when `perPoint` is false. */
  async errorStatuses(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
    perPoint: boolean,
  ): Promise<StatusCount[]> {
    const p = new Params();
    const coverage = await this.coverage(range, filter, !perPoint || range.unit === 'day');
    const rows = requestRows(p, scope, coverage, filter);
    const at = perPoint ? pointOf(range.unit, 'bucket') : 'NULL::timestamptz';
    const result = (await this.query(
      `SELECT ${at} AS at, status, sum(requests)::float8 AS count
         FROM (${rows}) r WHERE status >= 400
        GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2`,
      p.values,
    )) as Array<{ at: Date | null; status: number; count: number }>;
    return result.map((row) => ({ at: row.at, status: row.status, count: num(row.count) }));
  }

  /** Requests grouped by `by`, most requests first, a page of them, and how many groups there are. */
  async groups(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
    by: 'model' | 'provider' | 'api_key_id' | 'workspace_id',
    page: { offset: number; limit: number },
  ): Promise<GroupPage<GroupTotals>> {
    const p = new Params();
    const rows = requestRows(p, scope, await this.coverage(range, filter, by !== 'api_key_id'), filter);
    const result = (await this.query(
      `SELECT ${by}::text AS key, sum(requests)::float8 AS requests, sum(errors)::float8 AS errors,
              sum(cost)::float8 AS cost, sum(total_tokens)::float8 AS total_tokens,
              sum(latency_ms_sum)::float8 AS latency_ms_sum, count(*) OVER ()::int AS total
         FROM (${rows}) r
        GROUP BY 1 ORDER BY 2 DESC, 1
        LIMIT ${p.add(page.limit)} OFFSET ${p.add(page.offset)}`,
      p.values,
    )) as Array<Record<string, unknown>>;
    return [
      result.map((row) => ({
        key: row.key as string,
        requests: num(row.requests),
        errors: num(row.errors),
        cost: num(row.cost),
        totalTokens: num(row.total_tokens),
        latencyMsSum: num(row.latency_ms_sum),
      })),
      result.length > 0 ? num(result[0]!.total) : await this.groupCount(scope, range, filter, by),
    ];
  }

  /** How many groups there are, for a page past the last (which holds no row to tell). */
  private async groupCount(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
    by: string,
  ): Promise<number> {
    const p = new Params();
    const rows = requestRows(p, scope, await this.coverage(range, filter, by !== 'api_key_id'), filter);
    const [row] = (await this.query(
      `SELECT count(DISTINCT ${by})::int AS n FROM (${rows}) r`,
      p.values,
    )) as Array<{ n: number }>;
    return row?.n ?? 0;
  }

  /** Cache hits per data point and model, for what they saved. */
  async cacheHitsByModel(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
  ): Promise<{ hits: ModelSavings[]; costs: ModelCost[] }> {
    const p = new Params();
    const rows = requestRows(p, scope, await this.coverage(range, filter, range.unit === 'day'), filter);
    const result = (await this.query(
      `SELECT ${pointOf(range.unit, 'bucket')} AS at, provider, model,
              sum(requests) FILTER (WHERE cache_status = 'HIT')::float8 AS hits,
              sum(requests) FILTER (WHERE cache_status <> 'HIT' AND status < 400)::float8 AS paid,
              sum(cost) FILTER (WHERE cache_status <> 'HIT' AND status < 400)::float8 AS paid_cost
         FROM (${rows}) r
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      p.values,
    )) as Array<{
      at: Date;
      provider: string;
      model: string;
      hits: number | null;
      paid: number | null;
      paid_cost: number | null;
    }>;
    const paid = new Map<string, { provider: string; model: string; requests: number; cost: number }>();
    for (const row of result) {
      const key = JSON.stringify([row.provider, row.model]);
      const entry = paid.get(key) ?? { provider: row.provider, model: row.model, requests: 0, cost: 0 };
      entry.requests += num(row.paid);
      entry.cost += num(row.paid_cost);
      paid.set(key, entry);
    }
    return {
      hits: result
        .filter((row) => num(row.hits) > 0)
        .map((row) => ({ at: row.at, provider: row.provider, model: row.model, hits: num(row.hits) })),
      costs: [...paid.values()].map((entry) => ({
        provider: entry.provider,
        model: entry.model,
        avgCost: entry.requests > 0 ? entry.cost / entry.requests : 0,
      })),
    };
  }

  /** Distinct users (metadata `_user`) and their requests per data point, then over the whole range (`at` null). */
  async users(scope: AnalyticsScope, range: AnalyticsRange, filter: AnalyticsFilter): Promise<UserPoint[]> {
    const p = new Params();
    const where = logConditions(p, scope, range.from, range.to, filter);
    const result = (await this.query(
      `SELECT ${pointOf(range.unit, 'created_at')} AS at, count(DISTINCT metadata->>'_user')::float8 AS users,
              count(*)::float8 AS requests
         FROM log_export.request_logs
        WHERE ${where} AND metadata ? '_user'
        GROUP BY GROUPING SETS ((${pointOf(range.unit, 'created_at')}), ()) ORDER BY 1 NULLS LAST`,
      p.values,
    )) as Array<{ at: Date | null; users: number; requests: number }>;
    return result.map((row) => ({ at: row.at, users: num(row.users), requests: num(row.requests) }));
  }

  /** Requests that succeeded after retries, per data point and number of retries. */
  async rescued(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
  ): Promise<RescuedCount[]> {
    const p = new Params();
    const where = logConditions(p, scope, range.from, range.to, filter);
    const result = (await this.query(
      `SELECT ${pointOf(range.unit, 'created_at')} AS at, retry_count, count(*)::float8 AS count
         FROM log_export.request_logs
        WHERE ${where} AND retry_count > 0 AND status < 400
        GROUP BY 1, 2 ORDER BY 1, 2`,
      p.values,
    )) as Array<{ at: Date; retry_count: number; count: number }>;
    return result.map((row) => ({ at: row.at, retries: row.retry_count, count: num(row.count) }));
  }

  /** Requests and cost per user (metadata `_user`), most requests first. */
  async userGroups(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
    page: { offset: number; limit: number },
  ): Promise<GroupPage<UserGroup>> {
    const p = new Params();
    const where = logConditions(p, scope, range.from, range.to, filter);
    const result = (await this.query(
      `SELECT metadata->>'_user' AS user, count(*)::float8 AS requests, sum(cost)::float8 AS cost,
              count(*) OVER ()::int AS total
         FROM log_export.request_logs
        WHERE ${where} AND metadata ? '_user'
        GROUP BY 1 ORDER BY 2 DESC, 1
        LIMIT ${p.add(page.limit)} OFFSET ${p.add(page.offset)}`,
      p.values,
    )) as Array<{ user: string; requests: number; cost: number; total: number }>;
    let total = result[0]?.total ?? 0;
    if (result.length === 0 && page.offset > 0) {
      const q = new Params();
      const [row] = (await this.query(
        `SELECT count(DISTINCT metadata->>'_user')::int AS n FROM log_export.request_logs
          WHERE ${logConditions(q, scope, range.from, range.to, filter)} AND metadata ? '_user'`,
        q.values,
      )) as Array<{ n: number }>;
      total = row?.n ?? 0;
    }
    return [
      result.map((row) => ({ user: row.user, requests: num(row.requests), cost: num(row.cost) })),
      total,
    ];
  }

  /**
   * Requests per value of a metadata key, most requests first, with the feedback sent on their
   * trace ids (each request weighs the average of its trace's weighted feedback).
   */
  async metadataGroups(
    scope: AnalyticsScope,
    range: AnalyticsRange,
    filter: AnalyticsFilter,
    key: string,
    page: { offset: number; limit: number },
  ): Promise<GroupPage<MetadataGroup>> {
    // The metadata rollups hold no other attribute of a request, so any filter reads the logs.
    const unfiltered = Object.values(filter).every((value) => value === undefined);
    const coverage =
      unfiltered && key.length <= METADATA_KEY_MAX
        ? await this.coverage(range, filter, false)
        : { days: [], hours: [], logs: [[range.from, range.to]] as Interval[] };
    const p = new Params();
    const parts = metadataParts(p, scope, coverage, filter, key);
    const result = (await this.query(
      `SELECT value, sum(requests)::float8 AS requests, sum(cost)::float8 AS cost,
              (sum(tokens) / sum(requests))::float8 AS avg_tokens,
              (sum(feedback_weighted) / nullif(sum(feedback_requests), 0))::float8 AS avg_weighted,
              sum(feedback_requests)::float8 AS with_feedback, max(last_seen) AS last_seen,
              count(*) OVER ()::int AS total
         FROM (${parts}) parts
        GROUP BY 1 ORDER BY 2 DESC, 1
        LIMIT ${p.add(page.limit)} OFFSET ${p.add(page.offset)}`,
      p.values,
    )) as Array<Record<string, unknown>>;
    let total = result.length > 0 ? num(result[0]!.total) : 0;
    if (result.length === 0 && page.offset > 0) {
      const q = new Params();
      const [row] = (await this.query(
        `SELECT count(DISTINCT value)::int AS n FROM (${metadataParts(q, scope, coverage, filter, key)}) parts`,
        q.values,
      )) as Array<{ n: number }>;
      total = row?.n ?? 0;
    }
    return [
      result.map((row) => ({
        value: row.value as string,
        requests: num(row.requests),
        cost: num(row.cost),
        avgTokens: num(row.avg_tokens),
        avgWeightedFeedback: row.avg_weighted === null ? null : num(row.avg_weighted),
        requestsWithFeedback: num(row.with_feedback),
        lastSeen: row.last_seen as Date,
      })),
      total,
    ];
  }

  /** Feedback sent in the range (by its time), per data point, then over the whole range (`at` null). */
  async feedback(scope: AnalyticsScope, range: AnalyticsRange): Promise<FeedbackPoint[]> {
    const p = new Params();
    const result = (await this.query(
      `SELECT ${pointOf(range.unit, 'created_at')} AS at, count(*)::float8 AS count,
              sum(value * weight)::float8 AS weighted
         FROM log_export.feedback WHERE ${feedbackConditions(p, scope, range)}
        GROUP BY GROUPING SETS ((${pointOf(range.unit, 'created_at')}), ()) ORDER BY 1 NULLS LAST`,
      p.values,
    )) as Array<{ at: Date | null; count: number; weighted: number }>;
    return result.map((row) => ({ at: row.at, count: num(row.count), weightedSum: num(row.weighted) }));
  }

  /** Feedback sent in the range per value, lowest first. */
  async feedbackScores(scope: AnalyticsScope, range: AnalyticsRange): Promise<FeedbackScore[]> {
    const p = new Params();
    const result = (await this.query(
      `SELECT value, count(*)::float8 AS count FROM log_export.feedback
        WHERE ${feedbackConditions(p, scope, range)} GROUP BY 1 ORDER BY 1`,
      p.values,
    )) as Array<{ value: number; count: number }>;
    return result.map((row) => ({ value: row.value, count: num(row.count) }));
  }

  /**
   * Feedback sent in the range per model of the requests of its trace id (those of the range
   * too), most feedback first. A trace whose requests ran on several models counts for each.
   */
  async feedbackModels(scope: AnalyticsScope, range: AnalyticsRange): Promise<FeedbackModel[]> {
    const p = new Params();
    const feedbackWhere = feedbackConditions(p, scope, range, 'f.');
    const logWhere = logConditions(p, scope, range.from, range.to, {});
    const result = (await this.query(
      `SELECT m.model, count(*)::float8 AS count, avg(f.value * f.weight)::float8 AS weighted
         FROM log_export.feedback f
         JOIN LATERAL (
           SELECT DISTINCT coalesce(model, '') AS model FROM log_export.request_logs
            WHERE trace_id = f.trace_id AND ${logWhere}
         ) m ON true
        WHERE ${feedbackWhere}
        GROUP BY 1 ORDER BY 2 DESC, 1`,
      p.values,
    )) as Array<{ model: string; count: number; weighted: number }>;
    return result.map((row) => ({ model: row.model, count: num(row.count), avgWeighted: num(row.weighted) }));
  }
}

/** Feedback of the organisation sent in the range; with a workspace, that workspace's own only. */
function feedbackConditions(p: Params, scope: AnalyticsScope, range: AnalyticsRange, alias = ''): string {
  const where = [`${alias}organisation_id = ${p.add(scope.organisationId)}::uuid`];
  if (scope.workspaceId) where.push(`${alias}workspace_id = ${p.add(scope.workspaceId)}::uuid`);
  where.push(`${alias}created_at >= ${p.add(range.from.toISOString())}::timestamptz`);
  where.push(`${alias}created_at < ${p.add(range.to.toISOString())}::timestamptz`);
  return where.join(' AND ');
}

/**
 * Partial sums per value of metadata `key` (requests, cost, tokens, the newest request, and
 * the requests with feedback on their trace with the sum of their traces' average weighted
 * feedback): from the metadata rollups for the clean hours, from the logs for the rest.
 * Feedback counts as the scope sees it: its workspace's own, or all of the organisation's.
 */
function metadataParts(
  p: Params,
  scope: AnalyticsScope,
  coverage: Coverage,
  filter: AnalyticsFilter,
  key: string,
): string {
  const keyParam = p.add(key);
  const branches: string[] = [];
  const hours = [...coverage.days, ...coverage.hours].sort((a, b) => a[0].getTime() - b[0].getTime());
  if (hours.length > 0) {
    const feedback = scope.workspaceId ? 'workspace_feedback' : 'organisation_feedback';
    branches.push(
      `SELECT value, requests, cost, total_tokens AS tokens, last_seen,
              ${feedback}_requests AS feedback_requests, ${feedback}_weighted AS feedback_weighted
         FROM log_export.metadata_rollups
        WHERE ${[...rollupScope(p, scope), `key = ${keyParam}::text`, inIntervals(p, 'bucket', merged(hours))].join(' AND ')}`,
    );
  }
  if (coverage.logs.length > 0) {
    const logs = coverage.logs
      .map(
        ([from, to]) =>
          `SELECT metadata->>${keyParam}::text AS value, trace_id, cost, ${TOKENS('total_tokens')} AS tokens, created_at
             FROM log_export.request_logs
            WHERE ${logConditions(p, scope, from, to, filter)} AND metadata->>${keyParam}::text IS NOT NULL
              AND length(metadata->>${keyParam}::text) <= ${METADATA_VALUE_MAX}`,
      )
      .join(' UNION ALL ');
    const feedbackWhere = [`organisation_id = ${p.add(scope.organisationId)}::uuid`];
    if (scope.workspaceId) feedbackWhere.push(`workspace_id = ${p.add(scope.workspaceId)}::uuid`);
    branches.push(
      `SELECT l.value, 1 AS requests, l.cost, l.tokens, l.created_at AS last_seen,
              (f.weighted IS NOT NULL)::int AS feedback_requests, coalesce(f.weighted, 0) AS feedback_weighted
         FROM (${logs}) l
         LEFT JOIN (
           SELECT trace_id, avg(value * weight) AS weighted FROM log_export.feedback
            WHERE ${feedbackWhere.join(' AND ')}
              AND trace_id IN (SELECT trace_id FROM (${logs}) t WHERE trace_id IS NOT NULL)
            GROUP BY trace_id
         ) f ON f.trace_id = l.trace_id`,
    );
  }
  return branches.join(' UNION ALL ');
}
