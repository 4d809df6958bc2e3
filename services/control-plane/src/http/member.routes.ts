import {
  jsonBody,
  listBody,
  parseInput,
  parsePage,
  requirePrincipal,
  ScopedRouter,
} from '@switchyard/platform';
import type { MemberService } from '../domain/member.service.ts';
import { presentUser, presentWorkspaceMember } from './member.presenters.ts';
import {
  addUserBody,
  addWorkspaceMembersBody,
  listUsersQuery,
  listWorkspaceMembersQuery,
  updateUserBody,
  updateWorkspaceMemberBody,
} from './member.schemas.ts';

/**
 * `/admin/users`, under `/v1` and `/v2`, behind API-key authentication; organisation admin keys
 * only. Invites by email (`/admin/users/invites`) are not served: users are added directly.
 */
export function userRouter(members: MemberService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post('/', 'organisation_users.create', async (req, res) => {
    const body = parseInput(addUserBody, req.body);
    res.json(
      presentUser(
        await members.addUser(requirePrincipal(req), {
          email: body.email,
          firstName: body.first_name,
          lastName: body.last_name,
          role: body.role,
        }),
      ),
    );
  });
  router.get('/', 'organisation_users.list', async (req, res) => {
    const filter = parseInput(listUsersQuery, req.query, 'query');
    const [users, total] = await members.listUsers(requirePrincipal(req), parsePage(req.query), filter);
    res.json(listBody(users.map(presentUser), total));
  });
  router.get('/:id', 'organisation_users.read', async (req, res) => {
    res.json(presentUser(await members.getUser(requirePrincipal(req), req.params.id)));
  });
  router.put('/:id', 'organisation_users.update', async (req, res) => {
    const body = parseInput(updateUserBody, req.body);
    res.json(presentUser(await members.updateUserRole(requirePrincipal(req), req.params.id, body.role)));
  });
  router.delete('/:id', 'organisation_users.delete', async (req, res) => {
    await members.removeUser(requirePrincipal(req), req.params.id);
    res.json({});
  });

  return router;
}

/** `/admin/workspaces/:workspaceId/users`, under `/v1` and `/v2`; organisation admin keys only. */
export function workspaceMemberRouter(members: MemberService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post('/:workspaceId/users', 'workspace_users.create', async (req, res) => {
    const users = parseInput(addWorkspaceMembersBody, req.body);
    const added = await members.addWorkspaceMembers(requirePrincipal(req), req.params.workspaceId, users);
    res.json(listBody(added.map(presentWorkspaceMember), added.length));
  });
  router.get('/:workspaceId/users', 'workspace_users.list', async (req, res) => {
    const filter = parseInput(listWorkspaceMembersQuery, req.query, 'query');
    const [found, total] = await members.listWorkspaceMembers(
      requirePrincipal(req),
      req.params.workspaceId,
      parsePage(req.query),
      filter,
    );
    res.json(listBody(found.map(presentWorkspaceMember), total));
  });
  router.put('/:workspaceId/users/:userId', 'workspace_users.update', async (req, res) => {
    const body = parseInput(updateWorkspaceMemberBody, req.body);
    const member = await members.updateWorkspaceMemberRole(
      requirePrincipal(req),
      req.params.workspaceId,
      req.params.userId,
      body.role,
    );
    res.json(presentWorkspaceMember(member));
  });
  router.delete('/:workspaceId/users/:userId', 'workspace_users.delete', async (req, res) => {
    await members.removeWorkspaceMember(requirePrincipal(req), req.params.workspaceId, req.params.userId);
    res.json({});
  });

  return router;
}
