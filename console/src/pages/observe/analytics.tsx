import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { get, type Query } from '../../api.ts';
import { TimeSeriesChart, type Series } from '../../ui/chart.tsx';

/** A graph of `/v2/analytics/graphs/*`: a summary over the range and one data point per hour or day. */
export interface Graph<S, P> {
  object: 'analytics-graph';
  summary: S;
  data_points: Array<P & { timestamp: string }>;
}
export type TotalGraph = Graph<{ total: number }, { total: number }>;
export type TotalAvgGraph = Graph<{ total: number; avg: number }, { total: number; avg: number }>;
export type AvgGraph = Graph<{ avg: number }, { avg: number }>;
export type LatencyGraph = Graph<
  { avg: number; p50: number; p90: number; p99: number },
  { avg: number; p50: number; p90: number; p99: number }
>;
export type RateGraph = Graph<{ rate: number }, { rate: number }>;
export type CacheGraph = Graph<
  { total: number; rate: number },
  { simple_hits: number; rate: number; cumulative_simple_cache_savings: number }
>;

/** A page of a group (`/v2/analytics/groups/*`): `current_page` from 0 and `page_size`. */
export interface GroupList<T> {
  object: 'list';
  total: number;
  data: T[];
}

/** One analytics call, keyed by its path and query; `enabled` false waits (a closed section). */
export function useAnalytics<T>(path: string, query: Query, enabled = true) {
  return useQuery({
    queryKey: ['analytics', path, query],
    queryFn: ({ signal }) => get<T>(`/v2/analytics${path}`, query, signal),
    enabled,
  });
}

export function seconds(points: readonly { timestamp: string }[]): number[] {
  return points.map((p) => Math.floor(new Date(p.timestamp).getTime() / 1000));
}

function rounded(v: unknown, scale: number): number | null {
  return typeof v === 'number' ? Math.round(v * scale * 1e6) / 1e6 : null;
}

/** A chart of a graph: one series per field named. */
export function GraphChart<P extends { timestamp: string }>({
  title,
  graph,
  fields,
  unit,
  scale = 1,
}: {
  title: string;
  graph: { data_points: P[] } | undefined;
  /** A module constant: [field, label] pairs. */
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
        values: (points ?? []).map((p) => rounded(p[field], scale)),
      })),
    [points, scale, fields],
  );
  if (!graph) return <div className="chart chart-pending" aria-busy="true" aria-label={title} />;
  return <TimeSeriesChart title={title} timestamps={timestamps} series={series} unit={unit} />;
}

/**
 * A chart of a graph whose points each hold a list of counts by some key (failed requests per
 * status, rescued requests per number of retries): one series per key seen in the range.
 */
export function BreakdownChart<P extends { timestamp: string }, E>({
  title,
  graph,
  entries,
  keyOf,
  count,
  label,
  empty,
}: {
  title: string;
  graph: { data_points: P[] } | undefined;
  /** Module-level functions (stable): a point's entries, an entry's key, count and series label. */
  entries: (point: P) => readonly E[];
  keyOf: (entry: E) => number;
  count: (entry: E) => number;
  label: (key: number) => string;
  /** Said instead of an empty chart when no point has an entry. */
  empty: string;
}) {
  const points = graph?.data_points;
  const timestamps = useMemo(() => seconds(points ?? []), [points]);
  const series = useMemo<Series[]>(() => {
    const keys = [...new Set((points ?? []).flatMap((p) => entries(p).map(keyOf)))].sort((a, b) => a - b);
    return keys.map((k) => ({
      label: label(k),
      values: (points ?? []).map((p) => {
        const entry = entries(p).find((e) => keyOf(e) === k);
        return entry === undefined ? 0 : count(entry);
      }),
    }));
  }, [points, entries, keyOf, count, label]);
  if (!graph) return <div className="chart chart-pending" aria-busy="true" aria-label={title} />;
  if (series.length === 0)
    return (
      <figure className="chart chart-empty" aria-label={title}>
        <figcaption>{title}</figcaption>
        <p className="muted">{empty}</p>
      </figure>
    );
  return <TimeSeriesChart title={title} timestamps={timestamps} series={series} />;
}
