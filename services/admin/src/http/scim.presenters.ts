import type { GroupWithMembers } from '../domain/scim-groups.service.ts';
import type { UserWithGroups } from '../domain/scim-users.service.ts';
import type { ScimCredential } from '../store/entities.ts';
import type { MappingWithGroup } from '../store/scim.repository.ts';

export const SCIM_USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const SCIM_LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** Where the organisation's SCIM endpoints live, relative to the host. */
export const scimBasePath = (organisationId: string) => `/scim/${organisationId}`;

export function presentScimUser(user: UserWithGroups) {
  const formatted = [user.givenName, user.familyName].filter(Boolean).join(' ');
  return {
    schemas: [SCIM_USER_SCHEMA],
    id: user.userId,
    externalId: user.externalId,
    userName: user.userName,
    name: { givenName: user.givenName, familyName: user.familyName, formatted: formatted || null },
    displayName: user.displayName ?? (formatted || user.userName),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.active,
    groups: user.groups.map((group) => ({
      value: group.id,
      display: group.displayName,
      $ref: `${scimBasePath(user.organisationId)}/Groups/${group.id}`,
    })),
    meta: {
      resourceType: 'User' as const,
      created: user.createdAt.toISOString(),
      lastModified: user.updatedAt.toISOString(),
      location: `${scimBasePath(user.organisationId)}/Users/${user.userId}`,
    },
  };
}

export function presentScimGroup(group: GroupWithMembers) {
  return {
    schemas: [SCIM_GROUP_SCHEMA],
    id: group.id,
    externalId: group.externalId,
    displayName: group.displayName,
    members: group.members.map((member) => ({
      value: member.id,
      display: member.display,
      $ref: `${scimBasePath(group.organisationId)}/Users/${member.id}`,
    })),
    meta: {
      resourceType: 'Group' as const,
      created: group.createdAt.toISOString(),
      lastModified: group.updatedAt.toISOString(),
      location: `${scimBasePath(group.organisationId)}/Groups/${group.id}`,
    },
  };
}

export function scimList<T>(resources: T[], total: number, startIndex: number) {
  return {
    schemas: [SCIM_LIST_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/** The token itself only once, when issued (`token`); afterwards only masked. */
export function presentScimToken(credential: ScimCredential, maskedToken: string, token?: string) {
  return {
    object: 'scim_token' as const,
    ...(token === undefined ? {} : { token }),
    masked_token: maskedToken,
    scim_base_path: scimBasePath(credential.organisationId),
    created_at: credential.createdAt.toISOString(),
  };
}

export function presentScimAdminGroup(group: GroupWithMembers) {
  return {
    object: 'scim_group' as const,
    id: group.id,
    display_name: group.displayName,
    external_id: group.externalId,
    members_count: group.members.length,
    created_at: group.createdAt.toISOString(),
    last_updated_at: group.updatedAt.toISOString(),
  };
}

export function presentScimMapping(mapping: MappingWithGroup) {
  return {
    object: 'scim_workspace_mapping' as const,
    id: mapping.id,
    workspace_id: mapping.workspaceId,
    role: mapping.role,
    scim_group_id: mapping.groupId,
    scim_group_name: mapping.groupName,
    created_at: mapping.createdAt.toISOString(),
  };
}

/** `page`/`page_size` lists: `total_count` as the spec names it, `total` as our other lists do. */
export function pagedList<T>(data: T[], total: number, page: { page: number; page_size: number }) {
  return {
    object: 'list' as const,
    total,
    total_count: total,
    page: page.page,
    page_size: page.page_size,
    data,
  };
}
