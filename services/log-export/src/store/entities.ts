import { EntitySchema } from 'typeorm';

export const SCHEMA = 'log_export';

export interface RequestLogUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
}

export interface RequestLog {
  id: string;
  organisationId: string;
  workspaceId: string;
  apiKeyId: string;
  traceId: string | null;
  spanId: string | null;
  parentSpanId: string | null;
  spanName: string | null;
  metadata: Record<string, string>;
  method: string;
  path: string;
  provider: string | null;
  model: string | null;
  integrationSlug: string | null;
  status: number;
  stream: boolean;
  createdAt: Date;
  latencyMs: number;
  requestBody: string;
  responseBody: string;
  usage: RequestLogUsage;
  cost: number;
  errorMessage: string | null;
  cacheStatus: string | null;
  configSlug: string | null;
  routePath: string | null;
  retryCount: number;
  cacheNamespace: string | null;
  cacheForceRefresh: boolean;
  modelsEndpoint: boolean;
  /** What rate and usage limits did with the request; null when the log predates them. */
  policy: RequestLogPolicy | null;
  /** What each guardrail did with the request, in the order they ran; null when the log predates them. */
  guardrails: RequestLogGuardrail[] | null;
  /** The W3C trace the request belongs to (32 hex digits), to join the log to the trace; null without one. */
  w3cTraceId: string | null;
  /** The MCP call, for a request through the MCP gateway; null for any other. */
  mcp: RequestLogMcp | null;
  /** The saved prompt a prompt completion ran; null for any other request. */
  prompt: RequestLogPrompt | null;
}

export interface RequestLogPrompt {
  prompt_id: string;
  prompt_slug: string;
  version_id: string;
  version_number: number;
}

export interface RequestLogMcp {
  server_id: string;
  server_slug: string;
  integration_slug: string | null;
  /** The JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** The tool called (`tools/call` only). */
  tool_name: string | null;
  /** The JSON-RPC error code the client got; null for a result. */
  error_code: number | null;
  /** Whether the tool reported a failure in its result (`isError`). */
  tool_error: boolean;
  session_id: string | null;
}

export interface RequestLogPolicy {
  decision: string;
  policy_id: string | null;
  code: string | null;
  adjustments: Array<{ policy_id: string; type: string; held: number; used: number }>;
}

export interface RequestLogGuardrail {
  phase: string;
  guardrail_id: string;
  slug: string;
  version_id: string;
  action: string;
  explanation: string;
  redactions: number;
  duration_ms: number;
  checks: Array<{ id: string; name: string; passed: boolean; explanation: string; error: string | null }>;
}

export const RequestLogEntity = new EntitySchema<RequestLog>({
  name: 'RequestLog',
  tableName: 'request_logs',
  columns: {
    id: { type: 'text', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'uuid' },
    apiKeyId: { name: 'api_key_id', type: 'uuid' },
    traceId: { name: 'trace_id', type: 'text', nullable: true },
    spanId: { name: 'span_id', type: 'text', nullable: true },
    parentSpanId: { name: 'parent_span_id', type: 'text', nullable: true },
    spanName: { name: 'span_name', type: 'text', nullable: true },
    metadata: { type: 'jsonb' },
    method: { type: 'text' },
    path: { type: 'text' },
    provider: { type: 'text', nullable: true },
    model: { type: 'text', nullable: true },
    integrationSlug: { name: 'integration_slug', type: 'text', nullable: true },
    status: { type: 'int' },
    stream: { type: 'boolean' },
    // With id, the primary key: the table is partitioned by created_at.
    createdAt: { name: 'created_at', type: 'timestamptz', primary: true },
    latencyMs: { name: 'latency_ms', type: 'int' },
    requestBody: { name: 'request_body', type: 'text' },
    responseBody: { name: 'response_body', type: 'text' },
    usage: { type: 'jsonb' },
    cost: { type: 'double precision' },
    errorMessage: { name: 'error_message', type: 'text', nullable: true },
    cacheStatus: { name: 'cache_status', type: 'text', nullable: true },
    configSlug: { name: 'config_slug', type: 'text', nullable: true },
    routePath: { name: 'route_path', type: 'text', nullable: true },
    retryCount: { name: 'retry_count', type: 'int', default: 0 },
    cacheNamespace: { name: 'cache_namespace', type: 'text', nullable: true },
    cacheForceRefresh: { name: 'cache_force_refresh', type: 'boolean', default: false },
    modelsEndpoint: { name: 'models_endpoint', type: 'boolean', default: false },
    policy: { type: 'jsonb', nullable: true },
    guardrails: { type: 'jsonb', nullable: true },
    w3cTraceId: { name: 'w3c_trace_id', type: 'text', nullable: true },
    mcp: { type: 'jsonb', nullable: true },
    prompt: { type: 'jsonb', nullable: true },
  },
});

/** One successful management write (see AuditEvent). Bodies are never recorded. */
export interface AuditLog {
  id: string;
  organisationId: string;
  workspaceId: string | null;
  apiKeyId: string | null;
  userId: string | null;
  authMethod: string;
  keyName: string | null;
  method: string;
  route: string;
  path: string;
  scope: string | null;
  status: number;
  resourceId: string | null;
  occurredAt: Date;
  clientIp: string | null;
  userAgent: string | null;
  requestId: string | null;
  service: string;
}

export const AuditLogEntity = new EntitySchema<AuditLog>({
  name: 'AuditLog',
  tableName: 'audit_logs',
  columns: {
    id: { type: 'text', primary: true },
    organisationId: { name: 'organisation_id', type: 'uuid' },
    workspaceId: { name: 'workspace_id', type: 'text', nullable: true },
    apiKeyId: { name: 'api_key_id', type: 'text', nullable: true },
    userId: { name: 'user_id', type: 'text', nullable: true },
    authMethod: { name: 'auth_method', type: 'text' },
    keyName: { name: 'key_name', type: 'text', nullable: true },
    method: { type: 'text' },
    route: { type: 'text' },
    path: { type: 'text' },
    scope: { type: 'text', nullable: true },
    status: { type: 'int' },
    resourceId: { name: 'resource_id', type: 'text', nullable: true },
    occurredAt: { name: 'occurred_at', type: 'timestamptz' },
    clientIp: { name: 'client_ip', type: 'text', nullable: true },
    userAgent: { name: 'user_agent', type: 'text', nullable: true },
    requestId: { name: 'request_id', type: 'text', nullable: true },
    service: { type: 'text' },
  },
});

export const entities = [RequestLogEntity, AuditLogEntity];
