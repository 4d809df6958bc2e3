import { Router } from 'express';
import { apiKeyAuthentication, jsonBody, type ApiKeyCache } from '@switchyard/platform';
import type { ConfigService } from '../domain/config.service.ts';
import type { IdentityService } from '../domain/identity.service.ts';
import type { MemberService } from '../domain/member.service.ts';
import { apiKeyRouter } from './api-key.routes.ts';
import { configRouter } from './config.routes.ts';
import { userRouter, workspaceMemberRouter } from './member.routes.ts';
import { workspaceRouter } from './workspace.routes.ts';

export function controlPlaneRouter(
  identity: IdentityService,
  configs: ConfigService,
  members: MemberService,
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

  // The reference serves users under /v1/admin; the routing table sends these two prefixes here, not to admin.
  const admin = Router();
  admin.use('/users', userRouter(members));
  admin.use('/workspaces', workspaceMemberRouter(members));
  v2.use('/admin', admin);
  router.use('/v1/admin', authenticated, admin);

  router.use('/v2', v2);
  return router;
}
