import { EntitySchema } from 'typeorm';
import type { OrganisationRole, WorkspaceRole } from '../domain/roles.ts';

/** A person, shared by every organisation that adds them; the email names one user whatever its case. */
export interface User {
  id: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrganisationMember {
  organisationId: string;
  userId: string;
  role: OrganisationRole;
  createdAt: Date;
  updatedAt: Date;
}

/** Only an organisation member joins a workspace of that organisation. */
export interface WorkspaceMember {
  workspaceId: string;
  organisationId: string;
  userId: string;
  role: WorkspaceRole;
  createdAt: Date;
  updatedAt: Date;
}

const timestamps = {
  createdAt: { name: 'created_at', type: 'timestamptz' },
  updatedAt: { name: 'updated_at', type: 'timestamptz' },
} as const;

export const UserEntity = new EntitySchema<User>({
  name: 'User',
  tableName: 'users',
  columns: {
    id: { type: 'uuid', primary: true },
    email: { type: 'text' },
    firstName: { name: 'first_name', type: 'text', nullable: true },
    lastName: { name: 'last_name', type: 'text', nullable: true },
    ...timestamps,
  },
});

export const OrganisationMemberEntity = new EntitySchema<OrganisationMember>({
  name: 'OrganisationMember',
  tableName: 'organisation_members',
  columns: {
    organisationId: { name: 'organisation_id', type: 'uuid', primary: true },
    userId: { name: 'user_id', type: 'uuid', primary: true },
    role: { type: 'text' },
    ...timestamps,
  },
});

export const WorkspaceMemberEntity = new EntitySchema<WorkspaceMember>({
  name: 'WorkspaceMember',
  tableName: 'workspace_members',
  columns: {
    workspaceId: { name: 'workspace_id', type: 'uuid', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    userId: { name: 'user_id', type: 'uuid', primary: true },
    role: { type: 'text' },
    ...timestamps,
  },
});

export const memberEntities = [UserEntity, OrganisationMemberEntity, WorkspaceMemberEntity];
