import type { ServiceClient } from '@switchyard/runtime';
import type { identity } from '@switchyard/proto';
import type { OrganisationDirectory } from '../domain/organisation-directory.ts';

const DEADLINE = { deadlineMs: 10_000 };

/** The directory kept by control-plane, over its IdentityService. */
export function remoteOrganisationDirectory(
  client: ServiceClient<typeof identity.IdentityService>,
): OrganisationDirectory {
  return {
    async provisionUser(organisationId, user) {
      const { userId } = await client.provisionOrganisationUser(
        {
          organisationId,
          email: user.email,
          firstName: user.firstName ?? '',
          lastName: user.lastName ?? '',
        },
        DEADLINE,
      );
      return userId;
    },
    async removeUser(organisationId, userId) {
      await client.removeOrganisationUser({ organisationId, userId }, DEADLINE);
    },
    async setWorkspaceMember(organisationId, workspaceId, userId, role) {
      await client.setWorkspaceMember({ organisationId, workspaceId, userId, role: role ?? '' }, DEADLINE);
    },
    async findWorkspace(organisationId, idOrSlug) {
      const found = await client.resolveWorkspace(
        { organisation: organisationId, workspace: idOrSlug },
        { deadlineMs: 2_000 },
      );
      if (!found.workspaceId || found.organisationId !== organisationId) return null;
      return { id: found.workspaceId, slug: found.workspaceSlug };
    },
  };
}
