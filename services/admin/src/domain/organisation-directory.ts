import type { ServiceClient } from '@switchyard/platform';
import type { identity } from '@switchyard/proto';
import type { ScimWorkspaceRole } from '../store/entities.ts';

/** Control-plane's users and memberships, as SCIM provisioning changes them. */
export interface OrganisationDirectory {
  /** The user with this email joins the organisation (created when new); their id. */
  provisionUser(
    organisationId: string,
    user: { email: string; firstName: string | null; lastName: string | null },
  ): Promise<string>;
  /** Leaves the organisation and its workspaces; keys and tokens there are revoked. */
  removeUser(organisationId: string, userId: string): Promise<void>;
  /** A member of the workspace with `role`, or (null) not a member. */
  setWorkspaceMember(
    organisationId: string,
    workspaceId: string,
    userId: string,
    role: ScimWorkspaceRole | null,
  ): Promise<void>;
  /** The organisation's workspace with this id or slug, or null. */
  findWorkspace(organisationId: string, idOrSlug: string): Promise<{ id: string; slug: string } | null>;
}

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
