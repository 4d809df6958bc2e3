import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import {
  Forbidden,
  publishChange,
  randomToken,
  sha256Hex,
  type EventBus,
  type Principal,
} from '@switchyard/platform';
import { events } from '@switchyard/proto';

/** How long a browser session lasts. */
export const SESSION_TTL_MS = 8 * 3_600_000;

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

/**
 * Browser sessions, opened with a JWT (or by an SSO login) and carried in an HttpOnly cookie. A session
 * acts like the token that opened it (same workspace and scopes) until it expires or is closed;
 * every service resolves it like a key, by the hash of its secret.
 */
export class SessionService {
  constructor(
    private readonly manager: EntityManager,
    private readonly bus: EventBus,
  ) {}

  async open(
    principal: Principal,
    from: { userAgent: string | undefined; clientIp: string | undefined },
  ): Promise<{ token: string; expiresAt: Date }> {
    if (principal.authMethod !== 'jwt' || !principal.workspaceId) {
      throw new Forbidden(
        'A session is opened with a JWT of a person; API keys and other tokens cannot open one.',
        {
          code: 'jwt_required',
        },
      );
    }
    // A session never outlives the token that opened it.
    return this.insert(
      {
        organisationId: principal.organisationId,
        workspaceId: principal.workspaceId,
        subject: principal.name.replace(/^jwt:/, ''),
        scopes: principal.scopes,
        notAfter: principal.expiresAt,
      },
      from,
    );
  }

  /** A session of a person their organisation's SSO vouched for, in one of their workspaces. */
  openForUser(
    user: { organisationId: string; workspaceId: string; email: string; scopes: readonly string[] },
    from: { userAgent: string | undefined; clientIp: string | undefined },
  ): Promise<{ token: string; expiresAt: Date }> {
    return this.insert(
      {
        organisationId: user.organisationId,
        workspaceId: user.workspaceId,
        subject: user.email,
        scopes: user.scopes,
        notAfter: null,
      },
      from,
    );
  }

  private async insert(
    session: {
      organisationId: string;
      workspaceId: string;
      subject: string;
      scopes: readonly string[];
      /** Epoch milliseconds the session may not outlive, if any. */
      notAfter: number | null;
    },
    from: { userAgent: string | undefined; clientIp: string | undefined },
  ): Promise<{ token: string; expiresAt: Date }> {
    const token = `sys-${randomToken(32)}`;
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    const until =
      session.notAfter !== null && session.notAfter < expiresAt.getTime()
        ? new Date(session.notAfter)
        : expiresAt;
    await this.manager.query(
      `INSERT INTO control_plane.sessions
         (id, token_hash, organisation_id, workspace_id, subject, scopes, expires_at, user_agent, client_ip)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9)`,
      [
        randomUUID(),
        sha256Hex(token),
        session.organisationId,
        session.workspaceId,
        session.subject,
        JSON.stringify(session.scopes),
        until,
        from.userAgent?.slice(0, 512) ?? null,
        from.clientIp ?? null,
      ],
    );
    return { token, expiresAt: until };
  }

  /** The principal of a live session, by the hash of its secret. */
  async resolve(tokenHash: string): Promise<Principal | null> {
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
      apiKeyId: row.id,
      organisationId: row.organisation_id,
      workspaceId: row.workspace_id,
      workspaceSlug: row.workspace_slug,
      kind: 'workspace_user',
      scopes: row.scopes,
      expiresAt: new Date(row.expires_at).getTime(),
      userId: null,
      name: `session:${row.subject}`,
      organisationCreatedAt: new Date(row.organisation_created_at).getTime(),
      authMethod: 'session',
    };
  }

  /** Closes the caller's session at once: every cache holding it drops it. */
  async close(principal: Principal, tokenHash: string): Promise<void> {
    if (principal.authMethod !== 'session') {
      throw new Forbidden('Only a session can be closed this way.', { code: 'session_required' });
    }
    await this.manager.query(
      `UPDATE control_plane.sessions SET revoked_at = now() WHERE token_hash = $1 AND revoked_at IS NULL`,
      [tokenHash],
    );
    publishChange(this.bus, {
      entity: 'api_key',
      entityId: principal.apiKeyId,
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId ?? '',
      action: events.ChangeAction.DELETED,
      cacheKey: tokenHash,
    });
  }
}
