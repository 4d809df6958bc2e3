import type { OrganisationUser } from '../domain/member.service.ts';
import type { MemberOfOrganisation, MemberOfWorkspace } from '../store/member.repository.ts';

/** The later of the profile's and the role's last change. */
function lastUpdated(member: MemberOfOrganisation): string {
  return new Date(Math.max(member.user.updatedAt.getTime(), member.roleUpdatedAt.getTime())).toISOString();
}

export function presentUser(member: OrganisationUser) {
  return {
    object: 'user' as const,
    id: member.user.id,
    email: member.user.email,
    first_name: member.user.firstName,
    last_name: member.user.lastName,
    role: member.role,
    workspace_ids: member.workspaceIds,
    created_at: member.user.createdAt.toISOString(),
    last_updated_at: lastUpdated(member),
  };
}

export function presentWorkspaceMember(member: MemberOfWorkspace) {
  return {
    object: 'workspace-user' as const,
    id: member.user.id,
    email: member.user.email,
    first_name: member.user.firstName,
    last_name: member.user.lastName,
    org_role: member.role,
    role: member.workspaceRole,
    workspace_id: member.workspaceId,
    status: 'active' as const,
    created_at: member.joinedAt.toISOString(),
    last_updated_at: lastUpdated(member),
  };
}
