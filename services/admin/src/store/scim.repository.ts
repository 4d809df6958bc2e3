/**
 * TypeORM, except four reads in SQL: rolesIn needs DISTINCT ON to pick each user's highest
 * mapped role in one query, and groupsOf, listMappings and mappedWorkspacesOf join tables the
 * entities declare no relations between, answering columns of both.
 */
import { randomUUID } from 'node:crypto';
import { In, type EntityManager } from 'typeorm';
import { Conflict } from '@switchyard/core';
import { isUniqueViolation } from '@switchyard/adapters';
import {
  ScimCredentialEntity,
  ScimGroupEntity,
  ScimGroupMemberEntity,
  ScimUserEntity,
  ScimWorkspaceMappingEntity,
  type ScimCredential,
  type ScimGroup,
  type ScimUser,
  type ScimWorkspaceMapping,
  type ScimWorkspaceRole,
} from './entities.ts';

export interface Page {
  offset: number;
  limit: number;
}

/** An equality filter (`attribute eq "value"`); text compared without regard to case. */
export interface ScimEquality {
  attribute: string;
  value: string;
}

export interface MappingWithGroup extends ScimWorkspaceMapping {
  groupName: string;
}

const USER_COLUMNS: Record<string, string> = {
  username: 'lower(u.user_name)',
  externalid: 'lower(u.external_id)',
  'emails.value': 'lower(u.email)',
  'emails[type eq "work"].value': 'lower(u.email)',
  displayname: 'lower(u.display_name)',
};

const GROUP_COLUMNS: Record<string, string> = {
  displayname: 'lower(g.display_name)',
  externalid: 'lower(g.external_id)',
};

/** The attributes a list filter may name, as SCIM clients write them (names are case-insensitive). */
export const USER_FILTER_ATTRIBUTES = Object.keys(USER_COLUMNS);
export const GROUP_FILTER_ATTRIBUTES = Object.keys(GROUP_COLUMNS);

const ROLE_RANK = `CASE m.role WHEN 'admin' THEN 3 WHEN 'manager' THEN 2 ELSE 1 END`;

/** SCIM tokens, users, groups, memberships and workspace mappings; every query is bound to one organisation. */
export class ScimRepository {
  constructor(private readonly manager: EntityManager) {}

  transaction<T>(work: (repo: ScimRepository) => Promise<T>): Promise<T> {
    return this.manager.transaction((manager) => work(new ScimRepository(manager)));
  }

  findCredential(organisationId: string): Promise<ScimCredential | null> {
    return this.manager.getRepository(ScimCredentialEntity).findOneBy({ organisationId });
  }

  /** Stores the organisation's first token; false when it has one already (decided by the primary key). */
  async insertCredential(credential: ScimCredential): Promise<boolean> {
    try {
      await this.manager.getRepository(ScimCredentialEntity).insert(credential);
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  /** Stores the token in place of any the organisation has, in one statement. */
  async replaceCredential(credential: ScimCredential): Promise<void> {
    await this.manager.getRepository(ScimCredentialEntity).upsert(credential, ['organisationId']);
  }

  async deleteCredential(organisationId: string): Promise<boolean> {
    const { affected } = await this.manager.getRepository(ScimCredentialEntity).delete({ organisationId });
    return Boolean(affected);
  }

  findUser(organisationId: string, userId: string): Promise<ScimUser | null> {
    return this.manager.getRepository(ScimUserEntity).findOneBy({ organisationId, userId });
  }

  async findUsers(organisationId: string, userIds: readonly string[]): Promise<ScimUser[]> {
    if (userIds.length === 0) return [];
    return this.manager.getRepository(ScimUserEntity).findBy({ organisationId, userId: In([...userIds]) });
  }

  async insertUser(user: ScimUser): Promise<void> {
    try {
      await this.manager.getRepository(ScimUserEntity).insert(user);
    } catch (err) {
      if (isUniqueViolation(err)) throw userExists(user.userName);
      throw err;
    }
  }

  async updateUser(user: ScimUser): Promise<void> {
    try {
      await this.manager
        .getRepository(ScimUserEntity)
        .update({ organisationId: user.organisationId, userId: user.userId }, user);
    } catch (err) {
      if (isUniqueViolation(err)) throw userExists(user.userName);
      throw err;
    }
  }

  async deleteUser(organisationId: string, userId: string): Promise<boolean> {
    const { affected } = await this.manager.getRepository(ScimUserEntity).delete({ organisationId, userId });
    return Boolean(affected);
  }

  async listUsers(
    organisationId: string,
    filter: ScimEquality | null,
    page: Page,
  ): Promise<[ScimUser[], number]> {
    const query = this.manager
      .getRepository(ScimUserEntity)
      .createQueryBuilder('u')
      .where('u.organisation_id = :organisationId', { organisationId });
    if (filter) query.andWhere(`${USER_COLUMNS[filter.attribute]} = lower(:value)`, { value: filter.value });
    return query
      .orderBy('u.created_at', 'ASC')
      .addOrderBy('u.user_id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }

  async insertGroup(group: Omit<ScimGroup, 'id'>): Promise<ScimGroup> {
    const created = { id: randomUUID(), ...group };
    try {
      await this.manager.getRepository(ScimGroupEntity).insert(created);
    } catch (err) {
      if (isUniqueViolation(err)) throw groupExists(group.displayName);
      throw err;
    }
    return created;
  }

  async updateGroup(group: ScimGroup): Promise<void> {
    try {
      await this.manager
        .getRepository(ScimGroupEntity)
        .update({ id: group.id, organisationId: group.organisationId }, group);
    } catch (err) {
      if (isUniqueViolation(err)) throw groupExists(group.displayName);
      throw err;
    }
  }

  findGroup(organisationId: string, id: string): Promise<ScimGroup | null> {
    return this.manager.getRepository(ScimGroupEntity).findOneBy({ organisationId, id });
  }

  findGroupByName(organisationId: string, displayName: string): Promise<ScimGroup | null> {
    return this.manager
      .getRepository(ScimGroupEntity)
      .createQueryBuilder('g')
      .where('g.organisation_id = :organisationId', { organisationId })
      .andWhere('lower(g.display_name) = lower(:displayName)', { displayName })
      .getOne();
  }

  async deleteGroup(organisationId: string, id: string): Promise<boolean> {
    const { affected } = await this.manager.getRepository(ScimGroupEntity).delete({ organisationId, id });
    return Boolean(affected);
  }

  /** Groups by an equality filter or a case-insensitive `search` in their names. */
  async listGroups(
    organisationId: string,
    filter: { equality?: ScimEquality | null; search?: string | undefined },
    page: Page,
  ): Promise<[ScimGroup[], number]> {
    const query = this.manager
      .getRepository(ScimGroupEntity)
      .createQueryBuilder('g')
      .where('g.organisation_id = :organisationId', { organisationId });
    if (filter.equality) {
      query.andWhere(`${GROUP_COLUMNS[filter.equality.attribute]} = lower(:value)`, {
        value: filter.equality.value,
      });
    }
    if (filter.search) {
      query.andWhere(`g.display_name ILIKE :search ESCAPE '\\'`, {
        search: `%${filter.search.replace(/[\\%_]/g, '\\$&')}%`,
      });
    }
    return query
      .orderBy('g.created_at', 'ASC')
      .addOrderBy('g.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
  }

  /** Members of each group, by group id. */
  async membersOf(groupIds: readonly string[]): Promise<Map<string, string[]>> {
    const byGroup = new Map<string, string[]>(groupIds.map((id) => [id, []]));
    if (groupIds.length === 0) return byGroup;
    const rows = await this.manager
      .getRepository(ScimGroupMemberEntity)
      .find({ where: { groupId: In([...groupIds]) }, order: { userId: 'ASC' } });
    for (const row of rows) byGroup.get(row.groupId)?.push(row.userId);
    return byGroup;
  }

  /** The groups each user belongs to, by user id. */
  async groupsOf(organisationId: string, userIds: readonly string[]): Promise<Map<string, ScimGroup[]>> {
    const byUser = new Map<string, ScimGroup[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return byUser;
    const rows: Array<{ user_id: string; id: string; display_name: string }> = await this.manager.query(
      `SELECT gm.user_id, g.id, g.display_name
         FROM admin.scim_group_members gm JOIN admin.scim_groups g ON g.id = gm.group_id
        WHERE gm.organisation_id = $1 AND gm.user_id = ANY($2::uuid[])
        ORDER BY g.display_name`,
      [organisationId, userIds],
    );
    for (const row of rows) {
      byUser.get(row.user_id)?.push({ id: row.id, displayName: row.display_name } as ScimGroup);
    }
    return byUser;
  }

  async addMembers(organisationId: string, groupId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.manager
      .createQueryBuilder()
      .insert()
      .into(ScimGroupMemberEntity)
      .values(userIds.map((userId) => ({ groupId, userId, organisationId })))
      .orIgnore()
      .execute();
  }

  async removeMembers(groupId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.manager.getRepository(ScimGroupMemberEntity).delete({ groupId, userId: In([...userIds]) });
  }

  async insertMapping(mapping: Omit<ScimWorkspaceMapping, 'id'>): Promise<ScimWorkspaceMapping> {
    const created = { id: randomUUID(), ...mapping };
    try {
      await this.manager.getRepository(ScimWorkspaceMappingEntity).insert(created);
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new Conflict('This group is already mapped to this workspace.', {
          param: 'workspace_id',
          code: 'mapping_exists',
        });
      }
      throw err;
    }
    return created;
  }

  mappingsOfGroup(groupId: string): Promise<ScimWorkspaceMapping[]> {
    return this.manager.getRepository(ScimWorkspaceMappingEntity).findBy({ groupId });
  }

  findMapping(organisationId: string, id: string): Promise<ScimWorkspaceMapping | null> {
    return this.manager.getRepository(ScimWorkspaceMappingEntity).findOneBy({ organisationId, id });
  }

  async deleteMapping(organisationId: string, id: string): Promise<boolean> {
    const { affected } = await this.manager
      .getRepository(ScimWorkspaceMappingEntity)
      .delete({ organisationId, id });
    return Boolean(affected);
  }

  async listMappings(organisationId: string, page: Page): Promise<[MappingWithGroup[], number]> {
    const [counted]: Array<{ total: string | number }> = await this.manager.query(
      `SELECT count(*) AS total FROM admin.scim_workspace_mappings WHERE organisation_id = $1`,
      [organisationId],
    );
    const rows: Array<{
      id: string;
      organisation_id: string;
      group_id: string;
      workspace_id: string;
      role: ScimWorkspaceRole;
      created_at: Date | string;
      created_by: string;
      group_name: string;
    }> = await this.manager.query(
      `SELECT m.*, g.display_name AS group_name
         FROM admin.scim_workspace_mappings m JOIN admin.scim_groups g ON g.id = m.group_id
        WHERE m.organisation_id = $1
        ORDER BY m.created_at, m.id LIMIT $2 OFFSET $3`,
      [organisationId, page.limit, page.offset],
    );
    return [
      rows.map((row) => ({
        id: row.id,
        organisationId: row.organisation_id,
        groupId: row.group_id,
        workspaceId: row.workspace_id,
        role: row.role,
        createdAt: new Date(row.created_at),
        createdBy: row.created_by,
        groupName: row.group_name,
      })),
      Number(counted!.total),
    ];
  }

  /** The workspaces the groups of these users map to: where their memberships may need to change. */
  async mappedWorkspacesOf(organisationId: string, userIds: readonly string[]): Promise<string[]> {
    if (userIds.length === 0) return [];
    const rows: Array<{ workspace_id: string }> = await this.manager.query(
      `SELECT DISTINCT m.workspace_id
         FROM admin.scim_group_members gm JOIN admin.scim_workspace_mappings m ON m.group_id = gm.group_id
        WHERE gm.organisation_id = $1 AND gm.user_id = ANY($2::uuid[])`,
      [organisationId, userIds],
    );
    return rows.map((row) => row.workspace_id);
  }

  /**
   * The role each active user should hold in the workspace: the highest of the mappings of
   * their groups to it. A user with none (or inactive) is absent.
   */
  async rolesIn(
    organisationId: string,
    workspaceId: string,
    userIds: readonly string[],
  ): Promise<Map<string, ScimWorkspaceRole>> {
    const roles = new Map<string, ScimWorkspaceRole>();
    if (userIds.length === 0) return roles;
    const rows: Array<{ user_id: string; role: ScimWorkspaceRole }> = await this.manager.query(
      `SELECT DISTINCT ON (gm.user_id) gm.user_id, m.role
         FROM admin.scim_group_members gm
         JOIN admin.scim_workspace_mappings m ON m.group_id = gm.group_id
         JOIN admin.scim_users u ON u.organisation_id = gm.organisation_id AND u.user_id = gm.user_id
        WHERE gm.organisation_id = $1 AND m.workspace_id = $2 AND gm.user_id = ANY($3::uuid[]) AND u.active
        ORDER BY gm.user_id, ${ROLE_RANK} DESC`,
      [organisationId, workspaceId, userIds],
    );
    for (const row of rows) roles.set(row.user_id, row.role);
    return roles;
  }
}

function userExists(userName: string): Conflict {
  return new Conflict(`A user with userName '${userName}' already exists.`, {
    param: 'userName',
    code: 'uniqueness',
  });
}

function groupExists(displayName: string): Conflict {
  return new Conflict(`A group named '${displayName}' already exists.`, {
    param: 'displayName',
    code: 'uniqueness',
  });
}
