import { Conflict, NotFound, type CamelKeys, type PageQuery } from '@switchyard/core';
import { assertOrganisationAdmin, type Principal } from '@switchyard/access';
import { publishChange, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { z } from 'zod';
import type {
  MemberFilter,
  MemberOfOrganisation,
  MemberOfWorkspace,
  MemberRepository,
} from '../store/member.repository.ts';
import { isUuid } from './ids.ts';
import type { addUserBody, addWorkspaceMembersBody } from './member.schemas.ts';
import type { ApiKeyService } from './api-key.service.ts';
import type { WorkspaceService } from './workspace.service.ts';
import type { OrganisationRole, WorkspaceRole } from './roles.ts';

/** A member of the organisation with the workspaces of it they belong to. */
export interface OrganisationUser extends MemberOfOrganisation {
  workspaceIds: string[];
}

export type AddUserInput = CamelKeys<z.output<typeof addUserBody>>;

/** One user to add to a workspace: the body's `id`, as `userId`, lower-cased. */
export type WorkspaceMemberInput = z.output<typeof addWorkspaceMembersBody>[number];

/**
 * Users of an organisation and members of its workspaces; organisation admin keys only.
 * Not here yet: invites by email (a user is added directly). SCIM provisioning (its users,
 * groups and group mappings live in the admin service) ends in the `provision…` methods
 * below, which run the same steps as an administrator's changes.
 */
export class MemberService {
  constructor(
    private readonly repo: MemberRepository,
    private readonly workspaces: Pick<WorkspaceService, 'getWorkspace'>,
    private readonly apiKeys: Pick<ApiKeyService, 'announceRevoked' | 'provisionUserKeys'>,
    private readonly bus: EventBus,
    /** Called once a user left a workspace (or, without a workspace, the organisation): their other credentials go too. */
    private readonly onLeave: (
      organisationId: string,
      userId: string,
      workspaceId?: string,
    ) => Promise<void> = async () => {},
  ) {}

  /**
   * Adds the user with this email to the organisation, creating the user when the email is new.
   * An existing user keeps their names: a profile is not one organisation's to change.
   */
  async addUser(principal: Principal, input: AddUserInput): Promise<OrganisationUser> {
    assertOrganisationAdmin(principal);
    const organisationId = principal.organisationId;
    const userId = await this.repo.transaction(async (repo) => {
      const user = await repo.findOrCreateUser({
        email: input.email,
        firstName: input.firstName ?? null,
        lastName: input.lastName ?? null,
      });
      await repo.insertOrganisationMember(organisationId, user.id, input.role);
      return user.id;
    });
    this.announceUser(organisationId, userId, events.ChangeAction.CREATED);
    return this.getUser(principal, userId);
  }

  async getUser(principal: Principal, userId: string): Promise<OrganisationUser> {
    assertOrganisationAdmin(principal);
    const member = await this.repo.findOrganisationMember(principal.organisationId, userId);
    if (!member) throw userNotFound(userId);
    const [user] = await this.withWorkspaces(principal.organisationId, [member]);
    return user!;
  }

  async listUsers(
    principal: Principal,
    page: PageQuery,
    filter: MemberFilter,
  ): Promise<[OrganisationUser[], number]> {
    assertOrganisationAdmin(principal);
    const [members, total] = await this.repo.listOrganisationMembers(principal.organisationId, page, filter);
    return [await this.withWorkspaces(principal.organisationId, members), total];
  }

  /** The organisation's last owner cannot step down. */
  async updateUserRole(
    principal: Principal,
    userId: string,
    role: OrganisationRole,
  ): Promise<OrganisationUser> {
    assertOrganisationAdmin(principal);
    const organisationId = principal.organisationId;
    await this.repo.transaction(async (repo) => {
      const member = await repo.findOrganisationMember(organisationId, userId);
      if (!member) throw userNotFound(userId);
      if (member.role === 'owner' && role !== 'owner') await assertNotLastOwner(repo, organisationId, userId);
      await repo.updateOrganisationRole(organisationId, userId, role);
    });
    this.announceUser(organisationId, userId, events.ChangeAction.UPDATED);
    return this.getUser(principal, userId);
  }

  /**
   * Removes the user from the organisation and its workspaces, and revokes their workspace-user
   * keys there at once. The organisation's last owner cannot be removed.
   */
  async removeUser(principal: Principal, userId: string): Promise<void> {
    assertOrganisationAdmin(principal);
    const organisationId = principal.organisationId;
    const revoked = await this.repo.transaction(async (repo) => {
      const member = await repo.findOrganisationMember(organisationId, userId);
      if (!member) throw userNotFound(userId);
      if (member.role === 'owner') await assertNotLastOwner(repo, organisationId, userId);
      // The delete decides between concurrent removals: the others find no member.
      if (!(await repo.deleteOrganisationMember(organisationId, userId))) throw userNotFound(userId);
      return repo.apiKeys.revokeUserApiKeys(organisationId, userId);
    });
    this.apiKeys.announceRevoked(revoked);
    await this.onLeave(organisationId, userId);
    this.announceUser(organisationId, userId, events.ChangeAction.DELETED);
  }

  /**
   * Adds organisation members to a workspace, all or none; then, when the workspace or its
   * organisation says so (user_api_key_auto_create), each gets a workspace-user key.
   */
  async addWorkspaceMembers(
    principal: Principal,
    workspaceIdOrSlug: string,
    members: readonly WorkspaceMemberInput[],
  ): Promise<MemberOfWorkspace[]> {
    assertOrganisationAdmin(principal);
    const workspace = await this.workspaces.getWorkspace(principal, workspaceIdOrSlug);
    const userIds = members.map((member) => member.userId);
    await this.repo.transaction(async (repo) => {
      // Share-locked until the commit: a removal from the organisation waits, then takes these memberships with it.
      const inOrganisation = await repo.lockOrganisationMembers(workspace.organisationId, userIds);
      const stranger = userIds.find((id) => !inOrganisation.has(id));
      if (stranger !== undefined) {
        throw new NotFound(`User '${stranger}' is not a member of this organisation.`, { param: 'users' });
      }
      const [already] = await repo.existingWorkspaceMembers(workspace.id, userIds);
      if (already !== undefined) {
        throw new Conflict(`User '${already}' is already a member of workspace '${workspace.slug}'.`);
      }
      await repo.insertWorkspaceMembers(
        members.map((member) => ({
          workspaceId: workspace.id,
          organisationId: workspace.organisationId,
          userId: member.userId,
          role: member.role,
        })),
      );
    });
    for (const userId of userIds) {
      this.announceWorkspaceMember(
        workspace.organisationId,
        workspace.id,
        userId,
        events.ChangeAction.CREATED,
      );
    }
    await this.apiKeys.provisionUserKeys(workspace, userIds);
    const added = await Promise.all(userIds.map((id) => this.repo.findWorkspaceMember(workspace.id, id)));
    return added.filter((member) => member !== null);
  }

  async listWorkspaceMembers(
    principal: Principal,
    workspaceIdOrSlug: string,
    page: PageQuery,
    filter: MemberFilter,
  ): Promise<[MemberOfWorkspace[], number]> {
    assertOrganisationAdmin(principal);
    const workspace = await this.workspaces.getWorkspace(principal, workspaceIdOrSlug);
    return this.repo.listWorkspaceMembers(workspace.id, page, filter);
  }

  async updateWorkspaceMemberRole(
    principal: Principal,
    workspaceIdOrSlug: string,
    userId: string,
    role: WorkspaceRole,
  ): Promise<MemberOfWorkspace> {
    assertOrganisationAdmin(principal);
    const workspace = await this.workspaces.getWorkspace(principal, workspaceIdOrSlug);
    if (!isUuid(userId) || !(await this.repo.updateWorkspaceRole(workspace.id, userId, role))) {
      throw workspaceMemberNotFound(userId, workspace.slug);
    }
    this.announceWorkspaceMember(workspace.organisationId, workspace.id, userId, events.ChangeAction.UPDATED);
    const member = await this.repo.findWorkspaceMember(workspace.id, userId);
    if (!member) throw workspaceMemberNotFound(userId, workspace.slug);
    return member;
  }

  /** Removes the member and revokes their workspace-user keys in this workspace at once. */
  async removeWorkspaceMember(
    principal: Principal,
    workspaceIdOrSlug: string,
    userId: string,
  ): Promise<void> {
    assertOrganisationAdmin(principal);
    const workspace = await this.workspaces.getWorkspace(principal, workspaceIdOrSlug);
    if (!isUuid(userId)) throw workspaceMemberNotFound(userId, workspace.slug);
    const revoked = await this.repo.transaction(async (repo) => {
      if (!(await repo.deleteWorkspaceMember(workspace.id, userId))) {
        throw workspaceMemberNotFound(userId, workspace.slug);
      }
      return repo.apiKeys.revokeUserApiKeys(workspace.organisationId, userId, workspace.id);
    });
    this.apiKeys.announceRevoked(revoked);
    await this.onLeave(workspace.organisationId, userId, workspace.id);
    this.announceWorkspaceMember(workspace.organisationId, workspace.id, userId, events.ChangeAction.DELETED);
  }

  /**
   * SCIM: the user with this email becomes a member of the organisation (created when the
   * email is new). A user who is a member already keeps their role.
   */
  async provisionUser(
    organisationId: string,
    input: Omit<AddUserInput, 'role'>,
  ): Promise<{ userId: string; joined: boolean }> {
    const result = await this.repo.transaction(async (repo) => {
      const user = await repo.findOrCreateUser({
        email: input.email,
        firstName: input.firstName ?? null,
        lastName: input.lastName ?? null,
      });
      if (await repo.findOrganisationMember(organisationId, user.id))
        return { userId: user.id, joined: false };
      await repo.insertOrganisationMember(organisationId, user.id, 'member');
      return { userId: user.id, joined: true };
    });
    if (result.joined) this.announceUser(organisationId, result.userId, events.ChangeAction.CREATED);
    return result;
  }

  /** SCIM: as `removeUser`; false when the user is not a member. */
  async deprovisionUser(organisationId: string, userId: string): Promise<boolean> {
    const principal = provisioningPrincipal(organisationId);
    if (!(await this.repo.findOrganisationMember(organisationId, userId))) return false;
    await this.removeUser(principal, userId);
    return true;
  }

  /**
   * SCIM group mappings: the user is a member of the workspace with `role`, or (null) not a
   * member. Joining, a role change and leaving run as an administrator's would: keys are
   * created on joining and revoked on leaving.
   */
  async provisionWorkspaceMember(
    organisationId: string,
    workspaceId: string,
    userId: string,
    role: WorkspaceRole | null,
  ): Promise<void> {
    const principal = provisioningPrincipal(organisationId);
    const workspace = await this.workspaces.getWorkspace(principal, workspaceId);
    const member = isUuid(userId) ? await this.repo.findWorkspaceMember(workspace.id, userId) : null;
    if (role === null) {
      if (member) await this.removeWorkspaceMember(principal, workspace.id, userId);
    } else if (!member) {
      await this.addWorkspaceMembers(principal, workspace.id, [{ userId, role }]);
    } else if (member.workspaceRole !== role) {
      await this.updateWorkspaceMemberRole(principal, workspace.id, userId, role);
    }
  }

  private async withWorkspaces(
    organisationId: string,
    members: MemberOfOrganisation[],
  ): Promise<OrganisationUser[]> {
    const workspaces = await this.repo.workspaceIdsOf(
      organisationId,
      members.map((member) => member.user.id),
    );
    return members.map((member) => ({ ...member, workspaceIds: workspaces.get(member.user.id) ?? [] }));
  }

  private announceUser(organisationId: string, userId: string, action: events.ChangeAction): void {
    publishChange(this.bus, { entity: 'user', entityId: userId, organisationId, workspaceId: '', action });
  }

  private announceWorkspaceMember(
    organisationId: string,
    workspaceId: string,
    userId: string,
    action: events.ChangeAction,
  ): void {
    publishChange(this.bus, {
      entity: 'workspace_member',
      entityId: userId,
      organisationId,
      workspaceId,
      action,
    });
  }
}

/**
 * Provisioning (SCIM, a first SSO login) acts for the organisation as its administrators do;
 * it holds no key. `name` says which, e.g. in logs.
 */
export function provisioningPrincipal(organisationId: string, name = 'SCIM provisioning'): Principal {
  return {
    apiKeyId: '',
    organisationId,
    workspaceId: null,
    workspaceSlug: null,
    kind: 'organisation_admin',
    scopes: [],
    expiresAt: null,
    userId: null,
    name,
    organisationCreatedAt: null,
  };
}

async function assertNotLastOwner(
  repo: MemberRepository,
  organisationId: string,
  userId: string,
): Promise<void> {
  const owners = await repo.lockOwners(organisationId);
  if (owners.length === 1 && owners[0] === userId) {
    throw new Conflict(
      'The last owner of the organisation cannot be removed or demoted: make another owner first.',
      {
        code: 'last_owner',
      },
    );
  }
}

function userNotFound(userId: string): NotFound {
  return new NotFound(`User '${userId}' not found in this organisation.`);
}

function workspaceMemberNotFound(userId: string, workspaceSlug: string): NotFound {
  return new NotFound(`User '${userId}' is not a member of workspace '${workspaceSlug}'.`);
}
