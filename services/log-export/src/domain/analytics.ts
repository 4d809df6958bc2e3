import { BadRequest, NotFound, type PageQuery } from '@switchyard/core';
import type { Principal, WorkspaceLookup } from '@switchyard/access';
import type {
  AnalyticsRepository,
  AnalyticsFilter,
  AnalyticsRange,
  AnalyticsScope,
  BucketTotals,
} from '../store/analytics.repository.ts';
import { LATENCY_BUCKETS_MS } from '../store/rollups.ts';
import type { AnalyticsQuery, AnalyticsRangeQuery } from './analytics.schemas.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The range when the request names none: the last week. */
export const DEFAULT_RANGE_MS = 7 * DAY_MS;
/** The longest range answered: rollups are kept longer, but a graph of more is no longer read per day. */
export const MAX_RANGE_MS = 90 * DAY_MS;
/** Ranges up to this long are graphed per hour, longer ones per UTC day. */
export const HOURLY_UP_TO_MS = 3 * DAY_MS;

/** The time every graph's data point starts at. */
export interface Point {
  timestamp: string;
}

export interface Graph<S, P> {
  object: 'analytics-graph';
  summary: S;
  data_points: P[];
}

export interface Group<T> {
  object: 'list';
  total: number;
  data: Array<T & { object: 'analytics-group' }>;
}

/** Cost is stored in USD and answered in cents, as the reference API does. */
const cents = (usd: number): number => Math.round(usd * 100 * 1e6) / 1e6;
const ratio = (part: number, whole: number): number => (whole > 0 ? part / whole : 0);
/** A percentage with two decimals. */
const percent = (part: number, whole: number): number => Math.round(ratio(part, whole) * 10_000) / 100;

/**
 * The latency at quantile `q` (0 to 1) estimated from a histogram of LATENCY_BUCKETS_MS: the
 * bucket holding that rank, and a linear guess within its bounds. Above the last bound only
 * "at least the last bound" is known, so that is the answer. 0 without requests.
 */
export function latencyQuantile(histogram: readonly number[], q: number): number {
  const total = histogram.reduce((sum, n) => sum + n, 0);
  if (total === 0) return 0;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    const n = histogram[i]!;
    if (n > 0 && seen + n >= rank) {
      const lower = i === 0 ? 0 : LATENCY_BUCKETS_MS[i - 1]!;
      const upper = LATENCY_BUCKETS_MS[i] ?? lower;
      return Math.round(lower + (upper - lower) * ((rank - seen) / n));
    }
    seen += n;
  }
  return LATENCY_BUCKETS_MS.at(-1)!;
}

function addHistograms(into: number[], from: readonly number[]): number[] {
  for (let i = 0; i < from.length; i++) into[i] = (into[i] ?? 0) + from[i]!;
  return into;
}

const EMPTY: Omit<BucketTotals, 'at'> = {
  requests: 0,
  errors: 0,
  cost: 0,
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
  latencyMsSum: 0,
  histogram: new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0),
  hits: 0,
  misses: 0,
  hitLatencyMsSum: 0,
  missLatencyMsSum: 0,
};

function sumTotals(points: BucketTotals[]): Omit<BucketTotals, 'at'> {
  const sum = { ...EMPTY, histogram: [...EMPTY.histogram] };
  for (const p of points) {
    sum.requests += p.requests;
    sum.errors += p.errors;
    sum.cost += p.cost;
    sum.promptTokens += p.promptTokens;
    sum.completionTokens += p.completionTokens;
    sum.totalTokens += p.totalTokens;
    sum.latencyMsSum += p.latencyMsSum;
    addHistograms(sum.histogram, p.histogram);
    sum.hits += p.hits;
    sum.misses += p.misses;
    sum.hitLatencyMsSum += p.hitLatencyMsSum;
    sum.missLatencyMsSum += p.missLatencyMsSum;
  }
  return sum;
}

function latencies(t: Omit<BucketTotals, 'at'>) {
  return {
    avg: Math.round(ratio(t.latencyMsSum, t.requests)),
    p50: latencyQuantile(t.histogram, 0.5),
    p90: latencyQuantile(t.histogram, 0.9),
    p99: latencyQuantile(t.histogram, 0.99),
  };
}

/** The start of every data point of the range, oldest first: empty ones are answered too. */
export function pointsOf(range: AnalyticsRange): Date[] {
  const step = range.unit === 'hour' ? HOUR_MS : DAY_MS;
  const points: Date[] = [];
  for (let t = Math.floor(range.from.getTime() / step) * step; t < range.to.getTime(); t += step) {
    points.push(new Date(t));
  }
  return points;
}

/** One data point per point of the range, from the rows found (by time), `empty` where none was. */
function series<R extends { at: Date | null }, P>(
  range: AnalyticsRange,
  rows: R[],
  point: (row: R | undefined, at: Date) => P,
): Array<Point & P> {
  const byTime = new Map<number, R>();
  for (const row of rows) if (row.at) byTime.set(row.at.getTime(), row);
  return pointsOf(range).map((at) => ({
    timestamp: at.toISOString(),
    ...point(byTime.get(at.getTime()), at),
  }));
}

function graph<S, P>(summary: S, data_points: P[]): Graph<S, P> {
  return { object: 'analytics-graph', summary, data_points };
}

function groups<T>(data: T[], total: number): Group<T> {
  return {
    object: 'list',
    total,
    data: data.map((item) => ({ ...item, object: 'analytics-group' as const })),
  };
}

/** What a query asks for, as the store reads it. */
interface Resolved {
  scope: AnalyticsScope;
  range: AnalyticsRange;
  filter: AnalyticsFilter;
}

/**
 * Graphs, groups and summaries of an organisation's requests (a workspace key: of its
 * workspace) and feedback. Read from the hourly rollups wherever they hold the answer; from
 * the request logs of the range for users, metadata, retries and filters the rollups lack.
 */
export class AnalyticsService {
  private readonly workspaces: WorkspaceLookup | undefined;
  private readonly now: () => Date;

  constructor(
    private readonly repo: AnalyticsRepository,
    options: { workspaces?: WorkspaceLookup | undefined; now?: (() => Date) | undefined } = {},
  ) {
    this.workspaces = options.workspaces;
    this.now = options.now ?? (() => new Date());
  }

  /** The workspace read: a workspace key's own, else the one named, else the whole organisation. */
  private async workspaceOf(principal: Principal, query: AnalyticsRangeQuery): Promise<string | null> {
    const { workspace_id: id, workspace_slug: slug } = query;
    if (id !== undefined && slug !== undefined) {
      throw new BadRequest(
        "Query parameter 'workspace_slug': give workspace_id or workspace_slug, not both.",
        {
          param: 'workspace_slug',
          code: 'invalid_parameter',
        },
      );
    }
    const named = id ?? slug;
    if (principal.workspaceId) {
      if (named === undefined || named === principal.workspaceId || named === principal.workspaceSlug) {
        return principal.workspaceId;
      }
    }
    if (named === undefined) return null;
    if (id !== undefined && !principal.workspaceId) return id;
    const found = this.workspaces ? await this.workspaces(principal.organisationId, named) : null;
    if (!found || found.organisationId !== principal.organisationId) {
      throw new NotFound(`Workspace '${named}' not found.`);
    }
    if (principal.workspaceId && found.id !== principal.workspaceId) {
      throw new NotFound(`Workspace '${named}' not found.`);
    }
    return found.id;
  }

  /** The range asked for: the last 7 days unless said, at most 90 days; per hour up to 3 days, else per day. */
  range(query: AnalyticsRangeQuery): AnalyticsRange {
    const to = query.time_of_generation_max ?? this.now();
    const from = query.time_of_generation_min ?? new Date(to.getTime() - DEFAULT_RANGE_MS);
    if (from >= to) {
      throw new BadRequest(
        "Invalid query parameter 'time_of_generation_max': must be later than time_of_generation_min.",
        { param: 'time_of_generation_max', code: 'invalid_parameter' },
      );
    }
    if (to.getTime() - from.getTime() > MAX_RANGE_MS) {
      throw new BadRequest(
        "Invalid query parameter 'time_of_generation_min': at most 90 days before time_of_generation_max.",
        { param: 'time_of_generation_min', code: 'invalid_parameter' },
      );
    }
    return { from, to, unit: to.getTime() - from.getTime() <= HOURLY_UP_TO_MS ? 'hour' : 'day' };
  }

  private async resolve(principal: Principal, query: AnalyticsQuery): Promise<Resolved> {
    const range = this.range(query);
    const workspaceId = await this.workspaceOf(principal, query);
    const usd = (value: number | undefined) => (value === undefined ? undefined : value / 100);
    return {
      scope: { organisationId: principal.organisationId, workspaceId },
      range,
      filter: {
        apiKeyIds: query.api_key_ids,
        providers: query.provider,
        models: query.model,
        aiOrgModels: query.ai_org_model,
        statusCodes: query.status_code,
        cacheStatuses: query.cache_status,
        metadata: query.metadata,
        traceIds: query.trace_id,
        spanIds: query.span_id,
        configs: query.configs,
        totalUnitsMin: query.total_units_min,
        totalUnitsMax: query.total_units_max,
        costMin: usd(query.cost_min),
        costMax: usd(query.cost_max),
        promptTokensMin: query.prompt_token_min,
        promptTokensMax: query.prompt_token_max,
        completionTokensMin: query.completion_token_min,
        completionTokensMax: query.completion_token_max,
      },
    };
  }

  private async totals(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const rows = await this.repo.totals(scope, range, filter);
    return { range, rows, sum: sumTotals(rows) };
  }

  async requests(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      { total: sum.requests },
      series(range, rows, (row) => ({ total: row?.requests ?? 0 })),
    );
  }

  async cost(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      { total: cents(sum.cost), avg: cents(ratio(sum.cost, sum.requests)) },
      series(range, rows, (row) => ({
        total: cents(row?.cost ?? 0),
        avg: cents(ratio(row?.cost ?? 0, row?.requests ?? 0)),
      })),
    );
  }

  async latency(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      latencies(sum),
      series(range, rows, (row) => latencies(row ?? EMPTY)),
    );
  }

  async tokens(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      { total: sum.totalTokens, avg: Math.round(ratio(sum.totalTokens, sum.requests)) },
      series(range, rows, (row) => ({
        total: row?.totalTokens ?? 0,
        avg: Math.round(ratio(row?.totalTokens ?? 0, row?.requests ?? 0)),
      })),
    );
  }

  async errors(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      { total: sum.errors },
      series(range, rows, (row) => ({ total: row?.errors ?? 0 })),
    );
  }

  async errorRate(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      { rate: percent(sum.errors, sum.requests) },
      series(range, rows, (row) => ({ rate: percent(row?.errors ?? 0, row?.requests ?? 0) })),
    );
  }

  async errorStacks(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const rows = await this.repo.errorStatuses(scope, range, filter, true);
    const byTime = new Map<number, Array<{ response_status_code: number; count: number }>>();
    for (const row of rows) {
      const key = row.at!.getTime();
      const stats = byTime.get(key) ?? [];
      stats.push({ response_status_code: row.status, count: row.count });
      byTime.set(key, stats);
    }
    return graph(
      { total: rows.reduce((sum, row) => sum + row.count, 0) },
      pointsOf(range).map((at) => ({ timestamp: at.toISOString(), stats: byTime.get(at.getTime()) ?? [] })),
    );
  }

  /** Failed requests per status over the whole range, most frequent first (no time buckets). */
  async errorStatusCodes(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const rows = await this.repo.errorStatuses(scope, range, filter, false);
    return graph(
      { total_errors: rows.reduce((sum, row) => sum + row.count, 0), unique_error_codes: rows.length },
      rows.map((row) => ({ status_code: row.status, count: row.count })),
    );
  }

  /**
   * Requests that succeeded after retries, per number of retries. `fallback` is always 0: a log
   * names the config target that answered, not whether an earlier one failed over to it.
   */
  async rescued(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const rows = await this.repo.rescued(scope, range, filter);
    const byTime = new Map<number, Array<{ retry_success_count: number; count: number }>>();
    for (const row of rows) {
      const retry = byTime.get(row.at.getTime()) ?? [];
      retry.push({ retry_success_count: row.retries, count: row.count });
      byTime.set(row.at.getTime(), retry);
    }
    return graph(
      { retry: rows.reduce((sum, row) => sum + row.count, 0), fallback: 0 },
      pointsOf(range).map((at) => ({
        timestamp: at.toISOString(),
        retry: byTime.get(at.getTime()) ?? [],
        fallback: 0,
      })),
    );
  }

  /** Distinct users: the metadata key `_user` of requests. */
  async users(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const rows = await this.repo.users(scope, range, filter);
    const whole = rows.find((row) => row.at === null);
    return graph(
      { total: whole?.users ?? 0 },
      series(range, rows, (row) => ({ total: row?.users ?? 0 })),
    );
  }

  /** Requests per user: of requests naming a user (`_user`), per distinct user. */
  async userRequests(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const rows = await this.repo.users(scope, range, filter);
    const whole = rows.find((row) => row.at === null);
    const total = whole?.requests ?? 0;
    const unique = whole?.users ?? 0;
    return graph(
      { total, unique, avg: Math.round(ratio(total, unique) * 100) / 100 },
      series(range, rows, (row) => ({
        avg: Math.round(ratio(row?.requests ?? 0, row?.users ?? 0) * 100) / 100,
      })),
    );
  }

  /**
   * Cache hits, and their rate among the requests that looked in the cache (HIT or MISS). What a
   * hit saved is the average cost of the same model's requests the provider answered. This
   * gateway's cache is exact-match only: semantic figures are 0.
   */
  async cacheHitRate(principal: Principal, query: AnalyticsQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const [rows, savings] = await Promise.all([
      this.repo.totals(scope, range, filter),
      this.repo.cacheHitsByModel(scope, range, filter),
    ]);
    const sum = sumTotals(rows);
    const avgCost = new Map(savings.costs.map((c) => [JSON.stringify([c.provider, c.model]), c.avgCost]));
    const saved = new Map<number, number>();
    for (const hit of savings.hits) {
      const usd = hit.hits * (avgCost.get(JSON.stringify([hit.provider, hit.model])) ?? 0);
      saved.set(hit.at.getTime(), (saved.get(hit.at.getTime()) ?? 0) + usd);
    }
    let cumulative = 0;
    return graph(
      { total: sum.hits, rate: percent(sum.hits, sum.hits + sum.misses) },
      series(range, rows, (row, at) => {
        cumulative += saved.get(at.getTime()) ?? 0;
        return {
          simple_hits: row?.hits ?? 0,
          semantic_hits: 0,
          rate: percent(row?.hits ?? 0, (row?.hits ?? 0) + (row?.misses ?? 0)),
          cumulative_simple_cache_savings: cents(cumulative),
          cumulative_semantic_cache_savings: 0,
        };
      }),
    );
  }

  /** The average latency of cache hits. */
  async cacheLatency(principal: Principal, query: AnalyticsQuery) {
    const { range, rows, sum } = await this.totals(principal, query);
    return graph(
      { avg: Math.round(ratio(sum.hitLatencyMsSum, sum.hits)) },
      series(range, rows, (row) => ({ avg: Math.round(ratio(row?.hitLatencyMsSum ?? 0, row?.hits ?? 0)) })),
    );
  }

  /** Cache hits against all requests, and how much faster a hit answered than a miss (a percentage). */
  async cacheSummary(principal: Principal, query: AnalyticsQuery) {
    const { sum } = await this.totals(principal, query);
    const hitLatency = ratio(sum.hitLatencyMsSum, sum.hits);
    const missLatency = ratio(sum.missLatencyMsSum, sum.misses);
    return {
      object: 'analytics-summary' as const,
      summary: {
        hits: sum.hits,
        avg_latency: Math.round(hitLatency),
        total_requests: sum.requests,
        cache_speedup:
          sum.hits > 0 && sum.misses > 0 ? Math.round(((missLatency - hitLatency) / missLatency) * 100) : 0,
      },
    };
  }

  private async feedbackRange(principal: Principal, query: AnalyticsRangeQuery) {
    const range = this.range(query);
    const scope = {
      organisationId: principal.organisationId,
      workspaceId: await this.workspaceOf(principal, query),
    };
    return { scope, range };
  }

  /** Feedback sent in the range (counted at the time it was first sent). */
  async feedbacks(principal: Principal, query: AnalyticsRangeQuery) {
    const { scope, range } = await this.feedbackRange(principal, query);
    const rows = await this.repo.feedback(scope, range);
    return graph(
      { total: rows.find((row) => row.at === null)?.count ?? 0 },
      series(range, rows, (row) => ({ total: row?.count ?? 0 })),
    );
  }

  async feedbackScores(principal: Principal, query: AnalyticsRangeQuery) {
    const { scope, range } = await this.feedbackRange(principal, query);
    const rows = await this.repo.feedbackScores(scope, range);
    return graph(
      { total: rows.reduce((sum, row) => sum + row.count, 0) },
      rows.map((row) => ({ score: row.value, total: row.count })),
    );
  }

  /** The average of value times weight. */
  async feedbackWeighted(principal: Principal, query: AnalyticsRangeQuery) {
    const { scope, range } = await this.feedbackRange(principal, query);
    const rows = await this.repo.feedback(scope, range);
    const whole = rows.find((row) => row.at === null);
    const avg = (row: { count: number; weightedSum: number } | undefined) =>
      Math.round(ratio(row?.weightedSum ?? 0, row?.count ?? 0) * 100) / 100;
    return graph(
      { avg: avg(whole) },
      series(range, rows, (row) => ({ avg: avg(row) })),
    );
  }

  async feedbackModels(principal: Principal, query: AnalyticsRangeQuery) {
    const { scope, range } = await this.feedbackRange(principal, query);
    const rows = await this.repo.feedbackModels(scope, range);
    return graph(
      {},
      rows.map((row) => ({
        ai_model: row.model,
        total: row.count,
        avg_weighted_feedback: Math.round(row.avgWeighted * 100) / 100,
      })),
    );
  }

  /** Requests and cost per user (`_user`); requests and cost are strings, as in the reference API. */
  async userGroups(principal: Principal, query: AnalyticsQuery, page: PageQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const [rows, total] = await this.repo.userGroups(scope, range, filter, page);
    return groups(
      rows.map((row) => ({ user: row.user, requests: String(row.requests), cost: String(cents(row.cost)) })),
      total,
    );
  }

  /** Requests per model; requests and cost are strings, as in the reference API. */
  async modelGroups(principal: Principal, query: AnalyticsQuery, page: PageQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const [rows, total] = await this.repo.groups(scope, range, filter, 'model', page);
    return groups(
      rows.map((row) => ({
        ai_model: row.key,
        requests: String(row.requests),
        cost: String(cents(row.cost)),
      })),
      total,
    );
  }

  async metadataGroups(principal: Principal, query: AnalyticsQuery, key: string, page: PageQuery) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const [rows, total] = await this.repo.metadataGroups(scope, range, filter, key, page);
    return groups(
      rows.map((row) => ({
        metadata_value: row.value,
        requests: row.requests,
        cost: cents(row.cost),
        avg_tokens: Math.round(row.avgTokens),
        avg_weighted_feedback:
          row.avgWeightedFeedback === null ? null : Math.round(row.avgWeightedFeedback * 100) / 100,
        requests_with_feedback: row.requestsWithFeedback,
        last_seen: row.lastSeen.toISOString(),
      })),
      total,
    );
  }

  /** Requests per provider, per API key or per workspace, with their errors, cost, tokens and latency. */
  async groupsBy(
    principal: Principal,
    query: AnalyticsQuery,
    by: 'provider' | 'api_key_id' | 'workspace_id',
    page: PageQuery,
  ) {
    const { scope, range, filter } = await this.resolve(principal, query);
    const [rows, total] = await this.repo.groups(scope, range, filter, by, page);
    return groups(
      rows.map((row) => ({
        [by]: row.key,
        requests: row.requests,
        errors: row.errors,
        cost: cents(row.cost),
        total_tokens: row.totalTokens,
        avg_latency: Math.round(ratio(row.latencyMsSum, row.requests)),
      })),
      total,
    );
  }
}
