import type { Query } from '../../api.ts';
import type { FilterDef } from './log-filters.tsx';

/**
 * The request filters of `/v2/analytics` the overview offers, by their query parameter (each a
 * comma-separated list). The URL holds them by the same names, metadata as `metadata.<key>`.
 */
export function analyticsFilters(keys: ReadonlyArray<{ id: string; name: string }> | undefined): FilterDef[] {
  return [
    { name: 'model', label: 'Model', hint: 'Comma-separated', primary: true },
    { name: 'provider', label: 'Provider', hint: 'Comma-separated', primary: true },
    keys
      ? {
          name: 'api_key_ids',
          label: 'API key',
          primary: true,
          choices: keys.map((k) => ({ value: k.id, label: k.name })),
        }
      : { name: 'api_key_ids', label: 'API key ids', hint: 'UUIDs; comma-separated', primary: true },
    { name: 'status_code', label: 'Status code', hint: 'e.g. 200,429', inputMode: 'numeric' },
    { name: 'cache_status', label: 'Cache status', hint: 'HIT, MISS, REFRESH, DISABLED; comma-separated' },
    { name: 'configs', label: 'Config', hint: 'Saved configs by slug; comma-separated' },
    { name: 'trace_id', label: 'Trace id', hint: 'Comma-separated' },
  ];
}

/** The URL parameters of the overview that are not request filters. */
export const OVERVIEW_KEEP = ['range', 'from', 'to', 'workspaces', 'group_key'] as const;

/** The filter parameters the URL holds, as the analytics API takes them (metadata as one JSON object). */
export function filterQuery(params: URLSearchParams, filters: readonly FilterDef[]): Query {
  const query: Query = {};
  for (const f of filters) {
    const value = params.get(f.name)?.trim();
    if (value) query[f.name] = value;
  }
  const metadata: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name.startsWith('metadata.')) metadata[name.slice('metadata.'.length)] = value;
  }
  if (Object.keys(metadata).length > 0) query.metadata = JSON.stringify(metadata);
  return query;
}

/** The URL with one filter set to one value (a group's row was picked): the other filters stay. */
export function withFilter(params: URLSearchParams, name: string, value: string): URLSearchParams {
  const next = new URLSearchParams(params);
  next.set(name, value);
  return next;
}
