import type { AuditLog, RequestLog } from '../store/entities.ts';

function parsedOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export function presentRequestLog(log: RequestLog) {
  return {
    id: log.id,
    object: 'log' as const,
    created_at: log.createdAt.toISOString(),
    organisation_id: log.organisationId,
    workspace_id: log.workspaceId,
    api_key_id: log.apiKeyId,
    trace_id: log.traceId,
    span_id: log.spanId,
    parent_span_id: log.parentSpanId,
    span_name: log.spanName,
    metadata: log.metadata,
    provider: log.provider,
    model: log.model,
    integration_slug: log.integrationSlug,
    status: log.status,
    stream: log.stream,
    latency_ms: log.latencyMs,
    cache_status: log.cacheStatus,
    cache_namespace: log.cacheNamespace,
    cache_force_refresh: log.cacheForceRefresh,
    models_endpoint: log.modelsEndpoint,
    config: log.configSlug,
    route: log.routePath === null ? null : { target: log.routePath, retry_count: log.retryCount },
    usage: log.usage,
    cost: log.cost,
    policy: log.policy,
    // A log from before guardrail verdicts were kept shows none.
    guardrails: log.guardrails ?? [],
    error_message: log.errorMessage,
    request: { method: log.method, path: log.path, body: parsedOrText(log.requestBody) },
    response: { status: log.status, body: parsedOrText(log.responseBody) },
  };
}

export function presentAuditLog(entry: AuditLog) {
  return {
    id: entry.id,
    object: 'audit_log' as const,
    occurred_at: entry.occurredAt.toISOString(),
    organisation_id: entry.organisationId,
    workspace_id: entry.workspaceId,
    actor: {
      api_key_id: entry.apiKeyId,
      key_name: entry.keyName,
      user_id: entry.userId,
      auth_method: entry.authMethod,
    },
    method: entry.method,
    resource: entry.route,
    resource_id: entry.resourceId,
    path: entry.path,
    scope: entry.scope,
    status: entry.status,
    service: entry.service,
    request_id: entry.requestId,
    client: { ip: entry.clientIp, user_agent: entry.userAgent },
  };
}
