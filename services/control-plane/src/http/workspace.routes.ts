import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { WorkspaceService } from '../domain/workspace.service.ts';
import { presentWorkspace } from './presenters.ts';
import {
  createWorkspaceBody,
  deleteWorkspaceBody,
  getWorkspaceQuery,
  updateWorkspaceBody,
} from '../domain/workspace.schemas.ts';

/** `/v2/workspaces`, behind API-key authentication. */
export function workspaceRouter(workspaces: WorkspaceService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/',
    {
      scope: 'workspaces.create',
      summary: 'Creates a workspace in the organisation.',
      query: 'none',
      body: createWorkspaceBody,
    },
    async (req, res, _next, input) => {
      res.json(
        presentWorkspace(await workspaces.createWorkspace(requirePrincipal(req), camelKeys(input.body(req)))),
      );
    },
  );
  router.get(
    '/',
    { scope: 'workspaces.list', summary: 'Lists the workspaces the key can see.', query: 'none', page: true },
    async (req, res, _next, input) => {
      const [found, total] = await workspaces.listWorkspaces(requirePrincipal(req), input.page(req));
      res.json(
        listBody(
          found.map((workspace) => presentWorkspace(workspace)),
          total,
        ),
      );
    },
  );
  router.get(
    '/:id',
    { scope: 'workspaces.read', summary: 'One workspace, by id or slug.', query: getWorkspaceQuery },
    async (req, res, _next, input) => {
      const query = input.query(req);
      res.json(
        presentWorkspace(
          await workspaces.showWorkspace(requirePrincipal(req), req.params.id),
          query.name_format,
        ),
      );
    },
  );
  router.put(
    '/:id',
    {
      scope: 'workspaces.update',
      summary: "Changes a workspace's name, description, defaults, settings or security settings.",
      query: 'none',
      body: updateWorkspaceBody,
    },
    async (req, res, _next, input) => {
      res.json(
        presentWorkspace(
          await workspaces.updateWorkspace(
            requirePrincipal(req),
            String(req.params.id),
            camelKeys(input.body(req)),
          ),
        ),
      );
    },
  );
  router.delete(
    '/:id',
    {
      scope: 'workspaces.delete',
      summary:
        'Deletes a workspace: revokes its API keys, archives its configs, guardrails and limit policies and removes its members.',
      query: 'none',
      body: { contentTypes: ['application/json'], schema: deleteWorkspaceBody, optional: true },
    },
    async (req, res, _next, input) => {
      await workspaces.deleteWorkspace(
        requirePrincipal(req),
        String(req.params.id),
        camelKeys(input.body(req)),
      );
      res.json({});
    },
  );

  return router;
}
