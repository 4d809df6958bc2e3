import { Fragment, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Page } from '../ui/page.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../ui/form.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { FormActions } from '../ui/form-actions.tsx';
import {
  HeaderRows,
  MULTIPLIERS,
  PricingFields,
  SettingFields,
  createConfigurations,
  headerMap,
  initialValues,
  multiplierValues,
  pricingBody,
  settingLabel,
  updateConfigurations,
  useProviders,
  type HeaderRow,
  type PricingAdjustments,
  type Provider,
} from './build/integration-settings.tsx';
import { IntegrationModels } from './build/integration-models.tsx';
import { IntegrationWorkspaces } from './build/integration-workspaces.tsx';

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
  credentials: Record<string, string> | null;
  configurations: Record<string, unknown>;
  pricing_adjustments: PricingAdjustments | null;
}
interface Workspaces {
  data: { id: string; slug: string; name: string }[];
}

/** The provider select's value for a legacy plugin provider (plugin_provider_id and credentials). */
const PLUGIN = '__plugin';

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

/** The fields a create or update may name, each shown on its own control. */
function fieldParams(provider: Provider | undefined): string[] {
  return [
    'ai_provider_id',
    'plugin_provider_id',
    'credentials',
    'name',
    'slug',
    'key',
    'description',
    'workspace_id',
    'configurations.headers',
    ...(provider?.configurations ?? []).map((f) => `configurations.${f.name}`),
    ...MULTIPLIERS.map(([name]) => `pricing_adjustments.multiplier.${name}`),
  ];
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
  const [pluginId, setPluginId] = useState('');
  const [credentials, setCredentials] = useState<HeaderRow[]>([{ name: '', value: '' }]);
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [headers, setHeaders] = useState<HeaderRow[]>([]);
  const [pricing, setPricing] = useState<Record<string, string>>({});
  const [workspaceOnly, setWorkspaceOnly] = useState('');
  const workspaces = useQuery({
    queryKey: ['workspaces', 'picker'],
    queryFn: () => get<Workspaces>('/v2/workspaces', { page_size: 100 }),
    enabled: identity.workspace === null,
  });
  const plugin = provider === PLUGIN;
  const chosen = plugin ? undefined : providers.data?.data.find((p) => p.id === provider);
  const setValue = (field: string, value: string) => setValues((v) => ({ ...v, [field]: value }));
  const form = useApiForm(
    () =>
      post<{ id: string; slug: string }>('/v1/integrations', {
        ...(plugin
          ? { plugin_provider_id: pluginId.trim() || undefined, credentials: headerMap(credentials) }
          : {
              ai_provider_id: provider || undefined,
              key: chosen && values.key ? values.key : undefined,
              configurations: createConfigurations(chosen, values, headers),
            }),
        name,
        slug: slug || undefined,
        description: description || undefined,
        workspace_id: workspaceOnly || undefined,
        pricing_adjustments: pricingBody(pricing) ?? undefined,
      }),
    (created) => {
      setValues({});
      setCredentials([]);
      void queryClient.invalidateQueries({ queryKey: ['integrations'] });
      onCreated(created.slug);
    },
  );
  const fields = fieldParams(chosen);
  return (
    <form className="card build-form" aria-label="New integration" onSubmit={(e) => void form.onSubmit(e)}>
      <h2>New integration</h2>
      <ErrorBanner error={providers.error} />
      <Field
        label="Provider"
        hint={
          chosen?.default_base_url
            ? `Requests go to ${chosen.default_base_url} unless a custom host is set.`
            : undefined
        }
        error={form.fieldError('ai_provider_id')}
      >
        <select
          value={provider}
          onChange={(e) => {
            setProvider(e.target.value);
            setValues({});
          }}
        >
          <option value="">Choose a provider</option>
          {(providers.data?.data ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.name} ({p.id})
            </option>
          ))}
          <option value={PLUGIN}>A plugin provider (legacy: named credentials)</option>
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
      {plugin ? (
        <>
          <Field
            label="Plugin provider id"
            hint="The plugin that serves requests: letters, digits, ., - and _."
            error={form.fieldError('plugin_provider_id')}
          >
            <input value={pluginId} onChange={(e) => setPluginId(e.target.value)} autoComplete="off" />
          </Field>
          <HeaderRows
            legend="Credentials"
            item="credential"
            secret
            rows={credentials}
            onChange={setCredentials}
            error={form.fieldError('credentials')}
          />
        </>
      ) : null}
      {chosen ? (
        <fieldset className="integration-settings">
          <legend>{chosen.name} settings</legend>
          {chosen.configurations.length === 0 ? (
            <p className="muted">This provider takes no settings.</p>
          ) : null}
          <SettingFields provider={chosen} values={values} onChange={setValue} fieldError={form.fieldError} />
          {chosen.configurations.some((f) => f.name === 'headers') ? (
            <HeaderRows
              legend="Upstream headers"
              secret
              rows={headers}
              onChange={setHeaders}
              error={form.fieldError('configurations.headers')}
            />
          ) : null}
        </fieldset>
      ) : null}
      {provider ? (
        <PricingFields
          values={pricing}
          onChange={(n, v) => setPricing((p) => ({ ...p, [n]: v }))}
          fieldError={form.fieldError}
        />
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
  const providers = useProviders();
  const one = useQuery({
    queryKey: ['integrations', 'one', slug],
    queryFn: ({ signal }) =>
      get<IntegrationDetail>(`/v1/integrations/${encodeURIComponent(slug)}`, undefined, signal),
  });
  if (one.isPending) return <Loading what="Loading the integration" />;
  if (one.error) return <ErrorBanner error={one.error} />;
  const i = one.data;
  const provider = providers.data?.data.find((p) => p.id === i.ai_provider_id);
  const settings = Object.entries(i.configurations).filter(([name]) => name !== 'headers');
  const headerNames = Object.keys((i.configurations.headers as Record<string, string> | undefined) ?? {});
  const multipliers = Object.entries(i.pricing_adjustments?.multiplier ?? {}).filter(([, v]) => v !== null);
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
      <dl className="detail-facts" aria-label="Integration facts">
        <dt>Model prefix</dt>
        <dd>
          <code>@{i.slug}/</code>
        </dd>
        <dt>Provider</dt>
        <dd>
          {provider
            ? `${provider.name} (${provider.id})`
            : (i.ai_provider_id ?? `plugin ${i.plugin_provider_id}`)}
        </dd>
        <dt>Level</dt>
        <dd>{i.workspace_id ? `Workspace ${i.workspace_id}` : 'Organisation'}</dd>
        {i.description ? (
          <>
            <dt>Description</dt>
            <dd>{i.description}</dd>
          </>
        ) : null}
        {i.plugin_provider_id === null ? (
          <>
            <dt>Provider key</dt>
            <dd>
              {i.masked_key ? (
                <>
                  <code>{i.masked_key}</code> <span className="muted">(masked; write-only)</span>
                </>
              ) : (
                'None'
              )}
            </dd>
          </>
        ) : null}
        {Object.entries(i.credentials ?? {}).map(([name, masked]) => (
          <Fragment key={`credential-${name}`}>
            <dt>Credential {name}</dt>
            <dd>
              <code>{masked}</code> <span className="muted">(masked; write-only)</span>
            </dd>
          </Fragment>
        ))}
        {settings.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{settingLabel(name.replace(/^masked_/, ''))}</dt>
            <dd>{name.startsWith('masked_') ? 'Stored (write-only)' : String(value)}</dd>
          </Fragment>
        ))}
        {headerNames.length ? (
          <>
            <dt>Upstream headers</dt>
            <dd>{headerNames.join(', ')} (values write-only)</dd>
          </>
        ) : null}
        {multipliers.length ? (
          <>
            <dt>Cost multipliers</dt>
            <dd>
              {multipliers
                .map(([name, v]) => `${MULTIPLIERS.find(([n]) => n === name)?.[1] ?? name} ×${String(v)}`)
                .join(', ')}
            </dd>
          </>
        ) : null}
        <dt>Status</dt>
        <dd>{i.status}</dd>
        <dt>Updated</dt>
        <dd>{when(i.last_updated_at)}</dd>
      </dl>
      {can('integrations.update') ? <EditIntegration key={i.id} integration={i} provider={provider} /> : null}
      <IntegrationModels slug={i.slug} />
      {i.workspace_id === null && can('integration_workspaces.read') ? (
        <IntegrationWorkspaces slug={i.slug} />
      ) : null}
    </section>
  );
}

function EditIntegration({
  integration,
  provider,
}: {
  integration: IntegrationDetail;
  provider: Provider | undefined;
}) {
  const queryClient = useQueryClient();
  const plugin = integration.plugin_provider_id !== null;
  const [name, setName] = useState(integration.name);
  const [description, setDescription] = useState(integration.description ?? '');
  const [values, setValues] = useState<Record<string, string>>(() =>
    initialValues(integration.configurations),
  );
  const storedHeaders = Object.keys(
    (integration.configurations.headers as Record<string, string> | undefined) ?? {},
  );
  const [replaceHeaders, setReplaceHeaders] = useState(false);
  const [headers, setHeaders] = useState<HeaderRow[]>(storedHeaders.map((h) => ({ name: h, value: '' })));
  const [pricing, setPricing] = useState<Record<string, string>>(() =>
    multiplierValues(integration.pricing_adjustments),
  );
  const storedCredentials = Object.keys(integration.credentials ?? {});
  const [credentials, setCredentials] = useState<HeaderRow[]>([]);
  const [removed, setRemoved] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);
  const setValue = (field: string, value: string) => setValues((v) => ({ ...v, [field]: value }));
  const form = useApiForm(
    () => {
      setSaved(false);
      const credentialChanges = {
        ...Object.fromEntries(removed.map((n) => [n, null])),
        ...headerMap(credentials.filter((c) => c.value)),
      };
      return put<IntegrationDetail>(`/v1/integrations/${encodeURIComponent(integration.slug)}`, {
        name,
        description: description || null,
        ...(plugin
          ? Object.keys(credentialChanges).length
            ? { credentials: credentialChanges }
            : {}
          : {
              key: values.key || undefined,
              configurations: updateConfigurations(
                provider,
                integration.configurations,
                values,
                replaceHeaders ? headers : null,
              ),
            }),
        pricing_adjustments: pricingBody(pricing),
      });
    },
    (updated) => {
      // Secrets typed are sent once and then forgotten; the form shows what is stored now.
      setValues(initialValues(updated.configurations));
      setReplaceHeaders(false);
      setHeaders(
        Object.keys((updated.configurations.headers as Record<string, string> | undefined) ?? {}).map(
          (h) => ({ name: h, value: '' }),
        ),
      );
      setCredentials([]);
      setRemoved([]);
      setSaved(true);
      queryClient.setQueryData(['integrations', 'one', integration.slug], updated);
      void queryClient.invalidateQueries({ queryKey: ['integrations'], exact: true });
    },
  );
  return (
    <form className="build-form" aria-label="Edit the integration" onSubmit={(e) => void form.onSubmit(e)}>
      <h3>Edit</h3>
      <p className="muted">Secrets are never shown: a blank secret field keeps the stored value.</p>
      <Field label="Name" error={form.fieldError('name')}>
        <input value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" />
      </Field>
      <Field label="Description" error={form.fieldError('description')}>
        <input value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
      </Field>
      {!plugin && provider ? (
        <fieldset className="integration-settings">
          <legend>{provider.name} settings</legend>
          {provider.configurations.length === 0 ? (
            <p className="muted">This provider takes no settings.</p>
          ) : null}
          <SettingFields
            provider={provider}
            values={values}
            onChange={setValue}
            fieldError={form.fieldError}
            stored={{ configurations: integration.configurations, hasKey: integration.masked_key !== null }}
          />
          {provider.configurations.some((f) => f.name === 'headers') ? (
            <>
              <label className="row">
                <input
                  type="checkbox"
                  checked={replaceHeaders}
                  onChange={(e) => setReplaceHeaders(e.target.checked)}
                />
                Replace the upstream headers
                <span className="muted">
                  {storedHeaders.length ? `(stored: ${storedHeaders.join(', ')})` : '(none stored)'}
                </span>
              </label>
              {replaceHeaders ? (
                <HeaderRows
                  legend="Upstream headers"
                  secret
                  rows={headers}
                  onChange={setHeaders}
                  error={form.fieldError('configurations.headers')}
                />
              ) : null}
            </>
          ) : null}
        </fieldset>
      ) : null}
      {!plugin && !provider ? <Loading what="Loading the provider's settings" /> : null}
      {plugin ? (
        <fieldset className="integration-settings">
          <legend>Credentials</legend>
          {storedCredentials.map((c) => (
            <label className="row" key={c}>
              <input
                type="checkbox"
                checked={removed.includes(c)}
                onChange={(e) => setRemoved((r) => (e.target.checked ? [...r, c] : r.filter((x) => x !== c)))}
              />
              Remove credential {c}
            </label>
          ))}
          <HeaderRows
            legend="Set credentials"
            item="credential"
            secret
            rows={credentials}
            onChange={setCredentials}
            error={form.fieldError('credentials')}
          />
          <p className="muted">
            A credential named here replaces the stored one of that name; others are kept.
          </p>
        </fieldset>
      ) : null}
      <PricingFields
        values={pricing}
        onChange={(n, v) => setPricing((p) => ({ ...p, [n]: v }))}
        fieldError={form.fieldError}
      />
      <FormError error={form.error} fields={fieldParams(provider)} />
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
