import type { KeyObject } from 'node:crypto';
import { type AppError, UnprocessableEntity, UpstreamError } from '@switchyard/core';
import { checkCustomHost, systemResolver, type Resolver } from '@switchyard/rules';
import { JwksKeySet } from '@switchyard/access';
import type { IdTokenClaims, IdpEndpoints, OidcProvider, CodeExchange } from '../domain/oidc-provider.ts';
import { clientAssertion } from './client-assertion.ts';
import { verifyIdToken } from './id-token.ts';

export interface OidcClientOptions {
  /** Hosts (subdomains included) reachable even on non-public addresses: TRUSTED_CUSTOM_HOSTS. */
  trustedHosts: readonly string[];
  /** Per outbound request. */
  timeoutMs: number;
  resolve?: Resolver;
  /** How long a discovery document and a key set are used before they are fetched again. */
  cacheMs?: number;
}

const MAX_RESPONSE_BYTES = 1 << 20;

/** The identity provider failed or answered what a login cannot use: a 502 naming it. */
function idpFailed(message: string, code = 'sso_idp_error'): AppError {
  return new UpstreamError(502, message, { code });
}

/**
 * The OpenID Connect relying party: discovery, the authorization code exchange and the
 * provider's signing keys. Every URL it calls is the connection's (an organisation admin set
 * the issuer; the endpoints come from the issuer's discovery document), so each passes the
 * unsafe-host check first: no private, loopback or metadata address unless the host is trusted.
 * Every call has a timeout, follows no redirect and reads at most 1 MB.
 */
export class OidcClient implements OidcProvider {
  private readonly discovered = new Map<string, { at: number; endpoints: IdpEndpoints }>();
  private readonly keySets = new Map<string, JwksKeySet>();
  private readonly resolve: Resolver;
  private readonly cacheMs: number;

  constructor(private readonly options: OidcClientOptions) {
    this.resolve = options.resolve ?? systemResolver;
    this.cacheMs = options.cacheMs ?? 600_000;
  }

  /** The issuer's endpoints (`/.well-known/openid-configuration`), whose `issuer` must be the issuer. */
  async discover(issuer: string): Promise<IdpEndpoints> {
    const cached = this.discovered.get(issuer);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.endpoints;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const document = await this.getJson(url, 'discovery document');
    const field = (name: string) => {
      const value = document[name];
      if (typeof value !== 'string' || !/^https?:\/\//.test(value))
        throw idpFailed(`The identity provider's discovery document has no valid ${name}.`);
      return value;
    };
    if (document.issuer !== issuer)
      throw idpFailed("The identity provider's discovery document names another issuer.");
    const endpoints: IdpEndpoints = {
      issuer,
      authorizationEndpoint: field('authorization_endpoint'),
      tokenEndpoint: field('token_endpoint'),
      jwksUri: field('jwks_uri'),
    };
    await this.check(endpoints.authorizationEndpoint);
    this.discovered.set(issuer, { at: Date.now(), endpoints });
    return endpoints;
  }

  /** Exchanges an authorization code (with its PKCE verifier) for the id_token. */
  async exchangeCode(endpoints: IdpEndpoints, request: CodeExchange): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: request.code,
      redirect_uri: request.redirectUri,
      code_verifier: request.codeVerifier,
    });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    const { auth, clientId } = request;
    switch (auth.method) {
      case 'client_secret_basic': {
        // RFC 6749 2.3.1: both parts form-encoded before base64.
        const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
        headers.authorization = `Basic ${Buffer.from(`${encode(clientId)}:${encode(auth.clientSecret)}`).toString('base64')}`;
        break;
      }
      case 'client_secret_post':
        form.set('client_id', clientId);
        form.set('client_secret', auth.clientSecret);
        break;
      case 'private_key_jwt':
        form.set('client_id', clientId);
        form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
        form.set(
          'client_assertion',
          await clientAssertion(auth.privateJwk, auth.kid, clientId, endpoints.tokenEndpoint),
        );
        break;
      case 'none':
        form.set('client_id', clientId);
        break;
    }
    await this.check(endpoints.tokenEndpoint);
    const res = await this.send(
      endpoints.tokenEndpoint,
      { method: 'POST', headers, body: form.toString() },
      'token endpoint',
    );
    const body = await this.readJson(res, 'token endpoint');
    if (!res.ok) {
      const error = typeof body.error === 'string' ? body.error.slice(0, 100) : `status ${res.status}`;
      throw idpFailed(
        `The identity provider refused the authorization code (${error}).`,
        'sso_token_exchange_failed',
      );
    }
    if (typeof body.id_token !== 'string')
      throw idpFailed('The identity provider answered without an id_token.', 'sso_token_exchange_failed');
    return body.id_token;
  }

  /** Checks an id_token (see verifyIdToken) with the provider's signing keys. */
  verifyIdToken(
    endpoints: IdpEndpoints,
    idToken: string,
    expected: { issuer: string; clientId: string; nonce: string },
  ): Promise<IdTokenClaims> {
    return verifyIdToken(idToken, expected, (kid) => this.signingKey(endpoints, kid));
  }

  /** The provider's signing key a token's header names, from its JWKS (cached, refetched for a new kid). */
  signingKey(endpoints: IdpEndpoints, kid: string | undefined): Promise<KeyObject | undefined> {
    let keys = this.keySets.get(endpoints.jwksUri);
    if (!keys) {
      keys = new JwksKeySet([endpoints.jwksUri], {
        ttlMs: this.cacheMs,
        timeoutMs: this.options.timeoutMs,
        fetchJson: async (url) => {
          await this.check(url);
          return this.getJson(url, 'key set');
        },
      });
      this.keySets.set(endpoints.jwksUri, keys);
    }
    return keys.key(kid);
  }

  private async check(url: string): Promise<void> {
    try {
      await checkCustomHost(url, {
        trusted: this.options.trustedHosts,
        resolve: this.resolve,
        param: 'issuer',
      });
    } catch (err) {
      const why = err instanceof Error ? err.message.replace(/^Custom host refused: /, '') : 'refused';
      throw new UnprocessableEntity(`The SSO connection's identity provider is refused: ${why}`, {
        code: 'sso_idp_refused',
      });
    }
  }

  private async getJson(url: string, what: string): Promise<Record<string, unknown>> {
    await this.check(url);
    const res = await this.send(url, { headers: { accept: 'application/json' } }, what);
    if (!res.ok) throw idpFailed(`The identity provider's ${what} answered ${res.status}.`);
    return this.readJson(res, what);
  }

  private async send(url: string, init: RequestInit, what: string): Promise<Response> {
    try {
      return await fetch(url, {
        ...init,
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw idpFailed(
        timedOut
          ? `The identity provider's ${what} did not answer within ${this.options.timeoutMs} ms.`
          : `The identity provider's ${what} could not be reached.`,
      );
    }
  }

  private async readJson(res: Response, what: string): Promise<Record<string, unknown>> {
    const text = await res.text().catch(() => '');
    if (text.length > MAX_RESPONSE_BYTES)
      throw idpFailed(`The identity provider's ${what} answered more than 1 MB.`);
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === 'object' && !Array.isArray(value))
        return value as Record<string, unknown>;
    } catch {
      // Falls through: not JSON.
    }
    throw idpFailed(`The identity provider's ${what} did not answer a JSON object.`);
  }
}
