import { BadRequest, Forbidden, NotFound, randomToken, sha256Hex, type CamelKeys } from '@switchyard/core';
import { DATA_PLANE_SCOPES, isScope, kindCanHold, type Principal } from '@switchyard/access';
import type { z } from 'zod';
import type { Grantor, OAuthRepository } from '../store/oauth.repository.ts';
import {
  AUTHORIZATION_CODE_TTL_MS,
  OAUTH_SCOPES,
  resourceProblem,
  S256_CHALLENGE,
  scopeList,
  withQuery,
  type OAuthOptions,
} from './oauth.ts';
import type { authorizeQuery, consentBody } from './oauth.schemas.ts';

/** What the consent screen shows, and what consent must send back. */
export type AuthorizationRequest = CamelKeys<z.output<typeof authorizeQuery>>;

/** The user's answer to an authorization request: the request again, and whether they approve. */
export type ConsentInput = CamelKeys<z.output<typeof consentBody>>;

/** Without a scope parameter or registered scope: model calls (all data-plane scopes but agents.invoke). */
const DEFAULT_SCOPES: readonly string[] = DATA_PLANE_SCOPES.filter((s) => s !== 'agents.invoke');

/**
 * Authorization codes: a user consents to a client acting for them in their workspace, and
 * the client gets a one-time code bound to its redirect URI and PKCE challenge (S256 only).
 */
export class OAuthAuthorizationService {
  private readonly codeTtlMs: number;

  constructor(
    private readonly repo: OAuthRepository,
    options: OAuthOptions,
  ) {
    this.codeTtlMs = options.codeTtlMs ?? AUTHORIZATION_CODE_TTL_MS;
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
      resource: checked.resource,
      user: { display_name: checked.grantor.displayName },
      workspace: { id: principal.workspaceId, slug: principal.workspaceSlug },
    };
  }

  /**
   * The user's answer. Checked again as at authorize (the redirect URI against the client's
   * registration first); approval issues a one-time code (stored hashed, 60 s) bound to the
   * client, redirect URI, challenge, user, granted scopes and resource (RFC 8707), if any.
   */
  async consent(principal: Principal, request: ConsentInput): Promise<{ redirect_to: string }> {
    const checked = await this.checkRequest(principal, { ...request, responseType: 'code' });
    if (!request.approve) {
      return {
        redirect_to: withQuery(checked.redirectUri, { error: 'access_denied', state: request.state }),
      };
    }
    const code = randomToken(32);
    await this.repo.insertCode({
      codeHash: sha256Hex(code),
      clientId: checked.client.clientId,
      redirectUri: checked.redirectUri,
      codeChallenge: request.codeChallenge!,
      ...checked.grantor,
      scopes: checked.scopes,
      resource: checked.resource,
      expiresAt: new Date(Date.now() + this.codeTtlMs),
    });
    // Now and then, forget codes nothing can use any more.
    if (Math.random() < 0.01) void this.repo.deleteStaleCodes().catch(() => undefined);
    return { redirect_to: withQuery(checked.redirectUri, { code, state: request.state }) };
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
    let resource: string | null = null;
    if (request.resource !== undefined) {
      const problem = resourceProblem(request.resource);
      if (problem) {
        throw new BadRequest(`resource ${problem} (RFC 8707).`, {
          param: 'resource',
          code: 'invalid_target',
        });
      }
      resource = request.resource;
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
    return { client, grantor, scopes, redirectUri: request.redirectUri, resource };
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
}
