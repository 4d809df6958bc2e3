import { listBody, parseInput, parsePage, requirePrincipal, ScopedRouter } from '@switchyard/platform';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AuditLogService } from '../domain/audit-logs.ts';
import type { RequestLogService } from '../domain/request-logs.ts';
import { listAuditLogsQuery } from './audit.schemas.ts';
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
  logRoutes.get('/:id', 'logs.view', async (req, res) => {
    res.json(
      presentRequestLog(await logs.get(requirePrincipal(req), parseInput(logId, req.params.id, 'path'))),
    );
  });

  const auditRoutes = new ScopedRouter();
  router.mount('/v1/audit-logs', auditRoutes, authentication);
  auditRoutes.get('/', 'audit_logs.list', async (req, res) => {
    const query = parseInput(listAuditLogsQuery, req.query, 'query');
    const [entries, total] = await audit.list(
      requirePrincipal(req),
      {
        workspaceId: query.workspace_id,
        userId: query.user_id,
        apiKeyId: query.api_key_id,
        method: query.method,
        route: query.resource,
        from: query.from,
        to: query.to,
      },
      parsePage(req.query),
    );
    res.json(listBody(entries.map(presentAuditLog), total));
  });
  return router;
}
