import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Page } from '../ui/page.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../ui/form.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { FormActions } from '../ui/form-actions.tsx';
import { ConfigDiff, prettyJson } from './build/config-diff.tsx';

interface ConfigSummary {
  id: string;
  name: string;
  slug: string;
  workspace_id: string;
  is_default: boolean;
  status: string;
  created_at: string;
  last_updated_at: string;
}
interface ConfigDetail extends ConfigSummary {
  version_id: string;
  config: Record<string, unknown>;
}
interface ConfigVersion extends ConfigSummary {
  version_id: string;
  version: number;
  config: string;
  updated_by: string | null;
}

const EXAMPLE = `{
  "retry": { "attempts": 3 }
}
`;

/**
 * The editor's error: the client's JSON syntax check first, then the API's message with the
 * path inside the config it names (`config.retry.attempts` → `retry.attempts`).
 */
function editorError(
  syntax: string | null,
  apiMessage: string | undefined,
  param: string | null,
): string | undefined {
  if (syntax) return `Not valid JSON: ${syntax}`;
  if (!apiMessage) return undefined;
  const path = param && param.startsWith('config.') ? param.slice('config.'.length) : null;
  return path ? `${path}: ${apiMessage}` : apiMessage;
}

export default function ConfigsPage() {
  const { can, workspaceId, identity } = useAuth();
  const [view, setView] = useState<{ mode: 'list' } | { mode: 'create' } | { mode: 'config'; slug: string }>({
    mode: 'list',
  });
  const admin = identity.workspace === null;
  const list = useQuery({
    queryKey: ['configs', workspaceId],
    queryFn: ({ signal }) =>
      get<{ total: number; data: ConfigSummary[] }>(
        '/v2/configs',
        { workspace_id: admin ? workspaceId : undefined, page_size: 1000 },
        signal,
      ),
    enabled: !admin || workspaceId !== null,
  });
  const configs = list.data?.data ?? [];
  return (
    <Page
      title="Configs"
      actions={
        can('configs.create') && view.mode !== 'create' ? (
          <button type="button" className="primary" onClick={() => setView({ mode: 'create' })}>
            New config
          </button>
        ) : null
      }
    >
      {admin && !workspaceId ? <Empty>Pick a workspace in the top bar to see its configs.</Empty> : null}
      {view.mode === 'create' ? (
        <CreateConfig
          onCancel={() => setView({ mode: 'list' })}
          onCreated={(slug) => setView({ mode: 'config', slug })}
        />
      ) : null}
      {view.mode === 'config' ? (
        <ConfigView slug={view.slug} onClose={() => setView({ mode: 'list' })} />
      ) : null}
      {list.isLoading ? <Loading what="Loading configs" /> : null}
      <ErrorBanner error={list.error} />
      {list.data && configs.length === 0 ? <Empty>No saved configs in this workspace yet.</Empty> : null}
      {configs.length > 0 ? (
        <DataTable
          label="Configs"
          rows={configs}
          rowKey={(c) => c.id}
          onOpen={(c) => setView({ mode: 'config', slug: c.slug })}
          height={360}
          columns={[
            { key: 'name', header: 'Name', render: (c) => c.name, width: 'minmax(8rem, 1.5fr)' },
            { key: 'slug', header: 'Slug', render: (c) => <code>{c.slug}</code>, width: 'minmax(8rem, 1fr)' },
            {
              key: 'status',
              header: 'Status',
              render: (c) => (
                <span className={`badge ${c.status === 'active' ? 'ok' : ''}`}>
                  {c.status}
                  {c.is_default ? ', default' : ''}
                </span>
              ),
              width: '9rem',
            },
            { key: 'updated', header: 'Updated', render: (c) => when(c.last_updated_at), width: '12rem' },
          ]}
        />
      ) : null}
    </Page>
  );
}

function CreateConfig({ onCancel, onCreated }: { onCancel: () => void; onCreated: (slug: string) => void }) {
  const { workspaceId, identity } = useAuth();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [text, setText] = useState(EXAMPLE);
  const [syntax, setSyntax] = useState<string | null>(null);
  const form = useApiForm(
    async () => {
      const problem = jsonObjectError(text);
      setSyntax(problem);
      if (problem) return null;
      return post<{ data: { id: string; slug: string } }>('/v2/configs', {
        name,
        slug: slug || undefined,
        config: JSON.parse(text) as unknown,
        workspace_id: identity.workspace === null ? (workspaceId ?? undefined) : undefined,
      });
    },
    (created) => {
      if (!created) return;
      void queryClient.invalidateQueries({ queryKey: ['configs'] });
      onCreated(created.data.slug);
    },
  );
  return (
    <form className="card build-form" aria-label="New config" onSubmit={(e) => void form.onSubmit(e)}>
      <h2>New config</h2>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <Field
        label="Slug"
        hint="Optional: lower-case letters, digits, - and _. Requests name the config by it."
        error={form.fieldError('slug')}
      >
        <input value={slug} onChange={(e) => setSlug(e.target.value)} autoComplete="off" />
      </Field>
      <ConfigJsonField
        hint="Routing, fallbacks, retries and cache, as docs/configs describes; checked by the gateway on save."
        text={text}
        error={editorError(syntax, form.fieldError('config'), form.fieldNames)}
        onChange={(value) => {
          setText(value);
          setSyntax(null);
        }}
      />
      <FormError error={form.error} fields={['name', 'slug', 'config']} />
      <FormActions busy={form.busy} submit={form.busy ? 'Saving…' : 'Save config'} onCancel={onCancel} />
    </form>
  );
}

function ConfigView({ slug, onClose }: { slug: string; onClose: () => void }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const config = useQuery({
    queryKey: ['configs', 'one', slug],
    queryFn: ({ signal }) =>
      get<{ data: ConfigDetail }>(`/v2/configs/${encodeURIComponent(slug)}`, undefined, signal),
  });
  if (config.isPending) return <Loading what="Loading the config" />;
  if (config.error) return <ErrorBanner error={config.error} />;
  const c = config.data.data;
  return (
    <section className="card" aria-labelledby="config-title">
      <div className="row spread">
        <h2 id="config-title">Config {c.name}</h2>
        <div className="row">
          {can('configs.delete') && c.status === 'active' ? (
            <ConfirmButton
              label="Delete"
              question={`Delete ${c.name}? It is archived: requests naming it are refused.`}
              confirmLabel="Delete config"
              onConfirm={async () => {
                await del(`/v2/configs/${encodeURIComponent(c.slug)}`);
                void queryClient.invalidateQueries({ queryKey: ['configs'] });
                onClose();
              }}
            />
          ) : null}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      <p className="muted">
        Slug <code>{c.slug}</code> · {c.status}
        {c.is_default ? ' · the workspace default' : ''} · updated {when(c.last_updated_at)}
      </p>
      {can('configs.update') ? (
        <EditConfig key={c.version_id} config={c} />
      ) : (
        <pre aria-label="Config">{prettyJson(c.config)}</pre>
      )}
      <Versions slug={c.slug} current={c.version_id} />
    </section>
  );
}

function EditConfig({ config }: { config: ConfigDetail }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(config.name);
  const [text, setText] = useState(prettyJson(config.config));
  const [syntax, setSyntax] = useState<string | null>(null);
  const form = useApiForm(
    async () => {
      const problem = jsonObjectError(text);
      setSyntax(problem);
      if (problem) return false;
      await put(`/v2/configs/${encodeURIComponent(config.slug)}`, {
        name,
        config: JSON.parse(text) as unknown,
      });
      return true;
    },
    (saved) => {
      if (saved) void queryClient.invalidateQueries({ queryKey: ['configs'] });
    },
  );
  return (
    <form className="build-form" aria-label="Edit the config" onSubmit={(e) => void form.onSubmit(e)}>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <ConfigJsonField
        hint="Saving a changed config makes a new version."
        text={text}
        error={editorError(syntax, form.fieldError('config'), form.fieldNames)}
        onChange={(value) => {
          setText(value);
          setSyntax(null);
        }}
      />
      <FormError error={form.error} fields={['name', 'config']} />
      <button type="submit" disabled={form.busy}>
        {form.busy ? 'Saving…' : 'Save new version'}
      </button>
    </form>
  );
}

function Versions({ slug, current }: { slug: string; current: string }) {
  const versions = useQuery({
    queryKey: ['configs', 'versions', slug, current],
    queryFn: ({ signal }) =>
      get<{ total: number; data: ConfigVersion[] }>(
        `/v2/configs/${encodeURIComponent(slug)}/versions`,
        { page_size: 1000 },
        signal,
      ),
  });
  const list = [...(versions.data?.data ?? [])].sort((a, b) => b.version - a.version);
  const [picked, setPicked] = useState<{ from: string; to: string } | null>(null);
  const to = list.find((v) => v.version_id === picked?.to) ?? list[0];
  const from = list.find((v) => v.version_id === picked?.from) ?? list[1] ?? list[0];
  if (versions.isPending) return <Loading what="Loading versions" />;
  if (versions.error) {
    return versions.error instanceof ApiError && versions.error.status === 403 ? null : (
      <ErrorBanner error={versions.error} />
    );
  }
  return (
    <section aria-labelledby="versions-title">
      <h3 id="versions-title">Versions</h3>
      <table>
        <caption className="visually-hidden">Versions of the config, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Saved</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {list.map((v) => (
            <tr key={v.version_id}>
              <td>
                {v.version}
                {v.version_id === current ? ' (current)' : ''}
              </td>
              <td>{when(v.last_updated_at)}</td>
              <td>{v.updated_by ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.length > 1 && from && to ? (
        <>
          <div className="row diff-pickers">
            <label>
              Compare version{' '}
              <select
                value={from.version_id}
                onChange={(e) => setPicked({ from: e.target.value, to: to.version_id })}
              >
                {list.map((v) => (
                  <option key={v.version_id} value={v.version_id}>
                    {v.version}
                  </option>
                ))}
              </select>
            </label>
            <label>
              with version{' '}
              <select
                value={to.version_id}
                onChange={(e) => setPicked({ from: from.version_id, to: e.target.value })}
              >
                {list.map((v) => (
                  <option key={v.version_id} value={v.version_id}>
                    {v.version}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <ConfigDiff
            label={`Changes from version ${from.version} to version ${to.version}`}
            from={prettyJson(from.config)}
            to={prettyJson(to.config)}
          />
        </>
      ) : (
        <p className="muted">One version so far: save a change to compare versions.</p>
      )}
    </section>
  );
}

/** The config's JSON text: what the create and edit forms edit, with its syntax or API error. */
function ConfigJsonField({
  hint,
  text,
  error,
  onChange,
}: {
  hint: string;
  text: string;
  error: string | undefined;
  onChange: (value: string) => void;
}) {
  return (
    <Field label="Config (JSON)" hint={hint} error={error}>
      <textarea
        className="json-editor"
        rows={14}
        spellCheck={false}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    </Field>
  );
}
