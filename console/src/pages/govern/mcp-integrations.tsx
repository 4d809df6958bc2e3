import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner } from '../../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../../ui/form.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { when } from '../../ui/format.ts';
import { CardListSection } from '../../ui/card-list.tsx';
import { FormActions } from '../../ui/form-actions.tsx';
import { type ListOf } from './common.tsx';
import { CapabilityList } from './mcp-capabilities.tsx';
import { WorkspaceAccessTable } from '../../ui/workspace-access.tsx';

export interface McpIntegration {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  workspace_id: string | null;
  type: 'organisation' | 'workspace';
  url: string;
  auth_type: string;
  transport: string;
  configurations: {
    custom_headers?: Record<string, string>;
    passthrough_header?: string[] | Record<string, unknown>;
    token_url?: string;
    client_id?: string;
    client_secret?: string;
    scope?: string;
  };
  sync_status: string | null;
  last_updated_at: string;
}
interface Metadata {
  server_name: string | null;
  server_version: string | null;
  protocol_version: string | null;
  sync_status: string | null;
  last_synced_at: string | null;
  sync_error: string | null;
}

export function useMcpIntegrations(enabled = true) {
  return useQuery({
    queryKey: ['mcp', 'integrations'],
    queryFn: () => get<ListOf<McpIntegration>>('/v2/mcp-integrations', { page_size: 100 }),
    enabled,
  });
}

export function McpIntegrations() {
  const { can } = useAuth();
  const list = useMcpIntegrations();
  const client = useQueryClient();
  const refresh = () => void client.invalidateQueries({ queryKey: ['mcp'] });
  return (
    <CardListSection
      title="MCP integrations"
      label="MCP integrations"
      newLabel="New MCP integration"
      canCreate={can('mcp_integrations.create')}
      list={list}
      loadingWhat="Loading MCP integrations"
      empty="No MCP integrations yet."
      form={(done) => (
        <IntegrationForm
          onCancel={done}
          onSaved={() => {
            done();
            refresh();
          }}
        />
      )}
      card={(i) => <IntegrationCard key={i.id} integration={i} onChanged={refresh} />}
    />
  );
}

function IntegrationCard({ integration, onChanged }: { integration: McpIntegration; onChanged: () => void }) {
  const { can, identity } = useAuth();
  const client = useQueryClient();
  const [open, setOpen] = useState<'edit' | 'tools' | 'workspaces' | null>(null);
  const metadata = useQuery({
    queryKey: ['mcp', 'metadata', integration.id],
    queryFn: () => get<Metadata>(`/v2/mcp-integrations/${integration.id}/metadata`),
    enabled: can('mcp_integrations.read'),
  });
  const [syncing, setSyncing] = useState(false);
  const [syncError, setSyncError] = useState<unknown>(null);
  const sync = () => {
    setSyncing(true);
    setSyncError(null);
    post<Metadata>(`/v2/mcp-integrations/${integration.id}/sync`)
      .then((m) => {
        client.setQueryData(['mcp', 'metadata', integration.id], m);
        return client.invalidateQueries({ queryKey: ['mcp', 'capabilities'] });
      })
      .catch(setSyncError)
      .finally(() => setSyncing(false));
  };
  const m = metadata.data;
  return (
    <li className="card policy-card" aria-label={integration.name}>
      <div className="section-head">
        <h3>{integration.name}</h3>
        <div className="row">
          {can('mcp_integrations.update') ? (
            <>
              <button
                type="button"
                aria-expanded={open === 'edit'}
                onClick={() => setOpen(open === 'edit' ? null : 'edit')}
              >
                Edit
              </button>
              <button type="button" onClick={sync} disabled={syncing}>
                {syncing ? 'Syncing…' : 'Sync'}
              </button>
            </>
          ) : null}
          {can('mcp_integrations.read') ? (
            <button
              type="button"
              aria-expanded={open === 'tools'}
              onClick={() => setOpen(open === 'tools' ? null : 'tools')}
            >
              Capabilities
            </button>
          ) : null}
          {can('mcp_integrations.read') &&
          integration.workspace_id === null &&
          identity.workspace === null ? (
            <button
              type="button"
              aria-expanded={open === 'workspaces'}
              onClick={() => setOpen(open === 'workspaces' ? null : 'workspaces')}
            >
              Workspaces
            </button>
          ) : null}
          {can('mcp_integrations.delete') ? (
            <ConfirmButton
              label="Delete"
              confirmLabel={`Delete ${integration.name}`}
              onConfirm={async () => {
                await del(`/v2/mcp-integrations/${integration.id}`);
                onChanged();
              }}
            />
          ) : null}
        </div>
      </div>
      <dl className="policy-facts">
        <dt>Slug</dt>
        <dd>
          <code>{integration.slug}</code>
        </dd>
        <dt>Upstream</dt>
        <dd className="break">{integration.url}</dd>
        <dt>Authentication</dt>
        <dd>{integration.auth_type}</dd>
        <dt>Belongs to</dt>
        <dd>{integration.workspace_id ? `workspace ${integration.workspace_id}` : 'the organisation'}</dd>
        <dt>Sync</dt>
        <dd>
          {m?.sync_status ?? integration.sync_status ?? '—'}
          {m?.last_synced_at ? ` · ${when(m.last_synced_at)}` : ''}
          {m?.server_name ? ` · ${m.server_name} ${m.server_version ?? ''}` : ''}
        </dd>
      </dl>
      {m?.sync_error ? (
        <p className="banner banner-error" role="status">
          Last sync failed: {m.sync_error}
        </p>
      ) : null}
      <ErrorBanner error={syncError} />
      {open === 'edit' ? (
        <IntegrationForm
          integration={integration}
          onCancel={() => setOpen(null)}
          onSaved={() => {
            setOpen(null);
            onChanged();
          }}
        />
      ) : null}
      {open === 'tools' ? (
        <CapabilityList
          base={`/v2/mcp-integrations/${integration.id}`}
          owner={integration.name}
          canSwitch={can('mcp_integrations.update')}
        />
      ) : null}
      {open === 'workspaces' ? (
        <WorkspaceAccessTable
          base={`/v2/mcp-integrations/${integration.id}`}
          subject={integration.name}
          editable={can('mcp_integrations.update')}
        />
      ) : null}
    </li>
  );
}

const FIELDS = [
  'name',
  'slug',
  'description',
  'url',
  'auth_type',
  'transport',
  'configurations',
  'workspace_id',
  'secret_mappings',
];

function IntegrationForm({
  integration,
  onSaved,
  onCancel,
}: {
  integration?: McpIntegration;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { identity, workspaceId } = useAuth();
  const c = integration?.configurations ?? {};
  const [name, setName] = useState(integration?.name ?? '');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState(integration?.description ?? '');
  const [url, setUrl] = useState(integration?.url ?? '');
  const [authType, setAuthType] = useState(integration?.auth_type ?? 'none');
  const [headers, setHeaders] = useState(JSON.stringify(c.custom_headers ?? {}, null, 2));
  const [tokenUrl, setTokenUrl] = useState(c.token_url ?? '');
  const [clientId, setClientId] = useState(c.client_id ?? '');
  const [clientSecret, setClientSecret] = useState(c.client_secret ?? '');
  const [scope, setScope] = useState(c.scope ?? '');
  const [inWorkspace, setInWorkspace] = useState(identity.workspace !== null);
  const [headersProblem, setHeadersProblem] = useState<string | null>(null);
  const form = useApiForm(async () => {
    const configurations: Record<string, unknown> = {};
    if (authType === 'headers') {
      const problem = jsonObjectError(headers);
      setHeadersProblem(problem);
      if (problem) throw new Error(`Headers: ${problem}`);
      configurations.custom_headers = JSON.parse(headers);
    } else if (authType === 'oauth_client_credentials') {
      Object.assign(configurations, {
        token_url: tokenUrl || undefined,
        client_id: clientId || undefined,
        client_secret: clientSecret || undefined,
        scope: scope || undefined,
      });
    }
    const body: Record<string, unknown> = {
      name,
      description: description || undefined,
      url,
      auth_type: authType,
      transport: 'http',
      configurations,
    };
    if (integration) return put(`/v2/mcp-integrations/${integration.id}`, body);
    if (slug) body.slug = slug;
    if (identity.workspace === null && inWorkspace) body.workspace_id = workspaceId;
    return post('/v2/mcp-integrations', body);
  }, onSaved);
  return (
    <form
      className="card govern-form"
      noValidate
      aria-label={integration ? `Edit ${integration.name}` : 'New MCP integration'}
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h3>{integration ? `Edit ${integration.name}` : 'New MCP integration'}</h3>
      <div className="grid">
        <Field label="Name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {!integration ? (
          <Field label="Slug" hint="Optional; made from the name when empty." error={form.fieldError('slug')}>
            <input value={slug} onChange={(e) => setSlug(e.target.value)} />
          </Field>
        ) : null}
        <Field label="Description" error={form.fieldError('description')}>
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        <Field
          label="Upstream URL"
          hint="The upstream's streamable HTTP endpoint (http or https). Private and loopback addresses are refused unless trusted."
          error={form.fieldError('url')}
        >
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} />
        </Field>
        <Field label="Authentication" error={form.fieldError('auth_type')}>
          <select value={authType} onChange={(e) => setAuthType(e.target.value)}>
            <option value="none">None</option>
            <option value="headers">Headers</option>
            <option value="oauth_client_credentials">OAuth client credentials</option>
          </select>
        </Field>
        {!integration && identity.workspace === null ? (
          <Field label="Belongs to" error={form.fieldError('workspace_id')}>
            <select
              value={inWorkspace ? 'ws' : 'org'}
              onChange={(e) => setInWorkspace(e.target.value === 'ws')}
            >
              <option value="org">The organisation (enable per workspace)</option>
              <option value="ws">The selected workspace</option>
            </select>
          </Field>
        ) : null}
      </div>
      {authType === 'headers' ? (
        <Field
          label="Headers"
          hint="JSON object of header → value, sent upstream. Values are stored encrypted and shown as ********; leave a mask to keep the stored value."
          error={headersProblem ?? form.fieldError('configurations')}
        >
          <textarea
            rows={3}
            spellCheck={false}
            value={headers}
            onChange={(e) => setHeaders(e.target.value)}
          />
        </Field>
      ) : null}
      {authType === 'oauth_client_credentials' ? (
        <div className="grid">
          <Field label="Token URL" error={form.fieldError('configurations.token_url')}>
            <input type="url" value={tokenUrl} onChange={(e) => setTokenUrl(e.target.value)} />
          </Field>
          <Field label="Client ID" error={form.fieldError('configurations.client_id')}>
            <input value={clientId} onChange={(e) => setClientId(e.target.value)} />
          </Field>
          <Field
            label="Client secret"
            hint="Shown as ********; leave it to keep the stored one."
            error={form.fieldError('configurations.client_secret')}
          >
            <input
              type="password"
              autoComplete="off"
              value={clientSecret}
              onChange={(e) => setClientSecret(e.target.value)}
            />
          </Field>
          <Field label="OAuth scope" error={form.fieldError('configurations.scope')}>
            <input value={scope} onChange={(e) => setScope(e.target.value)} />
          </Field>
        </div>
      ) : null}
      <FormError error={headersProblem ? null : form.error} fields={FIELDS} />
      <FormActions
        busy={form.busy}
        submit={integration ? 'Save' : 'Create MCP integration'}
        onCancel={onCancel}
      />
    </form>
  );
}
