import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, del, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorBanner, Loading, SecretOnce } from '../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../ui/form.tsx';
import { Page } from '../ui/page.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { when } from '../ui/format.ts';
import { Section } from '../ui/section.tsx';
import { Table } from '../ui/table.tsx';
import { FormActions } from '../ui/form-actions.tsx';
import { splitList, type ListBody } from './org/common.tsx';

interface SsoConnection {
  client_id: string;
  enabled: boolean;
  issuer: string;
  token_endpoint_auth_method: string;
  masked_client_secret: string | null;
  jwks: { keys: unknown[] } | null;
  scopes: string[];
  disable_auto_provision_user: boolean;
  last_updated_at: string;
}
interface EmailDomain {
  id: string;
  domain: string;
  allow_subdomains: boolean;
  created_at: string;
}
interface ScimToken {
  token?: string;
  masked_token: string;
  scim_base_path: string;
  created_at: string;
}
interface ScimGroup {
  id: string;
  display_name: string;
  external_id: string | null;
  members_count: number;
}
interface ScimMapping {
  id: string;
  workspace_id: string;
  role: string;
  scim_group_id: string | null;
  scim_group_name: string | null;
}

/** Single sign-on connections, claimed email domains, the SCIM token and SCIM group mappings. */
export default function SsoPage() {
  const { can } = useAuth();
  return (
    <Page title="SSO and SCIM">
      {can('organisation_sso.read') ? <SsoConnections /> : null}
      {can('organisation_email_domains.list') ? <EmailDomains /> : null}
      {can('organisation_scim.read') ? (
        <>
          <ScimTokenSection />
          <ScimMappings />
        </>
      ) : null}
    </Page>
  );
}

function SsoConnections() {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<SsoConnection | 'new' | null>(null);
  const list = useQuery({
    queryKey: ['sso'],
    queryFn: () => get<ListBody<SsoConnection>>('/v1/admin/organisation/sso'),
  });
  const remove = useMutation({
    mutationFn: (clientId: string) => del(`/v1/admin/organisation/sso/${encodeURIComponent(clientId)}`),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['sso'] }),
  });
  const editable = can('organisation_sso.update');
  return (
    <Section
      title="SSO connections"
      id="sso-connections"
      actions={
        editable ? (
          <button type="button" onClick={() => setEditing('new')}>
            Add connection
          </button>
        ) : null
      }
    >
      <p className="muted">
        OpenID Connect identity providers. Register <code>{window.location.origin}/v1/auth/sso/callback</code>{' '}
        as the redirect URI. People sign in with an email of a claimed domain.
      </p>
      {editing ? (
        <SsoForm
          key={editing === 'new' ? 'new' : editing.client_id}
          existing={editing === 'new' ? null : editing}
          onDone={() => {
            setEditing(null);
            void queryClient.invalidateQueries({ queryKey: ['sso'] });
          }}
        />
      ) : null}
      {list.isPending ? <Loading /> : null}
      <ErrorBanner error={list.error ?? remove.error} />
      <Table
        label="SSO connections"
        rows={list.data?.data}
        rowKey={(c) => c.client_id}
        empty="No SSO connection."
        columns={[
          { header: 'Client id', cell: (c) => <code>{c.client_id}</code> },
          { header: 'Issuer', cell: (c) => c.issuer, className: 'wrap' },
          { header: 'Authentication', cell: (c) => c.token_endpoint_auth_method },
          { header: 'Secret', cell: (c) => <code>{c.masked_client_secret ?? '—'}</code> },
          { header: 'State', cell: (c) => (c.enabled ? 'enabled' : 'disabled') },
          {
            header: 'Actions',
            hidden: true,
            className: 'row',
            cell: (c) =>
              editable ? (
                <>
                  <button type="button" onClick={() => setEditing(c)}>
                    Edit {c.client_id}
                  </button>
                  <ConfirmButton
                    label={`Delete ${c.client_id}`}
                    question={`Delete the connection ${c.client_id}?`}
                    onConfirm={() => remove.mutate(c.client_id)}
                  />
                </>
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

const SSO_FIELDS = [
  'client_id',
  'issuer',
  'client_secret',
  'token_endpoint_auth_method',
  'jwks',
  'private_key',
  'scopes',
  'enabled',
  'disable_auto_provision_user',
];

function SsoForm({ existing, onDone }: { existing: SsoConnection | null; onDone: () => void }) {
  const [clientId, setClientId] = useState(existing?.client_id ?? '');
  const [issuer, setIssuer] = useState(existing?.issuer ?? '');
  const [method, setMethod] = useState(existing?.token_endpoint_auth_method ?? 'client_secret_basic');
  const [secret, setSecret] = useState('');
  const [jwks, setJwks] = useState(existing?.jwks ? JSON.stringify(existing.jwks, null, 2) : '');
  const [privateKey, setPrivateKey] = useState('');
  const [scopes, setScopes] = useState((existing?.scopes ?? ['openid', 'email', 'profile']).join(' '));
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [noProvision, setNoProvision] = useState(existing?.disable_auto_provision_user ?? false);
  const [localError, setLocalError] = useState<{ field: string; message: string } | null>(null);
  const usesSecret = method === 'client_secret_basic' || method === 'client_secret_post';
  const usesKeys = method === 'private_key_jwt';
  const form = useApiForm(async () => {
    setLocalError(null);
    const body: Record<string, unknown> = {
      issuer: issuer.trim(),
      token_endpoint_auth_method: method,
      scopes: splitList(scopes.replace(/\s+/g, ',')),
      enabled,
      disable_auto_provision_user: noProvision,
    };
    if (usesSecret && secret) body.client_secret = secret;
    if (usesKeys) {
      for (const [field, text] of [
        ['jwks', jwks],
        ['private_key', privateKey],
      ] as const) {
        if (!text.trim()) continue;
        const problem = jsonObjectError(text);
        if (problem) {
          setLocalError({ field, message: problem });
          throw new Error(`${field}: ${problem}`);
        }
        body[field] = JSON.parse(text);
      }
    }
    if (!clientId.trim()) {
      setLocalError({ field: 'client_id', message: 'Enter the client id the identity provider gave.' });
      throw new Error('Enter the client id.');
    }
    await put(`/v1/admin/organisation/sso/${encodeURIComponent(clientId.trim())}`, body);
  }, onDone);
  const errorOf = (field: string) =>
    localError?.field === field ? localError.message : form.fieldError(field);
  return (
    <form
      className="card"
      aria-label={existing ? `Edit SSO connection ${existing.client_id}` : 'New SSO connection'}
      onSubmit={(e) => void form.onSubmit(e)}
    >
      <h3>{existing ? `Edit ${existing.client_id}` : 'New SSO connection'}</h3>
      <div className="org-form-grid">
        <Field label="Client id" error={errorOf('client_id')}>
          <input
            value={clientId}
            onChange={(e) => setClientId(e.target.value)}
            readOnly={Boolean(existing)}
            spellCheck={false}
          />
        </Field>
        <Field
          label="Issuer"
          hint="The identity provider's https URL (its /.well-known/openid-configuration is read)."
          error={errorOf('issuer')}
        >
          <input value={issuer} onChange={(e) => setIssuer(e.target.value)} spellCheck={false} />
        </Field>
        <Field label="Client authentication" error={errorOf('token_endpoint_auth_method')}>
          <select value={method} onChange={(e) => setMethod(e.target.value)}>
            <option value="client_secret_basic">client_secret_basic</option>
            <option value="client_secret_post">client_secret_post</option>
            <option value="private_key_jwt">private_key_jwt</option>
            <option value="none">none</option>
          </select>
        </Field>
        {usesSecret ? (
          <Field
            label="Client secret"
            hint={
              existing?.masked_client_secret
                ? `Stored: ${existing.masked_client_secret}. Leave empty to keep it.`
                : 'Write-only: stored encrypted, never shown again.'
            }
            error={errorOf('client_secret')}
          >
            <input
              type="password"
              autoComplete="new-password"
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
            />
          </Field>
        ) : null}
        <Field label="Scopes" hint="Space-separated; must include openid." error={errorOf('scopes')}>
          <input value={scopes} onChange={(e) => setScopes(e.target.value)} spellCheck={false} />
        </Field>
      </div>
      {usesKeys ? (
        <div className="org-form-grid">
          <Field label="Public keys (JWKS JSON)" hint='{"keys": [...]}' error={errorOf('jwks')}>
            <textarea rows={4} value={jwks} onChange={(e) => setJwks(e.target.value)} spellCheck={false} />
          </Field>
          <Field
            label="Signing key (private JWK JSON)"
            hint="Write-only; leave empty to keep the stored one."
            error={errorOf('private_key')}
          >
            <textarea
              rows={4}
              value={privateKey}
              onChange={(e) => setPrivateKey(e.target.value)}
              spellCheck={false}
            />
          </Field>
        </div>
      ) : null}
      <label className="row">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      <label className="row">
        <input type="checkbox" checked={noProvision} onChange={(e) => setNoProvision(e.target.checked)} /> Do
        not create people who are not members yet
      </label>
      <FormError error={localError ? null : form.error} fields={SSO_FIELDS} />
      <FormActions busy={form.busy} submit="Save connection" onCancel={onDone} />
    </form>
  );
}

function EmailDomains() {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const [domain, setDomain] = useState('');
  const [subdomains, setSubdomains] = useState(false);
  const list = useQuery({
    queryKey: ['email-domains'],
    queryFn: () => get<ListBody<EmailDomain>>('/v1/admin/organisation/email-domains'),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['email-domains'] });
  const claim = useApiForm(
    () =>
      post('/v1/admin/organisation/email-domains', { domain: domain.trim(), allow_subdomains: subdomains }),
    () => {
      setDomain('');
      setSubdomains(false);
      refresh();
    },
  );
  const remove = useMutation({
    mutationFn: (name: string) => del(`/v1/admin/organisation/email-domains/${encodeURIComponent(name)}`),
    onSuccess: refresh,
  });
  return (
    <Section title="Email domains" id="email-domains">
      <p className="muted">
        People whose email is at a claimed domain sign in with this organisation&apos;s SSO.
      </p>
      {list.isPending ? <Loading /> : null}
      <ErrorBanner error={list.error ?? remove.error} />
      <Table
        label="Email domains"
        rows={list.data?.data}
        rowKey={(d) => d.id}
        empty="No domain claimed."
        columns={[
          { header: 'Domain', cell: (d) => d.domain },
          { header: 'Subdomains', cell: (d) => (d.allow_subdomains ? 'included' : 'not included') },
          { header: 'Claimed', cell: (d) => when(d.created_at) },
          {
            header: 'Actions',
            hidden: true,
            cell: (d) =>
              can('organisation_email_domains.delete') ? (
                <ConfirmButton
                  label={`Release ${d.domain}`}
                  question={`Release ${d.domain}?`}
                  onConfirm={() => remove.mutate(d.domain)}
                />
              ) : null,
          },
        ]}
      />
      {can('organisation_email_domains.create') ? (
        <form aria-label="Claim a domain" onSubmit={(e) => void claim.onSubmit(e)}>
          <div className="row align-end">
            <Field label="Domain" hint="e.g. example.com" error={claim.fieldError('domain')}>
              <input value={domain} onChange={(e) => setDomain(e.target.value)} spellCheck={false} />
            </Field>
            <label className="row">
              <input type="checkbox" checked={subdomains} onChange={(e) => setSubdomains(e.target.checked)} />{' '}
              Include subdomains
            </label>
            <button type="submit" disabled={claim.busy}>
              Claim domain
            </button>
          </div>
          <FormError error={claim.error} fields={['domain', 'allow_subdomains']} />
        </form>
      ) : null}
    </Section>
  );
}

function ScimTokenSection() {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const [fresh, setFresh] = useState<ScimToken | null>(null);
  const token = useQuery({
    queryKey: ['scim-token'],
    queryFn: async () => {
      try {
        return await get<ScimToken>('/v1/admin/organisation/scim-token');
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
  });
  const create = useMutation({
    mutationFn: (replace: boolean) =>
      post<ScimToken>('/v1/admin/organisation/scim-token', { replace_existing: replace }),
    onSuccess: (created) => {
      setFresh(created);
      queryClient.setQueryData(['scim-token'], { ...created, token: undefined });
    },
  });
  const revoke = useMutation({
    mutationFn: () => del('/v1/admin/organisation/scim-token'),
    onSuccess: () => {
      setFresh(null);
      queryClient.setQueryData(['scim-token'], null);
    },
  });
  const editable = can('organisation_scim.update');
  return (
    <Section title="SCIM token" id="scim-token">
      {token.isPending ? <Loading /> : null}
      <ErrorBanner error={token.error ?? create.error ?? revoke.error} />
      {fresh?.token ? (
        <SecretOnce label="SCIM token" value={fresh.token} onDone={() => setFresh(null)} />
      ) : null}
      {token.data === null ? <p>No SCIM token: your identity provider cannot provision users yet.</p> : null}
      {token.data ? (
        <p>
          Token <code>{token.data.masked_token}</code>, created {when(token.data.created_at)}. SCIM base URL:{' '}
          <code>
            {window.location.origin}
            {token.data.scim_base_path}
          </code>
        </p>
      ) : null}
      {editable && token.data !== undefined ? (
        <div className="row">
          {token.data === null ? (
            <button type="button" onClick={() => create.mutate(false)} disabled={create.isPending}>
              Create SCIM token
            </button>
          ) : (
            <>
              <ConfirmButton
                label="Replace token"
                className=""
                question="Replace the token? The current one stops working."
                onConfirm={() => create.mutate(true)}
              />
              <ConfirmButton
                label="Revoke token"
                question="Revoke the SCIM token?"
                onConfirm={() => revoke.mutate()}
              />
            </>
          )}
        </div>
      ) : null}
    </Section>
  );
}

const SCIM_ROLES = ['admin', 'manager', 'member'];

function ScimMappings() {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const groups = useQuery({
    queryKey: ['scim-groups'],
    queryFn: () => get<ListBody<ScimGroup>>('/v1/scim/groups', { page_size: 100 }),
  });
  const mappings = useQuery({
    queryKey: ['scim-mappings'],
    queryFn: () => get<ListBody<ScimMapping>>('/v1/scim/workspaces', { page_size: 100 }),
  });
  const workspaces = useQuery({
    queryKey: ['workspaces', 'all'],
    queryFn: () =>
      get<ListBody<{ id: string; name: string; slug: string }>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const workspaceName = (id: string) => workspaces.data?.data.find((w) => w.id === id)?.name ?? id;
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['scim-mappings'] });
  const remove = useMutation({
    mutationFn: (id: string) => del(`/v1/scim/workspaces/${id}`),
    onSuccess: refresh,
  });
  const [group, setGroup] = useState('');
  const [workspace, setWorkspace] = useState('');
  const [role, setRole] = useState('member');
  const add = useApiForm(
    () => {
      const known = groups.data?.data.find((g) => g.id === group);
      return post('/v1/scim/workspaces', {
        workspace_id: workspace,
        role,
        ...(known ? { scim_group_id: known.id } : { scim_group_name: group.trim() }),
      });
    },
    () => {
      setGroup('');
      refresh();
    },
  );
  return (
    <Section title="SCIM groups and workspaces" id="scim-mappings">
      <p className="muted">
        Members of a SCIM group join the mapped workspace with its role. A mapping may name a group before the
        identity provider pushes it.
      </p>
      {groups.isPending || mappings.isPending ? <Loading /> : null}
      <ErrorBanner error={groups.error ?? mappings.error ?? remove.error} />
      <h3>Groups</h3>
      <Table
        label="SCIM groups"
        rows={groups.data?.data}
        rowKey={(g) => g.id}
        empty="No SCIM group pushed yet."
        columns={[
          { header: 'Group', cell: (g) => g.display_name },
          { header: 'External id', cell: (g) => g.external_id ?? '—' },
          { header: 'Members', cell: (g) => g.members_count },
        ]}
      />
      <h3>Mappings</h3>
      <Table
        label="SCIM workspace mappings"
        rows={mappings.data?.data}
        rowKey={(m) => m.id}
        empty="No mapping."
        columns={[
          { header: 'Group', cell: (m) => m.scim_group_name ?? m.scim_group_id },
          { header: 'Workspace', cell: (m) => workspaceName(m.workspace_id) },
          { header: 'Role', cell: (m) => m.role },
          {
            header: 'Actions',
            hidden: true,
            cell: (m) =>
              can('organisation_scim.update') ? (
                <ConfirmButton
                  label={`Remove mapping of ${m.scim_group_name ?? m.scim_group_id}`}
                  question="Remove this mapping?"
                  onConfirm={() => remove.mutate(m.id)}
                />
              ) : null,
          },
        ]}
      />
      {can('organisation_scim.update') ? (
        <form aria-label="Map a group" onSubmit={(e) => void add.onSubmit(e)}>
          <div className="org-form-grid">
            <Field
              label="SCIM group"
              hint="A pushed group's name, or the name of one to come."
              error={add.fieldError('scim_group_id') ?? add.fieldError('scim_group_name')}
            >
              <input list="scim-group-options" value={group} onChange={(e) => setGroup(e.target.value)} />
            </Field>
            <datalist id="scim-group-options">
              {groups.data?.data.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.display_name}
                </option>
              ))}
            </datalist>
            <Field label="Mapped workspace" error={add.fieldError('workspace_id')}>
              <select value={workspace} onChange={(e) => setWorkspace(e.target.value)}>
                <option value="">Choose a workspace…</option>
                {workspaces.data?.data.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name || w.slug}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Role in the workspace" error={add.fieldError('role')}>
              <select value={role} onChange={(e) => setRole(e.target.value)}>
                {SCIM_ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </Field>
          </div>
          <FormError
            error={add.error}
            fields={['scim_group_id', 'scim_group_name', 'workspace_id', 'role']}
          />
          <button type="submit" disabled={add.busy}>
            Map group
          </button>
        </form>
      ) : null}
    </Section>
  );
}
