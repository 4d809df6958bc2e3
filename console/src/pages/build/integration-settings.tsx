import { useId } from 'react';
import { useQuery } from '@tanstack/react-query';
import { get } from '../../api.ts';
import { Field } from '../../ui/form.tsx';

/**
 * The settings an integration holds, as the provider kind takes them (GET /v1/providers/details):
 * each provider shows only its own fields; secrets are write-only.
 */

export interface ProviderField {
  name: string;
  secret: boolean;
  description: string;
}
export interface Provider {
  id: string;
  name: string;
  integration_auth_types: string[];
  default_base_url: string | null;
  configurations: ProviderField[];
  priced_models: string[];
}

export function useProviders() {
  return useQuery({
    queryKey: ['providers'],
    queryFn: () => get<{ data: Provider[] }>('/v1/providers/details'),
    staleTime: Infinity,
  });
}

/** The words each setting is labelled with (the API's description is its hint). */
const LABELS: Record<string, string> = {
  key: 'Provider key',
  custom_host: 'Custom host',
  api_version: 'API version',
  resource_name: 'Azure resource name',
  deployment: 'Azure deployment',
  aws_region: 'AWS region',
  aws_access_key_id: 'AWS access key id',
  aws_secret_access_key: 'AWS secret access key',
  aws_session_token: 'AWS session token',
  provider_auth_type: 'Authentication',
  oauth_token_endpoint: 'OAuth token endpoint',
  oauth_client_id: 'OAuth client id',
  oauth_client_secret: 'OAuth client secret',
  oauth_scope: 'OAuth scope',
  wif_token_endpoint: 'Token exchange endpoint',
  wif_audience: 'Token exchange audience',
  wif_scope: 'Token exchange scope',
  azure_auth_mode: 'Azure auth mode',
  azure_entra_tenant_id: 'Entra tenant',
  azure_entra_client_id: 'Entra client id',
  azure_entra_client_secret: 'Entra client secret',
  azure_authority_host: 'Entra authority host',
};
export const settingLabel = (name: string) => LABELS[name] ?? name.replace(/_/g, ' ');

const AUTH_TYPE_WORDS: Record<string, string> = {
  apiKey: 'API key (sends the provider key)',
  oauthClientCredentials: 'OAuth client credentials (bearer token)',
  wif: 'Workload identity federation (bearer token)',
};

/** Settings shown with only one value of provider_auth_type / azure_auth_mode. */
function shown(name: string, values: Record<string, string>): boolean {
  const authType = values.provider_auth_type || 'apiKey';
  if (name.startsWith('oauth_')) return authType === 'oauthClientCredentials';
  if (name.startsWith('wif_')) return authType === 'wif';
  if (name.startsWith('azure_entra_') || name === 'azure_authority_host')
    return values.azure_auth_mode === 'entra';
  if (name === 'key') return authType === 'apiKey' && values.azure_auth_mode !== 'entra';
  return true;
}

/** The provider's fields other than headers (edited on their own), in the order the API lists them. */
export function visibleFields(provider: Provider | undefined, values: Record<string, string>) {
  return (provider?.configurations ?? []).filter((f) => f.name !== 'headers' && shown(f.name, values));
}

export interface HeaderRow {
  name: string;
  value: string;
}

export const headerMap = (rows: HeaderRow[]) =>
  Object.fromEntries(rows.filter((r) => r.name.trim()).map((r) => [r.name.trim(), r.value]));

/**
 * The `configurations` a create sends: each visible setting given. `key` is sent beside it
 * and is not part of it.
 */
export function createConfigurations(
  provider: Provider | undefined,
  values: Record<string, string>,
  headers: HeaderRow[],
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const f of visibleFields(provider, values)) {
    if (f.name === 'key') continue;
    const value = (values[f.name] ?? '').trim();
    if (value) out[f.name] = value;
  }
  const named = headerMap(headers);
  if (Object.keys(named).length) out.headers = named;
  return Object.keys(out).length ? out : undefined;
}

/**
 * The `configurations` an update sends, as changes to what is stored: a changed setting its
 * new value, a cleared one null; a blank secret is kept; a setting the chosen way of signing
 * in no longer takes is removed (null).
 */
export function updateConfigurations(
  provider: Provider | undefined,
  stored: Record<string, unknown>,
  values: Record<string, string>,
  headers: HeaderRow[] | null,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const visible = new Set(visibleFields(provider, values).map((f) => f.name));
  for (const f of provider?.configurations ?? []) {
    if (f.name === 'key' || f.name === 'headers') continue;
    const has = f.secret ? `masked_${f.name}` in stored : f.name in stored;
    const value = (values[f.name] ?? '').trim();
    if (!visible.has(f.name)) {
      if (has) out[f.name] = null;
    } else if (f.secret) {
      if (value) out[f.name] = value;
    } else if (value !== String(stored[f.name] ?? '')) {
      out[f.name] = value || null;
    }
  }
  if (headers) {
    const named = headerMap(headers);
    out.headers = Object.keys(named).length ? named : null;
  }
  return Object.keys(out).length ? out : undefined;
}

/** The values the form starts with for a stored integration: its plain settings (secrets stay blank). */
export function initialValues(stored: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored)) {
    if (name === 'headers' || name.startsWith('masked_')) continue;
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

export function SettingFields({
  provider,
  values,
  onChange,
  fieldError,
  stored,
}: {
  provider: Provider;
  values: Record<string, string>;
  onChange: (name: string, value: string) => void;
  fieldError: (name: string) => string | undefined;
  /** On edit: the stored settings (secrets under masked_<name>), and whether a key is stored. */
  stored?: { configurations: Record<string, unknown>; hasKey: boolean };
}) {
  return (
    <>
      {visibleFields(provider, values).map((f) => {
        const param = f.name === 'key' ? 'key' : `configurations.${f.name}`;
        const error = fieldError(param);
        const label = stored && f.name === 'key' ? 'Replace provider key' : settingLabel(f.name);
        if (f.name === 'provider_auth_type') {
          if (provider.integration_auth_types.length < 2) return null;
          return (
            <Field key={f.name} label={label} hint={f.description} error={error}>
              <select value={values[f.name] ?? ''} onChange={(e) => onChange(f.name, e.target.value)}>
                {provider.integration_auth_types.map((t) => (
                  <option key={t} value={t === 'apiKey' ? '' : t}>
                    {AUTH_TYPE_WORDS[t] ?? t}
                  </option>
                ))}
              </select>
            </Field>
          );
        }
        if (f.name === 'azure_auth_mode') {
          return (
            <Field
              key={f.name}
              label={label}
              hint="default: the provider key (or the authentication above); entra: a bearer token from Entra ID. A managed identity is not supported."
              error={error}
            >
              <select value={values[f.name] ?? ''} onChange={(e) => onChange(f.name, e.target.value)}>
                <option value="">default</option>
                <option value="entra">entra</option>
              </select>
            </Field>
          );
        }
        const kept =
          stored &&
          f.secret &&
          (f.name === 'key' ? stored.hasKey : `masked_${f.name}` in stored.configurations);
        const hint = f.secret
          ? `${f.description} Write-only: ${kept ? 'stored; leave blank to keep it.' : 'never shown again.'}`
          : f.description;
        return (
          <Field key={f.name} label={label} hint={hint} error={error}>
            <input
              type={f.secret ? 'password' : 'text'}
              value={values[f.name] ?? ''}
              onChange={(e) => onChange(f.name, e.target.value)}
              autoComplete={f.secret ? 'new-password' : 'off'}
              placeholder={kept ? 'leave blank to keep' : undefined}
            />
          </Field>
        );
      })}
    </>
  );
}

/** Named values (upstream headers, plugin credentials) as rows of name and value, each row removable. */
export function HeaderRows({
  legend,
  rows,
  onChange,
  secret,
  error,
  item = 'header',
}: {
  /** What one row is, in words ("header", "credential"). */
  item?: string;
  legend: string;
  rows: HeaderRow[];
  onChange: (rows: HeaderRow[]) => void;
  secret?: boolean;
  error?: string;
}) {
  const id = useId();
  const set = (i: number, patch: Partial<HeaderRow>) =>
    onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset
      className={`integration-headers${error ? ' field-invalid' : ''}`}
      aria-describedby={error ? `${id}-error` : undefined}
    >
      <legend>{legend}</legend>
      {rows.length === 0 ? <p className="muted">None.</p> : null}
      {rows.map((r, i) => (
        <div className="integration-header-row" key={i}>
          <label>
            <span className="visually-hidden">{`${legend} ${i + 1} name`}</span>
            <input
              value={r.name}
              placeholder={`${item[0]?.toUpperCase()}${item.slice(1)} name`}
              onChange={(e) => set(i, { name: e.target.value })}
              autoComplete="off"
            />
          </label>
          <label>
            <span className="visually-hidden">{`${legend} ${i + 1} value`}</span>
            <input
              type={secret ? 'password' : 'text'}
              value={r.value}
              placeholder="Value"
              onChange={(e) => set(i, { value: e.target.value })}
              autoComplete={secret ? 'new-password' : 'off'}
            />
          </label>
          <button type="button" onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            Remove<span className="visually-hidden">{` ${legend.toLowerCase()} ${i + 1}`}</span>
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, { name: '', value: '' }])}>
        Add a {item}
        <span className="visually-hidden">{` to ${legend.toLowerCase()}`}</span>
      </button>
      {error ? (
        <small id={`${id}-error`} className="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </fieldset>
  );
}

/** The cost multipliers an integration may apply to list prices (pricing_adjustments). */
export const MULTIPLIERS: [string, string][] = [
  ['default', 'Every token'],
  ['request_token', 'Input tokens'],
  ['response_token', 'Output tokens'],
  ['cache_read_input_token', 'Cached input tokens'],
  ['cache_write_input_token', 'Cache write tokens'],
  ['reasoning_token', 'Reasoning tokens'],
];

export interface PricingAdjustments {
  multiplier?: Record<string, number | null>;
}

export function multiplierValues(p: PricingAdjustments | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name] of MULTIPLIERS) {
    const v = p?.multiplier?.[name];
    if (typeof v === 'number') out[name] = String(v);
  }
  return out;
}

/** The body's pricing_adjustments: the multipliers given (numbers as typed; the API checks them), or null for none. */
export function pricingBody(values: Record<string, string>): PricingAdjustments | null {
  const multiplier: Record<string, number> = {};
  for (const [name] of MULTIPLIERS) {
    const text = (values[name] ?? '').trim();
    if (text) multiplier[name] = Number(text);
  }
  return Object.keys(multiplier).length ? { multiplier } : null;
}

export function PricingFields({
  values,
  onChange,
  fieldError,
}: {
  values: Record<string, string>;
  onChange: (name: string, value: string) => void;
  fieldError: (name: string) => string | undefined;
}) {
  return (
    <fieldset className="integration-pricing">
      <legend>Cost multipliers</legend>
      <p className="muted">
        Each multiplies the listed price when usage is costed (1 = list price, 0.8 = a 20% discount). Blank:
        the default multiplier, or the list price.
      </p>
      <div className="integration-pricing-grid">
        {MULTIPLIERS.map(([name, label]) => (
          <Field
            key={name}
            label={`${label} multiplier`}
            error={fieldError(`pricing_adjustments.multiplier.${name}`)}
          >
            <input
              type="number"
              inputMode="decimal"
              step="any"
              min={0}
              max={1000}
              value={values[name] ?? ''}
              onChange={(e) => onChange(name, e.target.value)}
            />
          </Field>
        ))}
      </div>
    </fieldset>
  );
}
