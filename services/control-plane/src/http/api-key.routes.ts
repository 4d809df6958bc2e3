import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { ApiKeyService } from '../domain/api-key.service.ts';
import { presentApiKey } from './presenters.ts';
import {
  apiKeyPathParams,
  createApiKeyBody,
  listApiKeysQuery,
  rotateApiKeyBody,
  updateApiKeyBody,
} from '../domain/api-key.schemas.ts';

/** `/v2/api-keys`, behind API-key authentication. */
export function apiKeyRouter(apiKeys: ApiKeyService, bodyLimit: string): ScopedRouter {
  const router = new ScopedRouter({ body: jsonBody(bodyLimit) });

  router.post(
    '/:id/rotate',
    {
      scope: 'api_keys.update',
      summary: 'Rotates an API key: a new secret, answered once; the old one stops working at once.',
      query: 'none',
      body: { contentTypes: ['application/json'], schema: rotateApiKeyBody, optional: true },
    },
    async (req, res, next, input) => {
      // POST /<type>/rotate would read as a rotation: leave it to key creation, which names the bad sub-type.
      if (apiKeyPathParams.shape.type.safeParse(req.params.id).success) return next('route');
      input.body(req);
      const { apiKey, key, rotatedAt } = await apiKeys.rotateApiKey(
        requirePrincipal(req),
        String(req.params.id),
      );
      res.json({
        ...presentApiKey(apiKey, await apiKeys.configSlugs([apiKey])),
        key,
        key_transition_expires_at: rotatedAt.toISOString(),
      });
    },
  );
  router.post(
    '/:type/:sub',
    {
      scope: 'api_keys.create',
      summary: 'Creates an API key of a type and sub-type; its secret is answered once.',
      params: apiKeyPathParams,
      paramNames: { sub: 'sub-type' },
      query: 'none',
      body: createApiKeyBody,
    },
    async (req, res, _next, input) => {
      const path = input.params(req);
      const { apiKey, key } = await apiKeys.createApiKey(requirePrincipal(req), {
        ...camelKeys(input.body(req)),
        type: path.type,
        subType: path['sub-type'],
      });
      res.json({ ...presentApiKey(apiKey, await apiKeys.configSlugs([apiKey])), key });
    },
  );
  router.get(
    '/',
    {
      scope: 'api_keys.list',
      summary: 'Lists the API keys the key can see, without their secrets.',
      query: listApiKeysQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const query = input.query(req);
      const [found, total] = await apiKeys.listApiKeys(requirePrincipal(req), input.page(req), query.ids);
      const slugs = await apiKeys.configSlugs(found);
      res.json(
        listBody(
          found.map((apiKey) => presentApiKey(apiKey, slugs)),
          total,
        ),
      );
    },
  );
  router.get(
    '/:id',
    { scope: 'api_keys.read', summary: 'One API key, without its secret.', query: 'none' },
    async (req, res) => {
      const apiKey = await apiKeys.getApiKey(requirePrincipal(req), req.params.id);
      res.json(presentApiKey(apiKey, await apiKeys.configSlugs([apiKey])));
    },
  );
  router.put(
    '/:id',
    {
      scope: 'api_keys.update',
      summary: "Changes an API key's name, description, scopes, expiry, rotation policy or defaults.",
      query: 'none',
      body: updateApiKeyBody,
    },
    async (req, res, _next, input) => {
      const apiKey = await apiKeys.updateApiKey(
        requirePrincipal(req),
        String(req.params.id),
        camelKeys(input.body(req)),
      );
      res.json(presentApiKey(apiKey, await apiKeys.configSlugs([apiKey])));
    },
  );
  router.delete(
    '/:id',
    { scope: 'api_keys.delete', summary: 'Revokes an API key.', query: 'none', body: 'none' },
    async (req, res) => {
      await apiKeys.revokeApiKey(requirePrincipal(req), String(req.params.id));
      res.json({});
    },
  );

  return router;
}
