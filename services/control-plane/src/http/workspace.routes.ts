import { jsonBody, listBody, requirePrincipal, ScopedRouter } from '@switchyard/platform';
import type { IdentityService } from '../domain/identity.service.ts';
import { presentWorkspace } from './presenters.ts';
import { createWorkspaceBody, getWorkspaceQuery, updateWorkspaceBody } from './schemas.ts';

/** `/v2/workspaces`, behind API-key authentication. */
export function workspaceRouter(identity: IdentityService, bodyLimit: string): ScopedRouter {
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
      res.json(presentWorkspace(await identity.createWorkspace(requirePrincipal(req), input.body(req))));
    },
  );
  router.get(
    '/',
    { scope: 'workspaces.list', summary: 'Lists the workspaces the key can see.', query: 'none', page: true },
    async (req, res, _next, input) => {
      const [workspaces, total] = await identity.listWorkspaces(requirePrincipal(req), input.page(req));
      res.json(
        listBody(
          workspaces.map((workspace) => presentWorkspace(workspace)),
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
          await identity.showWorkspace(requirePrincipal(req), req.params.id),
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
      const body = input.body(req);
      res.json(
        presentWorkspace(
          await identity.updateWorkspace(requirePrincipal(req), String(req.params.id), {
            name: body.name,
            description: body.description,
            userApiKeyConfig: body.defaults?.user_api_key_config,
            userApiKeyAutoCreate: body.settings?.user_api_key_auto_create,
            securitySettings: body.security_settings,
          }),
        ),
      );
    },
  );

  return router;
}
