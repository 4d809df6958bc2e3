import { Router } from 'express';
import { apiKeyAuthentication, jsonBody, type ApiKeyCache } from '@switchyard/platform';
import type { ConfigService } from '../domain/config.service.ts';
import type { IdentityService } from '../domain/identity.service.ts';
import { apiKeyRouter } from './api-key.routes.ts';
import { configRouter } from './config.routes.ts';
import { workspaceRouter } from './workspace.routes.ts';

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

  v2.use('/workspaces', workspaceRouter(identity));
  v2.use('/api-keys', apiKeyRouter(identity));

  // SDKs address configs under the gateway's base URL too; the routing table sends /v1/configs here.
  const configRoutes = configRouter(configs);
  v2.use('/configs', configRoutes);
  router.use('/v1/configs', authenticated, configRoutes);

  router.use('/v2', v2);
  return router;
}
