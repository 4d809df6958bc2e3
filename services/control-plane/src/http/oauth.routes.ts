import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { z } from 'zod';
import { AppError, camelKeys } from '@switchyard/core';
import { formBody, jsonBody } from '@switchyard/http';
import { bearerToken, requirePrincipal, type Principal } from '@switchyard/access';
import { ScopedRouter, type BodyContent, type ErrorShape } from '@switchyard/runtime';
import { OAuthError } from '../domain/oauth.ts';
import type { OAuthAuthorizationService } from '../domain/oauth-authorization.service.ts';
import type { ClientCredentials, OAuthClientService } from '../domain/oauth-client.service.ts';
import { authorizeQuery, consentBody } from '../domain/oauth.schemas.ts';
import type { OAuthTokenService } from '../domain/oauth-token.service.ts';
import type { OAuthClient } from '../store/oauth.repository.ts';

export interface OAuthRouteOptions {
  /** Metadata, registration and client authentication. */
  clients: OAuthClientService;
  /** Authorize and consent. */
  authorization: OAuthAuthorizationService;
  /** The token, revocation and introspection endpoints. */
  tokens: OAuthTokenService;
  /** Authenticates the routes that need a user (authorize, consent). */
  authenticated: RequestHandler;
  /** Resolves a bearer API key: introspection accepts an organisation admin key. */
  resolveKey: (token: string) => Promise<Principal | null>;
  /** Largest body the protocol and consent endpoints take (MAX_OAUTH_REQUEST_BODY). */
  bodyLimit: string;
}

/** Token responses and registrations carry secrets: never cached (RFC 6749 §5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Form-encoded (what OAuth clients send) or JSON. */
function formOrJson(limit: string): RequestHandler {
  const json = jsonBody(limit);
  const form = formBody(limit, 32);
  return (req, res, next) => json(req, res, (err?: unknown) => (err ? next(err) : form(req, res, next)));
}

/** The request's parameters, each given once as a string (RFC 6749 §3.2: never repeated). */
function params(req: Request): Record<string, string> {
  const body: unknown = req.body ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'The body must be form-encoded parameters or a JSON object.');
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string') {
      throw new OAuthError('invalid_request', `${name} must be given once, as a string.`, 400, {
        param: name,
      });
    }
    out[name] = value;
  }
  return out;
}

function required(p: Record<string, string>, name: string): string {
  const value = p[name];
  if (!value) throw new OAuthError('invalid_request', `${name} is required.`, 400, { param: name });
  return value;
}

function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401);
  }
}

/** Basic (RFC 6749 §2.3.1: id and secret form-encoded), client_secret in the body, or a public client's bare client_id. */
function clientCredentials(req: Request, p: Record<string, string>): ClientCredentials {
  const header = req.headers.authorization;
  if (header && /^basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'Malformed Basic credentials.', 401);
    const clientId = formDecode(decoded.slice(0, colon));
    if (p.client_secret !== undefined) {
      throw new OAuthError(
        'invalid_request',
        'Use one client authentication method, not Basic and client_secret both.',
      );
    }
    if (p.client_id !== undefined && p.client_id !== clientId) {
      throw new OAuthError('invalid_request', 'client_id differs from the one in the Authorization header.');
    }
    return { clientId, clientSecret: formDecode(decoded.slice(colon + 1)), via: 'basic' };
  }
  if (p.client_secret !== undefined)
    return { clientId: p.client_id, clientSecret: p.client_secret, via: 'post' };
  return { clientId: p.client_id, clientSecret: undefined, via: 'none' };
}

function presentClient(client: OAuthClient, clientSecret?: string) {
  return {
    client_id: client.clientId,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(clientSecret ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
    ...(client.clientName ? { client_name: client.clientName } : {}),
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: client.responseTypes,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...(client.scope ? { scope: client.scope } : {}),
  };
}

/**
 * OAuth's protocol endpoints answer errors as RFC 6749 §5.2 does: `{"error", "error_description"}`.
 * A bad registration body is `invalid_client_metadata` (RFC 7591 §3.2.2), whatever refused it.
 */
const oauthErrors: ErrorRequestHandler = (err: unknown, req, res, next) => {
  if (res.headersSent) return next(err);
  let error: OAuthError;
  if (err instanceof OAuthError) error = err;
  else if (err instanceof AppError && err.status < 500) {
    const invalid = req.path === '/register' ? 'invalid_client_metadata' : 'invalid_request';
    error = new OAuthError(err.status === 401 ? 'invalid_client' : invalid, err.message, err.status);
  } else {
    const framework = err as { type?: unknown; status?: unknown; message?: unknown } | null;
    const status = typeof framework?.status === 'number' ? framework.status : 500;
    if (typeof framework?.type !== 'string' || status >= 500) return next(err);
    const description =
      framework.type === 'entity.parse.failed'
        ? 'The body is not valid JSON.'
        : framework.type === 'entity.too.large'
          ? 'The body is too large.'
          : String(framework.message ?? 'Bad request.');
    error = new OAuthError('invalid_request', description, status);
  }
  res
    .status(error.status)
    .set({ ...NO_STORE, ...error.headers })
    .json({ error: error.error, error_description: error.message });
};

/** How the protocol endpoints refuse (RFC 6749 §5.2), for their description. */
const OAUTH_ERRORS: ErrorShape = {
  name: 'OAuthError',
  contentType: 'application/json',
  schema: z
    .object({
      error: z.string().meta({ description: 'An RFC 6749 error code, e.g. `invalid_grant`.' }),
      error_description: z.string(),
    })
    .meta({ description: "OAuth's own error shape (RFC 6749 §5.2)." }),
};

/** The protocol endpoints' parameters: read one by one, each once, as a string (see `params`). */
const protocolParameters = (description: string): BodyContent => ({
  contentTypes: ['application/x-www-form-urlencoded', 'application/json'],
  description,
});

/**
 * The OAuth 2.1 authorization server: RFC 8414 metadata, RFC 7591 registration, the token,
 * revocation (RFC 7009) and introspection (RFC 7662) endpoints, all public (clients
 * authenticate per their method), and authorize and consent, which need a user.
 */
export function mountOAuth(router: ScopedRouter, options: OAuthRouteOptions): void {
  const { clients, authorization, tokens: oauthTokens } = options;

  const metadata = new ScopedRouter().get(
    '/',
    {
      scope: 'public',
      summary: "The authorization server's metadata (RFC 8414).",
      query: 'none',
    },
    (req, res) => {
      res.json(clients.metadata(`${req.protocol}://${req.get('host') ?? 'localhost'}`));
    },
  );
  router.mount('/.well-known/oauth-authorization-server', metadata);

  const protocol = new ScopedRouter({ body: formOrJson(options.bodyLimit) });
  protocol.post(
    '/register',
    {
      scope: 'public',
      summary: 'Registers an OAuth client (RFC 7591 dynamic client registration).',
      query: 'none',
      body: {
        contentTypes: ['application/json'],
        description:
          'Client metadata (RFC 7591 §2): redirect_uris, and client_name, grant_types, response_types, token_endpoint_auth_method and scope if wanted.',
      },
      status: 201,
      errors: OAUTH_ERRORS,
    },
    async (req, res) => {
      const body: unknown = req.body;
      if (!req.is('application/json') || typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new OAuthError('invalid_client_metadata', 'The body must be a JSON object of client metadata.');
      }
      const { client, clientSecret } = await clients.registerClient(body);
      res.status(201).set(NO_STORE).json(presentClient(client, clientSecret));
    },
  );
  protocol.post(
    '/token',
    {
      scope: 'public',
      summary: 'Issues tokens for an authorization code (with its PKCE verifier) or a refresh token.',
      query: 'none',
      body: protocolParameters(
        'grant_type `authorization_code` with code, redirect_uri, code_verifier and the resource (RFC 8707) if the authorization request named one, or `refresh_token` with refresh_token, and scope if narrower and resource if wanted (never another than the grant is bound to); client_id (and client_secret) unless Basic authentication gives them.',
      ),
      credential: 'oauth_client',
      errors: OAUTH_ERRORS,
    },
    async (req, res) => {
      const p = params(req);
      const grantType = required(p, 'grant_type');
      if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
        throw new OAuthError('unsupported_grant_type', `grant_type '${grantType}' is not supported.`);
      }
      const client = await clients.authenticateClient(clientCredentials(req, p));
      const tokens =
        grantType === 'authorization_code'
          ? await oauthTokens.exchangeCode(client, {
              code: required(p, 'code'),
              redirectUri: required(p, 'redirect_uri'),
              codeVerifier: required(p, 'code_verifier'),
              resource: p.resource,
            })
          : await oauthTokens.refresh(client, {
              refreshToken: required(p, 'refresh_token'),
              scope: p.scope,
              resource: p.resource,
            });
      res.set(NO_STORE).json(tokens);
    },
  );
  protocol.post(
    '/revoke',
    {
      scope: 'public',
      summary: 'Revokes an access or refresh token of the client (RFC 7009).',
      query: 'none',
      body: protocolParameters(
        'token; client_id (and client_secret) unless Basic authentication gives them.',
      ),
      credential: 'oauth_client',
      errors: OAUTH_ERRORS,
    },
    async (req, res) => {
      const p = params(req);
      const client = await clients.authenticateClient(clientCredentials(req, p));
      await oauthTokens.revoke(client, required(p, 'token'));
      res.json({});
    },
  );
  protocol.post(
    '/introspect',
    {
      scope: 'public',
      summary:
        'Tells whether a token is active, and what it carries (RFC 7662): for a confidential client or an organisation admin API key.',
      query: 'none',
      body: protocolParameters(
        'token; client_id and client_secret unless Basic authentication or an organisation admin API key (Bearer) authenticates the caller.',
      ),
      credential: 'oauth_client',
      errors: OAUTH_ERRORS,
    },
    async (req, res) => {
      const p = params(req);
      const bearer = bearerToken(req.headers.authorization);
      let caller: Parameters<OAuthTokenService['introspect']>[0];
      if (bearer) {
        const principal = bearer.length <= 512 ? await options.resolveKey(bearer) : null;
        if (!principal) throw new OAuthError('invalid_client', 'Invalid API key.', 401);
        if (principal.kind !== 'organisation_admin' || principal.authMethod !== undefined) {
          throw new OAuthError(
            'insufficient_scope',
            'Introspection needs a confidential client or an organisation admin API key.',
            403,
          );
        }
        caller = { organisationId: principal.organisationId };
      } else {
        const client = await clients.authenticateClient(clientCredentials(req, p));
        if (client.tokenEndpointAuthMethod === 'none') {
          throw new OAuthError(
            'invalid_client',
            'Introspection needs a confidential client or an organisation admin API key.',
            401,
          );
        }
        caller = { client };
      }
      res.set(NO_STORE).json(await oauthTokens.introspect(caller, required(p, 'token')));
    },
  );
  protocol.router.use(oauthErrors);
  router.mount('/oauth', protocol);

  // A user says which client may act for them: in the one error shape, and never a redirect
  // on an error (nothing redirects before the redirect URI is known to be the client's).
  const consent = new ScopedRouter({ body: jsonBody(options.bodyLimit) });
  consent.get(
    '/authorize',
    {
      scope: 'authenticated',
      summary:
        'Checks an authorization request of a client and answers what the user is asked to consent to.',
      query: authorizeQuery,
    },
    async (req, res, _next, input) => {
      const principal = requirePrincipal(req);
      res.set(NO_STORE).json(await authorization.authorize(principal, camelKeys(input.query(req))));
    },
  );
  consent.post(
    '/postAuthorizeConsent',
    {
      scope: 'authenticated',
      summary:
        "The user's answer to an authorization request: where the browser goes back to the client, with a code or access_denied.",
      query: 'none',
      body: { contentTypes: ['application/json'], schema: consentBody, optional: true },
    },
    async (req, res, _next, input) => {
      const principal = requirePrincipal(req);
      res.set(NO_STORE).json(await authorization.consent(principal, camelKeys(input.body(req))));
    },
  );
  router.mount('/oauth', consent, options.authenticated);
}
