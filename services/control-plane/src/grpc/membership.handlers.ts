import type { CallerRules, ServiceHandlers } from '@switchyard/runtime';
import { BadRequest } from '@switchyard/core';
import type { identity } from '@switchyard/proto';
import type { MemberService } from '../domain/member.service.ts';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../domain/roles.ts';
import { isUuid } from '../domain/ids.ts';

type MembershipMethods = 'provisionOrganisationUser' | 'removeOrganisationUser' | 'setWorkspaceMember';

/** SCIM provisioning runs in admin, and nowhere else. */
export const membershipCallers: Pick<CallerRules<typeof identity.IdentityService>, MembershipMethods> = {
  provisionOrganisationUser: ['admin'],
  removeOrganisationUser: ['admin'],
  setWorkspaceMember: ['admin'],
};

/** The IdentityService methods SCIM provisioning (in admin) calls. */
export function membershipHandlers(
  members: MemberService,
): Pick<ServiceHandlers<typeof identity.IdentityService>, MembershipMethods> {
  return {
    provisionOrganisationUser: async ({ organisationId, email, firstName, lastName }) => {
      if (!isUuid(organisationId))
        throw new BadRequest('Invalid organisation_id.', { param: 'organisation_id' });
      if (!email) throw new BadRequest('An email is required.', { param: 'email' });
      return members.provisionUser(organisationId, {
        email,
        firstName: firstName || undefined,
        lastName: lastName || undefined,
      });
    },
    removeOrganisationUser: async ({ organisationId, userId }) => {
      if (!isUuid(organisationId) || !isUuid(userId)) return { removed: false };
      return { removed: await members.deprovisionUser(organisationId, userId) };
    },
    setWorkspaceMember: async ({ organisationId, workspaceId, userId, role }) => {
      if (role !== '' && !(WORKSPACE_ROLES as readonly string[]).includes(role)) {
        throw new BadRequest(`Unknown workspace role '${role}'.`, { param: 'role' });
      }
      if (!isUuid(organisationId) || !isUuid(userId)) {
        throw new BadRequest('Invalid organisation_id or user_id.', { param: 'user_id' });
      }
      await members.provisionWorkspaceMember(
        organisationId,
        workspaceId,
        userId,
        role === '' ? null : (role as WorkspaceRole),
      );
      return {};
    },
  };
}
