import {
  jsonBody,
  listBody,
  parseInput,
  parsePage,
  requirePrincipal,
  ScopedRouter,
} from '@switchyard/platform';
import type { IdentityService } from '../domain/identity.service.ts';
import { presentApiKey } from './presenters.ts';
import {
  apiKeyPathParams,
  createApiKeyBody,
  listApiKeysQuery,
  rotateApiKeyBody,
  updateApiKeyBody,
} from './schemas.ts';

/** `/v2/api-keys`, behind API-key authentication. */
export function apiKeyRouter(identity: IdentityService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post('/:id/rotate', 'api_keys.update', async (req, res, next) => {
    // POST /<type>/rotate would read as a rotation: leave it to key creation, which names the bad sub-type.
    if (apiKeyPathParams.shape.type.safeParse(req.params.id).success) return next('route');
    parseInput(rotateApiKeyBody, req.body ?? {});
    const { apiKey, key, rotatedAt } = await identity.rotateApiKey(
      requirePrincipal(req),
      String(req.params.id),
    );
    res.json({ ...presentApiKey(apiKey), key, key_transition_expires_at: rotatedAt.toISOString() });
  });
  router.post('/:type/:sub', 'api_keys.create', async (req, res) => {
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
      rotationPolicy: body.rotation_policy ?? undefined,
    });
    res.json({ ...presentApiKey(apiKey), key });
  });
  router.get('/', 'api_keys.list', async (req, res) => {
    const query = parseInput(listApiKeysQuery, req.query, 'query');
    const [apiKeys, total] = await identity.listApiKeys(
      requirePrincipal(req),
      parsePage(req.query),
      query.ids,
    );
    res.json(listBody(apiKeys.map(presentApiKey), total));
  });
  router.get('/:id', 'api_keys.read', async (req, res) => {
    res.json(presentApiKey(await identity.getApiKey(requirePrincipal(req), req.params.id)));
  });
  router.put('/:id', 'api_keys.update', async (req, res) => {
    const body = parseInput(updateApiKeyBody, req.body);
    const apiKey = await identity.updateApiKey(requirePrincipal(req), String(req.params.id), {
      name: body.name,
      description: body.description,
      scopes: body.scopes,
      expiresAt: body.expires_at,
      rotationPolicy: body.rotation_policy,
    });
    res.json(presentApiKey(apiKey));
  });
  router.delete('/:id', 'api_keys.delete', async (req, res) => {
    await identity.revokeApiKey(requirePrincipal(req), String(req.params.id));
    res.json({});
  });

  return router;
}
