import { Router } from 'express';
import { apiKeyAuthentication, parseInput, requirePrincipal, type ApiKeyCache } from '@switchyard/platform';
import { z } from 'zod';
import type { RequestLogService } from '../domain/request-logs.ts';
import { presentRequestLog } from './presenters.ts';

const logId = z.string().regex(/^[\w.:-]{1,128}$/, 'a log id');

export function logExportRouter(logs: RequestLogService, keys: ApiKeyCache, headerPrefix: string): Router {
  const router = Router();
  router.use('/v1/logs', apiKeyAuthentication({ cache: keys, headerPrefix }));
  router.get('/v1/logs/:id', async (req, res) => {
    res.json(
      presentRequestLog(await logs.get(requirePrincipal(req), parseInput(logId, req.params.id, 'path'))),
    );
  });
  return router;
}
