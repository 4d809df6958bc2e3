import { NotFound, type Principal } from '@switchyard/platform';
import type { events } from '@switchyard/proto';
import type { RequestLog } from '../store/entities.ts';
import type { RequestLogRepository } from '../store/request-log.repository.ts';

export function requestLogFromEvent(event: events.RequestLogEvent): RequestLog {
  const usage = event.usage;
  return {
    id: event.id,
    organisationId: event.organisationId,
    workspaceId: event.workspaceId,
    apiKeyId: event.apiKeyId,
    traceId: event.traceId || null,
    spanId: event.spanId || null,
    parentSpanId: event.parentSpanId || null,
    spanName: event.spanName || null,
    metadata: event.metadata,
    method: event.method,
    path: event.path,
    provider: event.provider || null,
    model: event.model || null,
    integrationSlug: event.integrationSlug || null,
    status: event.status,
    stream: event.stream,
    createdAt: new Date(Number(event.createdAtMs)),
    latencyMs: event.latencyMs,
    requestBody: event.requestBody,
    responseBody: event.responseBody,
    usage: {
      prompt_tokens: usage?.promptTokens ?? 0,
      completion_tokens: usage?.completionTokens ?? 0,
      total_tokens: usage?.totalTokens ?? 0,
      cached_tokens: usage?.cachedTokens ?? 0,
      reasoning_tokens: usage?.reasoningTokens ?? 0,
    },
    cost: event.cost,
    errorMessage: event.errorMessage || null,
    cacheStatus: event.cacheStatus || null,
  };
}

export class RequestLogService {
  constructor(private readonly repo: RequestLogRepository) {}

  /** Idempotent: replaying the topic creates no duplicates. */
  record(event: events.RequestLogEvent): Promise<boolean> {
    return this.repo.insertOnce(requestLogFromEvent(event));
  }

  /** Workspace keys see their workspace's logs; another workspace's log is "not found". */
  async get(principal: Principal, id: string): Promise<RequestLog> {
    const log = await this.repo.find(id, {
      organisationId: principal.organisationId,
      workspaceId: principal.workspaceId,
    });
    if (!log) throw new NotFound(`Log '${id}' not found.`);
    return log;
  }
}
