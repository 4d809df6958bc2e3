import { useMemo, useState, type FormEvent } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { ApiError, get } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { Empty, Loading } from '../ui/feedback.tsx';
import { Field, FormError } from '../ui/form.tsx';
import { Page } from '../ui/page.tsx';
import { when } from '../ui/format.ts';
import { Section } from '../ui/section.tsx';
import { Details, type ListBody } from './org/common.tsx';

interface AuditEntry {
  id: string;
  occurred_at: string;
  organisation_id: string;
  workspace_id: string | null;
  actor: { api_key_id: string | null; key_name: string | null; user_id: string | null; auth_method: string };
  method: string;
  resource: string;
  resource_id: string | null;
  path: string;
  scope: string | null;
  status: number;
  service: string;
  request_id: string;
  client: { ip: string | null; user_agent: string | null };
}

interface Filters {
  method: string;
  resource: string;
  workspace_id: string;
  api_key_id: string;
  user_id: string;
  from: string;
  to: string;
}
const EMPTY: Filters = {
  method: '',
  resource: '',
  workspace_id: '',
  api_key_id: '',
  user_id: '',
  from: '',
  to: '',
};
const FILTER_FIELDS = Object.keys(EMPTY);
const PAGE_SIZE = 100;

/** A datetime-local value as an ISO instant (the reader's time zone), or undefined. */
function instant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

const actorOf = (e: AuditEntry) =>
  e.actor.key_name ?? e.actor.user_id ?? e.actor.api_key_id ?? e.actor.auth_method;

const columns: Column<AuditEntry>[] = [
  { key: 'time', header: 'Time', width: '11rem', render: (e) => when(e.occurred_at) },
  { key: 'method', header: 'Method', width: '5rem', render: (e) => e.method },
  { key: 'resource', header: 'Resource', width: 'minmax(12rem, 2fr)', render: (e) => e.resource },
  { key: 'status', header: 'Status', width: '4.5rem', render: (e) => e.status },
  { key: 'actor', header: 'Actor', width: 'minmax(8rem, 1fr)', render: actorOf },
  { key: 'scope', header: 'Scope', width: 'minmax(8rem, 1fr)', render: (e) => e.scope ?? '—' },
];

/** The organisation's audit log of management writes: filters, virtualised pages, one entry's detail. */
export default function AuditLogPage() {
  const { can } = useAuth();
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [open, setOpen] = useState<AuditEntry | null>(null);
  const workspaces = useQuery({
    queryKey: ['workspaces', 'all'],
    queryFn: () =>
      get<ListBody<{ id: string; name: string; slug: string }>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const query = useMemo(
    () => ({
      method: filters.method || undefined,
      resource: filters.resource.trim() || undefined,
      workspace_id: filters.workspace_id || undefined,
      api_key_id: filters.api_key_id.trim() || undefined,
      user_id: filters.user_id.trim() || undefined,
      from: instant(filters.from),
      to: instant(filters.to),
    }),
    [filters],
  );
  const entries = useInfiniteQuery({
    queryKey: ['audit-logs', query],
    initialPageParam: 0,
    queryFn: ({ pageParam, signal }) =>
      get<ListBody<AuditEntry>>(
        '/v1/audit-logs',
        { ...query, current_page: pageParam, page_size: PAGE_SIZE },
        signal,
      ),
    getNextPageParam: (last, all) =>
      all.reduce((n, p) => n + p.data.length, 0) < last.total && last.data.length > 0
        ? all.length
        : undefined,
    retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 2,
  });
  const rows = useMemo(() => entries.data?.pages.flatMap((p) => p.data) ?? [], [entries.data]);
  const total = entries.data?.pages[0]?.total;
  const param = entries.error instanceof ApiError ? entries.error.param : null;
  const fieldError = (name: string) => (param === name ? (entries.error as ApiError).message : undefined);
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setOpen(null);
    setFilters(draft);
  };
  const set = (name: keyof Filters) => (e: { target: { value: string } }) =>
    setDraft((d) => ({ ...d, [name]: e.target.value }));

  return (
    <Page title="Audit log">
      <form className="card audit-filters" aria-label="Audit log filters" onSubmit={apply}>
        <div className="org-form-grid">
          <Field label="Method" error={fieldError('method')}>
            <select value={draft.method} onChange={set('method')}>
              <option value="">Any</option>
              {['POST', 'PUT', 'PATCH', 'DELETE'].map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </Field>
          <Field label="Resource" hint="A route pattern, e.g. /v2/prompts/:id" error={fieldError('resource')}>
            <input value={draft.resource} onChange={set('resource')} spellCheck={false} />
          </Field>
          <Field label="Workspace" error={fieldError('workspace_id')}>
            {workspaces.data ? (
              <select value={draft.workspace_id} onChange={set('workspace_id')}>
                <option value="">Any</option>
                {workspaces.data.data.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name || w.slug}
                  </option>
                ))}
              </select>
            ) : (
              <input value={draft.workspace_id} onChange={set('workspace_id')} placeholder="workspace id" />
            )}
          </Field>
          <Field label="API key id" error={fieldError('api_key_id')}>
            <input value={draft.api_key_id} onChange={set('api_key_id')} spellCheck={false} />
          </Field>
          <Field label="User id" error={fieldError('user_id')}>
            <input value={draft.user_id} onChange={set('user_id')} spellCheck={false} />
          </Field>
          <Field label="From" error={fieldError('from')}>
            <input type="datetime-local" value={draft.from} onChange={set('from')} />
          </Field>
          <Field label="To" error={fieldError('to')}>
            <input type="datetime-local" value={draft.to} onChange={set('to')} />
          </Field>
        </div>
        <div className="row">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
            }}
          >
            Clear
          </button>
          {total !== undefined ? (
            <span className="muted" role="status">
              {total} {total === 1 ? 'entry' : 'entries'}
            </span>
          ) : null}
        </div>
      </form>
      <FormError error={entries.error} fields={FILTER_FIELDS} />
      {entries.isPending ? <Loading /> : null}
      {entries.data && rows.length === 0 ? <Empty>No audit entries match.</Empty> : null}
      {rows.length > 0 ? (
        <DataTable
          label="Audit log entries"
          rows={rows}
          columns={columns}
          rowKey={(e) => e.id}
          onOpen={setOpen}
          onEndReached={() => {
            if (entries.hasNextPage && !entries.isFetchingNextPage) void entries.fetchNextPage();
          }}
        />
      ) : null}
      {entries.isFetchingNextPage ? <Loading what="Loading more" /> : null}
      {open ? <AuditDetail entry={open} onClose={() => setOpen(null)} /> : null}
    </Page>
  );
}

function AuditDetail({ entry, onClose }: { entry: AuditEntry; onClose: () => void }) {
  return (
    <Section
      title={`${entry.method} ${entry.resource}`}
      id="audit-detail"
      actions={
        <button type="button" onClick={onClose}>
          Close details
        </button>
      }
    >
      <Details
        items={[
          ['Time', when(entry.occurred_at)],
          ['Status', String(entry.status)],
          ['Path', <code key="p">{entry.path}</code>],
          ['Resource id', entry.resource_id],
          ['Scope', entry.scope],
          ['Service', entry.service],
          ['Workspace', entry.workspace_id],
          ['Key name', entry.actor.key_name],
          ['API key id', entry.actor.api_key_id],
          ['User id', entry.actor.user_id],
          ['Sign-in method', entry.actor.auth_method],
          ['Client IP', entry.client.ip],
          ['User agent', entry.client.user_agent],
          ['Request id', <code key="r">{entry.request_id}</code>],
          ['Entry id', <code key="i">{entry.id}</code>],
        ]}
      />
    </Section>
  );
}
