import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { get, put } from '../../api.ts';
import { useAuth } from '../../auth.tsx';
import { ErrorBanner } from '../../ui/feedback.tsx';
import { Field, FormError, jsonObjectError, useApiForm } from '../../ui/form.tsx';
import { FormActions } from '../../ui/form-actions.tsx';
import { splitList, type ListBody } from './common.tsx';

/** A deployment as GET /v1/deployments/{id} answers it: what the editor starts from. */
export interface EditableDeployment {
  id: string;
  name: string;
  slug: string;
  type: string;
  is_default: number;
  tags: Record<string, string>;
  auth_settings: {
    gateway_base_url?: string | null;
    mcp_gateway_base_url?: string | null;
    private_link_endpoint?: string | null;
    use_private_link_proxy?: number;
    is_dataservice_hosted?: number;
    is_playground_proxy_allowed?: number;
    disable_vendor_gateway?: number;
    allow_all_workspaces?: number;
    workspaces_allowed?: string[];
    jwt_subs_allowed?: string[];
    jwt_sub_workspace_mapping?: Record<string, string>;
  };
  deployment_config?: Record<string, unknown>;
  workspaces: { id?: string; slug?: string }[] | string[];
  credentials: { username: string; password: string } | null | unknown;
  client_auth?: string | null;
}

const FLAGS = [
  ['allow_all_workspaces', 'Every workspace may use it'],
  ['disable_vendor_gateway', 'Disable the hosted gateway for its workspaces'],
  ['use_private_link_proxy', 'Use the private link proxy'],
  ['is_dataservice_hosted', 'Data service hosted'],
  ['is_playground_proxy_allowed', 'The playground may proxy through it'],
] as const;

const FIELDS = [
  'name',
  'slug',
  'type',
  'is_default',
  'tags',
  'auth_settings.gateway_base_url',
  'auth_settings.mcp_gateway_base_url',
  'auth_settings.private_link_endpoint',
  'auth_settings.workspaces_allowed',
  'auth_settings.jwt_subs_allowed',
  'auth_settings.jwt_sub_workspace_mapping',
  ...FLAGS.map(([key]) => `auth_settings.${key}`),
  'deployment_config',
  'workspaces',
  'credentials',
  'client_auth',
];

/** `key=value` lines as a map; the text of a map as such lines. */
function parseMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const at = trimmed.indexOf('=');
    if (at === -1) out[trimmed] = '';
    else out[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim();
  }
  return out;
}
const mapText = (map: Record<string, string> | undefined) =>
  Object.entries(map ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');

/** The deployment's workspaces as {id, slug} (older answers name only ids). */
function workspaceRefs(list: EditableDeployment['workspaces']): { id: string; slug: string }[] {
  return (list as unknown[])
    .map((w) =>
      typeof w === 'string'
        ? { id: w, slug: '' }
        : { id: (w as { id?: string }).id ?? '', slug: (w as { slug?: string }).slug ?? '' },
    )
    .filter((w) => w.id);
}

interface WorkspaceItem {
  id: string;
  slug: string;
  name: string;
}

/**
 * Changes a deployment with every field PUT /v1/deployments/{id} takes. Each field is sent as
 * the form shows it; the credentials only when they are replaced or removed (the password is
 * never answered, so it cannot be shown).
 */
export function DeploymentEditor({
  deployment: d,
  onDone,
}: {
  deployment: EditableDeployment;
  onDone: (saved: boolean) => void;
}) {
  const { can } = useAuth();
  const queryClient = useQueryClient();
  const workspaceList = useQuery({
    queryKey: ['workspaces', 'deployment-editor'],
    queryFn: () => get<ListBody<WorkspaceItem>>('/v2/workspaces', { page_size: 100 }),
    enabled: can('workspaces.list'),
  });
  const a = d.auth_settings;
  const [name, setName] = useState(d.name);
  const [slug, setSlug] = useState(d.slug);
  const [type, setType] = useState(d.type);
  const [isDefault, setIsDefault] = useState(Boolean(d.is_default));
  const [tags, setTags] = useState(mapText(d.tags));
  const [gatewayUrl, setGatewayUrl] = useState(a.gateway_base_url ?? '');
  const [mcpUrl, setMcpUrl] = useState(a.mcp_gateway_base_url ?? '');
  const [privateLink, setPrivateLink] = useState(a.private_link_endpoint ?? '');
  const [flags, setFlags] = useState<Record<string, boolean>>(
    Object.fromEntries(FLAGS.map(([key]) => [key, Boolean(a[key])])),
  );
  const [allowed, setAllowed] = useState((a.workspaces_allowed ?? []).join(', '));
  const [subs, setSubs] = useState((a.jwt_subs_allowed ?? []).join(', '));
  const [subMapping, setSubMapping] = useState(mapText(a.jwt_sub_workspace_mapping));
  const [config, setConfig] = useState(JSON.stringify(d.deployment_config ?? {}, null, 2));
  const [workspaces, setWorkspaces] = useState(workspaceRefs(d.workspaces));
  const hasCredentials = Boolean(d.credentials);
  const [credentialMode, setCredentialMode] = useState<'keep' | 'replace' | 'remove'>('keep');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [clientAuth, setClientAuth] = useState(d.client_auth ?? '');
  const [configError, setConfigError] = useState<string | null>(null);

  const form = useApiForm(
    () => {
      const configProblem = jsonObjectError(config);
      setConfigError(configProblem);
      if (configProblem) return Promise.reject(new Error('Fix the deployment config first.'));
      return put(`/v1/deployments/${d.id}`, {
        name,
        slug: slug.trim(),
        type,
        is_default: isDefault ? 1 : 0,
        tags: parseMap(tags),
        auth_settings: {
          gateway_base_url: gatewayUrl.trim() || null,
          mcp_gateway_base_url: mcpUrl.trim() || null,
          private_link_endpoint: privateLink.trim() || null,
          ...Object.fromEntries(FLAGS.map(([key]) => [key, flags[key] ? 1 : 0])),
          workspaces_allowed: splitList(allowed),
          jwt_subs_allowed: splitList(subs),
          jwt_sub_workspace_mapping: parseMap(subMapping),
        },
        deployment_config: JSON.parse(config) as Record<string, unknown>,
        workspaces,
        ...(credentialMode === 'replace'
          ? { credentials: { username, password } }
          : credentialMode === 'remove'
            ? { credentials: null }
            : {}),
        client_auth: clientAuth.trim() || null,
      });
    },
    () => {
      void queryClient.invalidateQueries({ queryKey: ['deployments'] });
      void queryClient.invalidateQueries({ queryKey: ['deployment', d.id] });
      onDone(true);
    },
  );
  const e = form.fieldError;
  const flagError = e('is_default') ?? FLAGS.map(([k]) => e(`auth_settings.${k}`)).find(Boolean);
  const credentialsError = form.fieldNames === 'credentials' ? e('credentials') : undefined;
  const choices = workspaceList.data?.data ?? [];
  const known = new Set(choices.map((w) => w.id));
  return (
    <form
      className="card"
      aria-label={`Edit ${d.name}`}
      onSubmit={(event) => void form.onSubmit(event)}
      noValidate
    >
      <h3>Edit {d.name}</h3>
      <div className="org-form-grid">
        <Field label="Name" error={e('name')}>
          <input value={name} onChange={(ev) => setName(ev.target.value)} />
        </Field>
        <Field label="Slug" hint="Letters, digits, - and _, up to 50." error={e('slug')}>
          <input value={slug} onChange={(ev) => setSlug(ev.target.value)} spellCheck={false} />
        </Field>
        <Field label="Type" error={e('type')}>
          <select value={type} onChange={(ev) => setType(ev.target.value)}>
            <option value="production">production</option>
            <option value="non_production">non-production</option>
          </select>
        </Field>
        <Field label="Gateway base URL" error={e('auth_settings.gateway_base_url')}>
          <input
            value={gatewayUrl}
            onChange={(ev) => setGatewayUrl(ev.target.value)}
            spellCheck={false}
            inputMode="url"
          />
        </Field>
        <Field label="MCP gateway base URL" error={e('auth_settings.mcp_gateway_base_url')}>
          <input
            value={mcpUrl}
            onChange={(ev) => setMcpUrl(ev.target.value)}
            spellCheck={false}
            inputMode="url"
          />
        </Field>
        <Field label="Private link endpoint" error={e('auth_settings.private_link_endpoint')}>
          <input
            value={privateLink}
            onChange={(ev) => setPrivateLink(ev.target.value)}
            spellCheck={false}
            inputMode="url"
          />
        </Field>
        <Field
          label="Workspaces allowed"
          hint="Comma-separated workspace slugs or ids."
          error={e('auth_settings.workspaces_allowed')}
        >
          <input value={allowed} onChange={(ev) => setAllowed(ev.target.value)} spellCheck={false} />
        </Field>
        <Field
          label="JWT subjects allowed"
          hint="Comma-separated."
          error={e('auth_settings.jwt_subs_allowed')}
        >
          <input value={subs} onChange={(ev) => setSubs(ev.target.value)} spellCheck={false} />
        </Field>
        <Field
          label="JWT subject to workspace"
          hint="One subject=workspace a line."
          error={e('auth_settings.jwt_sub_workspace_mapping')}
        >
          <textarea
            rows={3}
            value={subMapping}
            onChange={(ev) => setSubMapping(ev.target.value)}
            spellCheck={false}
          />
        </Field>
        <Field label="Tags" hint="One key=value a line." error={e('tags')}>
          <textarea rows={3} value={tags} onChange={(ev) => setTags(ev.target.value)} spellCheck={false} />
        </Field>
        <Field
          label="Deployment config"
          hint="A JSON object the deployment's gateways receive."
          error={configError ?? e('deployment_config')}
        >
          <textarea
            rows={4}
            value={config}
            onChange={(ev) => setConfig(ev.target.value)}
            spellCheck={false}
          />
        </Field>
        <Field label="Client auth" hint="Empty for none." error={e('client_auth')}>
          <input value={clientAuth} onChange={(ev) => setClientAuth(ev.target.value)} spellCheck={false} />
        </Field>
      </div>
      <fieldset className="org-fieldset">
        <legend>Settings</legend>
        <label className="row">
          <input type="checkbox" checked={isDefault} onChange={(ev) => setIsDefault(ev.target.checked)} />
          The organisation&apos;s default deployment
        </label>
        {FLAGS.map(([key, label]) => (
          <label className="row" key={key}>
            <input
              type="checkbox"
              checked={flags[key]}
              onChange={(ev) => setFlags({ ...flags, [key]: ev.target.checked })}
            />
            {label}
          </label>
        ))}
        {flagError ? (
          <small className="field-error" role="alert">
            {flagError}
          </small>
        ) : null}
      </fieldset>
      <fieldset
        className="org-fieldset"
        aria-describedby={e('workspaces') ? 'deployment-workspaces-error' : undefined}
      >
        <legend>Workspaces of this deployment</legend>
        {workspaceList.error ? <ErrorBanner error={workspaceList.error} /> : null}
        {!can('workspaces.list') ? (
          <p className="muted">
            This credential may not list workspaces; the deployment keeps its workspaces.
          </p>
        ) : null}
        {choices.map((w) => (
          <label className="row" key={w.id}>
            <input
              type="checkbox"
              checked={workspaces.some((x) => x.id === w.id)}
              onChange={(ev) =>
                setWorkspaces(
                  ev.target.checked
                    ? [...workspaces, { id: w.id, slug: w.slug }]
                    : workspaces.filter((x) => x.id !== w.id),
                )
              }
            />
            {w.name} <code className="muted">{w.slug}</code>
          </label>
        ))}
        {workspaces
          .filter((w) => !known.has(w.id) && choices.length)
          .map((w) => (
            <p key={w.id} className="muted">
              Also <code>{w.slug || w.id}</code> (not a live workspace).
            </p>
          ))}
        {e('workspaces') ? (
          <small id="deployment-workspaces-error" className="field-error" role="alert">
            {e('workspaces')}
          </small>
        ) : null}
      </fieldset>
      <fieldset className="org-fieldset">
        <legend>Credentials</legend>
        <p className="muted">
          {hasCredentials
            ? `Set for ${(d.credentials as { username?: string }).username ?? 'a user'}; the password is never shown.`
            : 'None set.'}
        </p>
        <Field label="Credentials change" error={credentialsError}>
          <select
            value={credentialMode}
            onChange={(ev) => setCredentialMode(ev.target.value as 'keep' | 'replace' | 'remove')}
          >
            <option value="keep">Keep as they are</option>
            <option value="replace">Replace</option>
            {hasCredentials ? <option value="remove">Remove</option> : null}
          </select>
        </Field>
        {credentialMode === 'replace' ? (
          <div className="org-form-grid">
            <Field label="Username" error={e('credentials.username')}>
              <input value={username} onChange={(ev) => setUsername(ev.target.value)} autoComplete="off" />
            </Field>
            <Field label="Password" error={e('credentials.password')}>
              <input
                type="password"
                value={password}
                onChange={(ev) => setPassword(ev.target.value)}
                autoComplete="new-password"
              />
            </Field>
          </div>
        ) : null}
      </fieldset>
      <FormError error={form.error} fields={FIELDS} />
      <FormActions busy={form.busy} submit="Save deployment" onCancel={() => onDone(false)} />
    </form>
  );
}
