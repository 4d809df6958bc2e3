import type { EntityManager } from 'typeorm';
import type { WorkspaceRole } from '../domain/roles.ts';

/*
 * Raw SQL: the member lookup joins users and memberships and picks the first workspace with a
 * LATERAL subquery, in one statement; the first-workspace read is SQL too, to keep one idiom.
 */

/** What an SSO login needs to know of a person in one organisation. */
export interface SsoMember {
  userId: string;
  email: string;
  /** The workspace they joined first and their role there; null when they belong to none. */
  workspace: { id: string; role: WorkspaceRole } | null;
}

/** Reads for SSO logins: the member behind an email, and an organisation's first workspace. */
export class SsoSessionRepository {
  constructor(private readonly manager: EntityManager) {}

  /** The organisation's member with this email (any case), or null when there is none. */
  async findMember(organisationId: string, email: string): Promise<SsoMember | null> {
    const rows: Array<{
      id: string;
      email: string;
      workspace_id: string | null;
      workspace_role: WorkspaceRole | null;
    }> = await this.manager.query(
      `SELECT u.id, u.email, w.workspace_id, w.role AS workspace_role
           FROM control_plane.users u
           JOIN control_plane.organisation_members m ON m.user_id = u.id AND m.organisation_id = $1
           LEFT JOIN LATERAL (
             SELECT wm.workspace_id, wm.role FROM control_plane.workspace_members wm
              WHERE wm.organisation_id = $1 AND wm.user_id = u.id
              ORDER BY wm.created_at, wm.workspace_id LIMIT 1
           ) w ON true
          WHERE lower(u.email) = lower($2)`,
      [organisationId, email],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      userId: row.id,
      email: row.email,
      workspace: row.workspace_id ? { id: row.workspace_id, role: row.workspace_role! } : null,
    };
  }

  /** The organisation's oldest workspace (the one created with it), if it has any. */
  async firstWorkspaceId(organisationId: string): Promise<string | null> {
    const rows: Array<{ id: string }> = await this.manager.query(
      `SELECT id FROM control_plane.workspaces WHERE organisation_id = $1 ORDER BY created_at, id LIMIT 1`,
      [organisationId],
    );
    return rows[0]?.id ?? null;
  }
}
