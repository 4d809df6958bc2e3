import { z } from 'zod';
import { ORGANISATION_ROLES, WORKSPACE_ROLES } from './roles.ts';

/** A role in any case (`Admin` is `admin`), kept lower-case. */
const roleOf = <const Roles extends readonly [string, ...string[]]>(roles: Roles) =>
  z.string().trim().toLowerCase().pipe(z.enum(roles));

const organisationRole = roleOf(ORGANISATION_ROLES);
const workspaceRole = roleOf(WORKSPACE_ROLES);
const personName = z.string().trim().min(1).max(255);
const email = z.string().trim().max(320).pipe(z.email());

export const addUserBody = z.strictObject({
  email,
  first_name: personName.optional(),
  last_name: personName.optional(),
  role: organisationRole,
});

export const updateUserBody = z.strictObject({ role: organisationRole });

/** Page parameters are read by parsePage. */
export const listUsersQuery = z.object({
  email: email.optional(),
  role: organisationRole.optional(),
});

const MAX_MEMBERS_PER_REQUEST = 100;

const workspaceMember = z.strictObject({ id: z.uuid(), role: workspaceRole });

/**
 * `{users: [{id, role}, ...]}` as the reference sends it, or one user as `{id, role}`;
 * either way a list of distinct users.
 */
export const addWorkspaceMembersBody = z
  .strictObject({
    users: z.array(workspaceMember).min(1).max(MAX_MEMBERS_PER_REQUEST).optional(),
    id: z.uuid().optional(),
    role: workspaceRole.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.users) {
      if (body.id !== undefined || body.role !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['users'], message: 'give users, or id and role, not both' });
      }
      const seen = new Set<string>();
      body.users.forEach((user, index) => {
        const id = user.id.toLowerCase();
        if (seen.has(id))
          ctx.addIssue({ code: 'custom', path: ['users', index, 'id'], message: 'given twice' });
        seen.add(id);
      });
      return;
    }
    if (body.id === undefined)
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'give users, or id and role' });
    else if (body.role === undefined) ctx.addIssue({ code: 'custom', path: ['role'], message: 'required' });
  })
  .transform((body) =>
    (body.users ?? [{ id: body.id!, role: body.role! }]).map((user) => ({
      userId: user.id.toLowerCase(),
      role: user.role,
    })),
  );

export const updateWorkspaceMemberBody = z.strictObject({ role: workspaceRole });

export const listWorkspaceMembersQuery = z.object({
  email: email.optional(),
  role: workspaceRole.optional(),
});
