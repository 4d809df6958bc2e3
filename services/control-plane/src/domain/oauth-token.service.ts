import { randomUUID } from 'node:crypto';
import { randomToken, sha256Hex } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { Grantor, OAuthClient, OAuthRepository, OAuthToken } from '../store/oauth.repository.ts';
import {
  ACCESS_TOKEN_TTL_MS,
  CODE_VERIFIER,
  OAuthError,
  REFRESH_TOKEN_TTL_MS,
  resourceProblem,
  s256,
  scopeList,
  type OAuthOptions,
} from './oauth.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
}

/**
 * OAuth tokens: codes exchanged for them, rotating refresh tokens with reuse detection,
 * revocation (RFC 7009) and introspection (RFC 7662). Access tokens are opaque and resolve,
 * by their hash, like API keys: a workspace-user principal with the granted scopes.
 */
export class OAuthTokenService {
  private readonly accessTtlMs: number;
  private readonly refreshTtlMs: number;

  constructor(
    private readonly repo: OAuthRepository,
    private readonly bus: EventBus,
    private readonly options: OAuthOptions,
  ) {
    this.accessTtlMs = options.accessTokenTtlMs ?? ACCESS_TOKEN_TTL_MS;
    this.refreshTtlMs = options.refreshTokenTtlMs ?? REFRESH_TOKEN_TTL_MS;
  }

  /** grant_type=authorization_code: the code is used up atomically, once, by the client it was issued to. */
  async exchangeCode(
    client: OAuthClient,
    input: { code: string; redirectUri: string; codeVerifier: string; resource?: string | undefined },
  ): Promise<TokenResponse> {
    const resource = checkedResource(input.resource);
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
      // RFC 8707: the token request names the resource the authorization request named (or
      // none, when it named none); otherwise the code stays unused (the transaction is undone).
      if (code.resource !== resource) {
        throw new OAuthError(
          'invalid_target',
          code.resource
            ? 'resource must be the one given in the authorization request.'
            : 'The authorization request named no resource: the token request may not name one.',
          400,
          { param: 'resource' },
        );
      }
      const familyId = randomUUID();
      await repo.setCodeFamily(codeHash, familyId);
      return this.issueTokens(repo, client, { ...code, familyId }, code.scopes, resource);
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

  /**
   * grant_type=refresh_token: the token is revoked and a new one issued; a revoked one presented
   * again revokes its family. A resource may narrow an unbound grant to one resource, never
   * change the resource a grant is bound to.
   */
  async refresh(
    client: OAuthClient,
    input: { refreshToken: string; scope?: string | undefined; resource?: string | undefined },
  ): Promise<TokenResponse> {
    const asked = checkedResource(input.resource);
    if (!client.grantTypes.includes('refresh_token')) {
      throw new OAuthError('unauthorized_client', 'This client may not use the refresh_token grant.');
    }
    const hash = sha256Hex(input.refreshToken);
    const issued = await this.repo.transaction(async (repo) => {
      const used = await repo.consumeRefreshToken(hash, client.clientId);
      if (!used) return null;
      let scopes = used.scopes;
      if (input.scope !== undefined && input.scope !== '') {
        const narrower = scopeList(input.scope);
        const beyond = narrower.find((s) => !used.scopes.includes(s));
        if (beyond)
          throw new OAuthError('invalid_scope', `'${beyond}' was not granted to this refresh token.`);
        scopes = narrower;
      }
      if (asked !== null && used.resource !== null && asked !== used.resource) {
        throw new OAuthError('invalid_target', 'resource must be the one this grant is bound to.', 400, {
          param: 'resource',
        });
      }
      return this.issueTokens(repo, client, used, scopes, asked ?? used.resource, used.scopes);
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
    resource: string | null,
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
      resource,
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
      ...(found.resource ? { aud: found.resource } : {}),
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
      ...(token.resource ? { oauthResource: token.resource } : {}),
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

/** A resource indicator of a token request (RFC 8707), checked; null when none was given. */
function checkedResource(resource: string | undefined): string | null {
  if (resource === undefined) return null;
  const problem = resourceProblem(resource);
  if (problem)
    throw new OAuthError('invalid_target', `resource ${problem} (RFC 8707).`, 400, { param: 'resource' });
  return resource;
}
