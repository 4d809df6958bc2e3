import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { checkCustomHost, systemResolver, type Resolver } from '@switchyard/rules';
import {
  unresolved,
  type FetchedSecret,
  type ReferenceToFetch,
  type SecretFetcher,
} from '../domain/secret-reference.fetcher.ts';
import type {
  AuthConfig,
  AwsAccessKeyAuth,
  AzureEntraAuth,
  VaultAppRoleAuth,
  VaultTokenAuth,
} from '../domain/secret-reference.schemas.ts';

export interface SecretManagersOptions {
  /** Hosts (subdomains included) reachable even on non-public addresses: TRUSTED_CUSTOM_HOSTS. */
  trusted: readonly string[];
  resolve?: Resolver;
  /** The deadline of each call to a manager (a login and a read are two calls). */
  timeoutMs?: number;
}

/** A manager answers at most this much: the largest secret any of them keeps is far smaller. */
export const MAX_MANAGER_RESPONSE_BYTES = 256 * 1024;

const AZURE_AUTHORITY = 'https://login.microsoftonline.com';
const AZURE_KEY_VAULT_SCOPE = 'https://vault.azure.net/.default';
const AZURE_API_VERSION = '7.4';

/**
 * Fetches secrets from the managers secret references name: AWS Secrets Manager
 * (GetSecretValue, signed with SigV4), HashiCorp Vault (KV v2, with a token or an AppRole
 * login) and Azure Key Vault (with an Entra client-credentials token). The tenant chose every
 * address, so each passes the unsafe-host check before each call. Every call has a deadline,
 * follows no redirect and reads a bounded answer; no value and no credential ever appears in a
 * message.
 */
export class SecretManagers implements SecretFetcher {
  private readonly resolve: Resolver;
  private readonly timeoutMs: number;

  constructor(private readonly options: SecretManagersOptions) {
    this.resolve = options.resolve ?? systemResolver;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /**
   * The manager addresses an auth config names, each checked as a custom host is: refused
   * with a 400 naming the field.
   */
  async checkAddresses(authConfig: AuthConfig): Promise<void> {
    for (const [field, url] of Object.entries(addressesOf(authConfig))) {
      await checkCustomHost(url, { trusted: this.options.trusted, resolve: this.resolve, param: field });
    }
  }

  async fetch(reference: ReferenceToFetch): Promise<FetchedSecret> {
    const config = reference.authConfig;
    if ('aws_auth_type' in config && config.aws_auth_type === 'accessKey')
      return this.fetchAws(reference, config);
    if (
      'vault_auth_type' in config &&
      (config.vault_auth_type === 'token' || config.vault_auth_type === 'approle')
    )
      return this.fetchVault(reference, config);
    if ('azure_auth_mode' in config && config.azure_auth_mode === 'entra')
      return this.fetchAzure(reference, config);
    throw unresolved(
      reference.slug,
      'its auth config needs the cloud identity of the host, which is not supported.',
    );
  }

  /** `secretsmanager.GetSecretValue`, signed with SigV4 for service `secretsmanager`. */
  private async fetchAws(reference: ReferenceToFetch, config: AwsAccessKeyAuth): Promise<FetchedSecret> {
    const url = new URL(config.aws_endpoint ?? `https://secretsmanager.${config.aws_region}.amazonaws.com/`);
    const body = JSON.stringify({ SecretId: reference.secretPath });
    const signer = new SignatureV4({
      service: 'secretsmanager',
      region: config.aws_region,
      credentials: {
        accessKeyId: config.aws_access_key_id,
        secretAccessKey: config.aws_secret_access_key,
        ...(config.aws_session_token ? { sessionToken: config.aws_session_token } : {}),
      },
      sha256: Sha256,
      applyChecksum: false,
    });
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': 'secretsmanager.GetSecretValue',
      },
      body,
    });
    const answer = await this.call(reference, 'AWS Secrets Manager', url.href, {
      method: 'POST',
      headers: signed.headers,
      body,
    });
    if (!answer.ok) {
      const type = typeof answer.json?.__type === 'string' ? answer.json.__type.split('#').pop() : undefined;
      throw unresolved(
        reference.slug,
        `AWS Secrets Manager answered ${answer.status}${type ? ` (${brief(type)})` : ''}.`,
      );
    }
    if (typeof answer.json?.SecretString === 'string') return answer.json.SecretString;
    if (typeof answer.json?.SecretBinary === 'string')
      return Buffer.from(answer.json.SecretBinary, 'base64').toString('utf8');
    throw unresolved(reference.slug, 'AWS Secrets Manager answered no SecretString.');
  }

  /** KV v2: `GET /v1/<mount>/data/<path>` with a token, or the token of an AppRole login. */
  private async fetchVault(
    reference: ReferenceToFetch,
    config: VaultTokenAuth | VaultAppRoleAuth,
  ): Promise<FetchedSecret> {
    const base = config.vault_addr.replace(/\/+$/, '');
    const namespace: Record<string, string> = config.vault_namespace
      ? { 'x-vault-namespace': config.vault_namespace }
      : {};
    let token: string;
    if (config.vault_auth_type === 'token') {
      token = config.vault_token;
    } else {
      const login = await this.call(reference, 'Vault AppRole login', `${base}/v1/auth/approle/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...namespace },
        body: JSON.stringify({ role_id: config.vault_role_id, secret_id: config.vault_secret_id }),
      });
      const auth = login.json?.auth as { client_token?: unknown } | undefined;
      if (!login.ok || typeof auth?.client_token !== 'string')
        throw unresolved(
          reference.slug,
          `the Vault AppRole login answered ${login.status}${vaultErrors(login.json)}.`,
        );
      token = auth.client_token;
    }
    const [mount, ...rest] = reference.secretPath.split('/').filter(Boolean);
    if (!mount || rest.length === 0)
      throw unresolved(reference.slug, "its secret_path must be '<mount>/<path>' for Vault KV v2.");
    const path = [mount, 'data', ...rest].map(encodeURIComponent).join('/');
    const read = await this.call(reference, 'Vault', `${base}/v1/${path}`, {
      headers: { 'x-vault-token': token, ...namespace },
    });
    if (!read.ok) throw unresolved(reference.slug, `Vault answered ${read.status}${vaultErrors(read.json)}.`);
    const data = (read.json?.data as { data?: unknown } | undefined)?.data;
    if (!data || typeof data !== 'object' || Array.isArray(data))
      throw unresolved(reference.slug, 'Vault answered no KV v2 secret data.');
    return data as Record<string, unknown>;
  }

  /** `GET {vault}/secrets/{name}[/{version}]`, with a token from Entra's client-credentials grant. */
  private async fetchAzure(reference: ReferenceToFetch, config: AzureEntraAuth): Promise<FetchedSecret> {
    const authority = (config.azure_authority_host ?? AZURE_AUTHORITY).replace(/\/+$/, '');
    const tokenUrl = `${authority}/${encodeURIComponent(config.azure_entra_tenant_id)}/oauth2/v2.0/token`;
    const grant = await this.call(reference, 'the Entra token endpoint', tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: config.azure_entra_client_id,
        client_secret: config.azure_entra_client_secret,
        scope: AZURE_KEY_VAULT_SCOPE,
      }).toString(),
    });
    if (!grant.ok || typeof grant.json?.access_token !== 'string') {
      const error = typeof grant.json?.error === 'string' ? ` (${brief(grant.json.error)})` : '';
      throw unresolved(reference.slug, `the Entra token endpoint answered ${grant.status}${error}.`);
    }
    const name = reference.secretPath.split('/').filter(Boolean).map(encodeURIComponent).join('/');
    const url = `${config.azure_vault_url.replace(/\/+$/, '')}/secrets/${name}?api-version=${AZURE_API_VERSION}`;
    const read = await this.call(reference, 'Azure Key Vault', url, {
      headers: { authorization: `Bearer ${grant.json.access_token}` },
    });
    if (!read.ok) {
      const error = (read.json?.error as { code?: unknown } | undefined)?.code;
      throw unresolved(
        reference.slug,
        `Azure Key Vault answered ${read.status}${typeof error === 'string' ? ` (${brief(error)})` : ''}.`,
      );
    }
    if (typeof read.json?.value !== 'string')
      throw unresolved(reference.slug, 'Azure Key Vault answered no value.');
    return read.json.value;
  }

  /**
   * One call to a manager: its address checked first, a deadline, no redirect, at most
   * MAX_MANAGER_RESPONSE_BYTES read. The answer's JSON object, if it is one.
   */
  private async call(
    reference: ReferenceToFetch,
    what: string,
    url: string,
    init: RequestInit,
  ): Promise<{ ok: boolean; status: number; json: Record<string, unknown> | undefined }> {
    try {
      await checkCustomHost(url, { trusted: this.options.trusted, resolve: this.resolve, param: 'url' });
    } catch (err) {
      const why = err instanceof Error ? err.message.replace(/^Custom host refused: /, '') : 'refused';
      throw unresolved(reference.slug, `the address of ${what} is refused: ${why}`);
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, { ...init, redirect: 'error', signal });
    } catch {
      throw unresolved(
        reference.slug,
        signal.aborted
          ? `${what} did not answer within ${this.timeoutMs} ms.`
          : `${what} could not be reached.`,
      );
    }
    let text: string;
    try {
      text = await readBounded(res, MAX_MANAGER_RESPONSE_BYTES);
    } catch (err) {
      throw unresolved(
        reference.slug,
        err instanceof TooLarge
          ? `${what} answered more than ${MAX_MANAGER_RESPONSE_BYTES} bytes.`
          : signal.aborted
            ? `${what} did not answer within ${this.timeoutMs} ms.`
            : `${what} broke off its answer.`,
      );
    }
    let json: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value))
        json = value as Record<string, unknown>;
    } catch {
      // Not JSON: told by the caller from what it lacks.
    }
    return { ok: res.ok, status: res.status, json };
  }
}

/** The manager addresses an auth config names, by field. */
function addressesOf(config: AuthConfig): Record<string, string> {
  const addresses: Record<string, string> = {};
  if ('vault_addr' in config) addresses['auth_config.vault_addr'] = config.vault_addr;
  if ('azure_vault_url' in config) addresses['auth_config.azure_vault_url'] = config.azure_vault_url;
  if ('azure_authority_host' in config && config.azure_authority_host)
    addresses['auth_config.azure_authority_host'] = config.azure_authority_host;
  if ('aws_endpoint' in config && config.aws_endpoint)
    addresses['auth_config.aws_endpoint'] = config.aws_endpoint;
  return addresses;
}

/** A manager's own words, short and printable only. */
function brief(text: string): string {
  return text.replace(/[^\w .:,'()/-]/g, '').slice(0, 120);
}

/** Vault's `errors` list, short. */
function vaultErrors(json: Record<string, unknown> | undefined): string {
  const errors = json?.errors;
  if (!Array.isArray(errors) || typeof errors[0] !== 'string' || !errors[0]) return '';
  return ` (${brief(errors[0])})`;
}

class TooLarge extends Error {}

/** The body as text, refused past `limit` bytes without reading further. */
async function readBounded(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new TooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
