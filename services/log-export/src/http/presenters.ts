import { isCustomLog, type WithFeedback } from '../domain/log-search.ts';
import type { AuditLog, RequestLog } from '../store/entities.ts';
import type { Feedback } from '../store/feedback.repository.ts';
import type { RequestLogSummary } from '../store/request-log.search.ts';

function parsedOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export function presentFeedback(feedback: Feedback) {
  return {
    id: feedback.id,
    object: 'feedback' as const,
    workspace_id: feedback.workspaceId,
    value: feedback.value,
    weight: feedback.weight,
    metadata: feedback.metadata,
    version: feedback.version,
    created_by: feedback.createdBy,
    created_at: feedback.createdAt.toISOString(),
    updated_at: feedback.updatedAt.toISOString(),
  };
}

/** A log as a list shows it: what the request was and did, without the bodies. */
export function presentLogSummary(log: WithFeedback<RequestLogSummary>) {
  return {
    id: log.id,
    object: 'log' as const,
    created_at: log.createdAt.toISOString(),
    source: isCustomLog(log) ? ('custom' as const) : ('gateway' as const),
    organisation_id: log.organisationId,
    workspace_id: log.workspaceId,
    api_key_id: log.apiKeyId,
    trace_id: log.traceId,
    span_id: log.spanId,
    span_name: log.spanName,
    metadata: log.metadata,
    method: log.method,
    path: log.path,
    provider: log.provider,
    model: log.model,
    status: log.status,
    stream: log.stream,
    latency_ms: log.latencyMs,
    cache_status: log.cacheStatus,
    config: log.configSlug,
    retry_count: log.retryCount,
    usage: log.usage,
    cost: log.cost,
    policy_decision: log.policy?.decision ?? null,
    guardrails: (log.guardrails ?? []).map((run) => ({
      phase: run.phase,
      slug: run.slug,
      action: run.action,
    })),
    error_message: log.errorMessage,
    feedback: log.feedback.map(presentFeedback),
  };
}

export function presentRequestLog(log: WithFeedback<RequestLog>) {
  const custom = isCustomLog(log);
  return {
    id: log.id,
    object: 'log' as const,
    created_at: log.createdAt.toISOString(),
    source: custom ? ('custom' as const) : ('gateway' as const),
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
    request: {
      method: log.method,
      path: log.path,
      // A custom log's path is the URL its request went to.
      ...(custom ? { url: log.path } : {}),
      body: parsedOrText(log.requestBody),
    },
    response: { status: log.status, body: parsedOrText(log.responseBody) },
    // Feedback on the log's trace, oldest first: its workspace's and the organisation's own.
    feedback: log.feedback.map(presentFeedback),
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
