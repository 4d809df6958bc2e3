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
