import type { Principal } from '@switchyard/access';
import type { events } from '@switchyard/proto';
import type { AuditLog } from '../store/entities.ts';
import type { AuditLogRepository } from '../store/audit-log.repository.ts';
import type { AuditLogQuery } from './audit-logs.schemas.ts';

/** Postgres text cannot hold U+0000; it becomes U+FFFD so that the entry can still be stored. */
function storable(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

const optional = (text: string): string | null => storable(text) || null;

export function auditLogFromEvent(event: events.AuditEvent): AuditLog {
  return {
    id: storable(event.id),
    organisationId: event.organisationId,
    workspaceId: optional(event.workspaceId),
    apiKeyId: optional(event.apiKeyId),
    userId: optional(event.userId),
    authMethod: storable(event.authMethod) || 'api_key',
    keyName: optional(event.keyName),
    method: storable(event.method),
    route: storable(event.route),
    path: storable(event.path),
    scope: optional(event.scope),
    status: event.status,
    resourceId: optional(event.resourceId),
    occurredAt: new Date(Number(event.occurredAtMs)),
    clientIp: optional(event.clientIp),
    userAgent: optional(event.userAgent),
    requestId: optional(event.requestId),
    service: storable(event.service),
  };
}

export class AuditLogService {
  constructor(private readonly repo: AuditLogRepository) {}

  /** Idempotent: replaying the topic creates no duplicates. */
  record(event: events.AuditEvent): Promise<boolean> {
    return this.repo.insertOnce(auditLogFromEvent(event));
  }

  /** The caller's organisation's entries only, whatever the filters say. */
  list(
    principal: Principal,
    query: AuditLogQuery,
    page: { offset: number; limit: number },
  ): Promise<[AuditLog[], number]> {
    const { workspaceId, userId, apiKeyId, method, resource, from, to } = query;
    const filter = { workspaceId, userId, apiKeyId, method, route: resource, from, to };
    return this.repo.list({ ...filter, organisationId: principal.organisationId }, page);
  }
}
