import { Router } from 'express';
import {
  listBody,
  organisationAdminOnly,
  parseInput,
  parsePage,
  requirePrincipal,
} from '@switchyard/platform';
import type { IdentityService } from '../domain/identity.service.ts';
import { presentWorkspace } from './presenters.ts';
import { createWorkspaceBody, getWorkspaceQuery, updateWorkspaceBody } from './schemas.ts';

/** `/v2/workspaces`, behind API-key authentication. */
export function workspaceRouter(identity: IdentityService): Router {
  const router = Router();

  router.post('/', organisationAdminOnly, async (req, res) => {
    res.json(
      presentWorkspace(
        await identity.createWorkspace(requirePrincipal(req), parseInput(createWorkspaceBody, req.body)),
      ),
    );
  });
  router.get('/', async (req, res) => {
    const [workspaces, total] = await identity.listWorkspaces(requirePrincipal(req), parsePage(req.query));
    res.json(
      listBody(
        workspaces.map((workspace) => presentWorkspace(workspace)),
        total,
      ),
    );
  });
  router.get('/:id', async (req, res) => {
    const query = parseInput(getWorkspaceQuery, req.query, 'query');
    res.json(
      presentWorkspace(await identity.showWorkspace(requirePrincipal(req), req.params.id), query.name_format),
    );
  });
  router.put('/:id', organisationAdminOnly, async (req, res) => {
    const body = parseInput(updateWorkspaceBody, req.body);
    res.json(
      presentWorkspace(
        await identity.updateWorkspace(requirePrincipal(req), String(req.params.id), {
          name: body.name,
          description: body.description,
          userApiKeyConfig: body.defaults?.user_api_key_config,
        }),
      ),
    );
  });

  return router;
}
