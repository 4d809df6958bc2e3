// Who is calling: the principal every authentication path resolves (auth.ts re-exports it).
// Its own module so that scopes.ts and jwt-auth.ts need not import auth.ts, which imports them.

export type ApiKeyKind = 'organisation_admin' | 'workspace_service' | 'workspace_user';

/**
 * What a caller's requests get when they leave something out: for an API key, the key's own
 * defaults and the workspace's where the key has none (see control-plane's api-keys.ts); for
 * any other caller of a workspace (JWT, OAuth access token, session), the workspace's default
 * config (`callerDefaults`).
 */
export interface PrincipalDefaults {
  /** The slug of the saved config a request runs with when it names no config or provider; null for none. */
  config: string | null;
  /** Metadata under the request's own `<prefix>metadata` (the request's values win). */
  metadata: Record<string, string>;
  /** False: a request's own `<prefix>config` is refused. */
  allowConfigOverride: boolean;
}

/** Who is calling, as resolved from an API key. */
export interface Principal {
  apiKeyId: string;
  organisationId: string;
  /** Null for organisation admin keys. */
  workspaceId: string | null;
  workspaceSlug: string | null;
  kind: ApiKeyKind;
  scopes: string[];
  /** Epoch milliseconds, or null when the key never expires. */
  expiresAt: number | null;
  userId: string | null;
  name: string;
  /** When the key's organisation was created, epoch milliseconds; null when not known. Some defaults depend on it. */
  organisationCreatedAt: number | null;
  /** How the caller authenticated: absent for an API key; `oauth` for an OAuth access token. */
  authMethod?: 'jwt' | 'oauth' | 'session';
  /** The OAuth client an access token was issued to (`authMethod` `oauth` only). */
  oauthClientId?: string;
  /**
   * The resource an OAuth access token was issued for (RFC 8707), e.g. an MCP server's URL at
   * the gateway: the token is good there only. Absent: any resource.
   */
  oauthResource?: string;
  /** Defaults for the caller's requests; absent when there are none. */
  defaults?: PrincipalDefaults;
}

/**
 * The defaults of a workspace's caller that is not an API key (a JWT, an OAuth access token
 * or a session): the workspace's `defaults.config`, with no metadata and the request's own
 * config allowed; undefined when the workspace names none.
 */
export function callerDefaults(workspaceDefaultConfig: string | null): PrincipalDefaults | undefined {
  return workspaceDefaultConfig
    ? { config: workspaceDefaultConfig, metadata: {}, allowConfigOverride: true }
    : undefined;
}
