import { BadRequest, NotFound } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import type { ScimGroup } from '../store/entities.ts';
import type { Page, ScimEquality, ScimRepository } from '../store/scim.repository.ts';
import { invalidPatch, isUuid, membersOfGroup, textValue, type PatchOperation } from './scim-shared.ts';
import type { ScimWorkspaceSync } from './scim-workspace-sync.ts';

export interface ScimGroupInput {
  displayName: string;
  externalId: string | null;
  /** User ids. */
  members: string[];
}

export interface GroupWithMembers extends ScimGroup {
  members: Array<{ id: string; display: string }>;
}

/**
 * The groups an organisation's identity provider pushes (SCIM `/Groups`) and their members,
 * who must be users it provisioned. A change of members, or a deleted group, changes the
 * workspace memberships the group's mappings give.
 */
export class ScimGroupService {
  constructor(
    private readonly repo: ScimRepository,
    private readonly workspaces: ScimWorkspaceSync,
  ) {}

  async listGroups(
    organisationId: string,
    filter: { equality?: ScimEquality | null; search?: string | undefined },
    page: Page,
  ): Promise<[GroupWithMembers[], number]> {
    const [groups, total] = await this.repo.listGroups(organisationId, filter, page);
    return [await this.withMembers(organisationId, groups), total];
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
    const before = await membersOfGroup(this.repo, group.id);
    await this.saveGroup(group, input.displayName, input.externalId, before, input.members);
    return this.getGroup(organisationId, group.id);
  }

  async patchGroup(
    organisationId: string,
    groupId: string,
    operations: readonly PatchOperation[],
  ): Promise<GroupWithMembers> {
    const group = await this.findGroup(organisationId, groupId);
    const before = await membersOfGroup(this.repo, group.id);
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
    const members = await membersOfGroup(this.repo, group.id);
    const workspaces = (await this.repo.mappingsOfGroup(group.id)).map((m) => m.workspaceId);
    if (!(await this.repo.deleteGroup(organisationId, group.id)))
      throw new NotFound(`Group '${groupId}' not found.`);
    await this.workspaces.sync(organisationId, members, workspaces);
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
    await this.workspaces.sync(group.organisationId, [...removed, ...added], workspaces);
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
