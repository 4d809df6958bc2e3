import {
  jsonBody,
  listBody,
  parseInput,
  parsePage,
  requirePrincipal,
  ScopedRouter,
} from '@switchyard/platform';
import type { IdentityService } from '../domain/identity.service.ts';
import { presentWorkspace } from './presenters.ts';
import { createWorkspaceBody, getWorkspaceQuery, updateWorkspaceBody } from './schemas.ts';

/** `/v2/workspaces`, behind API-key authentication. */
export function workspaceRouter(identity: IdentityService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post('/', 'workspaces.create', async (req, res) => {
    res.json(
      presentWorkspace(
        await identity.createWorkspace(requirePrincipal(req), parseInput(createWorkspaceBody, req.body)),
      ),
    );
  });
  router.get('/', 'workspaces.list', async (req, res) => {
    const [workspaces, total] = await identity.listWorkspaces(requirePrincipal(req), parsePage(req.query));
    res.json(
      listBody(
        workspaces.map((workspace) => presentWorkspace(workspace)),
        total,
      ),
    );
  });
  router.get('/:id', 'workspaces.read', async (req, res) => {
    const query = parseInput(getWorkspaceQuery, req.query, 'query');
    res.json(
      presentWorkspace(await identity.showWorkspace(requirePrincipal(req), req.params.id), query.name_format),
    );
  });
  router.put('/:id', 'workspaces.update', async (req, res) => {
    const body = parseInput(updateWorkspaceBody, req.body);
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
  });

  return router;
}
