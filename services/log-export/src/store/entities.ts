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
    createdAt: { name: 'created_at', type: 'timestamptz' },
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
  },
});

export const entities = [RequestLogEntity];
