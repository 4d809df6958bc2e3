import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AppError, env, sharedEnv } from '@switchyard/core';
import { scopesForKind, type Scope } from '@switchyard/access';

/** The settings of the authorization server, read by control-plane. */
export const oauthEnvSchema = z.object({
  OAUTH_ISSUER: sharedEnv.OAUTH_ISSUER,
  OAUTH_REDIRECT_URI_ALLOWLIST: env
    .list()
    .transform((hosts) => hosts.map((h) => h.toLowerCase()))
    .meta({
      description:
        'comma-separated hosts (subdomains included) every registered OAuth redirect URI must be on; empty: any host',
    }),
});
export type OAuthEnv = z.output<typeof oauthEnvSchema>;

/** How control-plane runs its OAuth services; the lifetimes are the defaults below unless given (tests shorten them). */
export interface OAuthOptions {
  /** Prefix of issued tokens and secrets (the deployment's API key prefix). */
  prefix: string;
  settings: OAuthEnv;
  codeTtlMs?: number;
  accessTokenTtlMs?: number;
  refreshTokenTtlMs?: number;
}

export const AUTHORIZATION_CODE_TTL_MS = 60_000;
export const ACCESS_TOKEN_TTL_MS = 3_600_000;
export const REFRESH_TOKEN_TTL_MS = 30 * 86_400_000;

/**
 * An error of the OAuth protocol endpoints (register, token, revoke, introspect): they answer
 * `{"error", "error_description"}` as RFC 6749 and RFC 7591 say, because OAuth client
 * libraries parse that. Anywhere else it is shown in the one error shape, its code the OAuth one.
 */
export class OAuthError extends AppError {
  constructor(
    readonly error: string,
    description: string,
    status = 400,
    options: { param?: string; headers?: Record<string, string> } = {},
  ) {
    super(status, status === 401 ? 'authentication_error' : 'invalid_request_error', description, {
      code: error,
      ...options,
    });
  }
}

/** The scopes an OAuth access token can carry: those of a workspace user. */
export const OAUTH_SCOPES: readonly Scope[] = scopesForKind('workspace_user');

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2048;

/** Whether `host` is on the allow-list: equal to an entry or a subdomain of it. */
function allowedHost(host: string, allowlist: readonly string[]): boolean {
  const name = host.toLowerCase();
  return allowlist.some((entry) => name === entry || name.endsWith(`.${entry}`));
}

/**
 * Why a redirect URI cannot be registered, or null when it can: absolute, https (http only on
 * a loopback host), no fragment, no user information, printable ASCII only, at most 2048
 * characters, and on the allow-list when there is one.
 */
export function redirectUriProblem(uri: string, allowlist: readonly string[]): string | null {
  if (uri.length === 0) return 'must not be empty';
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  // The URL parser drops whitespace and control characters: what is compared later must be what was checked.
  if (!/^[\x21-\x7e]+$/.test(uri)) return 'must be printable ASCII without spaces';
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) return 'must be an absolute URI';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not have a fragment';
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(uri)?.[1] ?? '';
  if (authority.includes('@') || url.username || url.password) return 'must not have user information';
  if (url.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(url.hostname))
      return 'must use https (http only for 127.0.0.1, [::1] or localhost)';
  } else if (url.protocol !== 'https:') {
    return 'must use https (http only for 127.0.0.1, [::1] or localhost)';
  }
  if (!url.hostname) return 'must name a host';
  if (allowlist.length > 0 && !allowedHost(url.hostname.replace(/^\[|\]$/g, ''), allowlist)) {
    return 'names a host that is not on the allow-list of this server';
  }
  return null;
}

export const MAX_RESOURCE_LENGTH = 2048;

/**
 * Why a resource indicator (RFC 8707 §2) cannot be accepted, or null when it can: an absolute
 * URI without a fragment, printable ASCII, at most 2048 characters.
 */
export function resourceProblem(uri: string): string | null {
  if (uri.length === 0) return 'must not be empty';
  if (uri.length > MAX_RESOURCE_LENGTH) return `must be at most ${MAX_RESOURCE_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(uri)) return 'must be printable ASCII without spaces';
  if (!/^[a-z][a-z0-9+.-]*:/i.test(uri) || !URL.canParse(uri)) return 'must be an absolute URI';
  if (uri.includes('#')) return 'must not have a fragment';
  return null;
}

/** The S256 code challenge of a PKCE code verifier. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636: 43 to 128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: the base64url of a SHA-256, 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A space-separated scope parameter as a list, without repeats. */
export function scopeList(scope: string): string[] {
  return [...new Set(scope.split(' ').filter(Boolean))];
}

/** `uri`, exactly as registered, with the parameters added to its query (any it had are kept). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  const separator = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return `${uri}${separator}${query.toString()}`;
}
