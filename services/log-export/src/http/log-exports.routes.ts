import { pipeline } from 'node:stream';
import { listBody } from '@switchyard/core';
import { requirePrincipal } from '@switchyard/access';
import { ScopedRouter } from '@switchyard/runtime';
import type { Request } from 'express';
import { z } from 'zod';
import type { LogExportService } from '../domain/log-exports.ts';
import {
  createExportBody,
  exportTaskResponse,
  exportTotalResponse,
  fieldRestrictionsQuery,
  listExportsQuery,
  updateExportBody,
} from '../domain/log-exports.schemas.ts';
import { presentExport } from './presenters.ts';

const exportId = z.object({ id: z.guid('a log export id (a UUID)').transform((id) => id.toLowerCase()) });

/** The filters as the request sent them (validated by then): what the export keeps and shows. */
function rawFilters(req: Request): Record<string, unknown> {
  return (req.body as { filters: Record<string, unknown> }).filters;
}

/** Where this API is reached from, as the caller reached it: the base of the links it hands out. */
function publicBase(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/** The log export routes under `/v1/logs` (mounted with authentication), before `/:id` takes `exports` for a log id. */
export function exportRoutes(router: ScopedRouter, exports: LogExportService): void {
  router.get(
    '/exports',
    {
      scope: 'logs.export',
      summary:
        "Log exports of the key's organisation (of its workspace for a workspace key; its own for a user's key), newest first.",
      query: listExportsQuery,
      page: true,
    },
    async (req, res, _next, input) => {
      const [records, total] = await exports.list(
        requirePrincipal(req),
        input.query(req).workspace_id,
        input.page(req),
      );
      res.json(listBody(records.map(presentExport), total));
    },
  );
  router.post(
    '/exports',
    {
      scope: 'logs.export',
      summary:
        'Makes a draft export of the logs the filters match, with the fields asked for; start it to run it.',
      description:
        'A field the organisation denies (`export_settings.deniedFields`) is refused with 422, naming it. `total` is how many logs the filters match now.',
      query: 'none',
      body: createExportBody,
      response: exportTotalResponse,
    },
    async (req, res, _next, input) => {
      const made = await exports.create(requirePrincipal(req), input.body(req), rawFilters(req));
      res.json({ id: made.id, total: made.total, object: 'export' });
    },
  );
  router.get(
    '/exports/field-restrictions',
    {
      scope: 'logs.export',
      summary:
        "The fields a workspace's exports may not hold (the organisation's `export_settings.deniedFields`), and those they may.",
      query: fieldRestrictionsQuery,
    },
    async (req, res, _next, input) => {
      const found = await exports.fieldRestrictions(requirePrincipal(req), input.query(req).workspace_id);
      res.json({
        object: 'field_restrictions',
        workspace_id: found.workspaceId,
        denied_fields: found.denied,
        allowed_fields: found.allowed,
      });
    },
  );
  router.get(
    '/exports/:id',
    { scope: 'logs.export', summary: 'One log export, with its progress.', params: exportId, query: 'none' },
    async (req, res, _next, input) => {
      res.json(presentExport(await exports.get(requirePrincipal(req), input.param(req, 'id'))));
    },
  );
  router.put(
    '/exports/:id',
    {
      scope: 'logs.export',
      summary:
        'Changes an export that is not running (its filters, fields or description); it becomes a draft again.',
      description: 'A running export is refused with 409: cancel it first.',
      params: exportId,
      query: 'none',
      body: updateExportBody,
      response: exportTotalResponse,
    },
    async (req, res, _next, input) => {
      const body = input.body(req);
      const changed = await exports.update(
        requirePrincipal(req),
        input.param(req, 'id'),
        body,
        body.filters === undefined ? undefined : rawFilters(req),
      );
      res.json({ id: changed.id, total: changed.total, object: 'export' });
    },
  );
  router.delete(
    '/exports/:id',
    {
      scope: 'logs.export',
      summary: 'Deletes (archives) an export that is not running, and its file: it is hidden from then on.',
      description: 'A running export is refused with 409: cancel it first.',
      params: exportId,
      query: 'none',
      body: 'none',
    },
    async (req, res, _next, input) => {
      await exports.archive(requirePrincipal(req), input.param(req, 'id'));
      res.json({});
    },
  );
  router.post(
    '/exports/:id/start',
    {
      scope: 'logs.export',
      summary: 'Runs an export (again, from the start): its logs up to now are written as JSON Lines.',
      description: 'An export that runs already is refused with 409.',
      params: exportId,
      query: 'none',
      body: 'none',
      response: exportTaskResponse,
    },
    async (req, res, _next, input) => {
      await exports.start(requirePrincipal(req), input.param(req, 'id'));
      res.json({ message: 'Export started', object: 'export' });
    },
  );
  router.post(
    '/exports/:id/cancel',
    {
      scope: 'logs.export',
      summary: 'Stops a running export; what it wrote so far is dropped.',
      description: 'An export that is not running is refused with 409.',
      params: exportId,
      query: 'none',
      body: 'none',
      response: exportTaskResponse,
    },
    async (req, res, _next, input) => {
      await exports.cancel(requirePrincipal(req), input.param(req, 'id'));
      res.json({ message: 'Export cancelled', object: 'export' });
    },
  );
  router.get(
    '/exports/:id/download',
    {
      scope: 'logs.export',
      summary: "A short-lived signed link to a finished export's JSON Lines file.",
      description:
        'An export that has not finished is refused with 409. The link needs no key; it expires at `expires_at`.',
      params: exportId,
      query: 'none',
      response: z.object({ signed_url: z.string(), expires_at: z.string() }),
    },
    async (req, res, _next, input) => {
      const link = await exports.download(requirePrincipal(req), input.param(req, 'id'), publicBase(req));
      res.json({ signed_url: link.url, expires_at: link.expiresAt.toISOString() });
    },
  );
}

/** The file behind a signed download link: the link is its own proof, so no key is asked for. */
export function exportLinkRoutes(exports: LogExportService): ScopedRouter {
  const router = new ScopedRouter();
  router.get(
    '/:id/file',
    {
      scope: 'public',
      summary: 'Downloads an export through the signed link its download route gave (JSON Lines).',
      params: exportId,
      query: z.strictObject({ token: z.string().min(1).max(256) }),
      responseType: 'application/x-ndjson',
    },
    async (req, res, _next, input) => {
      const { file, filename } = await exports.linkedFile(input.param(req, 'id'), input.query(req).token);
      res.status(200);
      res.setHeader('content-type', 'application/x-ndjson');
      res.setHeader('content-length', String(file.bytes));
      res.setHeader('content-disposition', `attachment; filename="${filename}"`);
      res.setHeader('cache-control', 'private, no-store');
      // A download cut short closes the file; a file that fails mid-way cuts the download.
      pipeline(file.stream, res, () => undefined);
    },
  );
  return router;
}
