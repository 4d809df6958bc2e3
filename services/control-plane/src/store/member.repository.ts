import { randomUUID } from 'node:crypto';
import { In, type EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import type { OrganisationRole, WorkspaceRole } from '../domain/roles.ts';
import { IdentityRepository } from './identity.repository.ts';
import {
  OrganisationMemberEntity,
  WorkspaceMemberEntity,
  type User,
  type WorkspaceMember,
} from './member.entities.ts';
import { isUuid } from '../domain/ids.ts';

/*
 * TypeORM for single-table writes and reads; SQL where a query needs it: creating a user
 * keyed by lower(email) with ON CONFLICT DO NOTHING (an expression index TypeORM cannot
 * target), member lists that join users with optional filters and a count, and the row
 * locks (FOR UPDATE of the owners, FOR SHARE of a set of members given as an array).
 */

/** A user as one organisation sees them: with their role in it. */
export interface MemberOfOrganisation {
  user: User;
  role: OrganisationRole;
  joinedAt: Date;
  roleUpdatedAt: Date;
}

/** A user as one workspace sees them: with their roles in it and in its organisation. */
export interface MemberOfWorkspace extends MemberOfOrganisation {
  workspaceId: string;
  workspaceRole: WorkspaceRole;
}

export interface MemberFilter {
  email?: string | undefined;
  role?: string | undefined;
}

interface MemberRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  role: OrganisationRole;
  joined_at: Date | string;
  role_updated_at: Date | string;
  workspace_id?: string;
  workspace_role?: WorkspaceRole;
  workspace_joined_at?: Date | string;
  workspace_role_updated_at?: Date | string;
}

const MEMBER_COLUMNS = `
  u.id, u.email, u.first_name, u.last_name, u.created_at, u.updated_at,
  m.role, m.created_at AS joined_at, m.updated_at AS role_updated_at`;

function toMember(row: MemberRow): MemberOfOrganisation {
  return {
    user: {
      id: row.id,
      email: row.email,
      firstName: row.first_name,
      lastName: row.last_name,
      createdAt: new Date(row.created_at),
      updatedAt: new Date(row.updated_at),
    },
    role: row.role,
    joinedAt: new Date(row.joined_at),
    roleUpdatedAt: new Date(row.role_updated_at),
  };
}

function toWorkspaceMember(row: MemberRow): MemberOfWorkspace {
  return {
    ...toMember(row),
    workspaceId: row.workspace_id!,
    workspaceRole: row.workspace_role!,
    joinedAt: new Date(row.workspace_joined_at!),
    roleUpdatedAt: new Date(row.workspace_role_updated_at!),
  };
}

/** `AND ...` clauses for a list filter, numbered after the parameters already given. */
function filterClauses(filter: MemberFilter, params: unknown[], roleColumn: string): string {
  let sql = '';
  if (filter.email !== undefined) {
    params.push(filter.email);
    sql += ` AND lower(u.email) = lower($${params.length})`;
  }
  if (filter.role !== undefined) {
    params.push(filter.role);
    sql += ` AND ${roleColumn} = $${params.length}`;
  }
  return sql;
}

/** Users, their organisation memberships and their workspace memberships. */
export class MemberRepository {
  /** API keys, in the same transaction as the memberships. */
  readonly apiKeys: IdentityRepository;

  constructor(private readonly manager: EntityManager) {
    this.apiKeys = new IdentityRepository(manager);
  }

  transaction<T>(work: (repo: MemberRepository) => Promise<T>): Promise<T> {
    return this.manager.transaction((manager) => work(new MemberRepository(manager)));
  }

  /** The user with this email in any case, created with these names when there is none. */
  async findOrCreateUser(input: Pick<User, 'email' | 'firstName' | 'lastName'>): Promise<User> {
    const now = new Date();
    // Two organisations adding the same new person at once end up with the same user.
    await this.manager.query(
      `INSERT INTO control_plane.users (id, email, first_name, last_name, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT ((lower(email))) DO NOTHING`,
      [randomUUID(), input.email, input.firstName, input.lastName, now],
    );
    const [row]: Array<Omit<MemberRow, 'role' | 'joined_at' | 'role_updated_at'>> = await this.manager.query(
      `SELECT id, email, first_name, last_name, created_at, updated_at
         FROM control_plane.users WHERE lower(email) = lower($1)`,
      [input.email],
    );
    return toMember({ ...row!, role: 'member', joined_at: now, role_updated_at: now }).user;
  }

  async insertOrganisationMember(
    organisationId: string,
    userId: string,
    role: OrganisationRole,
  ): Promise<void> {
    const now = new Date();
    try {
      await this.manager
        .getRepository(OrganisationMemberEntity)
        .insert({ organisationId, userId, role, createdAt: now, updatedAt: now });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new Conflict(`User '${userId}' is already a member of this organisation.`);
      throw err;
    }
  }

  async findOrganisationMember(organisationId: string, userId: string): Promise<MemberOfOrganisation | null> {
    if (!isUuid(userId)) return null;
    const [row]: MemberRow[] = await this.manager.query(
      `SELECT ${MEMBER_COLUMNS}
         FROM control_plane.organisation_members m JOIN control_plane.users u ON u.id = m.user_id
        WHERE m.organisation_id = $1 AND m.user_id = $2`,
      [organisationId, userId],
    );
    return row ? toMember(row) : null;
  }

  async listOrganisationMembers(
    organisationId: string,
    page: { offset: number; limit: number },
    filter: MemberFilter,
  ): Promise<[MemberOfOrganisation[], number]> {
    const params: unknown[] = [organisationId];
    const from = `FROM control_plane.organisation_members m JOIN control_plane.users u ON u.id = m.user_id
      WHERE m.organisation_id = $1${filterClauses(filter, params, 'm.role')}`;
    const [counted]: Array<{ total: string | number }> = await this.manager.query(
      `SELECT count(*) AS total ${from}`,
      params,
    );
    const rows: MemberRow[] = await this.manager.query(
      `SELECT ${MEMBER_COLUMNS} ${from} ORDER BY m.created_at, u.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return [rows.map(toMember), Number(counted!.total)];
  }

  /** The workspaces of the organisation each user is a member of, by user. */
  async workspaceIdsOf(organisationId: string, userIds: readonly string[]): Promise<Map<string, string[]>> {
    const byUser = new Map<string, string[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return byUser;
    const rows = await this.manager.getRepository(WorkspaceMemberEntity).find({
      where: { organisationId, userId: In([...userIds]) },
      order: { createdAt: 'ASC', workspaceId: 'ASC' },
    });
    for (const row of rows) byUser.get(row.userId)?.push(row.workspaceId);
    return byUser;
  }

  /** The organisation's owners, their rows locked until the commit so that two demotions cannot both pass. */
  async lockOwners(organisationId: string): Promise<string[]> {
    const rows: Array<{ user_id: string }> = await this.manager.query(
      `SELECT user_id FROM control_plane.organisation_members
        WHERE organisation_id = $1 AND role = 'owner' ORDER BY user_id FOR UPDATE`,
      [organisationId],
    );
    return rows.map((row) => row.user_id);
  }

  /** Which of these users are members of the organisation; their rows stay share-locked until the commit. */
  async lockOrganisationMembers(organisationId: string, userIds: readonly string[]): Promise<Set<string>> {
    const rows: Array<{ user_id: string }> = await this.manager.query(
      `SELECT user_id FROM control_plane.organisation_members
        WHERE organisation_id = $1 AND user_id = ANY($2::uuid[]) ORDER BY user_id FOR SHARE`,
      [organisationId, userIds],
    );
    return new Set(rows.map((row) => row.user_id));
  }

  async updateOrganisationRole(
    organisationId: string,
    userId: string,
    role: OrganisationRole,
  ): Promise<void> {
    await this.manager
      .getRepository(OrganisationMemberEntity)
      .update({ organisationId, userId }, { role, updatedAt: new Date() });
  }

  /** Leaves the organisation and, by the cascade, all its workspaces. */
  async deleteOrganisationMember(organisationId: string, userId: string): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(OrganisationMemberEntity)
      .delete({ organisationId, userId });
    return Boolean(affected);
  }

  async insertWorkspaceMembers(
    members: ReadonlyArray<Pick<WorkspaceMember, 'workspaceId' | 'organisationId' | 'userId' | 'role'>>,
  ): Promise<void> {
    const now = new Date();
    try {
      await this.manager
        .getRepository(WorkspaceMemberEntity)
        .insert(members.map((member) => ({ ...member, createdAt: now, updatedAt: now })));
    } catch (err) {
      if (isUniqueViolation(err)) throw new Conflict('A user given is already a member of this workspace.');
      throw err;
    }
  }

  /** The workspace's members among these users. */
  async existingWorkspaceMembers(workspaceId: string, userIds: readonly string[]): Promise<string[]> {
    const rows = await this.manager
      .getRepository(WorkspaceMemberEntity)
      .find({ where: { workspaceId, userId: In([...userIds]) }, order: { userId: 'ASC' } });
    return rows.map((row) => row.userId);
  }

  async findWorkspaceMember(workspaceId: string, userId: string): Promise<MemberOfWorkspace | null> {
    if (!isUuid(userId)) return null;
    const [row] = await this.workspaceMemberRows(`w.workspace_id = $1 AND w.user_id = $2`, [
      workspaceId,
      userId,
    ]);
    return row ? toWorkspaceMember(row) : null;
  }

  async listWorkspaceMembers(
    workspaceId: string,
    page: { offset: number; limit: number },
    filter: MemberFilter,
  ): Promise<[MemberOfWorkspace[], number]> {
    const params: unknown[] = [workspaceId];
    const where = `w.workspace_id = $1${filterClauses(filter, params, 'w.role')}`;
    const [counted]: Array<{ total: string | number }> = await this.manager.query(
      `SELECT count(*) AS total FROM control_plane.workspace_members w
         JOIN control_plane.users u ON u.id = w.user_id WHERE ${where}`,
      params,
    );
    const rows = await this.workspaceMemberRows(
      `${where} ORDER BY w.created_at, u.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return [rows.map(toWorkspaceMember), Number(counted!.total)];
  }

  private workspaceMemberRows(where: string, params: unknown[]): Promise<MemberRow[]> {
    return this.manager.query(
      `SELECT ${MEMBER_COLUMNS}, w.workspace_id, w.role AS workspace_role,
              w.created_at AS workspace_joined_at, w.updated_at AS workspace_role_updated_at
         FROM control_plane.workspace_members w
         JOIN control_plane.organisation_members m
           ON m.organisation_id = w.organisation_id AND m.user_id = w.user_id
         JOIN control_plane.users u ON u.id = w.user_id
        WHERE ${where}`,
      params,
    );
  }

  /** False when the user is not (or no longer) a member of the workspace. */
  async updateWorkspaceRole(workspaceId: string, userId: string, role: WorkspaceRole): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(WorkspaceMemberEntity)
      .update({ workspaceId, userId }, { role, updatedAt: new Date() });
    return Boolean(affected);
  }

  /** False when the user was not a member of the workspace. */
  async deleteWorkspaceMember(workspaceId: string, userId: string): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(WorkspaceMemberEntity)
      .delete({ workspaceId, userId });
    return Boolean(affected);
  }
}
