import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { MemberService } from '../domain/member.service.ts';
import { presentUser, presentWorkspaceMember } from './member.presenters.ts';
import {
  addUserBody,
  addWorkspaceMembersBody,
  listUsersQuery,
  listWorkspaceMembersQuery,
  updateUserBody,
  updateWorkspaceMemberBody,
} from '../domain/member.schemas.ts';

/**
 * `/admin/users`, under `/v1` and `/v2`, behind API-key authentication; organisation admin keys
 * only. Invites by email (`/admin/users/invites`) are not served: users are added directly.
 */
export function userRouter(members: MemberService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'organisation_users.create',
      summary: 'Adds a user to the organisation, with an organisation role.',
      query: 'none',
      body: addUserBody,
    },
    async (req, res, _next, input) => {
      res.json(presentUser(await members.addUser(requirePrincipal(req), camelKeys(input.body(req)))));
    },
  );
  router.get(
    '/',
    {
      scope: 'organisation_users.list',
      summary: "Lists the organisation's users, by email or role if asked.",
      query: listUsersQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const filter = input.query(req);
      const [users, total] = await members.listUsers(requirePrincipal(req), input.page(req), filter);
      res.json(listBody(users.map(presentUser), total));
    },
  );
  router.get(
    '/:id',
    { scope: 'organisation_users.read', summary: 'One user of the organisation.', query: 'none' },
    async (req, res) => {
      res.json(presentUser(await members.getUser(requirePrincipal(req), req.params.id)));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'organisation_users.update',
      summary: "Changes a user's organisation role.",
      query: 'none',
      body: updateUserBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      res.json(presentUser(await members.updateUserRole(requirePrincipal(req), req.params.id, body.role)));
    },
  );
  router.delete(
    '/:id',
    {
      scope: 'organisation_users.delete',
      summary: 'Removes a user from the organisation.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await members.removeUser(requirePrincipal(req), req.params.id);
      res.json({});
    },
  );

  return router;
}

/** `/admin/workspaces/:workspaceId/users`, under `/v1` and `/v2`; organisation admin keys only. */
export function workspaceMemberRouter(members: MemberService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/:workspaceId/users',
    {
      scope: 'workspace_users.create',
      summary: 'Adds users of the organisation to a workspace, each with a workspace role.',
      query: 'none',
      body: addWorkspaceMembersBody,
    },
    async (req, res, _next, input) => {
      const users = input.body(req);
      const added = await members.addWorkspaceMembers(requirePrincipal(req), req.params.workspaceId, users);
      res.json(listBody(added.map(presentWorkspaceMember), added.length));
    },
  );
  router.get(
    '/:workspaceId/users',
    {
      scope: 'workspace_users.list',
      summary: "Lists a workspace's members, by email or role if asked.",
      query: listWorkspaceMembersQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const filter = input.query(req);
      const [found, total] = await members.listWorkspaceMembers(
        requirePrincipal(req),
        req.params.workspaceId,
        input.page(req),
        filter,
      );
      res.json(listBody(found.map(presentWorkspaceMember), total));
    },
  );
  router.put(
    '/:workspaceId/users/:userId',
    {
      scope: 'workspace_users.update',
      summary: "Changes a member's workspace role.",
      query: 'none',
      body: updateWorkspaceMemberBody,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const member = await members.updateWorkspaceMemberRole(
        requirePrincipal(req),
        req.params.workspaceId,
        req.params.userId,
        body.role,
      );
      res.json(presentWorkspaceMember(member));
    },
  );
  router.delete(
    '/:workspaceId/users/:userId',
    {
      scope: 'workspace_users.delete',
      summary: 'Removes a member from a workspace.',
      query: 'none',
      body: 'none',
    },
    async (req, res) => {
      await members.removeWorkspaceMember(requirePrincipal(req), req.params.workspaceId, req.params.userId);
      res.json({});
    },
  );

  return router;
}
