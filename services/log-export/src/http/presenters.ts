import type { ExportField } from '@switchyard/rules';
import { isCustomLog, type WithFeedback } from '../domain/log-search.ts';
import type { AuditLog, RequestLog } from '../store/entities.ts';
import type { Feedback } from '../store/feedback.repository.ts';
import type { LogExport } from '../store/log-export.repository.ts';
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
    mcp: log.mcp ?? null,
    // The saved prompt a prompt completion ran; null for any other request.
    prompt: log.prompt ?? null,
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
    w3c_trace_id: log.w3cTraceId,
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
    // The MCP call, for a request through the MCP gateway; null for any other.
    mcp: log.mcp ?? null,
    // The saved prompt a prompt completion ran; null for any other request.
    prompt: log.prompt ?? null,
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

/** A log export as the API shows it, with its progress. */
export function presentExport(record: LogExport) {
  return {
    id: record.id,
    object: 'export' as const,
    organisation_id: record.organisationId,
    workspace_id: record.workspaceId,
    description: record.description,
    filters: record.filters,
    requested_data: record.requestedData,
    status: record.status,
    created_by: record.createdBy,
    created_at: record.createdAt.toISOString(),
    last_updated_at: record.lastUpdatedAt.toISOString(),
    started_at: record.startedAt?.toISOString() ?? null,
    finished_at: record.finishedAt?.toISOString() ?? null,
    // How far the current or last run got: `exported` of `total` logs.
    progress: {
      exported: record.exported,
      total: record.total,
      percent:
        record.status === 'success'
          ? 100
          : record.total === 0
            ? 0
            : Math.min(99, Math.floor((record.exported / record.total) * 100)),
    },
    bytes: record.bytes,
    error: record.error,
  };
}

/** The value of each exportable field of a log, as an exported line holds it. */
const EXPORT_VALUES: Record<ExportField, (log: RequestLog, feedback: Feedback[]) => unknown> = {
  id: (log) => log.id,
  trace_id: (log) => log.traceId,
  created_at: (log) => log.createdAt.toISOString(),
  request: (log) => ({ method: log.method, path: log.path, body: parsedOrText(log.requestBody) }),
  response: (log) => ({ status: log.status, body: parsedOrText(log.responseBody) }),
  is_success: (log) => log.status < 400,
  ai_org: (log) => log.provider,
  ai_model: (log) => log.model,
  req_units: (log) => log.usage.prompt_tokens,
  res_units: (log) => log.usage.completion_tokens,
  total_units: (log) => log.usage.total_tokens,
  request_url: (log) => log.path,
  cost: (log) => log.cost,
  cost_currency: () => 'USD',
  response_time: (log) => log.latencyMs,
  response_status_code: (log) => log.status,
  mode: (log) => (log.stream ? 'stream' : 'sync'),
  config: (log) => log.configSlug,
  // The saved prompt a prompt completion ran; null for any other request.
  prompt_slug: (log) => log.prompt?.prompt_slug ?? null,
  metadata: (log) => log.metadata,
  workspace_id: (log) => log.workspaceId,
  api_key_id: (log) => log.apiKeyId,
  span_id: (log) => log.spanId,
  parent_span_id: (log) => log.parentSpanId,
  span_name: (log) => log.spanName,
  cache_status: (log) => log.cacheStatus,
  retry_count: (log) => log.retryCount,
  guardrails: (log) => log.guardrails ?? [],
  policy: (log) => log.policy,
  error_message: (log) => log.errorMessage,
  feedback: (_log, feedback) => feedback.map(presentFeedback),
};

/** One exported log: a JSON object of the fields asked for, in their order. */
export function exportLine(log: RequestLog, feedback: Feedback[], fields: readonly string[]): string {
  const line: Record<string, unknown> = {};
  for (const field of fields) line[field] = EXPORT_VALUES[field as ExportField](log, feedback);
  return JSON.stringify(line);
}
