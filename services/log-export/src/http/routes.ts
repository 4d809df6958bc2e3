import { camelKeys, listBody } from '@switchyard/core';
import { jsonBody } from '@switchyard/http';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter, serveOpenApi } from '@switchyard/runtime';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AnalyticsService } from '../domain/analytics.ts';
import type { AuditLogService } from '../domain/audit-logs.ts';
import { analyticsRouter } from './analytics.routes.ts';
import { exportLinkRoutes, exportRoutes } from './log-exports.routes.ts';
import type { LogExportService } from '../domain/log-exports.ts';
import { listAuditLogsQuery } from '../domain/audit-logs.schemas.ts';
import type { LogSearchService } from '../domain/log-search.ts';
import { createCustomLogsBody, customLogsResponse, listLogsQuery } from '../domain/log-search.schemas.ts';
import { presentAuditLog, presentLogSummary, presentRequestLog } from './presenters.ts';

const logId = z.string().regex(/^[\w.:-]{1,128}$/, 'a log id');

/** The largest `POST /v1/logs` body: up to 100 custom logs, each with its bodies. */
const CUSTOM_LOGS_BODY_LIMIT = '10mb';

export function logExportRouter(
  logs: LogSearchService,
  audit: AuditLogService,
  analytics: AnalyticsService,
  exports: LogExportService,
  authentication: RequestHandler,
): ScopedRouter {
  const router = new ScopedRouter();
  // Signed download links carry their own proof: served before the logs API asks for a key.
  router.mount('/v1/logs/exports', exportLinkRoutes(exports));
  const logRoutes = new ScopedRouter({ body: jsonBody(CUSTOM_LOGS_BODY_LIMIT) });
  router.mount('/v1/logs', logRoutes, authentication);
  logRoutes.get(
    '/',
    {
      scope: 'logs.list',
      summary:
        "Request logs of the key's workspace (an organisation admin key's: of every workspace), newest first, filtered and paged by cursor.",
      description:
        'Summaries without bodies, each with the feedback on its trace. Besides the parameters below, `metadata.<key>=<value>` ' +
        'keeps the logs whose metadata holds that value (up to 10 of them, all holding). The time range is the last 24 hours ' +
        'unless given, at most 31 days; later pages keep the range of the first, and take its filters again with the cursor.',
      query: listLogsQuery,
    },
    async (req, res, _next, input) => {
      const page = await logs.list(requirePrincipal(req), input.query(req));
      res.json({ object: 'list', data: page.logs.map(presentLogSummary), next_cursor: page.nextCursor });
    },
  );
  logRoutes.post(
    '/',
    {
      // Custom logs record model calls a client made itself: the right to call models.
      scope: 'completions.write',
      summary:
        "Logs requests a client made to a provider itself (one, or a list of them), in the key's workspace.",
      query: 'none',
      body: createCustomLogsBody,
      response: customLogsResponse,
    },
    (req, res, _next, input) => {
      const body = input.body(req);
      const ids = logs.createCustom(requirePrincipal(req), Array.isArray(body) ? body : [body]);
      res.json({ status: 'success', message: 'Logs successfully saved', log_ids: ids });
    },
  );
  exportRoutes(logRoutes, exports);
  logRoutes.get(
    '/:id',
    {
      scope: 'logs.view',
      summary: "One request log of the key's workspace, by its request id, with the feedback on its trace.",
      params: z.object({ id: logId }),
      query: 'none',
    },
    async (req, res, _next, input) => {
      res.json(presentRequestLog(await logs.get(requirePrincipal(req), input.param(req, 'id'))));
    },
  );

  router.mount('/v2/analytics', analyticsRouter(analytics), authentication);

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
