import { Fragment, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Page } from '../ui/page.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../ui/form.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { FormActions } from '../ui/form-actions.tsx';

interface Integration {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  ai_provider_id: string | null;
  plugin_provider_id: string | null;
  workspace_id: string | null;
  status: string;
  created_at: string;
  last_updated_at: string;
}
interface IntegrationDetail extends Integration {
  masked_key: string | null;
  configurations: Record<string, unknown>;
}
interface Provider {
  id: string;
  name: string;
  configurations: { name: string; secret: boolean; description: string }[];
}
interface Model {
  slug: string;
  enabled: boolean;
  is_custom: boolean | null;
  is_finetune: boolean | null;
  base_model_slug: string | null;
  configurations: { custom_host?: string } | null;
  custom_headers: Record<string, string> | null;
}
interface WorkspaceAccess {
  workspaces: { id: string; enabled: boolean }[];
  global_workspace_access: { enabled: boolean };
}
interface Workspaces {
  data: { id: string; slug: string; name: string }[];
}

export default function IntegrationsPage() {
  const { can } = useAuth();
  const [view, setView] = useState<{ mode: 'list' } | { mode: 'create' } | { mode: 'one'; slug: string }>({
    mode: 'list',
  });
  const list = useQuery({
    queryKey: ['integrations'],
    queryFn: ({ signal }) =>
      get<{ total: number; data: Integration[] }>('/v1/integrations', { page_size: 1000 }, signal),
  });
  const rows = list.data?.data ?? [];
  return (
    <Page
      title="Integrations"
      actions={
        can('integrations.create') && view.mode !== 'create' ? (
          <button type="button" className="primary" onClick={() => setView({ mode: 'create' })}>
            New integration
          </button>
        ) : null
      }
    >
      {view.mode === 'create' ? (
        <CreateIntegration
          onCancel={() => setView({ mode: 'list' })}
          onCreated={(slug) => setView({ mode: 'one', slug })}
        />
      ) : null}
      {view.mode === 'one' ? (
        <IntegrationView slug={view.slug} onClose={() => setView({ mode: 'list' })} />
      ) : null}
      {list.isPending ? <Loading what="Loading integrations" /> : null}
      <ErrorBanner error={list.error} />
      {list.data && rows.length === 0 ? <Empty>No integrations yet.</Empty> : null}
      {rows.length > 0 ? (
        <DataTable
          label="Integrations"
          rows={rows}
          rowKey={(i) => i.id}
          onOpen={(i) => setView({ mode: 'one', slug: i.slug })}
          height={360}
          columns={[
            { key: 'name', header: 'Name', render: (i) => i.name, width: 'minmax(8rem, 1.4fr)' },
            {
              key: 'slug',
              header: 'Model prefix',
              render: (i) => <code>@{i.slug}</code>,
              width: 'minmax(7rem, 1fr)',
            },
            {
              key: 'provider',
              header: 'Provider',
              render: (i) => i.ai_provider_id ?? i.plugin_provider_id ?? '—',
              width: '9rem',
            },
            {
              key: 'level',
              header: 'Level',
              render: (i) => (i.workspace_id ? 'Workspace' : 'Organisation'),
              width: '8rem',
            },
            { key: 'status', header: 'Status', render: (i) => i.status, width: '6rem' },
          ]}
        />
      ) : null}
    </Page>
  );
}

function useProviders() {
  return useQuery({
    queryKey: ['providers'],
    queryFn: () => get<{ data: Provider[] }>('/v1/providers/details'),
    staleTime: Infinity,
  });
}

function CreateIntegration({
  onCancel,
  onCreated,
}: {
  onCancel: () => void;
  onCreated: (slug: string) => void;
}) {
  const { identity } = useAuth();
  const queryClient = useQueryClient();
  const providers = useProviders();
  const [provider, setProvider] = useState('');
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [key, setKey] = useState('');
  const [description, setDescription] = useState('');
  const [customHost, setCustomHost] = useState('');
  const [workspaceOnly, setWorkspaceOnly] = useState('');
  const workspaces = useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<Workspaces>('/v2/workspaces', { page_size: 100 }),
    enabled: identity.workspace === null,
  });
  const chosen = providers.data?.data.find((p) => p.id === provider);
  const takes = (field: string) => !chosen || chosen.configurations.some((c) => c.name === field);
  const form = useApiForm(
    () =>
      post<{ id: string; slug: string }>('/v1/integrations', {
        ai_provider_id: provider || undefined,
        name,
        slug: slug || undefined,
        key: key || undefined,
        description: description || undefined,
        workspace_id: workspaceOnly || undefined,
        configurations: customHost ? { custom_host: customHost } : undefined,
      }),
    (created) => {
      setKey('');
      void queryClient.invalidateQueries({ queryKey: ['integrations'] });
      onCreated(created.slug);
    },
  );
  const fields = ['ai_provider_id', 'name', 'slug', 'key', 'description', 'workspace_id', 'configurations'];
  return (
    <form className="card build-form" aria-label="New integration" onSubmit={(e) => void form.onSubmit(e)}>
      <h2>New integration</h2>
      <Field label="Provider" error={form.fieldError('ai_provider_id')}>
        <select value={provider} onChange={(e) => setProvider(e.target.value)}>
          <option value="">Choose a provider</option>
          {(providers.data?.data ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name} ({p.id})
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <Field
        label="Slug"
        hint="Requests name its models @slug/model. Letters, digits, - and _."
        error={form.fieldError('slug')}
      >
        <input value={slug} onChange={(e) => setSlug(e.target.value)} autoComplete="off" />
      </Field>
      {takes('key') ? (
        <Field
          label="Provider key"
          hint="Stored encrypted; never shown again, not even here."
          error={form.fieldError('key')}
        >
          <input
            type="password"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            autoComplete="new-password"
          />
        </Field>
      ) : null}
      {takes('custom_host') ? (
        <Field
          label="Custom host"
          hint="Optional: the provider's base URL, for a proxy or a self-hosted endpoint."
          error={form.fieldError('configurations')}
        >
          <input value={customHost} onChange={(e) => setCustomHost(e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      <Field label="Description" error={form.fieldError('description')}>
        <input value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
      </Field>
      {identity.workspace === null ? (
        <Field
          label="Level"
          hint="An organisation integration can be shared with workspaces; a workspace one is that workspace's own."
          error={form.fieldError('workspace_id')}
        >
          <select value={workspaceOnly} onChange={(e) => setWorkspaceOnly(e.target.value)}>
            <option value="">Organisation</option>
            {(workspaces.data?.data ?? []).map((w) => (
              <option key={w.id} value={w.id}>
                Workspace {w.name || w.slug}
              </option>
            ))}
          </select>
        </Field>
      ) : null}
      <FormError error={form.error} fields={fields} />
      <FormActions
        busy={form.busy}
        submit={form.busy ? 'Saving…' : 'Create integration'}
        onCancel={onCancel}
      />
    </form>
  );
}

function IntegrationView({ slug, onClose }: { slug: string; onClose: () => void }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const one = useQuery({
    queryKey: ['integrations', 'one', slug],
    queryFn: ({ signal }) =>
      get<IntegrationDetail>(`/v1/integrations/${encodeURIComponent(slug)}`, undefined, signal),
  });
  if (one.isPending) return <Loading what="Loading the integration" />;
  if (one.error) return <ErrorBanner error={one.error} />;
  const i = one.data;
  const settings = Object.entries(i.configurations).filter(([name]) => name !== 'headers');
  return (
    <section className="card" aria-labelledby="integration-title">
      <div className="row spread">
        <h2 id="integration-title">Integration {i.name}</h2>
        <div className="row">
          {can('integrations.delete') ? (
            <ConfirmButton
              label="Delete"
              question={`Delete ${i.name}? Requests to @${i.slug}/… are refused from then on.`}
              confirmLabel="Delete integration"
              onConfirm={async () => {
                await del(`/v1/integrations/${encodeURIComponent(i.slug)}`);
                void queryClient.invalidateQueries({ queryKey: ['integrations'] });
                onClose();
              }}
            />
          ) : null}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
      <dl className="detail-facts">
        <dt>Model prefix</dt>
        <dd>
          <code>@{i.slug}/</code>
        </dd>
        <dt>Provider</dt>
        <dd>{i.ai_provider_id ?? i.plugin_provider_id}</dd>
        <dt>Level</dt>
        <dd>{i.workspace_id ? `Workspace ${i.workspace_id}` : 'Organisation'}</dd>
        <dt>Provider key</dt>
        <dd>{i.masked_key ? 'Stored (write-only: replace it below)' : 'None'}</dd>
        {settings.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name.replace(/^masked_/, '')}</dt>
            <dd>{name.startsWith('masked_') ? 'Stored (write-only)' : String(value)}</dd>
          </Fragment>
        ))}
        <dt>Updated</dt>
        <dd>{when(i.last_updated_at)}</dd>
      </dl>
      {can('integrations.update') ? <EditIntegration key={i.id} integration={i} /> : null}
      <Models slug={i.slug} />
      {i.workspace_id === null && can('integration_workspaces.read') ? <SharedWith slug={i.slug} /> : null}
    </section>
  );
}

function EditIntegration({ integration }: { integration: IntegrationDetail }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(integration.name);
  const [description, setDescription] = useState(integration.description ?? '');
  const [key, setKey] = useState('');
  const [saved, setSaved] = useState(false);
  const form = useApiForm(
    () => {
      setSaved(false);
      return put<IntegrationDetail>(`/v1/integrations/${encodeURIComponent(integration.slug)}`, {
        name,
        description: description || null,
        key: key || undefined,
      });
    },
    (updated) => {
      setKey('');
      setSaved(true);
      queryClient.setQueryData(['integrations', 'one', integration.slug], updated);
      void queryClient.invalidateQueries({ queryKey: ['integrations'], exact: true });
    },
  );
  const takesKey = integration.ai_provider_id !== 'mock' && integration.plugin_provider_id === null;
  return (
    <form className="build-form" aria-label="Edit the integration" onSubmit={(e) => void form.onSubmit(e)}>
      <h3>Edit</h3>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <Field label="Description" error={form.fieldError('description')}>
        <input value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
      </Field>
      {takesKey ? (
        <Field
          label="Replace provider key"
          hint="Leave empty to keep the stored key."
          error={form.fieldError('key')}
        >
          <input
            type="password"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            autoComplete="new-password"
          />
        </Field>
      ) : null}
      <FormError error={form.error} fields={['name', 'description', 'key']} />
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

/** A model as PUT .../models takes it back: nulls dropped where the API takes none. */
function modelBody(m: Model, enabled: boolean) {
  return {
    slug: m.slug,
    enabled,
    is_custom: m.is_custom,
    is_finetune: m.is_finetune,
    base_model_slug: m.base_model_slug,
    ...(m.configurations && Object.keys(m.configurations).length ? { configurations: m.configurations } : {}),
    custom_headers: m.custom_headers ?? {},
  };
}

function Models({ slug }: { slug: string }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const models = useQuery({
    queryKey: ['integrations', 'models', slug],
    queryFn: ({ signal }) =>
      get<{ total: number; models: Model[] }>(
        `/v1/integrations/${encodeURIComponent(slug)}/models`,
        undefined,
        signal,
      ),
  });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const toggle = async (model: Model, enabled: boolean) => {
    const before = models.data;
    if (!before) return;
    setBusy(true);
    setError(null);
    // Shown at once; put back as it was if the API refuses.
    const changed = before.models.map((m) => (m.slug === model.slug ? { ...m, enabled } : m));
    queryClient.setQueryData(['integrations', 'models', slug], { ...before, models: changed });
    try {
      const next = await put<{ total: number; models: Model[] }>(
        `/v1/integrations/${encodeURIComponent(slug)}/models`,
        { models: changed.map((m) => modelBody(m, m.enabled)) },
      );
      queryClient.setQueryData(['integrations', 'models', slug], next);
    } catch (err) {
      queryClient.setQueryData(['integrations', 'models', slug], before);
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const editable = can('integrations.update');
  const [newModel, setNewModel] = useState('');
  const add = useApiForm(
    () =>
      put<{ total: number; models: Model[] }>(`/v1/integrations/${encodeURIComponent(slug)}/models`, {
        models: [
          ...(models.data?.models ?? []).map((m) => modelBody(m, m.enabled)),
          { slug: newModel.trim(), enabled: true, is_custom: true },
        ],
      }),
    (next) => {
      setNewModel('');
      queryClient.setQueryData(['integrations', 'models', slug], next);
    },
  );
  return (
    <section aria-labelledby={`models-${slug}`}>
      <h3 id={`models-${slug}`}>Models</h3>
      {models.isPending ? <Loading what="Loading models" /> : null}
      <ErrorBanner error={models.error ?? error} />
      {models.data && models.data.models.length === 0 ? (
        <Empty>The provider lists no models; requests may still name any model it serves.</Empty>
      ) : null}
      {models.data && models.data.models.length > 0 ? (
        <table aria-label={`Models of @${slug}`}>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Enabled</th>
              <th scope="col">Kind</th>
            </tr>
          </thead>
          <tbody>
            {models.data.models.map((m) => (
              <tr key={m.slug}>
                <td>
                  <code>
                    @{slug}/{m.slug}
                  </code>
                </td>
                <td>
                  <label>
                    <input
                      type="checkbox"
                      checked={m.enabled}
                      disabled={!editable || busy}
                      onChange={(e) => void toggle(m, e.target.checked)}
                    />
                    <span className="visually-hidden"> {m.slug} enabled</span>
                    <span aria-hidden="true"> {m.enabled ? 'yes' : 'no'}</span>
                  </label>
                </td>
                <td>
                  {m.is_finetune
                    ? `fine-tune of ${m.base_model_slug ?? '?'}`
                    : m.is_custom
                      ? 'custom'
                      : 'listed'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {editable && models.data ? (
        <form className="row add-model" aria-label="Add a model" onSubmit={(e) => void add.onSubmit(e)}>
          <Field
            label="Model to add"
            hint={`Requests name it @${slug}/<model>.`}
            error={add.fieldError('models') ?? (add.error ? (add.error as Error).message : undefined)}
          >
            <input value={newModel} onChange={(e) => setNewModel(e.target.value)} autoComplete="off" />
          </Field>
          <button type="submit" disabled={add.busy || !newModel.trim()}>
            Add model
          </button>
        </form>
      ) : null}
    </section>
  );
}

function SharedWith({ slug }: { slug: string }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const access = useQuery({
    queryKey: ['integrations', 'workspaces', slug],
    queryFn: ({ signal }) =>
      get<WorkspaceAccess>(`/v1/integrations/${encodeURIComponent(slug)}/workspaces`, undefined, signal),
  });
  const workspaces = useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<Workspaces>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const [error, setError] = useState<unknown>(null);
  const save = async (body: unknown) => {
    setError(null);
    try {
      const next = await put<WorkspaceAccess>(
        `/v1/integrations/${encodeURIComponent(slug)}/workspaces`,
        body,
      );
      queryClient.setQueryData(['integrations', 'workspaces', slug], next);
    } catch (err) {
      setError(err);
    }
  };
  if (access.error instanceof ApiError && access.error.status === 403) return null;
  const data = access.data;
  const own = new Map(data?.workspaces.map((w) => [w.id, w.enabled]) ?? []);
  const editable = can('integrations.update');
  const list =
    workspaces.data?.data ?? data?.workspaces.map((w) => ({ id: w.id, slug: w.id, name: '' })) ?? [];
  return (
    <section aria-labelledby={`shared-${slug}`}>
      <h3 id={`shared-${slug}`}>Workspaces that may use it</h3>
      {access.isPending ? <Loading what="Loading workspace access" /> : null}
      <ErrorBanner error={access.error ?? error} />
      {data ? (
        <>
          <label className="row">
            <input
              type="checkbox"
              checked={data.global_workspace_access.enabled}
              disabled={!editable}
              onChange={(e) => void save({ global_workspace_access: { enabled: e.target.checked } })}
            />
            Every workspace without a setting of its own
          </label>
          <ul className="plain-list">
            {list.map((w) => {
              const enabled = own.get(w.id) ?? data.global_workspace_access.enabled;
              return (
                <li key={w.id}>
                  <label className="row">
                    <input
                      type="checkbox"
                      checked={enabled}
                      disabled={!editable}
                      onChange={(e) => void save({ workspaces: [{ id: w.id, enabled: e.target.checked }] })}
                    />
                    {w.name || w.slug}
                    <span className="muted">{own.has(w.id) ? '(own setting)' : '(follows the default)'}</span>
                  </label>
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
    </section>
  );
}
