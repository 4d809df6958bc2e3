import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner, Loading } from '../../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../../ui/form.tsx';
import { ConfirmButton } from '../../ui/confirm.tsx';
import { when } from '../../ui/format.ts';
import { CardListSection } from '../../ui/card-list.tsx';
import { FormActions } from '../../ui/form-actions.tsx';
import { type ListOf } from './common.tsx';
import { WorkspaceAccessTable } from '../../ui/workspace-access.tsx';

export interface AgentIntegration {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  workspace_id: string | null;
  url: string;
  auth_type: string;
  configurations: { custom_headers?: Record<string, string> };
  agent_card_name: string | null;
  agent_card?: Record<string, unknown> | null;
  agent_card_fetched_at: string | null;
  skills_count: number;
}
interface Skill {
  id: string | null;
  name: string | null;
  description: string | null;
  tags: string[];
}
interface FetchedCard {
  agent_card: Record<string, unknown>;
  url_fetched: string;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The agent integrations the credential can see, each with its card, skills and workspaces. */
export function AgentIntegrations() {
  const { can } = useAuth();
  const client = useQueryClient();
  const list = useQuery({
    queryKey: ['agents', 'integrations'],
    queryFn: () => get<ListOf<AgentIntegration>>('/v2/agent-integrations', { page_size: 100 }),
  });
  const refresh = () => void client.invalidateQueries({ queryKey: ['agents'] });
  return (
    <CardListSection
      title="Agent integrations"
      label="Agent integrations"
      newLabel="New agent integration"
      canCreate={can('agent_integrations.create')}
      list={list}
      loadingWhat="Loading agent integrations"
      empty="No agent integrations yet."
      form={(done) => (
        <CreateForm
          onCancel={done}
          onSaved={() => {
            done();
            refresh();
          }}
        />
      )}
      card={(a) => <AgentCard key={a.id} integration={a} onChanged={refresh} />}
    />
  );
}

function AgentCard({ integration, onChanged }: { integration: AgentIntegration; onChanged: () => void }) {
  const { can, identity } = useAuth();
  const [open, setOpen] = useState<'edit' | 'skills' | 'workspaces' | null>(null);
  const toggle = (what: 'edit' | 'skills' | 'workspaces') => setOpen(open === what ? null : what);
  const [refetching, setRefetching] = useState(false);
  const [refetchError, setRefetchError] = useState<unknown>(null);
  const refetch = () => {
    setRefetching(true);
    setRefetchError(null);
    put(`/v2/agent-integrations/${integration.id}`, { fetch_agent_card: true })
      .then(onChanged)
      .catch(setRefetchError)
      .finally(() => setRefetching(false));
  };
  const orgLevel = integration.workspace_id === null;
  return (
    <li className="card policy-card" aria-label={integration.name}>
      <div className="section-head">
        <h3>{integration.name}</h3>
        <div className="row">
          {can('agent_integrations.read') ? (
            <button type="button" aria-expanded={open === 'skills'} onClick={() => toggle('skills')}>
              Skills
            </button>
          ) : null}
          {can('agent_integrations.read') && orgLevel && identity.workspace === null ? (
            <button type="button" aria-expanded={open === 'workspaces'} onClick={() => toggle('workspaces')}>
              Workspaces
            </button>
          ) : null}
          {can('agent_integrations.update') ? (
            <>
              <button type="button" onClick={refetch} disabled={refetching}>
                {refetching ? 'Fetching card…' : 'Fetch card again'}
              </button>
              <button type="button" aria-expanded={open === 'edit'} onClick={() => toggle('edit')}>
                Edit
              </button>
            </>
          ) : null}
          {can('agent_integrations.delete') ? (
            <ConfirmButton
              label="Delete"
              confirmLabel={`Delete ${integration.name}`}
              onConfirm={async () => {
                await del(`/v2/agent-integrations/${integration.id}`);
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
        <dt>Endpoint</dt>
        <dd className="break">{integration.url}</dd>
        <dt>Authentication</dt>
        <dd>{integration.auth_type}</dd>
        <dt>Belongs to</dt>
        <dd>{orgLevel ? 'the organisation' : `workspace ${integration.workspace_id}`}</dd>
        <dt>Agent card</dt>
        <dd>
          {integration.agent_card_name ?? 'none stored'}
          {integration.agent_card_fetched_at ? ` · fetched ${when(integration.agent_card_fetched_at)}` : ''}
          {` · ${integration.skills_count} skill${integration.skills_count === 1 ? '' : 's'}`}
        </dd>
      </dl>
      <ErrorBanner error={refetchError} />
      {open === 'edit' ? (
        <EditForm
          integration={integration}
          onCancel={() => setOpen(null)}
          onSaved={() => {
            setOpen(null);
            onChanged();
          }}
        />
      ) : null}
      {open === 'skills' ? <Skills integration={integration} /> : null}
      {open === 'workspaces' ? (
        <WorkspaceAccessTable
          base={`/v2/agent-integrations/${integration.id}`}
          subject={integration.name}
          editable={can('agent_integrations.update')}
        />
      ) : null}
    </li>
  );
}

function Skills({ integration }: { integration: AgentIntegration }) {
  const skills = useQuery({
    queryKey: ['agents', 'skills', integration.id],
    queryFn: () => get<ListOf<Skill>>(`/v2/agent-integrations/${integration.id}/skills`),
  });
  if (skills.isPending) return <Loading what="Loading skills" />;
  if (skills.error) return <ErrorBanner error={skills.error} />;
  if (skills.data.data.length === 0) return <p className="muted">The stored agent card names no skills.</p>;
  return (
    <div className="table-scroll">
      <table aria-label={`Skills of ${integration.name}`}>
        <thead>
          <tr>
            <th scope="col">Skill</th>
            <th scope="col">Description</th>
            <th scope="col">Tags</th>
          </tr>
        </thead>
        <tbody>
          {skills.data.data.map((s, i) => (
            <tr key={s.id ?? i}>
              <td>
                {s.name ?? s.id ?? '—'}
                {s.id && s.name ? <code className="muted"> {s.id}</code> : null}
              </td>
              <td>{s.description ?? ''}</td>
              <td>{s.tags.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const CREATE_FIELDS = ['name', 'slug', 'description', 'url', 'auth_type', 'configurations', 'workspace_id'];

/** Headers JSON text as an object, or the reason it is not one. */
function headersOf(
  authType: string,
  headers: string,
): { value?: Record<string, string>; problem: string | null } {
  if (authType !== 'headers') return { problem: null };
  const problem = jsonObjectError(headers);
  return problem ? { problem } : { value: JSON.parse(headers) as Record<string, string>, problem: null };
}

/**
 * A new agent integration from its card: the server fetches the card from the endpoint (the
 * browser never does), the form shows it, and the integration is created with that card.
 */
function CreateForm({ onSaved, onCancel }: { onSaved: () => void; onCancel: () => void }) {
  const { identity, workspaceId } = useAuth();
  const [url, setUrl] = useState('');
  const [authType, setAuthType] = useState('none');
  const [headers, setHeaders] = useState('{\n  "Authorization": "Bearer "\n}');
  const [headersProblem, setHeadersProblem] = useState<string | null>(null);
  const [fetched, setFetched] = useState<FetchedCard | null>(null);
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const [inWorkspace, setInWorkspace] = useState(identity.workspace !== null);
  const fetchCard = useApiForm(
    async () => {
      const h = headersOf(authType, headers);
      setHeadersProblem(h.problem);
      if (h.problem) throw new Error(`Headers: ${h.problem}`);
      return post<FetchedCard>('/v2/agent-integrations/fetch-agent-card', { url, headers: h.value });
    },
    (card) => {
      setFetched(card);
      setName((n) => n || text(card.agent_card.name) || '');
      setDescription((d) => d || (text(card.agent_card.description) ?? '').slice(0, 1000));
    },
  );
  const create = useApiForm(async () => {
    const h = headersOf(authType, headers);
    setHeadersProblem(h.problem);
    if (h.problem) throw new Error(`Headers: ${h.problem}`);
    const body: Record<string, unknown> = {
      name,
      description: description || undefined,
      url,
      auth_type: authType,
      configurations: h.value ? { custom_headers: h.value } : undefined,
      agent_card: fetched?.agent_card,
    };
    if (slug) body.slug = slug;
    if (identity.workspace === null && inWorkspace) body.workspace_id = workspaceId;
    return post('/v2/agent-integrations', body);
  }, onSaved);
  const skills = Array.isArray(fetched?.agent_card.skills) ? fetched.agent_card.skills.length : 0;
  return (
    <form
      className="card govern-form"
      noValidate
      aria-label="New agent integration"
      onSubmit={(e) => void create.onSubmit(e)}
    >
      <h3>New agent integration</h3>
      <div className="grid">
        <Field
          label="Agent endpoint"
          hint="The agent's URL; its card is read from /.well-known/agent-card.json (or agent.json) of its origin, by the server."
          error={fetchCard.fieldError('url') ?? fetchCard.fieldError('endpoint') ?? create.fieldError('url')}
        >
          <input
            type="url"
            value={url}
            onChange={(e) => {
              setUrl(e.target.value);
              setFetched(null);
            }}
          />
        </Field>
        <Field label="Authentication" error={create.fieldError('auth_type')}>
          <select value={authType} onChange={(e) => setAuthType(e.target.value)}>
            <option value="none">None</option>
            <option value="headers">Headers</option>
          </select>
        </Field>
      </div>
      {authType === 'headers' ? (
        <Field
          label="Headers"
          hint="JSON object of header → value, sent to the agent (and when fetching its card). Stored encrypted."
          error={headersProblem ?? fetchCard.fieldError('headers') ?? create.fieldError('configurations')}
        >
          <textarea
            rows={3}
            spellCheck={false}
            value={headers}
            onChange={(e) => setHeaders(e.target.value)}
          />
        </Field>
      ) : null}
      <div className="row">
        <button
          type="button"
          onClick={() => void fetchCard.onSubmit()}
          disabled={fetchCard.busy || !url.trim()}
        >
          {fetchCard.busy ? 'Fetching…' : 'Fetch agent card'}
        </button>
      </div>
      <FormError error={headersProblem ? null : fetchCard.error} fields={['url', 'endpoint', 'headers']} />
      {fetched ? (
        <section className="agent-card-preview" aria-label="Fetched agent card">
          <h4>{text(fetched.agent_card.name) ?? 'Unnamed agent'}</h4>
          {text(fetched.agent_card.description) ? <p>{text(fetched.agent_card.description)}</p> : null}
          <p className="muted break">
            From {fetched.url_fetched} · version {text(fetched.agent_card.version) ?? '—'} · {skills} skill
            {skills === 1 ? '' : 's'}
          </p>
        </section>
      ) : (
        <p className="muted">
          Without a fetched card, creating fetches it now (a card that cannot be read fails).
        </p>
      )}
      <div className="grid">
        <Field label="Name" error={create.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Slug" hint="Optional; made from the name when empty." error={create.fieldError('slug')}>
          <input value={slug} onChange={(e) => setSlug(e.target.value)} />
        </Field>
        <Field label="Description" error={create.fieldError('description')}>
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        {identity.workspace === null ? (
          <Field label="Belongs to" error={create.fieldError('workspace_id')}>
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
      <FormError
        error={headersProblem ? null : create.error}
        fields={[...CREATE_FIELDS, 'agent_card', 'fetch_agent_card']}
      />
      {(create.fieldError('agent_card') ?? create.fieldError('fetch_agent_card')) ? (
        <p className="banner banner-error" role="alert">
          Agent card: {create.fieldError('agent_card') ?? create.fieldError('fetch_agent_card')}
        </p>
      ) : null}
      <FormActions busy={create.busy} submit="Create agent integration" onCancel={onCancel} />
    </form>
  );
}

function EditForm({
  integration,
  onSaved,
  onCancel,
}: {
  integration: AgentIntegration;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(integration.name);
  const [description, setDescription] = useState(integration.description ?? '');
  const [url, setUrl] = useState(integration.url);
  const [authType, setAuthType] = useState(integration.auth_type);
  const [headers, setHeaders] = useState(
    JSON.stringify(integration.configurations.custom_headers ?? {}, null, 2),
  );
  const [headersProblem, setHeadersProblem] = useState<string | null>(null);
  const [refetch, setRefetch] = useState(false);
  const form = useApiForm(async () => {
    const h = headersOf(authType, headers);
    setHeadersProblem(h.problem);
    if (h.problem) throw new Error(`Headers: ${h.problem}`);
    return put(`/v2/agent-integrations/${integration.id}`, {
      name,
      description,
      url,
      auth_type: authType,
      configurations: { custom_headers: h.value ?? {} },
      fetch_agent_card: refetch || undefined,
    });
  }, onSaved);
  return (
    <form
      className="card govern-form"
      noValidate
      aria-label={`Edit ${integration.name}`}
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h3>Edit {integration.name}</h3>
      <div className="grid">
        <Field label="Name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Description" error={form.fieldError('description')}>
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </Field>
        <Field label="Agent endpoint" error={form.fieldError('url')}>
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} />
        </Field>
        <Field label="Authentication" error={form.fieldError('auth_type')}>
          <select value={authType} onChange={(e) => setAuthType(e.target.value)}>
            <option value="none">None</option>
            <option value="headers">Headers</option>
          </select>
        </Field>
      </div>
      {authType === 'headers' ? (
        <Field
          label="Headers"
          hint="JSON object of header → value. Values are shown as ********; leave a mask to keep the stored value."
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
      <label className="check">
        <input type="checkbox" checked={refetch} onChange={(e) => setRefetch(e.target.checked)} /> Fetch the
        agent card again from the endpoint
      </label>
      <FormError error={headersProblem ? null : form.error} fields={CREATE_FIELDS} />
      <FormActions busy={form.busy} submit="Save" onCancel={onCancel} />
    </form>
  );
}
