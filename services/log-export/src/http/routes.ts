import { parseInput, requirePrincipal, ScopedRouter } from '@switchyard/platform';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { RequestLogService } from '../domain/request-logs.ts';
import { presentRequestLog } from './presenters.ts';

const logId = z.string().regex(/^[\w.:-]{1,128}$/, 'a log id');

export function logExportRouter(logs: RequestLogService, authentication: RequestHandler): ScopedRouter {
  const router = new ScopedRouter();
  const logRoutes = new ScopedRouter();
  router.mount('/v1/logs', logRoutes, authentication);
  logRoutes.get('/:id', 'logs.view', async (req, res) => {
    res.json(
      presentRequestLog(await logs.get(requirePrincipal(req), parseInput(logId, req.params.id, 'path'))),
    );
  });
  return router;
}
