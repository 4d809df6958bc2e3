import { useId, useState, type ReactNode } from 'react';
import type { Query } from '../../api.ts';
import { ErrorBanner } from '../../ui/feedback.tsx';
import { formatCents, formatCount, formatMs } from './format.ts';
import {
  BreakdownChart,
  GraphChart,
  useAnalytics,
  type AvgGraph,
  type CacheGraph,
  type Graph,
  type RateGraph,
  type TotalGraph,
} from './analytics.tsx';
import { GroupTable, type GroupColumn } from './group-table.tsx';

/**
 * A part of the overview below its first screen, closed until opened: its charts are asked for
 * only then. Its heading names it; the summary button opens it.
 */
export function Disclosure({
  title,
  description,
  children,
}: {
  title: string;
  description: string;
  children: (open: boolean) => ReactNode;
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <details
      className="card overview-section"
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
      aria-labelledby={id}
    >
      <summary>
        <h2 id={id}>{title}</h2>
        <span className="muted">{description}</span>
      </summary>
      {open ? <div className="overview-section-body">{children(open)}</div> : null}
    </details>
  );
}

function Figures({ label, items }: { label: string; items: ReadonlyArray<readonly [string, string]> }) {
  return (
    <dl className="stats" aria-label={label}>
      {items.map(([term, value]) => (
        <div className="stat" key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A small table of a graph whose points are not over time (per status, per score, per model). */
function ListTable<Row>({
  title,
  rows,
  columns,
  empty,
}: {
  title: string;
  rows: readonly Row[] | undefined;
  columns: readonly GroupColumn<Row>[];
  empty: string;
}) {
  const id = useId();
  return (
    <section className="card group-table" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {rows === undefined ? null : rows.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <div className="table-scroll">
          <table aria-labelledby={id}>
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
              {rows.map((row, i) => (
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
        </div>
      )}
    </section>
  );
}

// Errors and retries.
type StacksGraph = Graph<
  { total: number },
  { stats: Array<{ response_status_code: number; count: number }> }
>;
type StatusCodesGraph = Graph<
  { total_errors: number; unique_error_codes: number },
  { status_code: number; count: number }
>;
type RescuedGraph = Graph<
  { retry: number; fallback: number },
  { retry: Array<{ retry_success_count: number; count: number }> }
>;
const ERROR_RATE_FIELDS = [['rate', 'Error rate']] as const;
const stackEntries = (p: StacksGraph['data_points'][number]) => p.stats;
const stackKey = (e: { response_status_code: number }) => e.response_status_code;
const entryCount = (e: { count: number }) => e.count;
const statusLabel = (k: number) => String(k);
const rescuedEntries = (p: RescuedGraph['data_points'][number]) => p.retry;
const rescuedKey = (e: { retry_success_count: number }) => e.retry_success_count;
const retriesLabel = (k: number) => (k === 1 ? 'After 1 retry' : `After ${k} retries`);
const STATUS_COLUMNS: GroupColumn<{ status_code: number; count: number }>[] = [
  { header: 'Status', render: (r) => String(r.status_code) },
  { header: 'Failed requests', render: (r) => formatCount(r.count), numeric: true },
];

export function ErrorsSection({
  query,
  onStatus,
}: {
  query: Query;
  /** Filters the overview by a status code. */
  onStatus: (status: number) => void;
}) {
  return (
    <Disclosure title="Errors and retries" description="Failures by status, and requests rescued by retries">
      {() => <ErrorsBody query={query} onStatus={onStatus} />}
    </Disclosure>
  );
}

function ErrorsBody({ query, onStatus }: { query: Query; onStatus: (status: number) => void }) {
  const rate = useAnalytics<RateGraph>('/graphs/errors/rate', query);
  const stacks = useAnalytics<StacksGraph>('/graphs/errors/stacks', query);
  const codes = useAnalytics<StatusCodesGraph>('/graphs/errors/status-codes', query);
  const rescued = useAnalytics<RescuedGraph>('/graphs/requests/rescued', query);
  const failed = [rate, stacks, codes, rescued].find((q) => q.error)?.error;
  const statusColumns: GroupColumn<{ status_code: number; count: number }>[] = [
    {
      header: 'Status',
      render: (r) => (
        <button
          type="button"
          className="link-button"
          aria-label={`Filter by status ${r.status_code}`}
          onClick={() => onStatus(r.status_code)}
        >
          {r.status_code}
        </button>
      ),
    },
    STATUS_COLUMNS[1]!,
  ];
  return (
    <>
      {failed ? <ErrorBanner error={failed} /> : null}
      <Figures
        label="Errors summary"
        items={[
          ['Failed requests', formatCount(codes.data?.summary.total_errors)],
          ['Distinct statuses', formatCount(codes.data?.summary.unique_error_codes)],
          ['Rescued by retries', formatCount(rescued.data?.summary.retry)],
        ]}
      />
      <div className="grid charts">
        <GraphChart title="Error rate" graph={rate.data} fields={ERROR_RATE_FIELDS} unit="%" />
        <BreakdownChart
          title="Errors by status"
          graph={stacks.data}
          entries={stackEntries}
          keyOf={stackKey}
          count={entryCount}
          label={statusLabel}
          empty="No request failed in this range."
        />
        <BreakdownChart
          title="Rescued requests"
          graph={rescued.data}
          entries={rescuedEntries}
          keyOf={rescuedKey}
          count={entryCount}
          label={retriesLabel}
          empty="No request succeeded after a retry in this range. (Fallbacks are not recorded.)"
        />
      </div>
      <ListTable
        title="Status codes"
        rows={codes.data?.data_points}
        columns={statusColumns}
        empty="No request failed in this range."
      />
    </>
  );
}

// Cache.
interface CacheSummary {
  summary: { hits: number; avg_latency: number; total_requests: number; cache_speedup: number };
}
const CACHE_RATE_FIELDS = [['rate', 'Hit rate']] as const;
const CACHE_HITS_FIELDS = [['simple_hits', 'Cache hits']] as const;
const CACHE_SAVINGS_FIELDS = [['cumulative_simple_cache_savings', 'Saved (USD)']] as const;
const CACHE_LATENCY_FIELDS = [['avg', 'Average latency of a hit']] as const;

export function CacheSection({ query }: { query: Query }) {
  return (
    <Disclosure title="Cache" description="Hits, their latency, and what they saved">
      {() => <CacheBody query={query} />}
    </Disclosure>
  );
}

function CacheBody({ query }: { query: Query }) {
  const hits = useAnalytics<CacheGraph>('/graphs/cache/hit-rate', query);
  const latency = useAnalytics<AvgGraph>('/graphs/cache/latency', query);
  const summary = useAnalytics<CacheSummary>('/summary/cache', query);
  const failed = [hits, latency, summary].find((q) => q.error)?.error;
  const points = hits.data?.data_points;
  const saved = points && points.length > 0 ? points[points.length - 1]!.cumulative_simple_cache_savings : 0;
  return (
    <>
      {failed ? <ErrorBanner error={failed} /> : null}
      <Figures
        label="Cache summary"
        items={[
          ['Cache hits', formatCount(summary.data?.summary.hits)],
          ['Average hit latency', summary.data ? formatMs(summary.data.summary.avg_latency) : '—'],
          ['Faster than a miss', summary.data ? `${summary.data.summary.cache_speedup}%` : '—'],
          ['Saved', hits.data ? formatCents(saved) : '—'],
        ]}
      />
      <div className="grid charts">
        <GraphChart title="Cache hit rate" graph={hits.data} fields={CACHE_RATE_FIELDS} unit="%" />
        <GraphChart title="Cache hits" graph={hits.data} fields={CACHE_HITS_FIELDS} />
        <GraphChart title="Cache latency" graph={latency.data} fields={CACHE_LATENCY_FIELDS} unit="ms" />
        <GraphChart
          title="Cache savings"
          graph={hits.data}
          fields={CACHE_SAVINGS_FIELDS}
          unit="$"
          scale={0.01}
        />
      </div>
    </>
  );
}

// Users (the metadata key _user).
interface UserGroup {
  user: string | null;
  requests: string;
  cost: string;
}
const USERS_FIELDS = [['total', 'Users']] as const;
const PER_USER_FIELDS = [['avg', 'Requests per user']] as const;
const USER_COLUMNS: GroupColumn<UserGroup>[] = [
  { header: 'User', render: (r) => r.user ?? '(none)' },
  { header: 'Requests', render: (r) => formatCount(Number(r.requests)), numeric: true },
  { header: 'Cost', render: (r) => formatCents(r.cost), numeric: true },
];

export function UsersSection({ query, onUser }: { query: Query; onUser: (user: string) => void }) {
  return (
    <Disclosure title="Users" description="Requests naming a user (the metadata key _user)">
      {() => <UsersBody query={query} onUser={onUser} />}
    </Disclosure>
  );
}

function UsersBody({ query, onUser }: { query: Query; onUser: (user: string) => void }) {
  const users = useAnalytics<TotalGraph>('/graphs/users', query);
  const perUser = useAnalytics<Graph<{ total: number; unique: number; avg: number }, { avg: number }>>(
    '/graphs/users/requests',
    query,
  );
  const failed = [users, perUser].find((q) => q.error)?.error;
  return (
    <>
      {failed ? <ErrorBanner error={failed} /> : null}
      <Figures
        label="Users summary"
        items={[
          ['Users', formatCount(users.data?.summary.total)],
          ['Requests naming a user', formatCount(perUser.data?.summary.total)],
          ['Requests per user', perUser.data ? String(perUser.data.summary.avg) : '—'],
        ]}
      />
      <div className="grid charts">
        <GraphChart title="Users" graph={users.data} fields={USERS_FIELDS} />
        <GraphChart title="Requests per user" graph={perUser.data} fields={PER_USER_FIELDS} />
      </div>
      <GroupTable
        key={JSON.stringify(query)}
        title="By user"
        path="/groups/users"
        query={query}
        columns={USER_COLUMNS}
        headingLevel={3}
        filter={(r) => (r.user ? { label: `Filter by user ${r.user}`, apply: () => onUser(r.user!) } : null)}
      />
    </>
  );
}

// Feedback: the API filters it by time range and workspace only.
type ScoresGraph = Graph<{ total: number }, { score: number; total: number }>;
type FeedbackModelsGraph = Graph<
  Record<string, never>,
  { ai_model: string | null; total: number; avg_weighted_feedback: number }
>;
const FEEDBACK_FIELDS = [['total', 'Feedback']] as const;
const WEIGHTED_FIELDS = [['avg', 'Average weighted value']] as const;
const SCORE_COLUMNS: GroupColumn<{ score: number; total: number }>[] = [
  { header: 'Value', render: (r) => String(r.score) },
  { header: 'Feedback', render: (r) => formatCount(r.total), numeric: true },
];
const FEEDBACK_MODEL_COLUMNS: GroupColumn<FeedbackModelsGraph['data_points'][number]>[] = [
  { header: 'Model', render: (r) => r.ai_model ?? '(none)' },
  { header: 'Feedback', render: (r) => formatCount(r.total), numeric: true },
  { header: 'Average weighted value', render: (r) => String(r.avg_weighted_feedback), numeric: true },
];

export function FeedbackSection({ rangeQuery, filtered }: { rangeQuery: Query; filtered: boolean }) {
  return (
    <Disclosure title="Feedback" description="Feedback sent on requests, by value and by model">
      {() => <FeedbackBody query={rangeQuery} filtered={filtered} />}
    </Disclosure>
  );
}

function FeedbackBody({ query, filtered }: { query: Query; filtered: boolean }) {
  const count = useAnalytics<TotalGraph>('/graphs/feedbacks', query);
  const weighted = useAnalytics<AvgGraph>('/graphs/feedbacks/weighted', query);
  const scores = useAnalytics<ScoresGraph>('/graphs/feedbacks/scores', query);
  const models = useAnalytics<FeedbackModelsGraph>('/graphs/feedbacks/ai-models', query);
  const failed = [count, weighted, scores, models].find((q) => q.error)?.error;
  return (
    <>
      {filtered ? (
        <p className="muted">
          The analytics API counts feedback by time range and workspace only: the filters above do not apply
          here.
        </p>
      ) : null}
      {failed ? <ErrorBanner error={failed} /> : null}
      <Figures
        label="Feedback summary"
        items={[
          ['Feedback', formatCount(count.data?.summary.total)],
          ['Average weighted value', weighted.data ? String(weighted.data.summary.avg) : '—'],
        ]}
      />
      <div className="grid charts">
        <GraphChart title="Feedback" graph={count.data} fields={FEEDBACK_FIELDS} />
        <GraphChart title="Weighted feedback" graph={weighted.data} fields={WEIGHTED_FIELDS} />
      </div>
      <div className="grid groups">
        <ListTable
          title="Feedback by value"
          rows={scores.data?.data_points}
          columns={SCORE_COLUMNS}
          empty="No feedback in this range."
        />
        <ListTable
          title="Feedback by model"
          rows={models.data?.data_points}
          columns={FEEDBACK_MODEL_COLUMNS}
          empty="No feedback in this range."
        />
      </div>
    </>
  );
}

// Requests per value of a metadata key.
interface MetadataGroup {
  metadata_value: string | null;
  requests: number;
  cost: number;
  avg_tokens: number;
  avg_weighted_feedback: number | null;
  requests_with_feedback: number;
  last_seen: string;
}
const METADATA_COLUMNS: GroupColumn<MetadataGroup>[] = [
  { header: 'Value', render: (r) => r.metadata_value ?? '(none)' },
  { header: 'Requests', render: (r) => formatCount(r.requests), numeric: true },
  { header: 'Cost', render: (r) => formatCents(r.cost), numeric: true },
  { header: 'Avg tokens', render: (r) => formatCount(r.avg_tokens), numeric: true },
  {
    header: 'Avg weighted feedback',
    render: (r) => (r.avg_weighted_feedback === null ? '—' : String(r.avg_weighted_feedback)),
    numeric: true,
  },
  { header: 'Last seen', render: (r) => new Date(r.last_seen).toLocaleString() },
];

export function MetadataSection({
  query,
  groupKey,
  onGroupKey,
  onValue,
}: {
  query: Query;
  /** The metadata key grouped by (kept in the URL), or null. */
  groupKey: string | null;
  onGroupKey: (key: string | null) => void;
  onValue: (key: string, value: string) => void;
}) {
  const [draft, setDraft] = useState(groupKey ?? '');
  const inputId = useId();
  return (
    <Disclosure title="By metadata key" description="Requests per value of a metadata key you name">
      {() => (
        <>
          <form
            className="row"
            aria-label="Group by metadata key"
            onSubmit={(e) => {
              e.preventDefault();
              onGroupKey(draft.trim() || null);
            }}
          >
            <label htmlFor={inputId}>Metadata key</label>
            <input
              id={inputId}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              placeholder="_user"
            />
            <button type="submit">Group</button>
          </form>
          {groupKey ? (
            <GroupTable
              key={`${groupKey}|${JSON.stringify(query)}`}
              title={`By metadata ${groupKey}`}
              path={`/groups/metadata/${encodeURIComponent(groupKey)}`}
              query={query}
              columns={METADATA_COLUMNS}
              headingLevel={3}
              filter={(r) =>
                r.metadata_value === null
                  ? null
                  : {
                      label: `Filter by ${groupKey} ${r.metadata_value}`,
                      apply: () => onValue(groupKey, r.metadata_value!),
                    }
              }
            />
          ) : (
            <p className="muted">Name a metadata key to see its values.</p>
          )}
        </>
      )}
    </Disclosure>
  );
}
