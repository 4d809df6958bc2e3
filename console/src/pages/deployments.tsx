import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Empty, ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../ui/form.tsx';
import { Page } from '../ui/page.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { Section } from '../ui/section.tsx';
import { Table } from '../ui/table.tsx';
import { FormActions } from '../ui/form-actions.tsx';
import { Details, StatusBadge, type ListBody } from './org/common.tsx';
import { DeploymentEditor, type EditableDeployment } from './org/deployment-editor.tsx';

interface Deployment {
  id: string;
  name: string;
  slug: string;
  type: string;
  status: string;
  is_default: number;
  connection_status: string;
  last_synced_at: string | null;
  created_at: string;
  tags: Record<string, string>;
  auth_settings: EditableDeployment['auth_settings'];
  deployment_config?: Record<string, unknown>;
  client_auth?: string | null;
  workspaces: { id?: string; slug?: string }[] | string[];
  version: string | null;
  instances: { id?: string; hostname?: string; last_seen_at?: string; version?: string }[];
  masked_credentials?: unknown;
  credentials: unknown;
}

const HEALTH_TEXT: Record<string, string> = {
  healthy: 'its gateways reported within the last 90 seconds',
  unhealthy: 'its gateways last reported more than 90 seconds ago',
  unknown: 'no gateway has reported yet',
};

/** The organisation's gateway deployments, their health (gateway heartbeats) and settings. */
export default function DeploymentsPage() {
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const [showArchived, setShowArchived] = useState(false);
  const [creating, setCreating] = useState(false);
  const list = useQuery({
    queryKey: ['deployments', showArchived],
    queryFn: () =>
      get<ListBody<Deployment>>('/v1/deployments', {
        status: showArchived ? 'archived' : undefined,
        page_size: 100,
      }),
  });
  const selected = params.get('id');
  return (
    <Page
      title="Deployments"
      actions={
        can('deployments.create') ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New deployment
          </button>
        ) : null
      }
    >
      {creating ? (
        <CreateDeployment
          onDone={(id) => {
            setCreating(false);
            if (id) setParams({ id });
          }}
        />
      ) : null}
      <label className="row">
        <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} />
        Show archived deployments only
      </label>
      {list.isPending ? <Loading /> : null}
      <ErrorBanner error={list.error} />
      <Table
        label="Deployments"
        rows={list.data?.data}
        rowKey={(d) => d.id}
        empty="No deployments. A deployment groups self-hosted gateways that report their health here."
        current={(d) => selected === d.id}
        columns={[
          {
            header: 'Name',
            cell: (d) => (
              <>
                <button type="button" className="link-button" onClick={() => setParams({ id: d.id })}>
                  {d.name}
                </button>
                {d.is_default ? <span className="badge"> default</span> : null}
                <div className="muted">
                  <code>{d.slug}</code>
                </div>
              </>
            ),
          },
          { header: 'Type', cell: (d) => (d.type === 'non_production' ? 'non-production' : d.type) },
          { header: 'Health', cell: (d) => <StatusBadge status={d.connection_status} /> },
          { header: 'Last report', cell: (d) => when(d.last_synced_at) },
          { header: 'Status', cell: (d) => d.status },
        ]}
      />
      {selected ? <DeploymentDetail key={selected} id={selected} onGone={() => setParams({})} /> : null}
    </Page>
  );
}

function CreateDeployment({ onDone }: { onDone: (id: string | null) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [type, setType] = useState('production');
  const [isDefault, setIsDefault] = useState(false);
  const form = useApiForm(
    () =>
      post<Deployment>('/v1/deployments', {
        name,
        ...(slug.trim() ? { slug: slug.trim() } : {}),
        type,
        is_default: isDefault ? 1 : 0,
      }),
    (created) => {
      void queryClient.invalidateQueries({ queryKey: ['deployments'] });
      onDone(created.id);
    },
  );
  return (
    <form className="card" aria-label="New deployment" onSubmit={(e) => void form.onSubmit(e)}>
      <h2>New deployment</h2>
      <div className="org-form-grid">
        <Field label="Name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </Field>
        <Field label="Slug" hint="Optional: letters, digits, - and _." error={form.fieldError('slug')}>
          <input value={slug} onChange={(e) => setSlug(e.target.value)} />
        </Field>
        <Field label="Type" error={form.fieldError('type')}>
          <select value={type} onChange={(e) => setType(e.target.value)}>
            <option value="production">production</option>
            <option value="non_production">non-production</option>
          </select>
        </Field>
      </div>
      <label className="row">
        <input type="checkbox" checked={isDefault} onChange={(e) => setIsDefault(e.target.checked)} />
        The organisation&apos;s default deployment
      </label>
      <FormError error={form.error} fields={['name', 'slug', 'type']} />
      <FormActions busy={form.busy} submit="Create deployment" onCancel={() => onDone(null)} />
    </form>
  );
}

function DeploymentDetail({ id, onGone }: { id: string; onGone: () => void }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const detail = useQuery({
    queryKey: ['deployment', id],
    queryFn: () => get<Deployment>(`/v1/deployments/${id}`),
  });
  const ping = useMutation({
    mutationFn: () =>
      get<{ id: string; connection_status: string; last_synced_at: string | null }>(
        `/v1/deployments/${id}/ping`,
      ),
  });
  const archive = useMutation({
    mutationFn: () => del(`/v1/deployments/${id}`),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['deployments'] });
      onGone();
    },
  });
  if (detail.isPending) return <Loading />;
  if (detail.error) return <ErrorBanner error={detail.error} />;
  const d = detail.data;
  const health = ping.data?.connection_status ?? d.connection_status;
  return (
    <Section
      title={d.name}
      id="deployment-detail"
      actions={
        <>
          <button type="button" onClick={() => ping.mutate()} disabled={ping.isPending}>
            Check health
          </button>
          {can('deployments.update') && d.status !== 'archived' && !editing ? (
            <button
              type="button"
              onClick={() => {
                setSaved(false);
                setEditing(true);
              }}
            >
              Edit
            </button>
          ) : null}
          {can('deployments.delete') && d.status !== 'archived' ? (
            <ConfirmButton
              label="Archive"
              question={`Archive ${d.name}?`}
              onConfirm={() => archive.mutate()}
            />
          ) : null}
        </>
      }
    >
      <ErrorBanner error={ping.error ?? archive.error} />
      {editing ? (
        <DeploymentEditor
          deployment={d}
          onDone={(done) => {
            setEditing(false);
            setSaved(done);
          }}
        />
      ) : null}
      {saved ? (
        <p role="status" className="ok-text">
          Saved {d.name}.
        </p>
      ) : null}
      <p role="status">
        Health: <StatusBadge status={health} /> — {HEALTH_TEXT[health] ?? health}
        {ping.data ? ` (checked ${new Date().toLocaleTimeString()})` : ''}.
      </p>
      <Details
        items={[
          ['Slug', <code key="s">{d.slug}</code>],
          ['Type', d.type],
          ['Status', d.status],
          ['Default', d.is_default ? 'yes' : 'no'],
          ['Last report', when(ping.data?.last_synced_at ?? d.last_synced_at)],
          ['Gateway version', d.version],
          ['Gateway base URL', d.auth_settings.gateway_base_url ?? null],
          ['MCP gateway base URL', d.auth_settings.mcp_gateway_base_url ?? null],
          ['All workspaces allowed', d.auth_settings.allow_all_workspaces ? 'yes' : 'no'],
          [
            'Workspaces',
            (d.workspaces as ({ slug?: string; id?: string } | string)[])
              .map((w) => (typeof w === 'string' ? w : (w.slug ?? w.id)))
              .join(', '),
          ],
          ['Client auth', d.client_auth ? 'set' : 'none'],
          ['Credentials', d.credentials ? 'set (masked)' : 'none'],
          ['Created', when(d.created_at)],
        ]}
      />
      <h3>Gateways reporting</h3>
      {d.instances.length === 0 ? (
        <Empty>No gateway of this deployment has reported.</Empty>
      ) : (
        <pre>{JSON.stringify(d.instances, null, 2)}</pre>
      )}
      {Object.keys(d.tags).length ? (
        <>
          <h3>Tags</h3>
          <Details items={Object.entries(d.tags)} />
        </>
      ) : null}
    </Section>
  );
}
