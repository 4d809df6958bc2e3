import { camelKeys, listBody } from '@switchyard/core';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter, serveOpenApi } from '@switchyard/runtime';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AuditLogService } from '../domain/audit-logs.ts';
import { listAuditLogsQuery } from '../domain/audit-logs.schemas.ts';
import type { RequestLogService } from '../domain/request-logs.ts';
import { presentAuditLog, presentRequestLog } from './presenters.ts';

const logId = z.string().regex(/^[\w.:-]{1,128}$/, 'a log id');

export function logExportRouter(
  logs: RequestLogService,
  audit: AuditLogService,
  authentication: RequestHandler,
): ScopedRouter {
  const router = new ScopedRouter();
  const logRoutes = new ScopedRouter();
  router.mount('/v1/logs', logRoutes, authentication);
  logRoutes.get(
    '/:id',
    {
      scope: 'logs.view',
      summary: "One request log of the key's workspace, by its request id.",
      params: z.object({ id: logId }),
      query: 'none',
    },
    async (req, res, _next, input) => {
      res.json(presentRequestLog(await logs.get(requirePrincipal(req), input.param(req, 'id'))));
    },
  );

  const auditRoutes = new ScopedRouter();
  router.mount('/v1/audit-logs', auditRoutes, authentication);
  auditRoutes.get(
    '/',
    {
      scope: 'audit_logs.list',
      summary: "The organisation's audit log of management writes, filtered and paged.",
      query: listAuditLogsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const [entries, total] = await audit.list(
        requirePrincipal(req),
        camelKeys(input.query(req)),
        input.page(req),
      );
      res.json(listBody(entries.map(presentAuditLog), total));
    },
  );
  return serveOpenApi(router, 'log-export');
}
