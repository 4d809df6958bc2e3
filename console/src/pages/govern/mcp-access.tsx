import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../../ui/form.tsx';
import { words, type ListOf } from './common.tsx';

interface KeyRule {
  api_key_id: string;
  enabled: boolean;
  allowed_tools: string[] | null;
  denied_tools: string[] | null;
}
interface KeyAccess {
  default_key_access: 'allow' | 'deny';
  key_access: KeyRule[];
}
interface UserAccess {
  data: {
    user_id: string;
    first_name: string | null;
    last_name: string | null;
    enabled: boolean;
    has_override: boolean;
  }[];
  default_user_access: 'allow' | 'deny';
  total: number;
}
interface ApiKey {
  id: string;
  name: string;
  workspace_id: string | null;
  status: string;
}

/** The server an access editor edits. */
export interface AccessServer {
  id: string;
  name: string;
  workspace_id: string;
}

/** Who may use an MCP server: its API keys' rules and its users' settings, each editable. */
export function McpAccess({ server }: { server: AccessServer }) {
  return (
    <div className="mcp-access">
      <KeyAccessEditor server={server} />
      <UserAccessEditor server={server} />
    </div>
  );
}

interface RuleDraft {
  api_key_id: string;
  enabled: boolean;
  allowed: string;
  denied: string;
}
const draftOf = (r: KeyRule): RuleDraft => ({
  api_key_id: r.api_key_id,
  enabled: r.enabled,
  allowed: (r.allowed_tools ?? []).join(', '),
  denied: (r.denied_tools ?? []).join(', '),
});

function KeyAccessEditor({ server }: { server: AccessServer }) {
  const { can } = useAuth();
  const client = useQueryClient();
  const key = ['mcp', 'key-access', server.id];
  const access = useQuery({
    queryKey: key,
    queryFn: () => get<KeyAccess>(`/v2/mcp-servers/${server.id}/key-access`),
  });
  const keys = useQuery({
    queryKey: ['api-keys', 'picker'],
    queryFn: () => get<ListOf<ApiKey>>('/v2/api-keys', { page_size: 100 }),
    enabled: can('api_keys.list'),
  });
  // Here, not in the form: a save remounts the form with what is stored.
  const [saved, setSaved] = useState(false);
  if (access.isPending) return <Loading what="Loading key access" />;
  if (access.error) return <ErrorBanner error={access.error} />;
  const workspaceKeys = keys.data?.data.filter((k) => k.workspace_id === server.workspace_id);
  return (
    <KeyAccessForm
      // A fresh form whenever the stored rules change (after a save, or another tab's).
      key={JSON.stringify(access.data)}
      server={server}
      stored={access.data}
      keys={workspaceKeys}
      canEdit={can('mcp_servers.update')}
      saved={saved}
      setSaved={setSaved}
      onSaved={(next) => client.setQueryData(key, next)}
    />
  );
}

function KeyAccessForm({
  server,
  stored,
  keys,
  canEdit,
  saved,
  setSaved,
  onSaved,
}: {
  server: AccessServer;
  stored: KeyAccess;
  keys: ApiKey[] | undefined;
  canEdit: boolean;
  saved: boolean;
  setSaved: (saved: boolean) => void;
  onSaved: (next: KeyAccess) => void;
}) {
  const [fallback, setFallback] = useState(stored.default_key_access);
  const [rules, setRules] = useState<RuleDraft[]>(stored.key_access.map(draftOf));
  const [adding, setAdding] = useState('');
  const form = useApiForm(
    () =>
      put<KeyAccess>(`/v2/mcp-servers/${server.id}/key-access`, {
        default_key_access: fallback,
        replace: true,
        key_access: rules.map((r) => ({
          api_key_id: r.api_key_id,
          enabled: r.enabled,
          allowed_tools: words(r.allowed),
          denied_tools: words(r.denied),
        })),
      }),
    (next) => {
      setSaved(true);
      onSaved(next);
    },
  );
  const nameOf = (id: string) => keys?.find((k) => k.id === id)?.name;
  const free = keys?.filter((k) => !rules.some((r) => r.api_key_id === k.id)) ?? [];
  const update = (index: number, change: Partial<RuleDraft>) => {
    setSaved(false);
    setRules(rules.map((r, i) => (i === index ? { ...r, ...change } : r)));
  };
  const add = () => {
    const id = adding.trim();
    if (!id || rules.some((r) => r.api_key_id === id)) return;
    setSaved(false);
    setRules([...rules, { api_key_id: id, enabled: true, allowed: '', denied: '' }]);
    setAdding('');
  };
  const named = ['default_key_access', ...rules.flatMap((_, i) => [`key_access[${i}]`])];
  return (
    <form
      className="mcp-access-form"
      aria-label={`API key access to ${server.name}`}
      noValidate
      onSubmit={(e) => {
        setSaved(false);
        void form.onSubmit(e);
      }}
    >
      <h4>API keys</h4>
      <fieldset disabled={!canEdit || form.busy}>
        <legend className="visually-hidden">API key access to {server.name}</legend>
        <Field label="Keys without a rule" error={form.fieldError('default_key_access')}>
          <select
            value={fallback}
            onChange={(e) => {
              setSaved(false);
              setFallback(e.target.value as 'allow' | 'deny');
            }}
          >
            <option value="allow">May use the server</option>
            <option value="deny">May not use the server</option>
          </select>
        </Field>
        {rules.length === 0 ? <p className="muted">No per-key rules.</p> : null}
        <ul className="mcp-key-rules" aria-label="Key access rules">
          {rules.map((r, i) => {
            const label = nameOf(r.api_key_id) ?? r.api_key_id;
            const rowError = form.fieldError(`key_access[${i}]`);
            const toolError = (f: string) => form.fieldError(`key_access[${i}].${f}`);
            const otherError =
              rowError && !toolError('allowed_tools') && !toolError('denied_tools') ? rowError : undefined;
            return (
              <li key={r.api_key_id} className="card mcp-key-rule" aria-label={`Rule for ${label}`}>
                <div className="section-head">
                  <strong>
                    {label}
                    {nameOf(r.api_key_id) ? <code className="muted"> {r.api_key_id}</code> : null}
                  </strong>
                  <button
                    type="button"
                    onClick={() => {
                      setSaved(false);
                      setRules(rules.filter((_, j) => j !== i));
                    }}
                  >
                    Remove rule<span className="visually-hidden"> for {label}</span>
                  </button>
                </div>
                <label className="check">
                  <input
                    type="checkbox"
                    checked={r.enabled}
                    onChange={(e) => update(i, { enabled: e.target.checked })}
                  />{' '}
                  May use the server<span className="visually-hidden"> ({label})</span>
                </label>
                {otherError ? (
                  <small className="field-error" role="alert">
                    {otherError}
                  </small>
                ) : null}
                <div className="grid">
                  <Field
                    label={`Only these tools (${label})`}
                    hint="Comma-separated; empty: every tool the server allows."
                    error={toolError('allowed_tools')}
                  >
                    <input value={r.allowed} onChange={(e) => update(i, { allowed: e.target.value })} />
                  </Field>
                  <Field
                    label={`Never these tools (${label})`}
                    hint="Comma-separated."
                    error={toolError('denied_tools')}
                  >
                    <input value={r.denied} onChange={(e) => update(i, { denied: e.target.value })} />
                  </Field>
                </div>
              </li>
            );
          })}
        </ul>
        <div className="row mcp-add-rule">
          <Field
            label="Add a rule for"
            hint={
              keys
                ? 'Keys of the server’s workspace.'
                : 'The API key’s id (keys cannot be listed with this credential).'
            }
          >
            {keys ? (
              <select value={adding} onChange={(e) => setAdding(e.target.value)}>
                <option value="">Choose an API key</option>
                {free.map((k) => (
                  <option key={k.id} value={k.id}>
                    {k.name}
                    {k.status !== 'active' ? ` (${k.status})` : ''}
                  </option>
                ))}
              </select>
            ) : (
              <input value={adding} onChange={(e) => setAdding(e.target.value)} />
            )}
          </Field>
          <button type="button" onClick={add} disabled={!adding.trim()}>
            Add rule
          </button>
        </div>
      </fieldset>
      <FormError error={form.error} fields={named} />
      {canEdit ? (
        <div className="row">
          <button type="submit" disabled={form.busy}>
            {form.busy ? 'Saving…' : 'Save key access'}
          </button>
          {saved ? (
            <span role="status" className="muted">
              Key access saved.
            </span>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}

function UserAccessEditor({ server }: { server: AccessServer }) {
  const { can } = useAuth();
  const client = useQueryClient();
  const [search, setSearch] = useState('');
  const key = ['mcp', 'user-access', server.id, search];
  const users = useQuery({
    queryKey: key,
    queryFn: () =>
      get<UserAccess>(`/v2/mcp-servers/${server.id}/user-access`, {
        page_size: 100,
        search: search || undefined,
      }),
    placeholderData: (previous) => previous,
  });
  const [fallback, setFallback] = useState<'allow' | 'deny' | null>(null);
  const [changed, setChanged] = useState<Map<string, boolean>>(new Map());
  const [saved, setSaved] = useState(false);
  const stored = users.data;
  const form = useApiForm(
    async () => {
      const body: Record<string, unknown> = {
        user_access: [...changed].map(([user_id, enabled]) => ({ user_id, enabled })),
      };
      if (fallback !== null) body.default_user_access = fallback;
      await put(`/v2/mcp-servers/${server.id}/user-access`, body);
      await client.invalidateQueries({ queryKey: ['mcp', 'user-access', server.id] });
    },
    () => {
      setChanged(new Map());
      setFallback(null);
      setSaved(true);
    },
  );
  const canEdit = can('mcp_servers.update');
  const param = (form.fieldNames ?? '').match(/^user_access\[(\d+)\]/);
  const badUser = param ? [...changed.keys()][Number(param[1])] : undefined;
  return (
    <form
      className="mcp-access-form"
      aria-label={`User access to ${server.name}`}
      noValidate
      onSubmit={(e) => {
        setSaved(false);
        void form.onSubmit(e);
      }}
    >
      <h4>Users</h4>
      {users.isPending ? <Loading what="Loading user access" /> : null}
      <ErrorBanner error={users.error} />
      {stored ? (
        <fieldset disabled={!canEdit || form.busy}>
          <legend className="visually-hidden">User access to {server.name}</legend>
          <Field label="Users without a setting" error={form.fieldError('default_user_access')}>
            <select
              value={fallback ?? stored.default_user_access}
              onChange={(e) => {
                setSaved(false);
                setFallback(e.target.value as 'allow' | 'deny');
              }}
            >
              <option value="allow">May use the server</option>
              <option value="deny">May not use the server</option>
            </select>
          </Field>
          <Field label="Find a user" hint={`${stored.total} in the workspace.`}>
            <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
          </Field>
          {stored.data.length === 0 ? (
            <p className="muted">{search ? 'No user matches.' : 'No users in the workspace.'}</p>
          ) : (
            <ul className="plain-list" aria-label="User access">
              {stored.data.map((u) => {
                const name = [u.first_name, u.last_name].filter(Boolean).join(' ') || u.user_id;
                const error = badUser === u.user_id ? form.fieldError('user_access') : undefined;
                return (
                  <li key={u.user_id}>
                    <label className="check">
                      <input
                        type="checkbox"
                        checked={changed.get(u.user_id) ?? u.enabled}
                        aria-invalid={error ? true : undefined}
                        onChange={(e) => {
                          setSaved(false);
                          const next = new Map(changed);
                          if (u.has_override && e.target.checked === u.enabled) next.delete(u.user_id);
                          else next.set(u.user_id, e.target.checked);
                          setChanged(next);
                        }}
                      />{' '}
                      {name}{' '}
                      <span className="muted">
                        {changed.has(u.user_id) || u.has_override ? '(own setting)' : '(follows the default)'}
                      </span>
                    </label>
                    {error ? (
                      <small className="field-error" role="alert">
                        {error}
                      </small>
                    ) : null}
                  </li>
                );
              })}
            </ul>
          )}
        </fieldset>
      ) : null}
      <FormError
        error={form.error}
        fields={badUser ? ['default_user_access', 'user_access'] : ['default_user_access']}
      />
      {canEdit && stored ? (
        <div className="row">
          <button type="submit" disabled={form.busy || (changed.size === 0 && fallback === null)}>
            {form.busy ? 'Saving…' : 'Save user access'}
          </button>
          {saved ? (
            <span role="status" className="muted">
              User access saved.
            </span>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
