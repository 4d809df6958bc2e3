import { useMemo, useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { ApiError, type Query } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorBanner } from '../ui/feedback.tsx';
import { Page } from '../ui/page.tsx';
import { formatCents, formatCount, formatMs, formatPercent } from './observe/format.ts';
import { useObserveScope } from './observe/scope.tsx';
import { ObserveControls } from './observe/controls.tsx';
import { rangeFromUrl, resolveRange } from './observe/time-range.tsx';
import {
  GraphChart,
  useAnalytics,
  type CacheGraph,
  type LatencyGraph,
  type RateGraph,
  type TotalAvgGraph,
  type TotalGraph,
} from './observe/analytics.tsx';
import { GroupTable, type GroupColumn } from './observe/group-table.tsx';
import { LogFilters } from './observe/log-filters.tsx';
import { analyticsFilters, filterQuery, OVERVIEW_KEEP, withFilter } from './observe/analytics-filters.ts';
import { NamedId, useNames } from './observe/names.tsx';
import {
  CacheSection,
  ErrorsSection,
  FeedbackSection,
  MetadataSection,
  UsersSection,
} from './observe/overview-sections.tsx';

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
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
  name: (row: Row) => ReactNode,
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

export default function Overview() {
  const [params, setParams] = useSearchParams();
  const { setWorkspaceId } = useAuth();
  const names = useNames();
  const range = rangeFromUrl(params, '24h');
  const scope = useObserveScope(params);
  // The instant presets count back from: taken when the range is chosen or refreshed, so every
  // chart asks for the same range.
  const [now, setNow] = useState(() => Date.now());
  const resolved = resolveRange(range, now);
  const filters = useMemo(() => analyticsFilters(names.keys), [names.keys]);
  const filterText = filterQuery(params, filters);
  const filterKey = JSON.stringify(filterText);
  const rangeQuery = useMemo<Query>(
    () => ({
      time_of_generation_min: resolved.from ?? undefined,
      time_of_generation_max: resolved.to ?? undefined,
      workspace_id: scope.workspaceId,
    }),
    [resolved.from, resolved.to, scope.workspaceId],
  );
  // Every chart and group of requests: the range, the workspace and the filters of the URL.
  const query = useMemo<Query>(
    () => ({ ...rangeQuery, ...(JSON.parse(filterKey) as Query) }),
    [rangeQuery, filterKey],
  );
  const filtered = filterKey !== '{}';
  const queryKey = JSON.stringify(query);

  const requests = useAnalytics<TotalGraph>('/graphs/requests', query);
  const cost = useAnalytics<TotalAvgGraph>('/graphs/cost', query);
  const tokens = useAnalytics<TotalAvgGraph>('/graphs/tokens', query);
  const latency = useAnalytics<LatencyGraph>('/graphs/latency', query);
  const errors = useAnalytics<TotalGraph>('/graphs/errors', query);
  const errorRate = useAnalytics<RateGraph>('/graphs/errors/rate', query);
  const cache = useAnalytics<CacheGraph>('/graphs/cache/hit-rate', query);

  const failed = [requests, cost, tokens, latency, errors, errorRate, cache].find((q) => q.error)?.error;
  const apiError = failed instanceof ApiError ? failed : null;
  const param = apiError?.param ?? null;
  const rangeErrors = {
    from: param === 'time_of_generation_min' ? apiError!.message : undefined,
    to: param === 'time_of_generation_max' ? apiError!.message : undefined,
  };
  // The filter a refused parameter belongs to: `status_code[0]` (an entry of a list) is `status_code`.
  const paramBase = param === null ? null : param.split(/[.[]/)[0]!;
  const fieldError = (name: string) => (paramBase === name ? apiError!.message : undefined);
  const shownOnField =
    paramBase !== null &&
    (paramBase === 'time_of_generation_min' ||
      paramBase === 'time_of_generation_max' ||
      paramBase === 'metadata' ||
      filters.some((f) => f.name === paramBase));

  const filterBy = (name: string, value: string) => {
    setNow(Date.now());
    setParams(withFilter(params, name, value));
  };
  const keyColumns = detailColumns<KeyGroup>('API key', (r) =>
    r.api_key_id ? <NamedId name={names.keyName(r.api_key_id)} id={r.api_key_id} /> : null,
  );
  const workspaceColumns = detailColumns<WorkspaceGroup>('Workspace', (r) =>
    r.workspace_id ? <NamedId name={names.workspaceName(r.workspace_id)} id={r.workspace_id} /> : null,
  );

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
        Costs in US dollars; hourly points up to 3 days, daily beyond. Pick a row of a group to filter by it.
      </p>
      <LogFilters
        // Made again when the URL changes; never while filters or names load, which would drop what is typed.
        key={params.toString()}
        params={params}
        filters={filters}
        keep={OVERVIEW_KEEP}
        label="Overview filters"
        onApply={(next) => {
          setNow(Date.now());
          setParams(next);
        }}
        fieldError={fieldError}
      />
      {failed && !shownOnField ? <ErrorBanner error={failed} /> : null}
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
      </div>
      <div className="grid groups">
        <GroupTable
          key={`m${queryKey}`}
          title="By model"
          path="/groups/ai-models"
          query={query}
          columns={MODEL_COLUMNS}
          filter={(r) =>
            r.ai_model
              ? { label: `Filter by model ${r.ai_model}`, apply: () => filterBy('model', r.ai_model!) }
              : null
          }
        />
        <GroupTable
          key={`p${queryKey}`}
          title="By provider"
          path="/groups/providers"
          query={query}
          columns={PROVIDER_COLUMNS}
          filter={(r) =>
            r.provider
              ? { label: `Filter by provider ${r.provider}`, apply: () => filterBy('provider', r.provider!) }
              : null
          }
        />
        <GroupTable
          key={`k${queryKey}`}
          title="By API key"
          path="/groups/api-keys"
          query={query}
          columns={keyColumns}
          filter={(r) =>
            r.api_key_id
              ? {
                  label: `Filter by API key ${names.keyName(r.api_key_id) ?? r.api_key_id}`,
                  apply: () => filterBy('api_key_ids', r.api_key_id!),
                }
              : null
          }
        />
        <GroupTable
          key={`w${queryKey}`}
          title="By workspace"
          path="/groups/workspaces"
          query={query}
          columns={workspaceColumns}
          // An organisation admin key reading all workspaces picks one (the top bar's workspace).
          filter={(r) =>
            scope.all && r.workspace_id
              ? {
                  label: `Show workspace ${names.workspaceName(r.workspace_id) ?? r.workspace_id}`,
                  apply: () => {
                    setWorkspaceId(r.workspace_id);
                    const next = new URLSearchParams(params);
                    next.delete('workspaces');
                    setNow(Date.now());
                    setParams(next);
                  },
                }
              : null
          }
        />
      </div>
      <div className="overview-sections">
        <ErrorsSection query={query} onStatus={(status) => filterBy('status_code', String(status))} />
        <CacheSection query={query} />
        <UsersSection query={query} onUser={(user) => filterBy('metadata._user', user)} />
        <FeedbackSection rangeQuery={rangeQuery} filtered={filtered} />
        <MetadataSection
          query={query}
          groupKey={params.get('group_key')}
          onGroupKey={(key) => {
            const next = new URLSearchParams(params);
            if (key) next.set('group_key', key);
            else next.delete('group_key');
            setParams(next);
          }}
          onValue={(key, value) => filterBy(`metadata.${key}`, value)}
        />
      </div>
    </Page>
  );
}
