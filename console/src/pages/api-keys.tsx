import { useState } from 'react';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Page } from '../ui/page.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Empty, ErrorBanner, Loading, SecretOnce } from '../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../ui/form.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { FormActions } from '../ui/form-actions.tsx';
import { ScopePicker, scopeNamed } from './build/scope-picker.tsx';
import type { KeyKind } from './build/scopes.ts';

interface ApiKey {
  id: string;
  key: string;
  name: string;
  description: string | null;
  type: string;
  workspace_id: string | null;
  user_id: string | null;
  status: string;
  scopes: string[];
  created_at: string;
  last_updated_at: string;
  expires_at: string | null;
  defaults: {
    config_id: string | null;
    metadata: Record<string, string> | null;
    allow_config_override: boolean;
  };
}
interface KeyList {
  total: number;
  data: ApiKey[];
}
interface Workspaces {
  data: { id: string; slug: string; name: string }[];
}

const PAGE_SIZE = 100;
const KINDS: { value: KeyKind; label: string }[] = [
  { value: 'workspace/service', label: 'Workspace service key' },
  { value: 'workspace/user', label: "Workspace user key (a member's own)" },
  { value: 'organisation/service', label: 'Organisation admin key' },
];

/** The kind a listed key's `type` names (organisation-service, workspace-user…). */
function kindOf(type: string): KeyKind {
  if (type.startsWith('organisation')) return 'organisation/service';
  return type.endsWith('user') ? 'workspace/user' : 'workspace/service';
}

/** A `datetime-local` value as the API's ISO instant; undefined for none. */
function instant(local: string): string | undefined {
  return local ? new Date(local).toISOString() : undefined;
}
function localValue(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export default function ApiKeysPage() {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const [view, setView] = useState<{ mode: 'list' } | { mode: 'create' } | { mode: 'key'; id: string }>({
    mode: 'list',
  });
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const list = useInfiniteQuery({
    queryKey: ['api-keys'],
    initialPageParam: 0,
    queryFn: ({ pageParam, signal }) =>
      get<KeyList>('/v2/api-keys', { current_page: pageParam, page_size: PAGE_SIZE }, signal),
    getNextPageParam: (last, pages) => (pages.length * PAGE_SIZE < last.total ? pages.length : undefined),
  });
  const [showRevoked, setShowRevoked] = useState(false);
  const all = list.data?.pages.flatMap((p) => p.data) ?? [];
  const keys = showRevoked ? all : all.filter((k) => k.status === 'active');
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['api-keys'] });

  return (
    <Page
      title="API keys"
      actions={
        can('api_keys.create') && view.mode !== 'create' ? (
          <button type="button" className="primary" onClick={() => setView({ mode: 'create' })}>
            Create key
          </button>
        ) : null
      }
    >
      {secret ? (
        <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />
      ) : null}
      {view.mode === 'create' ? (
        <CreateKey
          onCancel={() => setView({ mode: 'list' })}
          onCreated={(created) => {
            setSecret({ label: `Secret of the new key ${created.name}`, value: created.key });
            void refresh();
            setView({ mode: 'key', id: created.id });
          }}
        />
      ) : null}
      {view.mode === 'key' ? (
        <KeyDetail
          id={view.id}
          onClose={() => setView({ mode: 'list' })}
          onSecret={(label, value) => setSecret({ label, value })}
          onRevoked={() => {
            void refresh();
            setView({ mode: 'list' });
          }}
          onChanged={() => void refresh()}
        />
      ) : null}
      <label className="row list-filter">
        <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} />
        Show revoked keys
      </label>
      {list.isPending ? <Loading what="Loading API keys" /> : null}
      <ErrorBanner error={list.error} />
      {list.data && keys.length === 0 ? (
        <Empty>{all.length ? 'No active API keys.' : 'No API keys yet.'}</Empty>
      ) : null}
      {keys.length > 0 ? (
        <DataTable
          label="API keys"
          rows={keys}
          rowKey={(k) => k.id}
          onOpen={(k) => setView({ mode: 'key', id: k.id })}
          onEndReached={() => {
            if (list.hasNextPage && !list.isFetchingNextPage) void list.fetchNextPage();
          }}
          columns={[
            { key: 'name', header: 'Name', render: (k) => k.name, width: 'minmax(8rem, 1.4fr)' },
            { key: 'key', header: 'Key', render: (k) => <code>{k.key}</code>, width: 'minmax(8rem, 1fr)' },
            { key: 'type', header: 'Type', render: (k) => k.type, width: '10rem' },
            {
              key: 'status',
              header: 'Status',
              render: (k) => (
                <span className={`badge ${k.status === 'active' ? 'ok' : 'error'}`}>{k.status}</span>
              ),
              width: '6rem',
            },
            { key: 'scopes', header: 'Scopes', render: (k) => k.scopes.length, width: '5rem' },
            { key: 'expires', header: 'Expires', render: (k) => when(k.expires_at), width: '11rem' },
          ]}
        />
      ) : null}
    </Page>
  );
}

function useWorkspaces() {
  const { identity, can } = useAuth();
  return useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<Workspaces>('/v2/workspaces', { page_size: 100 }),
    enabled: identity.workspace === null && can('workspaces.list'),
  });
}

function CreateKey({
  onCancel,
  onCreated,
}: {
  onCancel: () => void;
  onCreated: (key: ApiKey & { key: string }) => void;
}) {
  const { identity, workspaceId } = useAuth();
  const workspaces = useWorkspaces();
  const [kind, setKind] = useState<KeyKind>('workspace/service');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [workspace, setWorkspace] = useState(workspaceId ?? '');
  const [userId, setUserId] = useState('');
  const [expires, setExpires] = useState('');
  const [configId, setConfigId] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(new Set());
  const [sent, setSent] = useState<string[]>([]);
  const inWorkspace = kind !== 'organisation/service';
  const form = useApiForm(
    () => {
      const scopeList = [...scopes];
      setSent(scopeList);
      return post<ApiKey & { key: string }>(`/v2/api-keys/${kind}`, {
        name,
        description: description || undefined,
        workspace_id: inWorkspace && identity.workspace === null ? workspace || undefined : undefined,
        user_id: kind === 'workspace/user' ? userId || undefined : undefined,
        scopes: scopeList.length ? scopeList : undefined,
        expires_at: instant(expires),
        defaults: inWorkspace && configId ? { config_id: configId } : undefined,
      });
    },
    (created) => onCreated(created),
  );
  const fields = [
    'name',
    'description',
    'workspace_id',
    'user_id',
    'scopes',
    'expires_at',
    'defaults',
    'sub-type',
  ];
  return (
    <form className="card build-form" onSubmit={(e) => void form.onSubmit(e)} aria-label="Create an API key">
      <h2>Create an API key</h2>
      <Field label="Kind" error={form.fieldError('sub-type') ?? form.fieldError('type')}>
        <select
          value={kind}
          onChange={(e) => {
            setKind(e.target.value as KeyKind);
            setScopes(new Set());
          }}
        >
          {KINDS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <Field label="Description" error={form.fieldError('description')}>
        <input value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
      </Field>
      {inWorkspace && identity.workspace === null ? (
        <Field label="Workspace" error={form.fieldError('workspace_id')}>
          <select value={workspace} onChange={(e) => setWorkspace(e.target.value)}>
            <option value="">Choose a workspace</option>
            {(workspaces.data?.data ?? []).map((w) => (
              <option key={w.id} value={w.id}>
                {w.name || w.slug}
              </option>
            ))}
          </select>
        </Field>
      ) : null}
      {kind === 'workspace/user' ? (
        <Field
          label="User id"
          hint="The member the key belongs to (a UUID)."
          error={form.fieldError('user_id')}
        >
          <input value={userId} onChange={(e) => setUserId(e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      <Field
        label="Expires"
        hint="Leave empty for a key that does not expire."
        error={form.fieldError('expires_at')}
      >
        <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      {inWorkspace ? (
        <Field
          label="Default config"
          hint="A saved config of the workspace (id or slug) applied to the key's requests."
          error={form.fieldError('defaults')}
        >
          <input value={configId} onChange={(e) => setConfigId(e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      <ScopePicker
        kind={kind}
        selected={scopes}
        onChange={setScopes}
        error={form.fieldError('scopes')}
        badScope={scopeNamed(form.fieldNames, sent)}
      />
      <FormError error={form.error} fields={fields} />
      <FormActions busy={form.busy} submit={form.busy ? 'Creating…' : 'Create key'} onCancel={onCancel} />
    </form>
  );
}

function KeyDetail({
  id,
  onClose,
  onSecret,
  onRevoked,
  onChanged,
}: {
  id: string;
  onClose: () => void;
  onSecret: (label: string, value: string) => void;
  onRevoked: () => void;
  onChanged: () => void;
}) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const key = useQuery({
    queryKey: ['api-keys', 'one', id],
    queryFn: ({ signal }) => get<ApiKey>(`/v2/api-keys/${id}`, undefined, signal),
  });
  if (key.isPending) return <Loading what="Loading the key" />;
  if (key.error) return <ErrorBanner error={key.error} />;
  const k = key.data;
  const canUpdate = can('api_keys.update') && k.status === 'active';
  return (
    <section className="card" aria-labelledby="key-title">
      <div className="row spread">
        <h2 id="key-title">Key {k.name}</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <dl className="detail-facts">
        <dt>Key</dt>
        <dd>
          <code>{k.key}</code>
        </dd>
        <dt>Type</dt>
        <dd>{k.type}</dd>
        <dt>Status</dt>
        <dd>{k.status}</dd>
        <dt>Workspace</dt>
        <dd>{k.workspace_id ?? '—'}</dd>
        {k.user_id ? (
          <>
            <dt>User</dt>
            <dd>{k.user_id}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>{when(k.created_at)}</dd>
        <dt>Expires</dt>
        <dd>{when(k.expires_at)}</dd>
        <dt>Default config</dt>
        <dd>{k.defaults.config_id ?? '—'}</dd>
      </dl>
      <div className="row">
        {canUpdate ? (
          <ConfirmButton
            label="Rotate"
            question="Rotate this key? Its current secret stops working at once."
            confirmLabel="Rotate now"
            onConfirm={async () => {
              const rotated = await post<ApiKey & { key: string }>(`/v2/api-keys/${k.id}/rotate`, {});
              onSecret(`New secret of ${k.name}`, rotated.key);
              await queryClient.invalidateQueries({ queryKey: ['api-keys'] });
            }}
          />
        ) : null}
        {can('api_keys.delete') && k.status === 'active' ? (
          <ConfirmButton
            label="Revoke"
            question={`Revoke ${k.name}? Requests with it are refused from now on; this cannot be undone.`}
            confirmLabel="Revoke key"
            onConfirm={async () => {
              await del(`/v2/api-keys/${k.id}`);
              onRevoked();
            }}
          />
        ) : null}
      </div>
      {canUpdate ? (
        <EditKey key={k.id} apiKey={k} onSaved={onChanged} />
      ) : (
        <>
          <h3>Scopes</h3>
          <ul className="scope-list">
            {k.scopes.map((s) => (
              <li key={s}>
                <code>{s}</code>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function EditKey({ apiKey, onSaved }: { apiKey: ApiKey; onSaved: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(apiKey.name);
  const [description, setDescription] = useState(apiKey.description ?? '');
  const [expires, setExpires] = useState(localValue(apiKey.expires_at));
  const [scopes, setScopes] = useState<Set<string>>(new Set(apiKey.scopes));
  const [sent, setSent] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);
  const form = useApiForm(
    () => {
      const scopeList = [...scopes];
      setSent(scopeList);
      setSaved(false);
      return put<ApiKey>(`/v2/api-keys/${apiKey.id}`, {
        name,
        description: description || null,
        scopes: scopeList,
        expires_at: instant(expires) ?? null,
      });
    },
    (updated) => {
      queryClient.setQueryData(['api-keys', 'one', apiKey.id], updated);
      setSaved(true);
      onSaved();
    },
  );
  return (
    <form className="build-form" onSubmit={(e) => void form.onSubmit(e)} aria-label="Edit the key">
      <h3>Edit</h3>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <Field label="Description" error={form.fieldError('description')}>
        <input value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
      </Field>
      <Field
        label="Expires"
        hint="Leave empty for a key that does not expire."
        error={form.fieldError('expires_at')}
      >
        <input type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      <ScopePicker
        kind={kindOf(apiKey.type)}
        emptyHint="None checked: the key holds no scope and can do nothing."
        selected={scopes}
        onChange={setScopes}
        error={
          form.fieldError('scopes') ??
          (form.error instanceof ApiError && form.error.code === 'scopes_exceed_role'
            ? form.error.message
            : undefined)
        }
        badScope={scopeNamed(form.fieldNames, sent)}
      />
      <FormError error={form.error} fields={['name', 'description', 'expires_at', 'scopes']} />
      {saved ? (
        <p role="status" className="muted">
          Saved.
        </p>
      ) : null}
      <button type="submit" disabled={form.busy}>
        {form.busy ? 'Saving…' : 'Save changes'}
      </button>
    </form>
  );
}
