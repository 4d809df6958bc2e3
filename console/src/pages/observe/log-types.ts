/** The logs API's shapes (GET /v1/logs and GET /v1/logs/{id}), as the console reads them. */

export interface Feedback {
  id: string;
  object: 'feedback';
  workspace_id: string | null;
  value: number;
  weight: number;
  metadata: Record<string, unknown> | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

export interface LogSummary {
  id: string;
  created_at: string;
  source: 'gateway' | 'custom';
  workspace_id: string;
  api_key_id: string;
  trace_id: string | null;
  method: string;
  path: string;
  provider: string | null;
  model: string | null;
  status: number;
  stream: boolean;
  latency_ms: number;
  cache_status: string | null;
  config: string | null;
  retry_count: number;
  usage: Usage;
  /** US dollars. */
  cost: number;
  policy_decision: string | null;
  error_message: string | null;
  feedback: Feedback[];
}

export interface LogPage {
  object: 'list';
  data: LogSummary[];
  next_cursor: string | null;
}

export interface GuardrailVerdict {
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

export interface LogDetail {
  id: string;
  created_at: string;
  source: 'gateway' | 'custom';
  organisation_id: string;
  workspace_id: string;
  api_key_id: string;
  trace_id: string | null;
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  w3c_trace_id: string | null;
  metadata: Record<string, string>;
  provider: string | null;
  model: string | null;
  integration_slug: string | null;
  status: number;
  stream: boolean;
  latency_ms: number;
  cache_status: string | null;
  cache_namespace: string | null;
  cache_force_refresh: boolean;
  config: string | null;
  route: { target: string; retry_count: number } | null;
  usage: Usage;
  cost: number;
  policy: {
    decision: string;
    policy_id: string | null;
    code: string | null;
    adjustments: Array<{ policy_id: string; type: string; held: number; used: number }>;
  } | null;
  guardrails: GuardrailVerdict[];
  mcp: { server_slug: string; method: string; tool_name: string | null; error_code: number | null } | null;
  prompt: { prompt_id: string; prompt_slug: string; version_number: number } | null;
  error_message: string | null;
  request: { method: string; path: string; url?: string; body: unknown };
  response: { status: number; body: unknown };
  feedback: Feedback[];
}
