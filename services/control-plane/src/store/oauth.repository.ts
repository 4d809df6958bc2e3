import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';

/*
 * Raw SQL throughout: the OAuth tables have no TypeORM entities, and the decisions that must
 * have one winner under concurrency are single conditional statements (UPDATE ... RETURNING:
 * a code used up once, a refresh token rotated once, a token or family revoked once), with
 * the still-a-member rule as an EXISTS subquery. Keep them single statements.
 */

export type TokenEndpointAuthMethod = 'none' | 'client_secret_post' | 'client_secret_basic';

export interface OAuthClient {
  clientId: string;
  /** SHA-256 of the secret; null for a public client. */
  clientSecretHash: string | null;
  clientName: string | null;
  redirectUris: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  grantTypes: string[];
  responseTypes: string[];
  scope: string | null;
  createdAt: Date;
}

/** Who consented, in which workspace: a member (userId) or a JWT subject (subject, no userId). */
export interface Grantor {
  organisationId: string;
  workspaceId: string;
  userId: string | null;
  subject: string | null;
  displayName: string;
}

export interface AuthorizationCode extends Grantor {
  codeHash: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  /** The RFC 8707 resource asked for at authorize; null when none. */
  resource: string | null;
  expiresAt: Date;
  consumedAt: Date | null;
  familyId: string | null;
}

export type OAuthTokenKind = 'access' | 'refresh';

export interface OAuthToken extends Grantor {
  id: string;
  tokenHash: string;
  kind: OAuthTokenKind;
  familyId: string;
  clientId: string;
  scopes: string[];
  /** The RFC 8707 resource (audience) the token is bound to; null when none. */
  resource: string | null;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
}

/** An access token with what a principal needs of its workspace and organisation. */
export interface AccessTokenWithOwners {
  token: OAuthToken;
  workspaceSlug: string;
  organisationCreatedAt: Date;
}

type Row = Record<string, unknown>;

const date = (value: unknown): Date => new Date(value as string | Date);
const dateOrNull = (value: unknown): Date | null => (value === null ? null : date(value));
const json = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T));

function toClient(row: Row): OAuthClient {
  return {
    clientId: row.client_id as string,
    clientSecretHash: (row.client_secret_hash as string | null) ?? null,
    clientName: (row.client_name as string | null) ?? null,
    redirectUris: json<string[]>(row.redirect_uris),
    tokenEndpointAuthMethod: row.token_endpoint_auth_method as TokenEndpointAuthMethod,
    grantTypes: json<string[]>(row.grant_types),
    responseTypes: json<string[]>(row.response_types),
    scope: (row.scope as string | null) ?? null,
    createdAt: date(row.created_at),
  };
}

function toGrantor(row: Row): Grantor {
  return {
    organisationId: row.organisation_id as string,
    workspaceId: row.workspace_id as string,
    userId: (row.user_id as string | null) ?? null,
    subject: (row.subject as string | null) ?? null,
    displayName: row.display_name as string,
  };
}

function toCode(row: Row): AuthorizationCode {
  return {
    ...toGrantor(row),
    codeHash: row.code_hash as string,
    clientId: row.client_id as string,
    redirectUri: row.redirect_uri as string,
    codeChallenge: row.code_challenge as string,
    scopes: json<string[]>(row.scopes),
    resource: (row.resource as string | null) ?? null,
    expiresAt: date(row.expires_at),
    consumedAt: dateOrNull(row.consumed_at),
    familyId: (row.family_id as string | null) ?? null,
  };
}

function toToken(row: Row): OAuthToken {
  return {
    ...toGrantor(row),
    id: row.id as string,
    tokenHash: row.token_hash as string,
    kind: row.kind as OAuthTokenKind,
    familyId: row.family_id as string,
    clientId: row.client_id as string,
    scopes: json<string[]>(row.scopes),
    resource: (row.resource as string | null) ?? null,
    expiresAt: date(row.expires_at),
    revokedAt: dateOrNull(row.revoked_at),
    createdAt: date(row.created_at),
  };
}

/** `UPDATE ... RETURNING` answers [rows, count] through TypeORM's postgres driver. */
function returned(result: unknown): Row[] {
  if (Array.isArray(result) && Array.isArray(result[0])) return result[0] as Row[];
  return (result as Row[]) ?? [];
}

/** A member of the workspace still: tokens of a user who left it stop working. */
const STILL_MEMBER = `(t.user_id IS NULL OR EXISTS (
  SELECT 1 FROM control_plane.workspace_members wm
   WHERE wm.workspace_id = t.workspace_id AND wm.user_id = t.user_id))`;

/** OAuth clients, authorization codes and tokens. */
export class OAuthRepository {
  constructor(private readonly manager: EntityManager) {}

  transaction<T>(work: (repo: OAuthRepository) => Promise<T>): Promise<T> {
    return this.manager.transaction((manager) => work(new OAuthRepository(manager)));
  }

  async insertClient(client: Omit<OAuthClient, 'createdAt'>): Promise<OAuthClient> {
    const rows: Row[] = await this.manager.query(
      `INSERT INTO control_plane.oauth_clients
         (client_id, client_secret_hash, client_name, redirect_uris, token_endpoint_auth_method,
          grant_types, response_types, scope)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6::jsonb, $7::jsonb, $8)
       RETURNING *`,
      [
        client.clientId,
        client.clientSecretHash,
        client.clientName,
        JSON.stringify(client.redirectUris),
        client.tokenEndpointAuthMethod,
        JSON.stringify(client.grantTypes),
        JSON.stringify(client.responseTypes),
        client.scope,
      ],
    );
    return toClient(rows[0]!);
  }

  async findClient(clientId: string): Promise<OAuthClient | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM control_plane.oauth_clients WHERE client_id = $1`,
      [clientId],
    );
    return rows[0] ? toClient(rows[0]) : null;
  }

  async insertCode(code: Omit<AuthorizationCode, 'consumedAt' | 'familyId'>): Promise<void> {
    await this.manager.query(
      `INSERT INTO control_plane.oauth_authorization_codes
         (code_hash, client_id, redirect_uri, code_challenge, organisation_id, workspace_id, user_id,
          subject, display_name, scopes, expires_at, resource)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12)`,
      [
        code.codeHash,
        code.clientId,
        code.redirectUri,
        code.codeChallenge,
        code.organisationId,
        code.workspaceId,
        code.userId,
        code.subject,
        code.displayName,
        JSON.stringify(code.scopes),
        code.expiresAt,
        code.resource,
      ],
    );
  }

  /**
   * Uses the code up, atomically: one conditional UPDATE, so that of any number of concurrent
   * exchanges exactly one gets the row. Null when the code is unknown, used, expired, or was
   * issued to another client, redirect URI or PKCE challenge (a mismatch does not use it up).
   */
  async consumeCode(
    codeHash: string,
    bound: { clientId: string; redirectUri: string; codeChallenge: string },
  ): Promise<AuthorizationCode | null> {
    const rows = returned(
      await this.manager.query(
        `UPDATE control_plane.oauth_authorization_codes
            SET consumed_at = now()
          WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > now()
            AND client_id = $2 AND redirect_uri = $3 AND code_challenge = $4
          RETURNING *`,
        [codeHash, bound.clientId, bound.redirectUri, bound.codeChallenge],
      ),
    );
    return rows[0] ? toCode(rows[0]) : null;
  }

  async findCode(codeHash: string): Promise<AuthorizationCode | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM control_plane.oauth_authorization_codes WHERE code_hash = $1`,
      [codeHash],
    );
    return rows[0] ? toCode(rows[0]) : null;
  }

  async setCodeFamily(codeHash: string, familyId: string): Promise<void> {
    await this.manager.query(
      `UPDATE control_plane.oauth_authorization_codes SET family_id = $2 WHERE code_hash = $1`,
      [codeHash, familyId],
    );
  }

  /** Codes expired for more than a day: nothing can use them, not even to detect a replay. */
  async deleteStaleCodes(): Promise<void> {
    await this.manager.query(
      `DELETE FROM control_plane.oauth_authorization_codes WHERE expires_at < now() - interval '1 day'`,
    );
  }

  /** `createdAt` is the issuer's clock, as `expiresAt` is: the two are exactly the lifetime apart. */
  async insertToken(token: Omit<OAuthToken, 'id' | 'revokedAt'>): Promise<OAuthToken> {
    const rows: Row[] = await this.manager.query(
      `INSERT INTO control_plane.oauth_tokens
         (id, token_hash, kind, family_id, client_id, organisation_id, workspace_id, user_id, subject,
          display_name, scopes, expires_at, created_at, resource)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14)
       RETURNING *`,
      [
        randomUUID(),
        token.tokenHash,
        token.kind,
        token.familyId,
        token.clientId,
        token.organisationId,
        token.workspaceId,
        token.userId,
        token.subject,
        token.displayName,
        JSON.stringify(token.scopes),
        token.expiresAt,
        token.createdAt,
        token.resource,
      ],
    );
    return toToken(rows[0]!);
  }

  async findToken(tokenHash: string): Promise<OAuthToken | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT * FROM control_plane.oauth_tokens WHERE token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ? toToken(rows[0]) : null;
  }

  /** An active access token (not revoked, not expired, its user still a member) with its owners. */
  async findActiveAccessToken(tokenHash: string): Promise<AccessTokenWithOwners | null> {
    const rows: Row[] = await this.manager.query(
      `SELECT t.*, w.slug AS workspace_slug, o.created_at AS organisation_created_at
         FROM control_plane.oauth_tokens t
         JOIN control_plane.workspaces w ON w.id = t.workspace_id
         JOIN control_plane.organisations o ON o.id = t.organisation_id
        WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL
          AND t.expires_at > now() AND ${STILL_MEMBER}`,
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      token: toToken(row),
      workspaceSlug: row.workspace_slug as string,
      organisationCreatedAt: date(row.organisation_created_at),
    };
  }

  /**
   * Revokes an active refresh token of the client, atomically (one conditional UPDATE), and
   * returns it; null when it is unknown, another client's, expired, already revoked, or its
   * user has left the workspace.
   */
  async consumeRefreshToken(tokenHash: string, clientId: string): Promise<OAuthToken | null> {
    const rows = returned(
      await this.manager.query(
        `UPDATE control_plane.oauth_tokens t
            SET revoked_at = now()
          WHERE t.token_hash = $1 AND t.kind = 'refresh' AND t.client_id = $2
            AND t.revoked_at IS NULL AND t.expires_at > now() AND ${STILL_MEMBER}
          RETURNING t.*`,
        [tokenHash, clientId],
      ),
    );
    return rows[0] ? toToken(rows[0]) : null;
  }

  /** Revokes one token; returns it as it was when this call revoked it, null when it already was. */
  async revokeToken(id: string): Promise<OAuthToken | null> {
    const rows = returned(
      await this.manager.query(
        `UPDATE control_plane.oauth_tokens SET revoked_at = now()
          WHERE id = $1 AND revoked_at IS NULL RETURNING *`,
        [id],
      ),
    );
    return rows[0] ? toToken(rows[0]) : null;
  }

  /** Revokes every still active token of the family; returns those this call revoked. */
  async revokeFamily(familyId: string): Promise<OAuthToken[]> {
    const rows = returned(
      await this.manager.query(
        `UPDATE control_plane.oauth_tokens SET revoked_at = now()
          WHERE family_id = $1 AND revoked_at IS NULL RETURNING *`,
        [familyId],
      ),
    );
    return rows.map(toToken);
  }

  /** Revokes a user's live tokens in the organisation, or in one of its workspaces. */
  async revokeUserTokens(
    organisationId: string,
    userId: string,
    workspaceId?: string,
  ): Promise<OAuthToken[]> {
    const rows = returned(
      await this.manager.query(
        `UPDATE control_plane.oauth_tokens SET revoked_at = now()
          WHERE organisation_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR workspace_id = $3::uuid)
            AND revoked_at IS NULL RETURNING *`,
        [organisationId, userId, workspaceId ?? null],
      ),
    );
    return rows.map(toToken);
  }

  /** Whether the token's user (if it has one) is still a member of its workspace. */
  async stillMember(token: Pick<OAuthToken, 'workspaceId' | 'userId'>): Promise<boolean> {
    if (!token.userId) return true;
    const rows: unknown[] = await this.manager.query(
      `SELECT 1 FROM control_plane.workspace_members WHERE workspace_id = $1 AND user_id = $2`,
      [token.workspaceId, token.userId],
    );
    return rows.length > 0;
  }

  /** A user's name or email, for the consent screen and introspection. */
  async userDisplayName(userId: string): Promise<string | null> {
    const rows: Array<{ email: string; first_name: string | null; last_name: string | null }> =
      await this.manager.query(`SELECT email, first_name, last_name FROM control_plane.users WHERE id = $1`, [
        userId,
      ]);
    const row = rows[0];
    if (!row) return null;
    const name = [row.first_name, row.last_name].filter(Boolean).join(' ').trim();
    return name || row.email;
  }
}
