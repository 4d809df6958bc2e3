import type { EntityManager } from 'typeorm';

/*
 * Raw SQL throughout: sessions have no TypeORM entity, the lookup joins the workspace and the
 * organisation in one statement, and a close is one conditional UPDATE (only a live session
 * is revoked, once).
 */

/** A session to store: only the hash of its secret. */
export interface NewSession {
  id: string;
  tokenHash: string;
  organisationId: string;
  workspaceId: string;
  subject: string;
  scopes: readonly string[];
  expiresAt: Date;
  userAgent: string | null;
  clientIp: string | null;
}

/** A live session with what a principal needs of its workspace and organisation. */
export interface LiveSession {
  id: string;
  organisationId: string;
  workspaceId: string;
  workspaceSlug: string;
  subject: string;
  scopes: string[];
  expiresAt: Date;
  organisationCreatedAt: Date;
}

interface SessionRow {
  id: string;
  token_hash: string;
  organisation_id: string;
  workspace_id: string;
  subject: string;
  scopes: string[];
  expires_at: Date | string;
  workspace_slug: string;
  organisation_created_at: Date | string;
}

/** Browser sessions, by the hash of their secret. */
export class SessionRepository {
  constructor(private readonly manager: EntityManager) {}

  async insert(session: NewSession): Promise<void> {
    await this.manager.query(
      `INSERT INTO control_plane.sessions
         (id, token_hash, organisation_id, workspace_id, subject, scopes, expires_at, user_agent, client_ip)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)`,
      [
        session.id,
        session.tokenHash,
        session.organisationId,
        session.workspaceId,
        session.subject,
        JSON.stringify(session.scopes),
        session.expiresAt,
        session.userAgent,
        session.clientIp,
      ],
    );
  }

  /** The session with this hash, unless it is revoked or expired. */
  async findLive(tokenHash: string): Promise<LiveSession | null> {
    const rows: SessionRow[] = await this.manager.query(
      `SELECT s.*, w.slug AS workspace_slug, o.created_at AS organisation_created_at
         FROM control_plane.sessions s
         JOIN control_plane.workspaces w ON w.id = s.workspace_id
         JOIN control_plane.organisations o ON o.id = s.organisation_id
        WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [tokenHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      workspaceSlug: row.workspace_slug,
      subject: row.subject,
      scopes: row.scopes,
      expiresAt: new Date(row.expires_at),
      organisationCreatedAt: new Date(row.organisation_created_at),
    };
  }

  /** Revokes the session with this hash, if it is not revoked yet. */
  async revoke(tokenHash: string): Promise<void> {
    await this.manager.query(
      `UPDATE control_plane.sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL`,
      [tokenHash],
    );
  }
}
