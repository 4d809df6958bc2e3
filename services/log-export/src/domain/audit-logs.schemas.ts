import { z } from 'zod';
import type { CamelKeys } from '@switchyard/core';

const id = z.guid('a UUID').transform((value) => value.toLowerCase());
const instant = z.iso
  .datetime({ offset: true, message: 'an ISO 8601 timestamp, e.g. 2026-01-31T12:00:00Z' })
  .transform((value) => new Date(value));

/**
 * `GET /v1/audit-logs` filters. Unknown parameters are refused: a misspelt filter must not
 * quietly widen an audit query to the whole organisation. Page parameters are read by parsePage.
 */
export const listAuditLogsQuery = z
  .strictObject({
    workspace_id: id.optional(),
    user_id: id.optional(),
    api_key_id: id.optional(),
    method: z
      .string()
      .transform((value) => value.toUpperCase())
      .pipe(z.enum(['POST', 'PUT', 'PATCH', 'DELETE'], 'one of POST, PUT, PATCH, DELETE'))
      .optional(),
    resource: z
      .string()
      .max(512)
      .regex(/^\/[\w/:.-]*$/, "a route pattern, e.g. '/v2/api-keys/:id'")
      .optional(),
    from: instant.optional(),
    to: instant.optional(),
    current_page: z.string().optional(),
    page_size: z.string().optional(),
  })
  .refine((query) => !query.from || !query.to || query.from < query.to, {
    message: 'must be later than from',
    path: ['to'],
  });

/** The filters as the domain takes them; `resource` names the route pattern, and the page is read apart. */
export type AuditLogQuery = CamelKeys<z.output<typeof listAuditLogsQuery>>;
