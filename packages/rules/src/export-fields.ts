/**
 * The fields a log export can hold, as exports ask for them (`requested_data`) and as an
 * organisation denies them (`export_settings.deniedFields`): the one list both check against.
 * The names are those existing clients of log exports send; the last few are the gateway's own.
 */
export const EXPORT_FIELDS = [
  'id',
  'trace_id',
  'created_at',
  'request',
  'response',
  'is_success',
  'ai_org',
  'ai_model',
  'req_units',
  'res_units',
  'total_units',
  'request_url',
  'cost',
  'cost_currency',
  'response_time',
  'response_status_code',
  'mode',
  'config',
  'prompt_slug',
  'metadata',
  'workspace_id',
  'api_key_id',
  'span_id',
  'parent_span_id',
  'span_name',
  'cache_status',
  'retry_count',
  'guardrails',
  'policy',
  'error_message',
  'feedback',
] as const;

export type ExportField = (typeof EXPORT_FIELDS)[number];

export function isExportField(name: string): name is ExportField {
  return (EXPORT_FIELDS as readonly string[]).includes(name);
}
