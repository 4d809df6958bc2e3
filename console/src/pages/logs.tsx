import { useCallback, useMemo, useState } from 'react';
import { Route, Routes, useLocation, useNavigate, useSearchParams } from 'react-router';
import { useInfiniteQuery } from '@tanstack/react-query';
import { ApiError, get, type Query } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Page } from '../ui/page.tsx';
import { when } from '../ui/format.ts';
import { formatCount, formatMs, formatUsd } from './observe/format.ts';
import { LogDetailPage } from './observe/log-detail.tsx';
import { LOG_FILTERS, LogFilters } from './observe/log-filters.tsx';
import type { LogPage, LogSummary } from './observe/log-types.ts';
import { useObserveScope } from './observe/scope.tsx';
import { ObserveControls } from './observe/controls.tsx';
import { rangeFromUrl, resolveRange } from './observe/time-range.tsx';

/** One page of the explorer: the API's default, small enough to answer fast over millions of logs. */
export const PAGE_SIZE = 50;

function StatusBadge({ status }: { status: number }) {
  return <span className={`badge ${status >= 400 ? 'error' : 'ok'}`}>{status}</span>;
}

const COLUMNS: Column<LogSummary>[] = [
  { key: 'time', header: 'Time', render: (l) => when(l.created_at), width: 'minmax(10rem, 1.4fr)' },
  { key: 'status', header: 'Status', render: (l) => <StatusBadge status={l.status} />, width: '5rem' },
  { key: 'model', header: 'Model', render: (l) => l.model ?? '—', width: 'minmax(8rem, 1.4fr)' },
  { key: 'provider', header: 'Provider', render: (l) => l.provider ?? '—', width: 'minmax(6rem, 1fr)' },
  { key: 'tokens', header: 'Tokens', render: (l) => formatCount(l.usage.total_tokens), width: '6rem' },
  { key: 'cost', header: 'Cost', render: (l) => formatUsd(l.cost), width: '7rem' },
  { key: 'latency', header: 'Latency', render: (l) => formatMs(l.latency_ms), width: '6rem' },
];

/** Opens a log by its id: for a credential that may view logs but not list them. */
function OpenById() {
  const navigate = useNavigate();
  const [id, setId] = useState('');
  return (
    <form
      className="card row"
      aria-label="Open a log"
      onSubmit={(e) => {
        e.preventDefault();
        if (id.trim()) void navigate(`/logs/${encodeURIComponent(id.trim())}`);
      }}
    >
      <label htmlFor="log-id">Log id (the x-request-id of a response)</label>
      <input id="log-id" value={id} onChange={(e) => setId(e.target.value)} />
      <button type="submit">Open log</button>
    </form>
  );
}

function LogList() {
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const location = useLocation();
  const range = rangeFromUrl(params, '24h');
  const scope = useObserveScope(params);
  // Presets count back from this instant: later pages must send the first page's filters again.
  const [now, setNow] = useState(() => Date.now());
  const resolved = resolveRange(range, now);

  const query = useMemo<Query>(() => {
    const q: Query = {
      limit: PAGE_SIZE,
      start_time: resolved.from ?? undefined,
      end_time: resolved.to ?? undefined,
      workspace_id: scope.workspaceId,
    };
    for (const f of LOG_FILTERS) {
      const value = params.get(f.name);
      if (value) q[f.name] = value;
    }
    for (const [name, value] of params) if (name.startsWith('metadata.')) q[name] = value;
    return q;
  }, [params, resolved.from, resolved.to, scope.workspaceId]);

  const logs = useInfiniteQuery({
    queryKey: ['logs', query],
    queryFn: ({ pageParam, signal }) =>
      get<LogPage>('/v1/logs', { ...query, cursor: pageParam ?? undefined }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    enabled: can('logs.list'),
  });
  const rows = useMemo(() => logs.data?.pages.flatMap((p) => p.data) ?? [], [logs.data]);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = logs;
  const onEndReached = useCallback(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const error = logs.error;
  const param = error instanceof ApiError ? error.param : null;
  const fieldError = (name: string) => {
    if (!param) return undefined;
    const matches = name === 'metadata' ? param.startsWith('metadata.') : param === name;
    return matches ? (error as ApiError).message : undefined;
  };
  const rangeErrors = {
    from: param === 'start_time' ? (error as ApiError).message : undefined,
    to: param === 'end_time' ? (error as ApiError).message : undefined,
  };
  const shownOnField =
    param !== null &&
    (LOG_FILTERS.some((f) => f.name === param) ||
      param.startsWith('metadata.') ||
      param === 'start_time' ||
      param === 'end_time');

  if (!can('logs.list')) {
    return (
      <Page title="Logs">
        <p>This credential may open a log by its id, but not list logs (it lacks logs.list).</p>
        <OpenById />
      </Page>
    );
  }

  return (
    <Page
      title="Logs"
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
      <LogFilters
        key={params.toString()}
        params={params}
        onApply={(next) => {
          setNow(Date.now());
          setParams(next);
        }}
        fieldError={fieldError}
      />
      {error && !shownOnField ? <ErrorBanner error={error} /> : null}
      {logs.isPending && !error ? <Loading what="Loading logs" /> : null}
      {logs.data && rows.length === 0 ? <Empty>No logs match these filters in this time range.</Empty> : null}
      {rows.length > 0 ? (
        <>
          <DataTable
            label="Request logs"
            rows={rows}
            columns={COLUMNS}
            rowKey={(l) => l.id}
            onOpen={(l) =>
              void navigate(`/logs/${encodeURIComponent(l.id)}`, {
                state: { back: location.pathname + location.search },
              })
            }
            onEndReached={onEndReached}
            height={520}
          />
          <p className="muted" role="status" aria-live="polite">
            {formatCount(rows.length)} logs shown
            {isFetchingNextPage ? '; loading more…' : hasNextPage ? '; scroll for more' : '; that is all'}
          </p>
          {hasNextPage ? (
            <button type="button" onClick={() => void fetchNextPage()} disabled={isFetchingNextPage}>
              Load more
            </button>
          ) : null}
        </>
      ) : null}
    </Page>
  );
}

export default function LogsPage() {
  return (
    <Routes>
      <Route index element={<LogList />} />
      <Route path=":id" element={<LogDetailPage />} />
    </Routes>
  );
}
