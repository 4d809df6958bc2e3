// Who is calling: the principal every authentication path resolves (auth.ts re-exports it).
// Its own module so that scopes.ts and jwt-auth.ts need not import auth.ts, which imports them.

export type ApiKeyKind = 'organisation_admin' | 'workspace_service' | 'workspace_user';

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
}
