import { randomUUID } from 'node:crypto';
import { Forbidden, randomToken, sha256Hex } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { SessionRepository } from '../store/session.repository.ts';

/** How long a browser session lasts. */
export const SESSION_TTL_MS = 8 * 3_600_000;

/**
 * Browser sessions, opened with a JWT (or by an SSO login) and carried in an HttpOnly cookie. A session
 * acts like the token that opened it (same workspace and scopes) until it expires or is closed;
 * every service resolves it like a key, by the hash of its secret.
 */
export class SessionService {
  constructor(
    private readonly repo: SessionRepository,
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
    await this.repo.insert({
      id: randomUUID(),
      tokenHash: sha256Hex(token),
      organisationId: session.organisationId,
      workspaceId: session.workspaceId,
      subject: session.subject,
      scopes: session.scopes,
      expiresAt: until,
      userAgent: from.userAgent?.slice(0, 512) ?? null,
      clientIp: from.clientIp ?? null,
    });
    return { token, expiresAt: until };
  }

  /** The principal of a live session, by the hash of its secret. */
  async resolve(tokenHash: string): Promise<Principal | null> {
    const session = await this.repo.findLive(tokenHash);
    if (!session) return null;
    return {
      apiKeyId: session.id,
      organisationId: session.organisationId,
      workspaceId: session.workspaceId,
      workspaceSlug: session.workspaceSlug,
      kind: 'workspace_user',
      scopes: session.scopes,
      expiresAt: session.expiresAt.getTime(),
      userId: null,
      name: `session:${session.subject}`,
      organisationCreatedAt: session.organisationCreatedAt.getTime(),
      authMethod: 'session',
    };
  }

  /** Closes the caller's session at once: every cache holding it drops it. */
  async close(principal: Principal, tokenHash: string): Promise<void> {
    if (principal.authMethod !== 'session') {
      throw new Forbidden('Only a session can be closed this way.', { code: 'session_required' });
    }
    await this.repo.revoke(tokenHash);
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
