/** What a user may do in the organisation: owners and admins manage it, and an organisation keeps one owner at least. */
export const ORGANISATION_ROLES = ['owner', 'admin', 'member'] as const;
export type OrganisationRole = (typeof ORGANISATION_ROLES)[number];

/** What a member may do in one workspace. */
export const WORKSPACE_ROLES = ['admin', 'manager', 'member'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];
