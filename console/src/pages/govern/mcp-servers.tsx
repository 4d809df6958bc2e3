import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner } from '../../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../../ui/form.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { CardListSection } from '../../ui/card-list.tsx';
import { FormActions } from '../../ui/form-actions.tsx';
import { words, type ListOf } from './common.tsx';
import { CapabilityList } from './mcp-capabilities.tsx';
import { useMcpIntegrations } from './mcp-integrations.tsx';
import { McpAccess } from './mcp-access.tsx';
import { McpConnections } from './mcp-connections.tsx';

interface McpServer {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  workspace_id: string;
  workspace_name?: string;
  mcp_integration_id: string;
  mcp_integration_slug?: string | null;
  mcp_integration_url?: string | null;
  auth_type?: string;
  url: string;
  default_tool_access: 'allow' | 'deny';
  input_guardrails: string[];
  output_guardrails: string[];
  default_tool_cost: number;
  default_key_access: 'allow' | 'deny';
  default_user_access: 'allow' | 'deny';
}
interface TestResult {
  success: boolean;
  status_code: number | null;
  response_time_ms: number;
  url: string;
  server_name: string;
  error: string | null;
}

export function McpServers() {
  const { can, workspaceId, identity } = useAuth();
  const client = useQueryClient();
  const list = useQuery({
    queryKey: ['mcp', 'servers', workspaceId],
    queryFn: () =>
      get<ListOf<McpServer>>('/v2/mcp-servers', {
        page_size: 100,
        workspace_id: identity.workspace === null ? workspaceId : undefined,
      }),
  });
  const refresh = () => void client.invalidateQueries({ queryKey: ['mcp'] });
  return (
    <CardListSection
      title="MCP servers"
      label="MCP servers"
      newLabel="New MCP server"
      canCreate={can('mcp_servers.create')}
      list={list}
      loadingWhat="Loading MCP servers"
      empty="No MCP servers in this workspace yet."
      form={(done) => (
        <ServerForm
          onCancel={done}
          onSaved={() => {
            done();
            refresh();
          }}
        />
      )}
      card={(s) => <ServerCard key={s.id} server={s} onChanged={refresh} />}
    />
  );
}

function ServerCard({ server, onChanged }: { server: McpServer; onChanged: () => void }) {
  const { can } = useAuth();
  const [open, setOpen] = useState<'edit' | 'tools' | 'access' | 'connections' | null>(null);
  const [test, setTest] = useState<TestResult | null>(null);
  const [testing, setTesting] = useState(false);
  const [testError, setTestError] = useState<unknown>(null);
  const runTest = () => {
    setTesting(true);
    setTestError(null);
    setTest(null);
    post<TestResult>(`/v2/mcp-servers/${server.id}/test`)
      .then(setTest)
      .catch(setTestError)
      .finally(() => setTesting(false));
  };
  const toggle = (what: 'edit' | 'tools' | 'access' | 'connections') => setOpen(open === what ? null : what);
  return (
    <li className="card policy-card" aria-label={server.name}>
      <div className="section-head">
        <h3>{server.name}</h3>
        <div className="row">
          {can('mcp_servers.read') ? (
            <>
              <button type="button" onClick={runTest} disabled={testing}>
                {testing ? 'Testing…' : 'Test connection'}
              </button>
              <button type="button" aria-expanded={open === 'tools'} onClick={() => toggle('tools')}>
                Tools
              </button>
              <button type="button" aria-expanded={open === 'access'} onClick={() => toggle('access')}>
                Access
              </button>
              <button
                type="button"
                aria-expanded={open === 'connections'}
                onClick={() => toggle('connections')}
              >
                Connections
              </button>
            </>
          ) : null}
          {can('mcp_servers.update') ? (
            <button type="button" aria-expanded={open === 'edit'} onClick={() => toggle('edit')}>
              Edit
            </button>
          ) : null}
          {can('mcp_servers.delete') ? (
            <ConfirmButton
              label="Delete"
              confirmLabel={`Delete ${server.name}`}
              onConfirm={async () => {
                await del(`/v2/mcp-servers/${server.id}`);
                onChanged();
              }}
            />
          ) : null}
        </div>
      </div>
      <dl className="policy-facts">
        <dt>Gateway URL</dt>
        <dd className="break">
          <code>{server.url}</code>
        </dd>
        <dt>Integration</dt>
        <dd>
          {server.mcp_integration_slug ?? server.mcp_integration_id}
          {server.mcp_integration_url ? (
            <span className="muted break"> ({server.mcp_integration_url})</span>
          ) : null}
        </dd>
        <dt>Tool access</dt>
        <dd>
          {server.default_tool_access === 'deny'
            ? 'Only tools switched on here'
            : 'Every tool not switched off'}
        </dd>
        <dt>Cost per call</dt>
        <dd>{server.default_tool_cost} USD</dd>
        <dt>Guardrails</dt>
        <dd>
          in: {server.input_guardrails.join(', ') || 'none'} · out:{' '}
          {server.output_guardrails.join(', ') || 'none'}
        </dd>
      </dl>
      {test ? (
        <p className={`banner${test.success ? '' : ' banner-error'}`} role="status">
          {test.success
            ? `Connected: ${test.server_name || 'the upstream'} answered in ${test.response_time_ms} ms.`
            : `Connection failed after ${test.response_time_ms} ms: ${test.error ?? 'no answer'}`}
        </p>
      ) : null}
      <ErrorBanner error={testError} />
      {open === 'edit' ? (
        <ServerForm
          server={server}
          onCancel={() => setOpen(null)}
          onSaved={() => {
            setOpen(null);
            onChanged();
          }}
        />
      ) : null}
      {open === 'tools' ? (
        <CapabilityList
          base={`/v2/mcp-servers/${server.id}`}
          owner={server.name}
          canSwitch={can('mcp_servers.update')}
        />
      ) : null}
      {open === 'access' ? <McpAccess server={server} /> : null}
      {open === 'connections' ? <McpConnections server={server} /> : null}
    </li>
  );
}

const FIELDS = [
  'name',
  'slug',
  'description',
  'mcp_integration_id',
  'workspace_id',
  'default_tool_access',
  'default_tool_cost',
  'input_guardrails',
  'output_guardrails',
  'tool_settings',
];

function ServerForm({
  server,
  onSaved,
  onCancel,
}: {
  server?: McpServer;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { identity, workspaceId, can } = useAuth();
  const integrations = useMcpIntegrations(can('mcp_integrations.list'));
  const [name, setName] = useState(server?.name ?? '');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState(server?.description ?? '');
  const [integration, setIntegration] = useState('');
  const [toolAccess, setToolAccess] = useState(server?.default_tool_access ?? 'allow');
  const [cost, setCost] = useState(String(server?.default_tool_cost ?? 0));
  const [inputGuardrails, setInputGuardrails] = useState(server?.input_guardrails.join(', ') ?? '');
  const [outputGuardrails, setOutputGuardrails] = useState(server?.output_guardrails.join(', ') ?? '');
  const form = useApiForm(async () => {
    const body: Record<string, unknown> = {
      name,
      description: description || undefined,
      default_tool_access: toolAccess,
      default_tool_cost: cost.trim() !== '' && !Number.isNaN(Number(cost)) ? Number(cost) : cost,
      input_guardrails: words(inputGuardrails),
      output_guardrails: words(outputGuardrails),
    };
    if (server) return put(`/v2/mcp-servers/${server.id}`, body);
    body.mcp_integration_id = integration;
    if (slug) body.slug = slug;
    if (identity.workspace === null && workspaceId) body.workspace_id = workspaceId;
    return post('/v2/mcp-servers', body);
  }, onSaved);
  return (
    <form
      className="card govern-form"
      noValidate
      aria-label={server ? `Edit ${server.name}` : 'New MCP server'}
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h3>{server ? `Edit ${server.name}` : 'New MCP server'}</h3>
      <div className="grid">
        <Field label="Name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        {!server ? (
          <>
            <Field
              label="Slug"
              hint="Served at /mcp/<slug>; made from the name when empty."
              error={form.fieldError('slug')}
            >
              <input value={slug} onChange={(e) => setSlug(e.target.value)} />
            </Field>
            <Field label="MCP integration" error={form.fieldError('mcp_integration_id')}>
              {integrations.data ? (
                <select value={integration} onChange={(e) => setIntegration(e.target.value)}>
                  <option value="">Choose an integration</option>
                  {integrations.data.data.map((i) => (
                    <option key={i.id} value={i.id}>
                      {i.name} ({i.slug})
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  value={integration}
                  onChange={(e) => setIntegration(e.target.value)}
                  placeholder="id or slug"
                />
              )}
            </Field>
          </>
        ) : null}
        <Field label="Description" error={form.fieldError('description')}>
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        <Field label="Tool access" error={form.fieldError('default_tool_access')}>
          <select value={toolAccess} onChange={(e) => setToolAccess(e.target.value as 'allow' | 'deny')}>
            <option value="allow">Every tool not switched off</option>
            <option value="deny">Only tools switched on here</option>
          </select>
        </Field>
        <Field label="Cost per tool call (USD)" error={form.fieldError('default_tool_cost')}>
          <input inputMode="decimal" value={cost} onChange={(e) => setCost(e.target.value)} />
        </Field>
        <Field
          label="Input guardrails"
          hint="Ids or slugs, comma-separated."
          error={form.fieldError('input_guardrails')}
        >
          <input value={inputGuardrails} onChange={(e) => setInputGuardrails(e.target.value)} />
        </Field>
        <Field
          label="Output guardrails"
          hint="Ids or slugs, comma-separated."
          error={form.fieldError('output_guardrails')}
        >
          <input value={outputGuardrails} onChange={(e) => setOutputGuardrails(e.target.value)} />
        </Field>
      </div>
      <FormError error={form.error} fields={FIELDS} />
      <FormActions busy={form.busy} submit={server ? 'Save' : 'Create MCP server'} onCancel={onCancel} />
    </form>
  );
}
