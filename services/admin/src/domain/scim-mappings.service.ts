import { Conflict, NotFound } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import type { ScimWorkspaceMapping, ScimWorkspaceRole } from '../store/entities.ts';
import type { MappingWithGroup, Page, ScimRepository } from '../store/scim.repository.ts';
import type { OrganisationDirectory } from './organisation-directory.ts';
import { isUuid, membersOfGroup } from './scim-shared.ts';
import type { ScimWorkspaceSync } from './scim-workspace-sync.ts';

export interface MappingInput {
  workspaceId: string;
  role: ScimWorkspaceRole;
  groupId?: string | undefined;
  groupName?: string | undefined;
}

/**
 * Which SCIM groups give their members which workspace, in which role: administrators map
 * groups to workspaces of the organisation, and the group's members join or leave them.
 */
export class ScimMappingService {
  constructor(
    private readonly repo: ScimRepository,
    private readonly directory: Pick<OrganisationDirectory, 'findWorkspace'>,
    private readonly workspaces: ScimWorkspaceSync,
  ) {}

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
    const members = await membersOfGroup(this.repo, group.id);
    await this.workspaces.sync(organisationId, members, [workspace.id]);
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
    const members = await membersOfGroup(this.repo, mapping.groupId);
    await this.workspaces.sync(organisationId, members, [mapping.workspaceId]);
  }
}
