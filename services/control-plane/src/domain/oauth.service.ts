import { randomUUID } from 'node:crypto';
import {
  BadRequest,
  DATA_PLANE_SCOPES,
  Forbidden,
  NotFound,
  isScope,
  kindCanHold,
  publishChange,
  randomToken,
  safeEqual,
  sha256Hex,
  type EventBus,
  type Principal,
} from '@switchyard/platform';
import { events } from '@switchyard/proto';
import type {
  Grantor,
  OAuthClient,
  OAuthRepository,
  OAuthToken,
  TokenEndpointAuthMethod,
} from '../store/oauth.repository.ts';
import {
  ACCESS_TOKEN_TTL_MS,
  AUTHORIZATION_CODE_TTL_MS,
  CODE_VERIFIER,
  MAX_REDIRECT_URIS,
  OAuthError,
  OAUTH_SCOPES,
  REFRESH_TOKEN_TTL_MS,
  S256_CHALLENGE,
  redirectUriProblem,
  s256,
  scopeList,
  withQuery,
  type OAuthEnv,
} from './oauth.ts';

export interface RegisterClientInput {
  redirect_uris?: unknown;
  client_name?: unknown;
  token_endpoint_auth_method?: unknown;
  grant_types?: unknown;
  response_types?: unknown;
  scope?: unknown;
}

/** What the consent screen shows, and what consent must send back. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  responseType?: string | undefined;
  scope?: string | undefined;
  state?: string | undefined;
  codeChallenge?: string | undefined;
  codeChallengeMethod?: string | undefined;
}

/** How a client authenticated at an endpoint: Basic, in the body, or not at all (a public client). */
export interface ClientCredentials {
  clientId: string | undefined;
  clientSecret: string | undefined;
  via: 'basic' | 'post' | 'none';
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

export interface OAuthOptions {
  /** Prefix of issued tokens and secrets (the deployment's API key prefix). */
  prefix: string;
  settings: OAuthEnv;
  codeTtlMs?: number;
  accessTokenTtlMs?: number;
  refreshTokenTtlMs?: number;
}

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'none',
  'client_secret_post',
  'client_secret_basic',
];
const GRANT_TYPES = ['authorization_code', 'refresh_token'];
/** Without a scope parameter or registered scope: model calls (all data-plane scopes but agents.invoke). */
const DEFAULT_SCOPES: readonly string[] = DATA_PLANE_SCOPES.filter((s) => s !== 'agents.invoke');

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
 * The OAuth 2.1 authorization server: dynamic client registration, authorization codes with
 * PKCE (S256 only) consented to by a user, rotating refresh tokens with reuse detection,
 * revocation and introspection. Access tokens are opaque and resolve, by their hash, like API
 * keys: a workspace-user principal with the granted scopes.
 */
export class OAuthService {
  private readonly codeTtlMs: number;
  private readonly accessTtlMs: number;
  private readonly refreshTtlMs: number;

  constructor(
    private readonly repo: OAuthRepository,
    private readonly bus: EventBus,
    private readonly options: OAuthOptions,
  ) {
    this.codeTtlMs = options.codeTtlMs ?? AUTHORIZATION_CODE_TTL_MS;
    this.accessTtlMs = options.accessTokenTtlMs ?? ACCESS_TOKEN_TTL_MS;
    this.refreshTtlMs = options.refreshTokenTtlMs ?? REFRESH_TOKEN_TTL_MS;
  }

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

  /** The consent to show for an authorization request, after checking all of it. */
  async authorize(principal: Principal, request: AuthorizationRequest) {
    const checked = await this.checkRequest(principal, request);
    return {
      object: 'oauth.consent',
      client: { client_id: checked.client.clientId, client_name: checked.client.clientName },
      redirect_uri: request.redirectUri,
      scopes: checked.scopes,
      scope: checked.scopes.join(' '),
      state: request.state ?? null,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      user: { display_name: checked.grantor.displayName },
      workspace: { id: principal.workspaceId, slug: principal.workspaceSlug },
    };
  }

  /**
   * The user's answer. Checked again as at authorize (the redirect URI against the client's
   * registration first); approval issues a one-time code (stored hashed, 60 s) bound to the
   * client, redirect URI, challenge, user and granted scopes.
   */
  async consent(
    principal: Principal,
    request: AuthorizationRequest & { approve: boolean },
  ): Promise<{ redirect_to: string }> {
    const checked = await this.checkRequest(principal, { ...request, responseType: 'code' });
    if (!request.approve) {
      return {
        redirect_to: withQuery(request.redirectUri, { error: 'access_denied', state: request.state }),
      };
    }
    const code = randomToken(32);
    await this.repo.insertCode({
      codeHash: sha256Hex(code),
      clientId: checked.client.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge!,
      ...checked.grantor,
      scopes: checked.scopes,
      expiresAt: new Date(Date.now() + this.codeTtlMs),
    });
    // Now and then, forget codes nothing can use any more.
    if (Math.random() < 0.01) void this.repo.deleteStaleCodes().catch(() => undefined);
    return { redirect_to: withQuery(request.redirectUri, { code, state: request.state }) };
  }

  /** Everything an authorization request must satisfy; plain 400s (in the one error shape). */
  private async checkRequest(principal: Principal, request: AuthorizationRequest) {
    const grantor = await this.grantorOf(principal);
    const client = request.clientId ? await this.repo.findClient(request.clientId) : null;
    if (!client) throw new BadRequest('Unknown client_id.', { param: 'client_id', code: 'invalid_client' });
    if (!request.redirectUri || !client.redirectUris.includes(request.redirectUri)) {
      throw new BadRequest('redirect_uri must be exactly one of the URIs the client registered.', {
        param: 'redirect_uri',
        code: 'invalid_redirect_uri',
      });
    }
    if (request.responseType !== 'code') {
      throw new BadRequest("response_type must be 'code'.", {
        param: 'response_type',
        code: 'unsupported_response_type',
      });
    }
    if (request.codeChallengeMethod !== 'S256') {
      throw new BadRequest("code_challenge_method must be 'S256' (plain is not accepted).", {
        param: 'code_challenge_method',
        code: 'invalid_request',
      });
    }
    if (!request.codeChallenge || !S256_CHALLENGE.test(request.codeChallenge)) {
      throw new BadRequest('code_challenge is required: the base64url SHA-256 of the code verifier (PKCE).', {
        param: 'code_challenge',
        code: 'invalid_request',
      });
    }
    if (request.state !== undefined && request.state.length > 1024) {
      throw new BadRequest('state must be at most 1024 characters.', {
        param: 'state',
        code: 'invalid_request',
      });
    }
    const held = new Set(principal.scopes.filter((s) => isScope(s) && kindCanHold('workspace_user', s)));
    const registered = client.scope ? new Set(scopeList(client.scope)) : undefined;
    let requested: string[];
    if (request.scope !== undefined && request.scope !== '') {
      requested = scopeList(request.scope);
      for (const scope of requested) {
        if (!(OAUTH_SCOPES as readonly string[]).includes(scope)) {
          throw new BadRequest(`'${scope}' is not a scope an OAuth token can carry.`, {
            param: 'scope',
            code: 'invalid_scope',
          });
        }
        if (registered && !registered.has(scope)) {
          throw new BadRequest(`'${scope}' is not among the scopes the client registered.`, {
            param: 'scope',
            code: 'invalid_scope',
          });
        }
        if (!held.has(scope)) {
          throw new BadRequest(`'${scope}' is beyond what you may hold in this workspace.`, {
            param: 'scope',
            code: 'invalid_scope',
          });
        }
      }
    } else {
      requested = [...(registered ?? DEFAULT_SCOPES)].filter((s) => held.has(s));
    }
    const scopes = requested.filter((s) => held.has(s));
    if (scopes.length === 0) {
      throw new BadRequest('No scope to grant: you hold none of the scopes asked for.', {
        param: 'scope',
        code: 'invalid_scope',
      });
    }
    return { client, grantor, scopes };
  }

  /** The person consenting: a JWT caller, or a workspace-user API key of a member. */
  private async grantorOf(principal: Principal): Promise<Grantor> {
    if (principal.workspaceId && principal.authMethod === 'jwt') {
      const subject = principal.name.replace(/^jwt:/, '');
      return {
        organisationId: principal.organisationId,
        workspaceId: principal.workspaceId,
        userId: null,
        subject,
        displayName: subject,
      };
    }
    if (
      principal.workspaceId &&
      principal.authMethod === undefined &&
      principal.kind === 'workspace_user' &&
      principal.userId
    ) {
      const displayName = await this.repo.userDisplayName(principal.userId);
      if (!displayName) throw new NotFound('The user of this key no longer exists.');
      return {
        organisationId: principal.organisationId,
        workspaceId: principal.workspaceId,
        userId: principal.userId,
        subject: null,
        displayName,
      };
    }
    throw new Forbidden(
      'Authorizing an OAuth client needs a user: a JWT or a workspace-user API key; service keys, organisation keys and OAuth tokens are refused.',
      { code: 'user_required' },
    );
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

  /** grant_type=authorization_code: the code is used up atomically, once, by the client it was issued to. */
  async exchangeCode(
    client: OAuthClient,
    input: { code: string; redirectUri: string; codeVerifier: string },
  ): Promise<TokenResponse> {
    if (!client.grantTypes.includes('authorization_code')) {
      throw new OAuthError('unauthorized_client', 'This client may not use the authorization_code grant.');
    }
    if (!CODE_VERIFIER.test(input.codeVerifier)) {
      throw new OAuthError(
        'invalid_request',
        'code_verifier must be 43 to 128 unreserved characters (PKCE).',
        400,
        {
          param: 'code_verifier',
        },
      );
    }
    const codeHash = sha256Hex(input.code);
    const bound = {
      clientId: client.clientId,
      redirectUri: input.redirectUri,
      codeChallenge: s256(input.codeVerifier),
    };
    const issued = await this.repo.transaction(async (repo) => {
      const code = await repo.consumeCode(codeHash, bound);
      if (!code) return null;
      const familyId = randomUUID();
      await repo.setCodeFamily(codeHash, familyId);
      return this.issueTokens(repo, client, { ...code, familyId }, code.scopes);
    });
    if (issued) return issued;
    throw await this.codeRefused(codeHash, bound);
  }

  /** Why a code was refused; a code presented again with its verifier revokes what it was exchanged for. */
  private async codeRefused(
    codeHash: string,
    bound: { clientId: string; redirectUri: string; codeChallenge: string },
  ): Promise<OAuthError> {
    const code = await this.repo.findCode(codeHash);
    const grant = (description: string) => new OAuthError('invalid_grant', description);
    if (!code) return grant('The authorization code is unknown.');
    if (code.clientId !== bound.clientId)
      return grant('The authorization code was issued to another client.');
    if (code.redirectUri !== bound.redirectUri) {
      return grant('redirect_uri does not match the one the authorization code was issued for.');
    }
    if (code.codeChallenge !== bound.codeChallenge) {
      return grant('code_verifier does not match the code_challenge (PKCE).');
    }
    if (code.consumedAt) {
      if (code.familyId) await this.revokeFamily(code.familyId);
      return grant('The authorization code was already used; the tokens issued for it are revoked.');
    }
    return grant('The authorization code has expired.');
  }

  /** grant_type=refresh_token: the token is revoked and a new one issued; a revoked one presented again revokes its family. */
  async refresh(
    client: OAuthClient,
    input: { refreshToken: string; scope?: string | undefined },
  ): Promise<TokenResponse> {
    if (!client.grantTypes.includes('refresh_token')) {
      throw new OAuthError('unauthorized_client', 'This client may not use the refresh_token grant.');
    }
    const hash = sha256Hex(input.refreshToken);
    const issued = await this.repo.transaction(async (repo) => {
      const used = await repo.consumeRefreshToken(hash, client.clientId);
      if (!used) return null;
      let scopes = used.scopes;
      if (input.scope !== undefined && input.scope !== '') {
        const asked = scopeList(input.scope);
        const beyond = asked.find((s) => !used.scopes.includes(s));
        if (beyond)
          throw new OAuthError('invalid_scope', `'${beyond}' was not granted to this refresh token.`);
        scopes = asked;
      }
      return this.issueTokens(repo, client, used, scopes, used.scopes);
    });
    if (issued) return issued;
    const found = await this.repo.findToken(hash);
    if (found && found.kind === 'refresh' && found.clientId === client.clientId && found.revokedAt) {
      await this.revokeFamily(found.familyId);
      throw new OAuthError(
        'invalid_grant',
        'The refresh token was already used; every token of its grant is revoked.',
      );
    }
    throw new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked.');
  }

  private async issueTokens(
    repo: OAuthRepository,
    client: OAuthClient,
    grant: Grantor & { familyId: string },
    scopes: string[],
    refreshScopes: string[] = scopes,
  ): Promise<TokenResponse> {
    const now = Date.now();
    const common = {
      familyId: grant.familyId,
      clientId: client.clientId,
      organisationId: grant.organisationId,
      workspaceId: grant.workspaceId,
      userId: grant.userId,
      subject: grant.subject,
      displayName: grant.displayName,
    };
    const accessToken = `${this.options.prefix}oat-${randomToken(32)}`;
    await repo.insertToken({
      ...common,
      tokenHash: sha256Hex(accessToken),
      kind: 'access',
      scopes,
      createdAt: new Date(now),
      expiresAt: new Date(now + this.accessTtlMs),
    });
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: Math.floor(this.accessTtlMs / 1000),
      scope: scopes.join(' '),
    };
    if (client.grantTypes.includes('refresh_token')) {
      const refreshToken = `${this.options.prefix}ort-${randomToken(32)}`;
      await repo.insertToken({
        ...common,
        tokenHash: sha256Hex(refreshToken),
        kind: 'refresh',
        scopes: refreshScopes,
        createdAt: new Date(now),
        expiresAt: new Date(now + this.refreshTtlMs),
      });
      response.refresh_token = refreshToken;
    }
    return response;
  }

  /**
   * RFC 7009. Unknown tokens and tokens of other clients are ignored (the answer is the same).
   * A refresh token takes its whole grant with it; an access token only itself.
   */
  async revoke(client: OAuthClient, token: string): Promise<void> {
    const found = await this.repo.findToken(sha256Hex(token));
    if (!found || found.clientId !== client.clientId) return;
    if (found.kind === 'refresh') {
      await this.revokeFamily(found.familyId);
      return;
    }
    const revoked = await this.repo.revokeToken(found.id);
    if (revoked) this.announceRevoked([revoked]);
  }

  /**
   * RFC 7662, for a confidential client (its own tokens) or an organisation admin key (its
   * organisation's tokens); anything else is `{active: false}`.
   */
  async introspect(
    caller: { client: OAuthClient } | { organisationId: string },
    token: string,
  ): Promise<Record<string, unknown>> {
    const inactive = { active: false };
    const hash = sha256Hex(token);
    const found = await this.repo.findToken(hash);
    if (!found) return inactive;
    if (
      'client' in caller
        ? found.clientId !== caller.client.clientId
        : found.organisationId !== caller.organisationId
    ) {
      return inactive;
    }
    const active =
      found.kind === 'access'
        ? (await this.repo.findActiveAccessToken(hash)) !== null
        : !found.revokedAt && found.expiresAt.getTime() > Date.now() && (await this.repo.stillMember(found));
    if (!active) return inactive;
    return {
      active: true,
      scope: found.scopes.join(' '),
      client_id: found.clientId,
      sub: found.userId ?? found.subject,
      exp: Math.floor(found.expiresAt.getTime() / 1000),
      iat: Math.floor(found.createdAt.getTime() / 1000),
      token_type: found.kind === 'access' ? 'Bearer' : 'refresh_token',
      display_name: found.displayName,
      organisation_id: found.organisationId,
      workspace_id: found.workspaceId,
    };
  }

  /** An access token as a principal, by its hash: how every service's key resolution knows OAuth callers. */
  async resolveAccessToken(tokenHash: string): Promise<Principal | null> {
    const found = await this.repo.findActiveAccessToken(tokenHash);
    if (!found) return null;
    const { token } = found;
    return {
      // Stable across refreshes: usage and logs of one grant stay together.
      apiKeyId: token.familyId,
      organisationId: token.organisationId,
      workspaceId: token.workspaceId,
      workspaceSlug: found.workspaceSlug,
      kind: 'workspace_user',
      scopes: token.scopes,
      expiresAt: token.expiresAt.getTime(),
      userId: token.userId,
      name: token.displayName,
      organisationCreatedAt: found.organisationCreatedAt.getTime(),
      authMethod: 'oauth',
      oauthClientId: token.clientId,
    };
  }

  /** A user who leaves a workspace (or the organisation) loses its tokens there at once, cached ones included. */
  async revokeUserTokens(organisationId: string, userId: string, workspaceId?: string): Promise<void> {
    this.announceRevoked(await this.repo.revokeUserTokens(organisationId, userId, workspaceId));
  }

  private async revokeFamily(familyId: string): Promise<void> {
    this.announceRevoked(await this.repo.revokeFamily(familyId));
  }

  /** Every cache holding a revoked access token drops it at once (refresh tokens are never cached). */
  private announceRevoked(tokens: readonly OAuthToken[]): void {
    for (const token of tokens) {
      if (token.kind !== 'access') continue;
      publishChange(this.bus, {
        entity: 'oauth_token',
        entityId: token.id,
        organisationId: token.organisationId,
        workspaceId: token.workspaceId,
        action: events.ChangeAction.DELETED,
        cacheKey: token.tokenHash,
      });
    }
  }
}
