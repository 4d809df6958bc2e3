import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { errors, type Dispatcher } from 'undici';
import { ServiceUnavailable, UpstreamError, type Logger } from '@switchyard/core';
import { AZURE_TOKEN_AUTH_SETTINGS, customHostRefused, inspectCustomHost } from '@switchyard/rules';
import type { ProviderTarget } from '../providers/types.ts';
import { NonPublicAddress } from '@switchyard/rules';

/** The scope asked for when the integration names none: Azure OpenAI's. */
export const DEFAULT_TOKEN_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** The Entra authority asked when an `azure_auth_mode` entra integration names none. */
export const DEFAULT_AZURE_AUTHORITY_HOST = 'https://login.microsoftonline.com';

/** Where the kubelet projects the gateway's service-account token, unless WIF_TOKEN_FILE says otherwise. */
export const DEFAULT_WIF_TOKEN_FILE = '/var/run/secrets/switchyard/wif/token';

/** The most of a token endpoint's answer that is read: a token answer fits in far less. */
export const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** The most of the workload identity token file that is read. */
const MAX_WIF_TOKEN_BYTES = 64 * 1024;

/** How long a fetch may take, connection to last byte. */
const FETCH_TIMEOUT_MS = 10_000;

/** A token refreshes when less than this, or a tenth of its life, is left (whichever is smaller). */
const REFRESH_MARGIN_MS = 5 * 60_000;

/** The life of a token whose answer gives no `expires_in`. */
const DEFAULT_LIFETIME_MS = 5 * 60_000;

/** The longest life a token is kept for, whatever its answer says. */
const MAX_LIFETIME_MS = 24 * 60 * 60_000;

/** How many integrations' tokens are held at most; the oldest is dropped first. */
const MAX_ENTRIES = 10_000;

/**
 * Whether the integration sends a bearer token: its `provider_auth_type` is one that does
 * (`apiKey`, the default, sends the key), or its `azure_auth_mode` is `entra`.
 */
export function usesBearerToken(target: ProviderTarget): boolean {
  const type = target.settings.provider_auth_type;
  return type === 'oauthClientCredentials' || type === 'wif' || target.settings.azure_auth_mode === 'entra';
}

export interface ProviderTokenSource {
  /** The bearer token the target is sent with: fetched, or reused while it has life left. */
  token(target: ProviderTarget): Promise<string>;
  /** Drops the target's token, so that the next request fetches anew (the provider refused it). */
  forget(target: ProviderTarget): void;
}

export interface ProviderTokenOptions {
  /** Connections to trusted hosts. */
  dispatcher: Dispatcher;
  /** Connections to every other host: they connect only to public addresses. */
  customHostDispatcher: Dispatcher;
  /** TRUSTED_CUSTOM_HOSTS. */
  trustedHosts: readonly string[];
  /** WIF_TOKEN_FILE: the gateway's own projected service-account token, read at each exchange. */
  wifTokenFile: string;
  logger?: Logger;
  /** The clock tokens' lives are counted by. */
  now?: () => number;
  fetchTimeoutMs?: number;
}

interface CachedToken {
  fingerprint: string;
  token: string;
  refreshAt: number;
  /** Past this the token is no longer sent, even while a refresh fails. */
  expiresAt: number;
}

/** One token request: where it goes and what it sends. */
interface TokenRequest {
  endpoint: string;
  /** The setting that names the endpoint, for refusals. */
  endpointParam: string;
  form: () => Promise<URLSearchParams>;
}

/**
 * Bearer tokens for integrations that authenticate upstream with one instead of a key:
 * `oauthClientCredentials` (RFC 6749 client credentials grant, client_secret_post), `azure_auth_mode`
 * entra (the same grant at the tenant's Entra token endpoint) and `wif` (an RFC 8693 token
 * exchange of the gateway's own workload identity token). A token is kept
 * per integration and settings, so a changed secret fetches anew; it is refreshed before it
 * expires, and concurrent requests share one fetch. A failed fetch is not kept: the next
 * request tries again. The token endpoint is a tenant's URL: it passes the unsafe-host check
 * as custom hosts do. Neither secrets nor tokens are logged or put in errors.
 */
export class ProviderTokens implements ProviderTokenSource {
  private readonly cached = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();
  private readonly now: () => number;
  private readonly fetchTimeoutMs: number;

  constructor(private readonly options: ProviderTokenOptions) {
    this.now = options.now ?? Date.now;
    this.fetchTimeoutMs = options.fetchTimeoutMs ?? FETCH_TIMEOUT_MS;
  }

  async token(target: ProviderTarget): Promise<string> {
    const fingerprint = fingerprintOf(target.settings);
    const key = keyOf(target, fingerprint);
    const held = this.cached.get(key);
    if (held && held.fingerprint === fingerprint && this.now() < held.refreshAt) return held.token;
    const flightKey = `${key}|${fingerprint}`;
    let flight = this.inFlight.get(flightKey);
    if (!flight) {
      flight = this.fetch(target, fingerprint)
        .then((fetched) => {
          // Re-inserted, so that the map's first entry is the one used longest ago.
          this.cached.delete(key);
          this.cached.set(key, fetched);
          if (this.cached.size > MAX_ENTRIES) this.cached.delete(this.cached.keys().next().value!);
          return fetched;
        })
        .finally(() => this.inFlight.delete(flightKey));
      this.inFlight.set(flightKey, flight);
    }
    try {
      return (await flight).token;
    } catch (err) {
      // A refresh that fails while the token held is still valid keeps serving that one.
      if (held && held.fingerprint === fingerprint && this.now() < held.expiresAt) {
        this.options.logger?.warn('provider token refresh failed; the token held is used until it expires', {
          provider: target.provider,
          integration: target.integrationSlug ?? '',
          error: err instanceof Error ? err.message : String(err),
        });
        return held.token;
      }
      throw err;
    }
  }

  forget(target: ProviderTarget): void {
    this.cached.delete(keyOf(target, fingerprintOf(target.settings)));
  }

  /** The request of the target's auth type, from its settings (admin checked they are complete). */
  private requestOf(target: ProviderTarget): TokenRequest {
    const { settings } = target;
    if (settings.provider_auth_type === 'wif') {
      return {
        endpoint: settings.wif_token_endpoint ?? '',
        endpointParam: 'wif_token_endpoint',
        form: async () =>
          new URLSearchParams({
            grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
            subject_token: await this.workloadIdentityToken(),
            subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
            requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
            audience: settings.wif_audience ?? '',
            scope: settings.wif_scope || DEFAULT_TOKEN_SCOPE,
          }),
      };
    }
    if (settings.azure_auth_mode === 'entra') {
      const authority = (settings.azure_authority_host || DEFAULT_AZURE_AUTHORITY_HOST).replace(/\/+$/, '');
      return clientCredentials(
        `${authority}/${encodeURIComponent(settings.azure_entra_tenant_id ?? '')}/oauth2/v2.0/token`,
        'azure_authority_host',
        settings.azure_entra_client_id,
        settings.azure_entra_client_secret,
        DEFAULT_TOKEN_SCOPE,
      );
    }
    return clientCredentials(
      settings.oauth_token_endpoint ?? '',
      'oauth_token_endpoint',
      settings.oauth_client_id,
      settings.oauth_client_secret,
      // Azure's scope is the default for the provider the spec gives this auth type; an MCP
      // server's token endpoint is asked for the scope its integration names, or none.
      settings.oauth_scope || (target.provider === 'mcp' ? '' : DEFAULT_TOKEN_SCOPE),
    );
  }

  /** Read anew at each exchange: the kubelet rotates the file. */
  private async workloadIdentityToken(): Promise<string> {
    let token = '';
    try {
      const content = await readFile(this.options.wifTokenFile);
      if (content.length <= MAX_WIF_TOKEN_BYTES) token = content.toString('utf8').trim();
    } catch (err) {
      this.options.logger?.warn('workload identity token not readable', {
        file: this.options.wifTokenFile,
        reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message,
      });
    }
    if (!token) {
      throw new ServiceUnavailable(
        "The gateway's workload identity token is not readable, so the integration's wif token exchange cannot be made.",
        { code: 'workload_identity_token_unreadable' },
      );
    }
    return token;
  }

  private async fetch(target: ProviderTarget, fingerprint: string): Promise<CachedToken> {
    const { provider } = target;
    const slug = target.integrationSlug ?? '';
    const request = this.requestOf(target);
    const inspected = inspectCustomHost(request.endpoint, this.options.trustedHosts);
    if (inspected.refused !== undefined) {
      throw customHostRefused(
        `${inspected.refused} (the ${request.endpointParam} of integration '${slug}')`,
        request.endpointParam,
      );
    }
    const form = await request.form();
    const { url } = inspected;
    const dispatcher = inspected.trusted ? this.options.dispatcher : this.options.customHostDispatcher;
    const startedAt = this.now();
    const signal = AbortSignal.timeout(this.fetchTimeoutMs);
    let status: number;
    let text: string;
    try {
      const response = await dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal,
        headersTimeout: this.fetchTimeoutMs,
        bodyTimeout: this.fetchTimeoutMs,
      });
      status = response.statusCode;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_TOKEN_ANSWER_BYTES) {
          response.body.destroy();
          throw invalidAnswer(provider, `more than ${MAX_TOKEN_ANSWER_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      if (err instanceof UpstreamError) throw err;
      if (err instanceof NonPublicAddress) {
        throw customHostRefused(
          `${err.message} (the ${request.endpointParam} of integration '${slug}')`,
          request.endpointParam,
        );
      }
      if (
        signal.aborted ||
        err instanceof errors.HeadersTimeoutError ||
        err instanceof errors.BodyTimeoutError
      ) {
        throw new UpstreamError(
          504,
          `${provider}: the provider's token endpoint did not answer within ${this.fetchTimeoutMs} ms.`,
          { code: 'provider_token_timeout' },
        );
      }
      throw new UpstreamError(
        502,
        `${provider}: could not reach the provider's token endpoint (${(err as Error).message}).`,
        { code: 'provider_token_unreachable' },
      );
    }
    const answer = parseObject(text);
    if (status >= 300) {
      // Only the RFC 6749 error code is repeated: a description may quote what was sent.
      const code =
        typeof answer?.error === 'string' && /^[\w.:-]{1,64}$/.test(answer.error) ? answer.error : '';
      this.options.logger?.warn('provider token endpoint refused', {
        provider,
        integration: slug,
        status,
        error: code,
      });
      throw new UpstreamError(
        502,
        `${provider}: the provider's token endpoint refused the request (HTTP ${status}${code ? `, ${code}` : ''}).`,
        { code: 'provider_token_refused' },
      );
    }
    const token = answer?.access_token;
    if (typeof token !== 'string' || !/^[\x21-\x7e]{1,16384}$/.test(token))
      throw invalidAnswer(provider, 'no access_token');
    const type = answer?.token_type;
    if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer'))
      throw invalidAnswer(provider, 'a token_type other than Bearer');
    const lifetime = lifetimeOf(answer?.expires_in);
    if (lifetime === undefined) throw invalidAnswer(provider, 'an expires_in that is not a positive number');
    const margin = Math.min(REFRESH_MARGIN_MS, lifetime / 10);
    return { fingerprint, token, refreshAt: startedAt + lifetime - margin, expiresAt: startedAt + lifetime };
  }
}

/** The client credentials grant (RFC 6749, section 4.4), the secret sent in the form (client_secret_post). */
function clientCredentials(
  endpoint: string,
  endpointParam: string,
  clientId: string | undefined,
  clientSecret: string | undefined,
  scope: string,
): TokenRequest {
  return {
    endpoint,
    endpointParam,
    form: async () =>
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId ?? '',
        client_secret: clientSecret ?? '',
        ...(scope ? { scope } : {}),
      }),
  };
}

function invalidAnswer(provider: string, what: string): UpstreamError {
  return new UpstreamError(
    502,
    `${provider}: the provider's token endpoint answered with ${what}; no token could be had.`,
    { code: 'provider_token_invalid' },
  );
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `expires_in` in seconds (a number, or a string of digits as some servers send); none: the default. */
function lifetimeOf(expiresIn: unknown): number | undefined {
  if (expiresIn === undefined) return DEFAULT_LIFETIME_MS;
  const seconds =
    typeof expiresIn === 'string' && /^\d{1,9}$/.test(expiresIn) ? Number(expiresIn) : expiresIn;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return undefined;
  return Math.min(seconds * 1000, MAX_LIFETIME_MS);
}

/** The integration's id; without one (a target not from a saved integration), its settings. */
function keyOf(target: ProviderTarget, fingerprint: string): string {
  return target.integrationId ?? `${target.integrationSlug ?? ''}|${fingerprint}`;
}

/** The settings a token depends on, hashed: the secret itself is not kept as a key. */
function fingerprintOf(settings: Record<string, string>): string {
  return createHash('sha256')
    .update(JSON.stringify(AZURE_TOKEN_AUTH_SETTINGS.map((name) => settings[name] ?? null)))
    .digest('base64url');
}
