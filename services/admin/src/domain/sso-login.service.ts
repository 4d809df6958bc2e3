import { createHash, randomBytes } from 'node:crypto';
import {
  BadRequest,
  Forbidden,
  Unauthorized,
  UnprocessableEntity,
  sha256Hex,
  type SecretBox,
} from '@switchyard/core';
import type { SsoConnection } from '../store/entities.ts';
import type { SsoLoginRepository } from '../store/sso-login.repository.ts';
import { domainCovers } from './email-domains.ts';
import { matchingPublicJwk } from './jwk.ts';
import { IdTokenRejected, type OidcProvider, type TokenEndpointAuth } from './oidc-provider.ts';
import type { SsoCallbackQuery, SsoLoginQuery } from './sso-login.schemas.ts';
import { chooseSsoConnection } from './sso-login.ts';

/** How long a login may take between the redirect to the identity provider and the callback. */
export const SSO_LOGIN_TTL_MS = 10 * 60_000;

/** Opens the browser session of a person the identity provider vouched for (control-plane, over gRPC). */
export type OpenSsoSession = (request: {
  organisationId: string;
  email: string;
  firstName: string | undefined;
  lastName: string | undefined;
  autoProvision: boolean;
  userAgent: string | undefined;
  clientIp: string | undefined;
}) => Promise<{ token: string; expiresAt: Date }>;

/** `redirectTo` is a same-origin relative path, checked by the schema. */
export type SsoLoginStart = SsoLoginQuery & {
  /** Where the identity provider sends the browser back to. */
  callbackUrl: string;
};

export type SsoCallback = SsoCallbackQuery & {
  userAgent: string | undefined;
  clientIp: string | undefined;
};

const base64url = (bytes: Buffer) => bytes.toString('base64url');

function emailDomainOf(email: string): string {
  const at = email.lastIndexOf('@');
  return at > 0 ? email.slice(at + 1).toLowerCase() : '';
}

/**
 * The SSO login: OpenID Connect authorization code flow with PKCE (S256), a nonce, and a
 * one-time state kept here for ten minutes. It ends in a browser session that control-plane
 * opens, provisioning the person on their first login unless the connection says not to.
 */
export class SsoLoginService {
  constructor(
    private readonly repo: SsoLoginRepository,
    private readonly secrets: SecretBox,
    private readonly oidc: OidcProvider,
    private readonly openSession: OpenSsoSession,
  ) {}

  /** The URL of the identity provider's authorization endpoint the browser goes to. */
  async start(login: SsoLoginStart): Promise<string> {
    const connection = await this.connectionFor(login.email, login.ssoClientId);
    const endpoints = await this.oidc.discover(connection.issuer);
    const state = base64url(randomBytes(32));
    const nonce = base64url(randomBytes(32));
    const codeVerifier = base64url(randomBytes(48));
    await this.repo.saveState(
      sha256Hex(state),
      {
        organisationId: connection.organisationId,
        clientId: connection.clientId,
        nonce,
        encryptedCodeVerifier: this.secrets.encrypt(codeVerifier),
        redirectUri: login.callbackUrl,
        redirectTo: login.redirectTo,
      },
      SSO_LOGIN_TTL_MS,
    );
    const url = new URL(endpoints.authorizationEndpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', connection.clientId);
    url.searchParams.set('redirect_uri', login.callbackUrl);
    url.searchParams.set('scope', connection.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('nonce', nonce);
    url.searchParams.set('code_challenge', base64url(createHash('sha256').update(codeVerifier).digest()));
    url.searchParams.set('code_challenge_method', 'S256');
    url.searchParams.set('login_hint', login.email);
    return url.toString();
  }

  /** Completes the login the state names, once; answers the session and where to send the browser. */
  async complete(callback: SsoCallback): Promise<{ token: string; expiresAt: Date; redirectTo: string }> {
    const login = await this.repo.takeState(sha256Hex(callback.state));
    if (!login) {
      throw new BadRequest('This SSO login is unknown, expired or already used: start again.', {
        param: 'state',
        code: 'sso_state_invalid',
      });
    }
    if (callback.error !== undefined) {
      const detail = callback.errorDescription ? `: ${callback.errorDescription.slice(0, 300)}` : '';
      if (callback.error === 'access_denied')
        throw new Forbidden(`The identity provider denied the login${detail}.`, {
          code: 'sso_access_denied',
        });
      throw new BadRequest(
        `The identity provider ended the login with '${callback.error.slice(0, 64)}'${detail}.`,
        {
          code: 'sso_idp_error',
        },
      );
    }
    if (!callback.code)
      throw new BadRequest("The identity provider's answer has no code.", {
        param: 'code',
        code: 'missing_parameter',
      });
    const connections = await this.repo.connectionsOf(login.organisationId);
    const connection = connections.find((c) => c.clientId === login.clientId && c.enabled);
    if (!connection)
      throw new Forbidden('The SSO connection of this login was removed or disabled.', {
        code: 'sso_connection_disabled',
      });
    const endpoints = await this.oidc.discover(connection.issuer);
    const idToken = await this.oidc.exchangeCode(endpoints, {
      clientId: connection.clientId,
      auth: await this.authOf(connection),
      code: callback.code,
      codeVerifier: this.secrets.decrypt(login.encryptedCodeVerifier),
      redirectUri: login.redirectUri,
    });
    let claims;
    try {
      claims = await this.oidc.verifyIdToken(endpoints, idToken, {
        issuer: connection.issuer,
        clientId: connection.clientId,
        nonce: login.nonce,
      });
    } catch (err) {
      if (err instanceof IdTokenRejected)
        throw new Unauthorized(`The identity provider's id_token is refused: ${err.message}`, {
          code: 'sso_id_token_invalid',
        });
      throw err;
    }
    if (claims.emailVerified === false)
      throw new Forbidden('The identity provider has not verified this email.', {
        code: 'sso_email_unverified',
      });
    await this.assertEmailOfOrganisation(claims.email, connection);
    const session = await this.openSession({
      organisationId: login.organisationId,
      email: claims.email,
      firstName: claims.givenName,
      lastName: claims.familyName,
      autoProvision: !connection.disableAutoProvisionUser,
      userAgent: callback.userAgent,
      clientIp: callback.clientIp,
    });
    return { ...session, redirectTo: login.redirectTo };
  }

  /**
   * The connection a login goes through: the organisation claiming the email's domain, then
   * `chooseSsoConnection`. An unclaimed domain may still sign in through the one connection an
   * `sso_client_id` names.
   */
  private async connectionFor(email: string, ssoClientId: string | undefined): Promise<SsoConnection> {
    const domain = emailDomainOf(email);
    const claims = domain ? (await this.repo.claimsAbove(domain)).filter((c) => domainCovers(c, domain)) : [];
    const organisationId = claims[0]?.organisationId;
    if (organisationId !== undefined) {
      const [connections, domains] = await Promise.all([
        this.repo.connectionsOf(organisationId),
        this.repo.domainsOf(organisationId),
      ]);
      return chooseSsoConnection(connections, { email, sso_client_id: ssoClientId }, domains);
    }
    const named = ssoClientId === undefined ? [] : await this.repo.connectionsByClientId(ssoClientId);
    // Without a claimed domain, the client_id must name one connection of one organisation.
    return chooseSsoConnection(named.length === 1 ? named : [], { email, sso_client_id: ssoClientId }, []);
  }

  /** The email the identity provider vouches for must be of a domain the organisation claims, unless it has none. */
  private async assertEmailOfOrganisation(email: string, connection: SsoConnection): Promise<void> {
    const domains = await this.repo.domainsOf(connection.organisationId);
    const domain = emailDomainOf(email);
    if (domains.length > 0 && !domains.some((claim) => domainCovers(claim, domain))) {
      throw new Forbidden(
        `The identity provider signed in '${email}', whose domain this organisation does not claim.`,
        {
          code: 'sso_email_domain_not_claimed',
        },
      );
    }
  }

  private async authOf(connection: SsoConnection): Promise<TokenEndpointAuth> {
    const method = connection.tokenEndpointAuthMethod;
    if (method === 'none') return { method };
    if (method === 'private_key_jwt') {
      const encrypted = await this.repo.encryptedPrivateKey(connection.organisationId, connection.clientId);
      const privateJwk = encrypted
        ? (JSON.parse(this.secrets.decrypt(encrypted)) as Record<string, unknown>)
        : null;
      const published = privateJwk ? matchingPublicJwk(privateJwk, connection.jwks?.keys ?? []) : undefined;
      if (!privateJwk || !published) {
        throw new UnprocessableEntity(
          "The SSO connection uses private_key_jwt but holds no private key of its jwks: set 'private_key'.",
          { code: 'sso_private_key_missing' },
        );
      }
      return { method, privateJwk, kid: typeof published.kid === 'string' ? published.kid : undefined };
    }
    if (!connection.encryptedClientSecret)
      throw new UnprocessableEntity('The SSO connection has no client secret.', {
        code: 'sso_client_secret_missing',
      });
    return { method, clientSecret: this.secrets.decrypt(connection.encryptedClientSecret) };
  }
}
