import {
  BadRequest,
  Conflict,
  NotFound,
  assertOrganisationAdmin,
  randomToken,
  safeEqual,
  sha256Hex,
  type Logger,
  type Principal,
  type SecretBox,
} from '@switchyard/platform';
import type {
  ScimCredential,
  ScimGroup,
  ScimUser,
  ScimWorkspaceMapping,
  ScimWorkspaceRole,
} from '../store/entities.ts';
import type { MappingWithGroup, Page, ScimEquality, ScimRepository } from '../store/scim.repository.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (value: string) => UUID.test(value);

/** A user as the identity provider describes it (parsed at the edge). */
export type ScimUserInput = Omit<ScimUser, 'organisationId' | 'userId' | 'createdAt' | 'updatedAt'>;

export interface ScimGroupInput {
  displayName: string;
  externalId: string | null;
  /** User ids. */
  members: string[];
}

/** One operation of a SCIM PatchOp request (RFC 7644 section 3.5.2). */
export interface PatchOperation {
  op: 'add' | 'remove' | 'replace';
  path?: string | undefined;
  value?: unknown;
}

export interface UserWithGroups extends ScimUser {
  groups: Array<{ id: string; displayName: string }>;
}

export interface GroupWithMembers extends ScimGroup {
  members: Array<{ id: string; display: string }>;
}

export interface MappingInput {
  workspaceId: string;
  role: ScimWorkspaceRole;
  groupId?: string | undefined;
  groupName?: string | undefined;
}

/**
 * SCIM provisioning of an organisation: its token, the users and groups its identity provider
 * pushes, and the mappings that make a group's members members of workspaces. Users become
 * organisation users in control-plane; group mappings become workspace memberships there, so
 * the same steps run as for an administrator's changes (keys created on joining, keys and
 * tokens revoked on leaving). The token is stored as a hash (to find it) and as ciphertext
 * (to show it masked); it is shown in full once, when it is issued.
 */
export class ScimService {
  constructor(
    private readonly repo: ScimRepository,
    private readonly secrets: SecretBox,
    private readonly directory: OrganisationDirectory,
    private readonly logger: Logger,
  ) {}

  /** Issues the organisation's token; one that exists is replaced only when asked to. */
  async issueToken(
    principal: Principal,
    replaceExisting: boolean,
  ): Promise<{ token: string; credential: ScimCredential }> {
    assertOrganisationAdmin(principal);
    const token = `scim_${randomToken(32)}`;
    const credential: ScimCredential = {
      organisationId: principal.organisationId,
      tokenHash: sha256Hex(token),
      encryptedToken: this.secrets.encrypt(token),
      createdAt: new Date(),
      createdBy: principal.apiKeyId,
    };
    // One statement decides, so of concurrent first issues exactly one stores its token.
    if (replaceExisting) await this.repo.replaceCredential(credential);
    else if (!(await this.repo.insertCredential(credential))) {
      throw new Conflict(
        "The organisation has a SCIM token already: send 'replace_existing: true' to rotate it.",
        { param: 'replace_existing', code: 'scim_token_exists' },
      );
    }
    return { token, credential };
  }

  async getToken(principal: Principal): Promise<ScimCredential> {
    assertOrganisationAdmin(principal);
    const credential = await this.repo.findCredential(principal.organisationId);
    if (!credential) throw new NotFound('The organisation has no SCIM token.');
    return credential;
  }

  async deleteToken(principal: Principal): Promise<void> {
    assertOrganisationAdmin(principal);
    if (!(await this.repo.deleteCredential(principal.organisationId)))
      throw new NotFound('The organisation has no SCIM token.');
  }

  maskedToken(credential: ScimCredential): string {
    return `****${this.secrets.decrypt(credential.encryptedToken).slice(-4)}`;
  }

  /** Whether `presented` is the SCIM token of this organisation (and of no other). */
  async authenticate(organisationId: string, presented: string): Promise<boolean> {
    if (!isUuid(organisationId)) return false;
    const credential = await this.repo.findCredential(organisationId);
    return credential !== null && safeEqual(sha256Hex(presented), credential.tokenHash);
  }

  async listUsers(
    organisationId: string,
    filter: ScimEquality | null,
    page: Page,
  ): Promise<[UserWithGroups[], number]> {
    const [users, total] = await this.repo.listUsers(organisationId, filter, page);
    return [await this.withGroups(organisationId, users), total];
  }

  async getUser(organisationId: string, userId: string): Promise<UserWithGroups> {
    const [user] = await this.withGroups(organisationId, [await this.findUser(organisationId, userId)]);
    return user!;
  }

  async createUser(organisationId: string, input: ScimUserInput): Promise<UserWithGroups> {
    const userId = await this.directory.provisionUser(organisationId, {
      email: input.email,
      firstName: input.givenName,
      lastName: input.familyName,
    });
    const existing = await this.repo.findUser(organisationId, userId);
    if (existing) {
      throw new Conflict(`The user '${input.email}' is provisioned already, as '${existing.userName}'.`, {
        param: 'userName',
        code: 'uniqueness',
      });
    }
    const now = new Date();
    await this.repo.insertUser({ organisationId, userId, ...input, createdAt: now, updatedAt: now });
    if (!input.active) await this.directory.removeUser(organisationId, userId);
    return this.getUser(organisationId, userId);
  }

  async replaceUser(organisationId: string, userId: string, input: ScimUserInput): Promise<UserWithGroups> {
    const current = await this.findUser(organisationId, userId);
    return this.saveUser(current, input);
  }

  async patchUser(
    organisationId: string,
    userId: string,
    operations: readonly PatchOperation[],
  ): Promise<UserWithGroups> {
    const current = await this.findUser(organisationId, userId);
    const next: ScimUserInput = {
      userName: current.userName,
      email: current.email,
      externalId: current.externalId,
      givenName: current.givenName,
      familyName: current.familyName,
      displayName: current.displayName,
      active: current.active,
    };
    for (const operation of operations) applyUserOperation(next, operation);
    return this.saveUser(current, next);
  }

  /** The user leaves the organisation; the identity provider's record of them goes. */
  async deleteUser(organisationId: string, userId: string): Promise<void> {
    const user = await this.findUser(organisationId, userId);
    // The delete decides between concurrent deletes; only its winner removes the user upstream.
    if (!(await this.repo.deleteUser(organisationId, user.userId)))
      throw new NotFound(`User '${userId}' not found.`);
    if (user.active) await this.directory.removeUser(organisationId, user.userId);
  }

  async listGroups(
    organisationId: string,
    filter: { equality?: ScimEquality | null; search?: string | undefined },
    page: Page,
  ): Promise<[GroupWithMembers[], number]> {
    const [groups, total] = await this.repo.listGroups(organisationId, filter, page);
    return [await this.withMembers(organisationId, groups), total];
  }

  async getGroup(organisationId: string, groupId: string): Promise<GroupWithMembers> {
    const [group] = await this.withMembers(organisationId, [await this.findGroup(organisationId, groupId)]);
    return group!;
  }

  async createGroup(organisationId: string, input: ScimGroupInput): Promise<GroupWithMembers> {
    await this.assertUsersOf(organisationId, input.members);
    const now = new Date();
    const group = await this.repo.insertGroup({
      organisationId,
      displayName: input.displayName,
      externalId: input.externalId,
      createdAt: now,
      updatedAt: now,
    });
    await this.repo.addMembers(organisationId, group.id, input.members);
    return this.getGroup(organisationId, group.id);
  }

  async replaceGroup(
    organisationId: string,
    groupId: string,
    input: ScimGroupInput,
  ): Promise<GroupWithMembers> {
    const group = await this.findGroup(organisationId, groupId);
    await this.assertUsersOf(organisationId, input.members);
    const before = (await this.repo.membersOf([group.id])).get(group.id) ?? [];
    await this.saveGroup(group, input.displayName, input.externalId, before, input.members);
    return this.getGroup(organisationId, group.id);
  }

  async patchGroup(
    organisationId: string,
    groupId: string,
    operations: readonly PatchOperation[],
  ): Promise<GroupWithMembers> {
    const group = await this.findGroup(organisationId, groupId);
    const before = (await this.repo.membersOf([group.id])).get(group.id) ?? [];
    const next = { displayName: group.displayName, externalId: group.externalId, members: new Set(before) };
    for (const operation of operations) applyGroupOperation(next, operation);
    const members = [...next.members];
    await this.assertUsersOf(organisationId, members);
    await this.saveGroup(group, next.displayName, next.externalId, before, members);
    return this.getGroup(organisationId, group.id);
  }

  /** Its members leave the workspaces it mapped them to (unless another group keeps them there). */
  async deleteGroup(organisationId: string, groupId: string): Promise<void> {
    const group = await this.findGroup(organisationId, groupId);
    const members = (await this.repo.membersOf([group.id])).get(group.id) ?? [];
    const workspaces = (await this.repo.mappingsOfGroup(group.id)).map((m) => m.workspaceId);
    if (!(await this.repo.deleteGroup(organisationId, group.id)))
      throw new NotFound(`Group '${groupId}' not found.`);
    await this.sync(organisationId, members, workspaces);
  }

  /** For administrators: the groups, by a case-insensitive `search` in their names. */
  listGroupsOf(
    principal: Principal,
    search: string | undefined,
    page: Page,
  ): Promise<[GroupWithMembers[], number]> {
    assertOrganisationAdmin(principal);
    return this.listGroups(principal.organisationId, { search }, page);
  }

  listMappings(principal: Principal, page: Page): Promise<[MappingWithGroup[], number]> {
    assertOrganisationAdmin(principal);
    return this.repo.listMappings(principal.organisationId, page);
  }

  /**
   * Maps a group to a workspace of the organisation: its members become members there with
   * `role`. All mappings of a group give one role.
   */
  async createMapping(principal: Principal, input: MappingInput): Promise<MappingWithGroup> {
    assertOrganisationAdmin(principal);
    const organisationId = principal.organisationId;
    const group =
      input.groupId !== undefined
        ? isUuid(input.groupId)
          ? await this.repo.findGroup(organisationId, input.groupId)
          : null
        : await this.repo.findGroupByName(organisationId, input.groupName!);
    if (!group) {
      const [param, value] =
        input.groupId !== undefined ? ['scim_group_id', input.groupId] : ['scim_group_name', input.groupName];
      throw new NotFound(`SCIM group '${value}' not found.`, { param });
    }
    const workspace = await this.directory.findWorkspace(organisationId, input.workspaceId);
    if (!workspace)
      throw new NotFound(`Workspace '${input.workspaceId}' not found.`, { param: 'workspace_id' });
    const other = (await this.repo.mappingsOfGroup(group.id)).find((m) => m.role !== input.role);
    if (other) {
      throw new Conflict(
        `Invalid body parameter 'role': the group '${group.displayName}' is mapped with role '${other.role}' already; every mapping of a group gives the same role.`,
        { param: 'role', code: 'role_conflict' },
      );
    }
    const mapping = await this.repo.insertMapping({
      organisationId,
      groupId: group.id,
      workspaceId: workspace.id,
      role: input.role,
      createdAt: new Date(),
      createdBy: principal.apiKeyId,
    });
    const members = (await this.repo.membersOf([group.id])).get(group.id) ?? [];
    await this.sync(organisationId, members, [workspace.id]);
    return { ...mapping, groupName: group.displayName };
  }

  async deleteMapping(principal: Principal, id: string): Promise<void> {
    assertOrganisationAdmin(principal);
    const organisationId = principal.organisationId;
    const mapping: ScimWorkspaceMapping | null = isUuid(id)
      ? await this.repo.findMapping(organisationId, id)
      : null;
    if (!mapping) throw new NotFound(`SCIM workspace mapping '${id}' not found.`);
    if (!(await this.repo.deleteMapping(organisationId, mapping.id))) {
      throw new NotFound(`SCIM workspace mapping '${id}' not found.`);
    }
    const members = (await this.repo.membersOf([mapping.groupId])).get(mapping.groupId) ?? [];
    await this.sync(organisationId, members, [mapping.workspaceId]);
  }

  private async saveUser(current: ScimUser, input: ScimUserInput): Promise<UserWithGroups> {
    const { organisationId, userId } = current;
    if (input.email.toLowerCase() !== current.email.toLowerCase()) {
      throw new BadRequest(
        `Invalid body parameter 'emails': the email of a provisioned user cannot change (it is '${current.email}').`,
        { param: 'emails', code: 'mutability' },
      );
    }
    await this.repo.updateUser({ ...current, ...input, updatedAt: new Date() });
    if (current.active && !input.active) {
      await this.directory.removeUser(organisationId, userId);
    } else if (!current.active && input.active) {
      await this.directory.provisionUser(organisationId, {
        email: input.email,
        firstName: input.givenName,
        lastName: input.familyName,
      });
      await this.sync(organisationId, [userId], await this.repo.mappedWorkspacesOf(organisationId, [userId]));
    }
    return this.getUser(organisationId, userId);
  }

  private async saveGroup(
    group: ScimGroup,
    displayName: string,
    externalId: string | null,
    before: readonly string[],
    after: readonly string[],
  ): Promise<void> {
    const kept = new Set(after);
    const removed = before.filter((id) => !kept.has(id));
    const had = new Set(before);
    const added = after.filter((id) => !had.has(id));
    await this.repo.transaction(async (repo) => {
      await repo.updateGroup({ ...group, displayName, externalId, updatedAt: new Date() });
      await repo.removeMembers(group.id, removed);
      await repo.addMembers(group.organisationId, group.id, added);
    });
    if (removed.length + added.length === 0) return;
    const workspaces = (await this.repo.mappingsOfGroup(group.id)).map((m) => m.workspaceId);
    await this.sync(group.organisationId, [...removed, ...added], workspaces);
  }

  /**
   * Brings the memberships of these users in these workspaces in line with their groups:
   * the highest role a mapping of one of their groups gives, or none. A workspace deleted in
   * the meantime is passed over.
   */
  private async sync(
    organisationId: string,
    userIds: readonly string[],
    workspaceIds: readonly string[],
  ): Promise<void> {
    for (const workspaceId of new Set(workspaceIds)) {
      const roles = await this.repo.rolesIn(organisationId, workspaceId, userIds);
      const users = await this.repo.findUsers(organisationId, userIds);
      for (const user of users) {
        if (!user.active) continue;
        try {
          await this.directory.setWorkspaceMember(
            organisationId,
            workspaceId,
            user.userId,
            roles.get(user.userId) ?? null,
          );
        } catch (err) {
          if (!(err instanceof NotFound)) throw err;
          this.logger.warn('SCIM: workspace membership not changed', {
            organisation_id: organisationId,
            workspace_id: workspaceId,
            reason: err.message,
          });
        }
      }
    }
  }

  private async findUser(organisationId: string, userId: string): Promise<ScimUser> {
    const user = isUuid(userId) ? await this.repo.findUser(organisationId, userId) : null;
    if (!user) throw new NotFound(`User '${userId}' not found.`);
    return user;
  }

  private async findGroup(organisationId: string, groupId: string): Promise<ScimGroup> {
    const group = isUuid(groupId) ? await this.repo.findGroup(organisationId, groupId) : null;
    if (!group) throw new NotFound(`Group '${groupId}' not found.`);
    return group;
  }

  /** Members must be users this organisation provisioned. */
  private async assertUsersOf(organisationId: string, userIds: readonly string[]): Promise<void> {
    const unknown = userIds.find((id) => !isUuid(id));
    const found = unknown === undefined ? await this.repo.findUsers(organisationId, userIds) : [];
    const known = new Set(found.map((user) => user.userId));
    const stranger = unknown ?? userIds.find((id) => !known.has(id));
    if (stranger !== undefined) {
      throw new BadRequest(
        `Invalid body parameter 'members': '${stranger}' is not a user of this organisation.`,
        {
          param: 'members',
          code: 'invalidValue',
        },
      );
    }
  }

  private async withGroups(organisationId: string, users: ScimUser[]): Promise<UserWithGroups[]> {
    const groups = await this.repo.groupsOf(
      organisationId,
      users.map((user) => user.userId),
    );
    return users.map((user) => ({
      ...user,
      groups: (groups.get(user.userId) ?? []).map((g) => ({ id: g.id, displayName: g.displayName })),
    }));
  }

  private async withMembers(organisationId: string, groups: ScimGroup[]): Promise<GroupWithMembers[]> {
    const members = await this.repo.membersOf(groups.map((group) => group.id));
    const users = await this.repo.findUsers(organisationId, [...new Set([...members.values()].flat())]);
    const names = new Map(users.map((user) => [user.userId, user.userName]));
    return groups.map((group) => ({
      ...group,
      members: (members.get(group.id) ?? []).map((id) => ({ id, display: names.get(id) ?? id })),
    }));
  }
}

function invalidPatch(message: string, path = 'Operations'): BadRequest {
  return new BadRequest(message, { param: path, code: 'invalidValue' });
}

/** `"True"`/`"False"` as some identity providers send them, or a boolean. */
function booleanValue(value: unknown, path: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidPatch(`Invalid PATCH value for '${path}': must be a boolean.`, path);
}

function textValue(value: unknown, path: string, nullable: boolean): string | null {
  if (value === null && nullable) return null;
  if (typeof value === 'string' && value.trim() !== '' && value.length <= 1024) return value.trim();
  throw invalidPatch(`Invalid PATCH value for '${path}': must be a string of 1 to 1024 characters.`, path);
}

/** The user attributes a PATCH may change; the email (and so userName's person) stays. */
function applyUserOperation(user: ScimUserInput, operation: PatchOperation): void {
  if (operation.path === undefined) {
    if (operation.op === 'remove') throw invalidPatch("A 'remove' operation needs a path.");
    if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value)) {
      throw invalidPatch('An operation without a path needs an object value.');
    }
    for (const [path, value] of Object.entries(operation.value)) {
      if (path === 'name' && typeof value === 'object' && value !== null) {
        for (const [part, partValue] of Object.entries(value)) {
          applyUserOperation(user, { op: operation.op, path: `name.${part}`, value: partValue });
        }
      } else applyUserOperation(user, { op: operation.op, path, value });
    }
    return;
  }
  const removing = operation.op === 'remove';
  const value = removing ? null : operation.value;
  switch (operation.path.toLowerCase()) {
    case 'active':
      if (removing) throw invalidPatch("'active' cannot be removed.", 'active');
      user.active = booleanValue(value, 'active');
      return;
    case 'displayname':
      user.displayName = textValue(value, 'displayName', true);
      return;
    case 'externalid':
      user.externalId = textValue(value, 'externalId', true);
      return;
    case 'name.givenname':
      user.givenName = textValue(value, 'name.givenName', true);
      return;
    case 'name.familyname':
      user.familyName = textValue(value, 'name.familyName', true);
      return;
    case 'username':
      if (removing) throw invalidPatch("'userName' cannot be removed.", 'userName');
      user.userName = textValue(value, 'userName', false)!;
      return;
    default:
      throw new BadRequest(`PATCH path '${operation.path}' is not supported for users.`, {
        param: 'path',
        code: 'invalidPath',
      });
  }
}

/** Member ids from `[{value}, ...]`. */
function memberIds(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((member) => {
    const id = (member as { value?: unknown } | null)?.value;
    if (typeof id !== 'string')
      throw invalidPatch('Members are given as [{"value": "<user id>"}].', 'members');
    return id.toLowerCase();
  });
}

const MEMBER_FILTER = /^members\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i;

function applyGroupOperation(
  group: { displayName: string; externalId: string | null; members: Set<string> },
  operation: PatchOperation,
): void {
  if (operation.path === undefined) {
    if (operation.op === 'remove') throw invalidPatch("A 'remove' operation needs a path.");
    if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value)) {
      throw invalidPatch('An operation without a path needs an object value.');
    }
    for (const [path, value] of Object.entries(operation.value)) {
      applyGroupOperation(group, { op: operation.op, path, value });
    }
    return;
  }
  const path = operation.path.trim();
  const single = MEMBER_FILTER.exec(path);
  if (single) {
    if (operation.op !== 'remove') throw invalidPatch(`'${path}' may only be removed.`, 'path');
    group.members.delete(single[1]!.toLowerCase());
    return;
  }
  switch (path.toLowerCase()) {
    case 'members':
      if (operation.op === 'replace') group.members.clear();
      if (operation.op === 'remove') {
        if (operation.value === undefined) group.members.clear();
        else for (const id of memberIds(operation.value)) group.members.delete(id);
      } else for (const id of memberIds(operation.value)) group.members.add(id);
      return;
    case 'displayname':
      if (operation.op === 'remove') throw invalidPatch("'displayName' cannot be removed.", 'displayName');
      group.displayName = textValue(operation.value, 'displayName', false)!;
      return;
    case 'externalid':
      group.externalId = operation.op === 'remove' ? null : textValue(operation.value, 'externalId', true);
      return;
    default:
      throw new BadRequest(`PATCH path '${operation.path}' is not supported for groups.`, {
        param: 'path',
        code: 'invalidPath',
      });
  }
}
