import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useQuery } from '@tanstack/react-query';
import { ApiError, get, type Query } from '../api.ts';
import { TimeSeriesChart, type Series } from '../ui/chart.tsx';
import { ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Page } from '../ui/page.tsx';
import { formatCents, formatCount, formatMs, formatPercent } from './observe/format.ts';
import { useObserveScope } from './observe/scope.tsx';
import { ObserveControls } from './observe/controls.tsx';
import { rangeFromUrl, resolveRange } from './observe/time-range.tsx';

interface Graph<S, P> {
  object: 'analytics-graph';
  summary: S;
  data_points: Array<P & { timestamp: string }>;
}
type TotalGraph = Graph<{ total: number }, { total: number }>;
type TotalAvgGraph = Graph<{ total: number; avg: number }, { total: number; avg: number }>;
type LatencyGraph = Graph<
  { avg: number; p50: number; p90: number; p99: number },
  { avg: number; p50: number; p90: number; p99: number }
>;
type RateGraph = Graph<{ rate: number }, { rate: number }>;
type CacheGraph = Graph<{ total: number; rate: number }, { simple_hits: number; rate: number }>;

interface GroupList<T> {
  object: 'list';
  total: number;
  data: T[];
}

/** One analytics call, keyed by its path and query. */
function useAnalytics<T>(path: string, query: Query) {
  return useQuery({
    queryKey: ['analytics', path, query],
    queryFn: ({ signal }) => get<T>(`/v2/analytics${path}`, query, signal),
  });
}

function seconds(points: readonly { timestamp: string }[]): number[] {
  return points.map((p) => Math.floor(new Date(p.timestamp).getTime() / 1000));
}

/** A chart of a graph: one series per field named. */
function GraphChart<P extends { timestamp: string }>({
  title,
  graph,
  fields,
  unit,
  scale = 1,
}: {
  title: string;
  graph: { data_points: P[] } | undefined;
  fields: ReadonlyArray<readonly [keyof P & string, string]>;
  unit?: string;
  /** Multiplies every value (cents to dollars: 0.01). */
  scale?: number;
}) {
  const points = graph?.data_points;
  const timestamps = useMemo(() => seconds(points ?? []), [points]);
  const series = useMemo<Series[]>(
    () =>
      fields.map(([field, label]) => ({
        label,
        values: (points ?? []).map((p) => {
          const v = p[field];
          return typeof v === 'number' ? Math.round(v * scale * 1e6) / 1e6 : null;
        }),
      })),
    // Every call site passes a module constant as `fields`.
    [points, scale, fields],
  );
  if (!graph) return <div className="chart chart-pending" aria-busy="true" aria-label={title} />;
  return <TimeSeriesChart title={title} timestamps={timestamps} series={series} unit={unit} />;
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

interface GroupColumn<Row> {
  header: string;
  render: (row: Row) => string;
  numeric?: boolean;
}

/** A grouped table of requests (by model, provider, key, workspace), most requests first. */
function GroupTable<Row>({
  title,
  path,
  query,
  columns,
}: {
  title: string;
  path: string;
  query: Query;
  columns: readonly GroupColumn<Row>[];
}) {
  const result = useAnalytics<GroupList<Row>>(path, { ...query, page_size: 20 });
  const headingId = `group-${path.replace(/\W+/g, '-')}`;
  return (
    <section className="card group-table" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {result.error ? <ErrorBanner error={result.error} /> : null}
      {result.isPending ? <Loading /> : null}
      {result.data ? (
        result.data.data.length === 0 ? (
          <p className="muted">No requests in this range.</p>
        ) : (
          <div className="table-scroll">
            <table aria-labelledby={headingId}>
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th key={c.header} scope="col" className={c.numeric ? 'num' : undefined}>
                      {c.header}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {result.data.data.map((row, i) => (
                  <tr key={i}>
                    {columns.map((c) => (
                      <td key={c.header} className={c.numeric ? 'num' : undefined}>
                        {c.render(row)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
            {result.data.total > result.data.data.length ? (
              <p className="muted">
                The top {result.data.data.length} of {formatCount(result.data.total)}.
              </p>
            ) : null}
          </div>
        )
      ) : null}
    </section>
  );
}

interface ModelGroup {
  ai_model: string | null;
  requests: string;
  cost: string;
}
interface DetailGroup {
  requests: number;
  errors: number;
  cost: number;
  total_tokens: number;
  avg_latency: number;
}
type ProviderGroup = DetailGroup & { provider: string | null };
type KeyGroup = DetailGroup & { api_key_id: string | null };
type WorkspaceGroup = DetailGroup & { workspace_id: string | null };

function detailColumns<Row extends DetailGroup>(
  header: string,
  name: (row: Row) => string | null,
): GroupColumn<Row>[] {
  return [
    { header, render: (r) => name(r) ?? '(none)' },
    { header: 'Requests', render: (r) => formatCount(r.requests), numeric: true },
    { header: 'Errors', render: (r) => formatCount(r.errors), numeric: true },
    { header: 'Cost', render: (r) => formatCents(r.cost), numeric: true },
    { header: 'Tokens', render: (r) => formatCount(r.total_tokens), numeric: true },
    { header: 'Avg latency', render: (r) => formatMs(r.avg_latency), numeric: true },
  ];
}
const MODEL_COLUMNS: GroupColumn<ModelGroup>[] = [
  { header: 'Model', render: (r) => r.ai_model ?? '(none)' },
  { header: 'Requests', render: (r) => formatCount(Number(r.requests)), numeric: true },
  { header: 'Cost', render: (r) => formatCents(r.cost), numeric: true },
];
const PROVIDER_COLUMNS = detailColumns<ProviderGroup>('Provider', (r) => r.provider);
const KEY_COLUMNS = detailColumns<KeyGroup>('API key', (r) => r.api_key_id);
const WORKSPACE_COLUMNS = detailColumns<WorkspaceGroup>('Workspace', (r) => r.workspace_id);

const REQUESTS_FIELDS = [['total', 'Requests']] as const;
const COST_FIELDS = [['total', 'Cost (USD)']] as const;
const TOKENS_FIELDS = [['total', 'Tokens']] as const;
const LATENCY_FIELDS = [
  ['p50', 'p50'],
  ['p90', 'p90'],
  ['p99', 'p99'],
  ['avg', 'Average'],
] as const;
const ERRORS_FIELDS = [['total', 'Errors']] as const;
const ERROR_RATE_FIELDS = [['rate', 'Error rate']] as const;
const CACHE_FIELDS = [['rate', 'Hit rate']] as const;

export default function Overview() {
  const [params, setParams] = useSearchParams();
  const range = rangeFromUrl(params, '24h');
  const scope = useObserveScope(params);
  // The instant presets count back from: taken when the range is chosen or refreshed, so every
  // chart asks for the same range.
  const [now, setNow] = useState(() => Date.now());
  const resolved = resolveRange(range, now);
  const query: Query = {
    time_of_generation_min: resolved.from ?? undefined,
    time_of_generation_max: resolved.to ?? undefined,
    workspace_id: scope.workspaceId,
  };

  const requests = useAnalytics<TotalGraph>('/graphs/requests', query);
  const cost = useAnalytics<TotalAvgGraph>('/graphs/cost', query);
  const tokens = useAnalytics<TotalAvgGraph>('/graphs/tokens', query);
  const latency = useAnalytics<LatencyGraph>('/graphs/latency', query);
  const errors = useAnalytics<TotalGraph>('/graphs/errors', query);
  const errorRate = useAnalytics<RateGraph>('/graphs/errors/rate', query);
  const cache = useAnalytics<CacheGraph>('/graphs/cache/hit-rate', query);

  const failed = [requests, cost, tokens, latency, errors, errorRate, cache].find((q) => q.error)?.error;
  const param = failed instanceof ApiError ? failed.param : null;
  const rangeErrors = {
    from: param === 'time_of_generation_min' ? (failed as ApiError).message : undefined,
    to: param === 'time_of_generation_max' ? (failed as ApiError).message : undefined,
  };
  const rangeError = rangeErrors.from || rangeErrors.to;

  return (
    <Page
      title="Overview"
      actions={
        <ObserveControls
          range={range}
          errors={rangeErrors}
          params={params}
          setParams={setParams}
          refresh={() => setNow(Date.now())}
        />
      }
    >
      <p className="muted scope-note">
        {scope.admin
          ? scope.all
            ? 'Requests of every workspace of the organisation.'
            : 'Requests of the workspace picked in the top bar.'
          : "Requests of this key's workspace."}{' '}
        Costs in US dollars; hourly points up to 3 days, daily beyond.
      </p>
      {failed && !rangeError ? <ErrorBanner error={failed} /> : null}
      <dl className="stats" aria-label="Summary">
        <Stat label="Requests" value={formatCount(requests.data?.summary.total)} />
        <Stat label="Cost" value={formatCents(cost.data?.summary.total)} />
        <Stat label="Tokens" value={formatCount(tokens.data?.summary.total)} />
        <Stat label="Error rate" value={formatPercent(errorRate.data?.summary.rate)} />
        <Stat label="Cache hit rate" value={formatPercent(cache.data?.summary.rate)} />
        <Stat label="Latency p50" value={latency.data ? formatMs(latency.data.summary.p50) : '—'} />
      </dl>
      <div className="grid charts">
        <GraphChart title="Requests" graph={requests.data} fields={REQUESTS_FIELDS} />
        <GraphChart title="Cost" graph={cost.data} fields={COST_FIELDS} unit="$" scale={0.01} />
        <GraphChart title="Tokens" graph={tokens.data} fields={TOKENS_FIELDS} />
        <GraphChart title="Latency percentiles" graph={latency.data} fields={LATENCY_FIELDS} unit="ms" />
        <GraphChart title="Errors" graph={errors.data} fields={ERRORS_FIELDS} />
        <GraphChart title="Error rate" graph={errorRate.data} fields={ERROR_RATE_FIELDS} unit="%" />
        <GraphChart title="Cache hit rate" graph={cache.data} fields={CACHE_FIELDS} unit="%" />
      </div>
      <div className="grid groups">
        <GroupTable title="By model" path="/groups/ai-models" query={query} columns={MODEL_COLUMNS} />
        <GroupTable title="By provider" path="/groups/providers" query={query} columns={PROVIDER_COLUMNS} />
        <GroupTable title="By API key" path="/groups/api-keys" query={query} columns={KEY_COLUMNS} />
        <GroupTable
          title="By workspace"
          path="/groups/workspaces"
          query={query}
          columns={WORKSPACE_COLUMNS}
        />
      </div>
    </Page>
  );
}
