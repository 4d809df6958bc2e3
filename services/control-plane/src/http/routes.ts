import { Router } from 'express';
import {
  apiKeyAuthentication,
  jsonBody,
  listBody,
  organisationAdminOnly,
  parseInput,
  parsePage,
  requirePrincipal,
  type ApiKeyCache,
} from '@switchyard/platform';
import type { ConfigService } from '../domain/config.service.ts';
import type { IdentityService } from '../domain/identity.service.ts';
import { configRouter } from './config.routes.ts';
import { presentApiKey, presentWorkspace } from './presenters.ts';
import { apiKeyPathParams, createApiKeyBody, createWorkspaceBody } from './schemas.ts';

export function controlPlaneRouter(
  identity: IdentityService,
  configs: ConfigService,
  keys: ApiKeyCache,
  headerPrefix: string,
): Router {
  const router = Router();
  const authenticated = [apiKeyAuthentication({ cache: keys, headerPrefix }), jsonBody('1mb')];
  const v2 = Router();
  v2.use(authenticated);

  v2.post('/workspaces', organisationAdminOnly, async (req, res) => {
    res.json(
      presentWorkspace(
        await identity.createWorkspace(requirePrincipal(req), parseInput(createWorkspaceBody, req.body)),
      ),
    );
  });
  v2.get('/workspaces', async (req, res) => {
    const [workspaces, total] = await identity.listWorkspaces(requirePrincipal(req), parsePage(req.query));
    res.json(listBody(workspaces.map(presentWorkspace), total));
  });
  v2.get('/workspaces/:id', async (req, res) => {
    res.json(presentWorkspace(await identity.getWorkspace(requirePrincipal(req), req.params.id)));
  });

  v2.post('/api-keys/:type/:sub', organisationAdminOnly, async (req, res) => {
    const path = parseInput(apiKeyPathParams, { type: req.params.type, 'sub-type': req.params.sub }, 'path');
    const body = parseInput(createApiKeyBody, req.body);
    const { apiKey, key } = await identity.createApiKey(requirePrincipal(req), {
      type: path.type,
      subType: path['sub-type'],
      name: body.name,
      description: body.description,
      workspaceId: body.workspace_id,
      scopes: body.scopes,
      expiresAt: body.expires_at,
      userId: body.user_id,
    });
    res.json({ ...presentApiKey(apiKey), key });
  });
  v2.get('/api-keys', async (req, res) => {
    const [apiKeys, total] = await identity.listApiKeys(requirePrincipal(req), parsePage(req.query));
    res.json(listBody(apiKeys.map(presentApiKey), total));
  });
  v2.get('/api-keys/:id', async (req, res) => {
    res.json(presentApiKey(await identity.getApiKey(requirePrincipal(req), req.params.id)));
  });
  v2.delete('/api-keys/:id', organisationAdminOnly, async (req, res) => {
    await identity.revokeApiKey(requirePrincipal(req), String(req.params.id));
    res.json({});
  });

  // SDKs address configs under the gateway's base URL too; the routing table sends /v1/configs here.
  const configRoutes = configRouter(configs);
  v2.use('/configs', configRoutes);
  router.use('/v1/configs', authenticated, configRoutes);

  router.use('/v2', v2);
  return router;
}
