import { randomToken, safeEqual, sha256Hex } from '@switchyard/core';
import type { OAuthClient, OAuthRepository, TokenEndpointAuthMethod } from '../store/oauth.repository.ts';
import {
  MAX_REDIRECT_URIS,
  OAuthError,
  OAUTH_SCOPES,
  redirectUriProblem,
  scopeList,
  type OAuthOptions,
} from './oauth.ts';

export interface RegisterClientInput {
  redirect_uris?: unknown;
  client_name?: unknown;
  token_endpoint_auth_method?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  scope?: unknown;
}

/** How a client authenticated at an endpoint: Basic, in the body, or not at all (a public client). */
export interface ClientCredentials {
  clientId: string | undefined;
  clientSecret: string | undefined;
  via: 'basic' | 'post' | 'none';
}

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'none',
  'client_secret_post',
  'client_secret_basic',
];
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

const invalidClient = (description = 'Client authentication failed.', basic = false) =>
  new OAuthError('invalid_client', description, 401, {
    ...(basic ? { headers: { 'www-authenticate': 'Basic realm="oauth"' } } : {}),
  });

function metadataError(param: string, description: string, error = 'invalid_client_metadata'): OAuthError {
  return new OAuthError(error, `${param}: ${description}`, 400, { param });
}

function stringList(value: unknown, param: string, fallback: string[]): string[] {
  if (value === undefined || value === null) return fallback;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw metadataError(param, 'must be an array of strings');
  }
  return [...new Set(value as string[])];
}

/**
 * OAuth clients: the authorization server's metadata, RFC 7591 dynamic registration, and
 * authenticating a client at the protocol endpoints by the method it registered.
 */
export class OAuthClientService {
  constructor(
    private readonly repo: OAuthRepository,
    private readonly options: OAuthOptions,
  ) {}

  /** RFC 8414 metadata; the issuer is OAUTH_ISSUER, else the origin the request came to. */
  metadata(requestOrigin: string) {
    const issuer = this.options.settings.OAUTH_ISSUER ?? requestOrigin;
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      response_types_supported: ['code'],
      grant_types_supported: GRANT_TYPES,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: AUTH_METHODS,
      revocation_endpoint_auth_methods_supported: AUTH_METHODS,
      introspection_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: OAUTH_SCOPES,
    };
  }

  /** RFC 7591 registration. A confidential client's secret is in the result only; its hash is stored. */
  async registerClient(input: RegisterClientInput): Promise<{ client: OAuthClient; clientSecret?: string }> {
    const redirectUris = input.redirect_uris;
    if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
      throw metadataError('redirect_uris', 'must be an array of 1 to 10 URIs', 'invalid_redirect_uri');
    }
    if (redirectUris.length > MAX_REDIRECT_URIS) {
      throw metadataError(
        'redirect_uris',
        `must hold at most ${MAX_REDIRECT_URIS} URIs`,
        'invalid_redirect_uri',
      );
    }
    redirectUris.forEach((uri: unknown, i) => {
      const param = `redirect_uris[${i}]`;
      if (typeof uri !== 'string') throw metadataError(param, 'must be a string', 'invalid_redirect_uri');
      const problem = redirectUriProblem(uri, this.options.settings.OAUTH_REDIRECT_URI_ALLOWLIST);
      if (problem) throw metadataError(param, problem, 'invalid_redirect_uri');
    });
    const name = input.client_name;
    if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 200)) {
      throw metadataError('client_name', 'must be a string of at most 200 characters');
    }
    const method = input.token_endpoint_auth_method ?? 'none';
    if (!AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
      throw metadataError('token_endpoint_auth_method', `must be one of ${AUTH_METHODS.join(', ')}`);
    }
    const grantTypes = stringList(input.grant_types, 'grant_types', ['authorization_code']);
    if (!grantTypes.includes('authorization_code') || grantTypes.some((g) => !GRANT_TYPES.includes(g))) {
      throw metadataError('grant_types', 'must include authorization_code, and may add refresh_token');
    }
    const responseTypes = stringList(input.response_types, 'response_types', ['code']);
    if (responseTypes.length !== 1 || responseTypes[0] !== 'code') {
      throw metadataError('response_types', 'must be ["code"]');
    }
    let scope: string | null = null;
    if (input.scope !== undefined && input.scope !== null) {
      if (typeof input.scope !== 'string' || input.scope.length > 4096) {
        throw metadataError('scope', 'must be a space-separated string of scopes');
      }
      const scopes = scopeList(input.scope);
      const unknown = scopes.find((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
      if (unknown) throw metadataError('scope', `'${unknown}' is not a scope an OAuth token can carry`);
      scope = scopes.join(' ') || null;
    }
    const confidential = method !== 'none';
    const clientSecret = confidential ? `${this.options.prefix}ocs-${randomToken(32)}` : undefined;
    const client = await this.repo.insertClient({
      clientId: `client-${randomToken(16)}`,
      clientSecretHash: clientSecret ? sha256Hex(clientSecret) : null,
      clientName: typeof name === 'string' && name.length > 0 ? name : null,
      redirectUris: [...new Set(redirectUris as string[])],
      tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
      grantTypes,
      responseTypes,
      scope,
    });
    return clientSecret ? { client, clientSecret } : { client };
  }

  /** The client, authenticated by the method it registered; a public client by its id alone. */
  async authenticateClient(credentials: ClientCredentials): Promise<OAuthClient> {
    const basic = credentials.via === 'basic';
    if (!credentials.clientId) throw invalidClient('client_id is required.', basic);
    const client = await this.repo.findClient(credentials.clientId);
    if (!client) throw invalidClient('Unknown client.', basic);
    const method = client.tokenEndpointAuthMethod;
    if (method === 'none') {
      if (credentials.clientSecret !== undefined) {
        throw invalidClient('This is a public client: it has no secret to present.', basic);
      }
      return client;
    }
    const expected = method === 'client_secret_basic' ? 'basic' : 'post';
    if (credentials.via !== expected || credentials.clientSecret === undefined) {
      throw invalidClient(`This client authenticates with ${method}.`, basic);
    }
    if (
      !client.clientSecretHash ||
      !safeEqual(sha256Hex(credentials.clientSecret), client.clientSecretHash)
    ) {
      throw invalidClient('Client authentication failed.', basic);
    }
    return client;
  }
}
