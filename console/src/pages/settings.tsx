import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, get, post, put } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorBanner, Loading } from '../ui/feedback.tsx';
import { Field, FormError, useApiForm } from '../ui/form.tsx';
import { Page } from '../ui/page.tsx';
import { when } from '../ui/format.ts';
import { Section } from '../ui/section.tsx';
import { Table } from '../ui/table.tsx';
import { FormActions } from '../ui/form-actions.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { splitList, type ListBody } from './org/common.tsx';

interface OrgSettings {
  block_inline_config: boolean;
  block_inline_config_source?: string;
  user_api_key_auto_create: boolean;
  default_workspace_user_api_key_auto_create: boolean | null;
  user_api_key_auto_create_scopes: string[] | null;
  user_api_key_rotation_period: number | 'weekly' | 'monthly' | null;
  workspace_security_settings_override: string[];
  export_settings: { deniedFields: string[] };
}

interface Workspace {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  defaults: { user_api_key_config: string | null; config: string | null };
  settings: { user_api_key_auto_create: boolean | null };
  created_at: string;
  last_updated_at: string;
}

/** Organisation settings and the settings of each workspace (and new workspaces). */
export default function SettingsPage() {
  const { can } = useAuth();
  return (
    <Page title="Settings">
      {can('organisation_settings.read') ? <OrganisationSettings /> : null}
      {can('workspaces.read') || can('workspaces.list') ? <WorkspaceSettings /> : null}
    </Page>
  );
}

const triState = (value: boolean | null) => (value === null ? '' : value ? 'yes' : 'no');
const fromTriState = (value: string) => (value === '' ? null : value === 'yes');

function OrganisationSettings() {
  const settings = useQuery({
    queryKey: ['organisation-settings'],
    queryFn: () => get<OrgSettings>('/v1/admin/organisation/settings'),
  });
  return (
    <Section title="Organisation" id="organisation-settings">
      {settings.isPending ? <Loading /> : null}
      <ErrorBanner error={settings.error} />
      {settings.data ? <OrganisationForm initial={settings.data} /> : null}
    </Section>
  );
}

const ORG_FIELDS = [
  'block_inline_config',
  'user_api_key_auto_create',
  'default_workspace_user_api_key_auto_create',
  'user_api_key_auto_create_scopes',
  'user_api_key_rotation_period',
  'workspace_security_settings_override',
  'export_settings',
];

function OrganisationForm({ initial }: { initial: OrgSettings }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const editable = can('organisation_settings.update');
  const [blockInline, setBlockInline] = useState(initial.block_inline_config);
  const [autoCreate, setAutoCreate] = useState(initial.user_api_key_auto_create);
  const [wsAutoCreate, setWsAutoCreate] = useState(
    triState(initial.default_workspace_user_api_key_auto_create),
  );
  const [scopes, setScopes] = useState((initial.user_api_key_auto_create_scopes ?? []).join(', '));
  const [rotation, setRotation] = useState(
    initial.user_api_key_rotation_period === null ? '' : String(initial.user_api_key_rotation_period),
  );
  const [overrides, setOverrides] = useState(initial.workspace_security_settings_override.join(', '));
  const [denied, setDenied] = useState(initial.export_settings.deniedFields.join(', '));
  const [saved, setSaved] = useState(false);
  const form = useApiForm(
    () => {
      setSaved(false);
      const scopeList = splitList(scopes);
      const period = rotation.trim();
      return put<OrgSettings>('/v1/admin/organisation/settings', {
        block_inline_config: blockInline,
        user_api_key_auto_create: autoCreate,
        default_workspace_user_api_key_auto_create: fromTriState(wsAutoCreate),
        user_api_key_auto_create_scopes: scopeList.length ? scopeList : null,
        user_api_key_rotation_period: period === '' ? null : /^\d+$/.test(period) ? Number(period) : period,
        workspace_security_settings_override: splitList(overrides),
        export_settings: { deniedFields: splitList(denied) },
      });
    },
    (result) => {
      setSaved(true);
      queryClient.setQueryData(['organisation-settings'], result);
    },
  );
  return (
    <form aria-label="Organisation settings" onSubmit={(e) => void form.onSubmit(e)}>
      <fieldset disabled={!editable} className="org-fieldset plain">
        <div className="field">
          <label className="row">
            <input
              type="checkbox"
              checked={blockInline}
              onChange={(e) => setBlockInline(e.target.checked)}
              aria-describedby="block-inline-hint"
            />
            Block inline configs
          </label>
          <small id="block-inline-hint" className="muted">
            Requests may not carry a routing config of their own (x-vendor-config as JSON).
            {initial.block_inline_config_source === 'default' ? ' Currently the default.' : ''}
          </small>
          {form.fieldError('block_inline_config') ? (
            <small className="field-error" role="alert">
              {form.fieldError('block_inline_config')}
            </small>
          ) : null}
        </div>
        <div className="field">
          <label className="row">
            <input type="checkbox" checked={autoCreate} onChange={(e) => setAutoCreate(e.target.checked)} />
            Create an API key for each new user
          </label>
          {form.fieldError('user_api_key_auto_create') ? (
            <small className="field-error" role="alert">
              {form.fieldError('user_api_key_auto_create')}
            </small>
          ) : null}
        </div>
        <div className="org-form-grid">
          <Field
            label="New workspaces create user keys"
            error={form.fieldError('default_workspace_user_api_key_auto_create')}
          >
            <select value={wsAutoCreate} onChange={(e) => setWsAutoCreate(e.target.value)}>
              <option value="">Not set</option>
              <option value="yes">Yes</option>
              <option value="no">No</option>
            </select>
          </Field>
          <Field
            label="Scopes of auto-created user keys"
            hint="Comma-separated; empty for the default scopes."
            error={form.fieldError('user_api_key_auto_create_scopes')}
          >
            <input value={scopes} onChange={(e) => setScopes(e.target.value)} spellCheck={false} />
          </Field>
          <Field
            label="User key rotation period"
            hint="Days (1–365), weekly or monthly; empty for none."
            error={form.fieldError('user_api_key_rotation_period')}
          >
            <input value={rotation} onChange={(e) => setRotation(e.target.value)} spellCheck={false} />
          </Field>
          <Field
            label="Security settings workspaces may override"
            hint="Comma-separated setting names."
            error={form.fieldError('workspace_security_settings_override')}
          >
            <input value={overrides} onChange={(e) => setOverrides(e.target.value)} spellCheck={false} />
          </Field>
          <Field
            label="Fields left out of log exports"
            hint="Comma-separated field names."
            error={form.fieldError('export_settings')}
          >
            <input value={denied} onChange={(e) => setDenied(e.target.value)} spellCheck={false} />
          </Field>
        </div>
      </fieldset>
      <FormError error={form.error} fields={ORG_FIELDS} />
      {editable ? (
        <div className="row">
          <button type="submit" disabled={form.busy}>
            Save organisation settings
          </button>
          {saved ? (
            <span role="status" className="ok-text">
              Saved.
            </span>
          ) : null}
        </div>
      ) : (
        <p className="muted">This credential may read these settings but not change them.</p>
      )}
    </form>
  );
}

function WorkspaceSettings() {
  const { can, identity, workspaceId, setWorkspaceId } = useAuth();
  const [picked, setPicked] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [deleted, setDeleted] = useState<string | null>(null);
  const list = useQuery({
    queryKey: ['workspaces', 'settings'],
    queryFn: () => get<ListBody<Workspace>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const current = picked ?? identity.workspace?.id ?? workspaceId;
  return (
    <Section
      title="Workspaces"
      id="workspace-settings"
      actions={
        can('workspaces.create') ? (
          <button type="button" onClick={() => setCreating(true)}>
            New workspace
          </button>
        ) : null
      }
    >
      {creating ? (
        <CreateWorkspace
          onDone={(id) => {
            setCreating(false);
            if (id) {
              setDeleted(null);
              setPicked(id);
            }
          }}
        />
      ) : null}
      {list.isPending && can('workspaces.list') ? <Loading /> : null}
      <ErrorBanner error={list.error} />
      <Table
        label="Workspaces"
        rows={list.data?.data}
        rowKey={(w) => w.id}
        empty="No workspaces."
        current={(w) => w.id === current}
        columns={[
          {
            header: 'Name',
            cell: (w) => (
              <button type="button" className="link-button" onClick={() => setPicked(w.id)}>
                {w.name}
              </button>
            ),
          },
          { header: 'Slug', cell: (w) => <code>{w.slug}</code> },
          { header: 'Created', cell: (w) => when(w.created_at) },
        ]}
      />
      {deleted ? (
        <p role="status" className="ok-text">
          Deleted workspace {deleted}.
        </p>
      ) : null}
      {current ? (
        <WorkspaceEditor
          key={current}
          id={current}
          onDeleted={(gone) => {
            setDeleted(gone.name);
            setPicked(null);
            // The top bar's workspace goes too: the picker falls back to the first one left.
            if (workspaceId === gone.id) setWorkspaceId(null);
          }}
        />
      ) : null}
    </Section>
  );
}

function CreateWorkspace({ onDone }: { onDone: (id: string | null) => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const [description, setDescription] = useState('');
  const form = useApiForm(
    () =>
      post<Workspace>('/v2/workspaces', {
        name,
        ...(slug.trim() ? { slug: slug.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      }),
    (created) => {
      void queryClient.invalidateQueries({ queryKey: ['workspaces'] });
      onDone(created.id);
    },
  );
  return (
    <form className="card" aria-label="New workspace" onSubmit={(e) => void form.onSubmit(e)}>
      <h3>New workspace</h3>
      <div className="org-form-grid">
        <Field label="Workspace name" error={form.fieldError('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
        </Field>
        <Field
          label="Workspace slug"
          hint="Optional: lower-case letters, digits, - and _."
          error={form.fieldError('slug')}
        >
          <input value={slug} onChange={(e) => setSlug(e.target.value)} spellCheck={false} />
        </Field>
        <Field label="Workspace description" error={form.fieldError('description')}>
          <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1024} />
        </Field>
      </div>
      <FormError error={form.error} fields={['name', 'slug', 'description']} />
      <FormActions busy={form.busy} submit="Create workspace" onCancel={() => onDone(null)} />
    </form>
  );
}

function WorkspaceEditor({ id, onDeleted }: { id: string; onDeleted: (gone: Workspace) => void }) {
  const workspace = useQuery({
    queryKey: ['workspace', id],
    queryFn: () => get<Workspace>(`/v2/workspaces/${id}`),
  });
  if (workspace.isPending) return <Loading />;
  if (workspace.error) return <ErrorBanner error={workspace.error} />;
  return <WorkspaceForm initial={workspace.data} onDeleted={onDeleted} />;
}

function WorkspaceForm({ initial, onDeleted }: { initial: Workspace; onDeleted: (gone: Workspace) => void }) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const editable = can('workspaces.update');
  const [name, setName] = useState(initial.name);
  const [description, setDescription] = useState(initial.description ?? '');
  const [config, setConfig] = useState(initial.defaults.config ?? '');
  const [userKeyConfig, setUserKeyConfig] = useState(initial.defaults.user_api_key_config ?? '');
  const [autoCreate, setAutoCreate] = useState(triState(initial.settings.user_api_key_auto_create));
  const [saved, setSaved] = useState(false);
  const form = useApiForm(
    () => {
      setSaved(false);
      return put<Workspace>(`/v2/workspaces/${initial.id}`, {
        name,
        description: description.trim() || null,
        defaults: { config: config.trim() || null, user_api_key_config: userKeyConfig.trim() || null },
        settings: { user_api_key_auto_create: fromTriState(autoCreate) },
      });
    },
    () => {
      setSaved(true);
      void queryClient.invalidateQueries({ queryKey: ['workspace', initial.id] });
      void queryClient.invalidateQueries({ queryKey: ['workspaces'] });
    },
  );
  return (
    <form className="card" aria-label={`Settings of ${initial.name}`} onSubmit={(e) => void form.onSubmit(e)}>
      <h3>
        {initial.name} <code className="muted">{initial.slug}</code>
      </h3>
      <fieldset disabled={!editable} className="org-fieldset plain">
        <div className="org-form-grid">
          <Field label="Name" error={form.fieldError('name')}>
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
          </Field>
          <Field label="Description" error={form.fieldError('description')}>
            <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1024} />
          </Field>
          <Field
            label="Default config"
            hint="The slug of the config requests use when they name none."
            error={form.fieldError('defaults.config')}
          >
            <input value={config} onChange={(e) => setConfig(e.target.value)} spellCheck={false} />
          </Field>
          <Field label="Default config of user keys" error={form.fieldError('defaults.user_api_key_config')}>
            <input
              value={userKeyConfig}
              onChange={(e) => setUserKeyConfig(e.target.value)}
              spellCheck={false}
            />
          </Field>
          <Field label="Create keys for new members" error={form.fieldError('settings')}>
            <select value={autoCreate} onChange={(e) => setAutoCreate(e.target.value)}>
              <option value="">As the organisation says</option>
              <option value="yes">Yes</option>
              <option value="no">No</option>
            </select>
          </Field>
        </div>
      </fieldset>
      <FormError
        error={form.error}
        fields={['name', 'description', 'defaults.config', 'defaults.user_api_key_config', 'settings']}
      />
      {editable ? (
        <div className="row">
          <button type="submit" disabled={form.busy}>
            Save workspace
          </button>
          {saved ? (
            <span role="status" className="ok-text">
              Saved.
            </span>
          ) : null}
        </div>
      ) : null}
      {can('workspaces.delete') ? (
        <div className="settings-danger">
          <ConfirmButton
            label={`Delete workspace ${initial.name}`}
            question={
              <>
                Delete the workspace <strong>{initial.name}</strong> (<code>{initial.slug}</code>)? Its API
                keys are revoked, its configs, guardrails, limit policies, prompts and partials archived, and
                its members removed. This cannot be undone.
              </>
            }
            confirmLabel={`Yes, delete ${initial.name}`}
            onConfirm={async () => {
              // The name confirms that the right workspace goes (the API refuses another).
              await api('DELETE', `/v2/workspaces/${initial.id}`, { body: { name: initial.name } });
              queryClient.removeQueries({ queryKey: ['workspace', initial.id] });
              await queryClient.invalidateQueries({ queryKey: ['workspaces'] });
              onDeleted(initial);
            }}
          />
        </div>
      ) : null}
    </form>
  );
}
