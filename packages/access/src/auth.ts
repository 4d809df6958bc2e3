import passport from 'passport';
import { Strategy } from 'passport-strategy';
import type { Request, RequestHandler } from 'express';
import { Forbidden, RemoteCache, type RemoteCacheOptions, sha256Hex, Unauthorized } from '@switchyard/core';
import { looksLikeJwt } from './jwt-auth.ts';
import type { Principal } from './principal.ts';

export type { ApiKeyKind, Principal } from './principal.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      principal?: Principal;
    }
  }
}

export type PrincipalLookup = (keyHash: string) => Promise<Principal | null>;

/**
 * Keeps resolved keys in memory so the hot path makes no remote call for a known key.
 * Entries expire after a short TTL and are dropped at once when a change event names them.
 */
export class ApiKeyCache {
  private readonly cache: RemoteCache<Principal>;

  constructor(
    private readonly lookup: PrincipalLookup,
    options: RemoteCacheOptions = {},
  ) {
    this.cache = new RemoteCache({ ttlMs: 30_000, ...options });
  }

  async resolve(token: string): Promise<Principal | null> {
    const hash = sha256Hex(token);
    const principal = await this.cache.get(hash, () => this.lookup(hash));
    if (principal?.expiresAt && principal.expiresAt <= Date.now()) return null;
    return principal;
  }

  invalidate(keyHash: string): void {
    this.cache.invalidate(keyHash);
  }

  /** Drops the keys of a workspace (and lookups under way): their principals carry its defaults. */
  invalidateWorkspace(workspaceId: string): void {
    this.cache.invalidateValues((principal) => principal?.workspaceId === workspaceId);
  }

  clear(): void {
    this.cache.clear();
  }
}

/** The token of an `Authorization: Bearer <token>` header, if that is what it holds. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization || !/^bearer\s+/i.test(authorization)) return undefined;
  return authorization.replace(/^bearer\s+/i, '').trim() || undefined;
}

/** The gateway key: `<prefix>api-key` header first, else `Authorization: Bearer`. */
export function presentedApiKey(req: Request, headerPrefix: string): string | undefined {
  const header = req.headers[`${headerPrefix}api-key`];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  return bearerToken(req.headers.authorization);
}

/** The browser session cookie (see control-plane's `/v1/auth/sessions`). */
export const SESSION_COOKIE = 'sy_session';

/** The session cookie's value, when the request carries one. */
export function sessionCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header || !header.includes(SESSION_COOKIE)) return undefined;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || undefined;
  }
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A cookie goes with every request a browser sends, whichever page made it: a request that
 * changes something on a session's authority must come from a page of this origin.
 */
function crossSiteWrite(req: Request): boolean {
  if (SAFE_METHODS.has(req.method)) return false;
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return true;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

class ApiKeyStrategy extends Strategy {
  name = 'api-key';

  constructor(
    private readonly cache: ApiKeyCache,
    private readonly headerPrefix: string,
  ) {
    super();
  }

  override authenticate(req: Request): void {
    let token = presentedApiKey(req, this.headerPrefix);
    if (token === undefined) {
      token = sessionCookie(req);
      if (token !== undefined && crossSiteWrite(req)) {
        this.error(
          new Forbidden(
            'A session cannot change anything from another origin: send the request from this origin.',
            {
              code: 'cross_origin_session',
            },
          ),
        );
        return;
      }
    }
    // A JWT is for the JWT strategy: never looked up as a key.
    if (!token || token.length > 512 || looksLikeJwt(token)) {
      this.fail(401);
      return;
    }
    this.cache.resolve(token).then(
      (principal) => (principal ? this.success(principal) : this.fail(401)),
      (err: unknown) => this.error(err as Error),
    );
  }
}

export interface ApiKeyAuthOptions {
  cache: ApiKeyCache;
  headerPrefix: string;
  /** Bearer JWTs too, when the deployment accepts them (see `jwtStrategy`). */
  jwt?: Strategy | undefined;
}

/** What passport hands on when every strategy refused the request (failWithError). */
function refusedByPassport(err: unknown): boolean {
  return err instanceof Error && err.name === 'AuthenticationError';
}

/**
 * Express middleware: resolves the caller's API key through passport into req.principal.
 * Passport's middleware is built once, not per request: it assigns the principal itself (no
 * session, no login step) and hands a refused key on as an error, answered as the one 401.
 */
export function apiKeyAuthentication(options: ApiKeyAuthOptions): RequestHandler {
  const authenticator = new passport.Passport();
  authenticator.use(new ApiKeyStrategy(options.cache, options.headerPrefix));
  if (options.jwt) authenticator.use('jwt', options.jwt);
  const authenticate = authenticator.authenticate(options.jwt ? ['api-key', 'jwt'] : 'api-key', {
    session: false,
    assignProperty: 'principal',
    authInfo: false,
    failWithError: true,
  }) as RequestHandler;
  return (req, res, next) => {
    if (req.method === 'OPTIONS') {
      next();
      return;
    }
    authenticate(req, res, (err?: unknown) => {
      if (err === undefined) next();
      else
        next(
          refusedByPassport(err)
            ? new Unauthorized(
                options.jwt ? 'Missing or invalid API key or token.' : 'Missing or invalid API key.',
              )
            : err,
        );
    });
  };
}

export function requirePrincipal(req: Request): Principal {
  if (!req.principal) throw new Unauthorized();
  return req.principal;
}

/** Data-plane and workspace-scoped routes need a key bound to a workspace. */
export function requireWorkspacePrincipal(req: Request): Principal & { workspaceId: string } {
  const principal = requirePrincipal(req);
  if (!principal.workspaceId) {
    throw new Forbidden(
      'This route needs a workspace API key; organisation admin keys are not bound to a workspace.',
      {
        code: 'workspace_key_required',
      },
    );
  }
  return principal as Principal & { workspaceId: string };
}

export function assertOrganisationAdmin(principal: Principal): void {
  if (principal.kind !== 'organisation_admin') {
    throw new Forbidden('This operation needs an organisation admin API key.', {
      code: 'admin_key_required',
    });
  }
}
