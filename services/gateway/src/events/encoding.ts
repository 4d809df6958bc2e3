import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { events } from '@switchyard/proto';

/**
 * The two events every request publishes, written field by field with protobuf-es's
 * BinaryWriter. `toBinary(schema, create(schema, init))` gives the same bytes, but it first
 * copies the init object into a message and then walks the schema by reflection; on the
 * gateway's hot path (twice per request) that was several times the cost of the writing
 * itself. Field numbers and types are those of proto/switchyard/events/v1/events.proto; the
 * tests decode what is written here with the generated schemas, field by field, and fail
 * when a schema gains a field this file does not write.
 */

type Plain<T> = Omit<T, '$typeName'>;
export type TokenUsageFields = Plain<events.TokenUsage>;
export type PolicyAdjustmentFields = Plain<events.PolicyAdjustment>;
export type PolicyOutcomeFields = Omit<Plain<events.PolicyOutcome>, 'adjustments'> & {
  adjustments: PolicyAdjustmentFields[];
};
export type GuardrailCheckOutcomeFields = Plain<events.GuardrailCheckOutcome>;
export type GuardrailOutcomeFields = Omit<Plain<events.GuardrailOutcome>, 'checks'> & {
  checks: GuardrailCheckOutcomeFields[];
};
export type McpCallFields = Plain<events.McpCall>;
export type PromptRunFields = Plain<events.PromptRun>;
export type RequestLogFields = Omit<
  Plain<events.RequestLogEvent>,
  'usage' | 'policy' | 'guardrails' | 'mcp' | 'prompt'
> & {
  usage?: TokenUsageFields | undefined;
  mcp?: McpCallFields | undefined;
  prompt?: PromptRunFields | undefined;
  policy?: PolicyOutcomeFields | undefined;
  guardrails: GuardrailOutcomeFields[];
};
export type UsageFields = Omit<Plain<events.UsageEvent>, 'usage'> & { usage?: TokenUsageFields | undefined };

// Proto3 fields without explicit presence are written only when they differ from the default.
function string(w: BinaryWriter, field: number, value: string): void {
  if (value !== '') w.tag(field, WireType.LengthDelimited).string(value);
}
function uint32(w: BinaryWriter, field: number, value: number): void {
  if (value !== 0) w.tag(field, WireType.Varint).uint32(value);
}
function int64(w: BinaryWriter, field: number, value: string): void {
  if (value !== '0' && value !== '') w.tag(field, WireType.Varint).int64(value);
}
function double(w: BinaryWriter, field: number, value: number): void {
  // -0 is not the default (protobuf compares the bits), so it is written.
  if (!Object.is(value, 0)) w.tag(field, WireType.Bit64).double(value);
}
function bool(w: BinaryWriter, field: number, value: boolean): void {
  if (value) w.tag(field, WireType.Varint).bool(true);
}

/**
 * One writer serves every event: `finish()` hands back a copy of what was written and keeps the
 * writer's buffer, so after the first few events no write has to grow it. A writer that grew
 * past `KEEP_WRITER_BYTES` for a large event is let go, so that one large body does not hold
 * its buffer for the life of the process.
 */
const KEEP_WRITER_BYTES = 64 * 1024;
let shared: BinaryWriter | undefined;

function encode(write: (w: BinaryWriter) => void): Uint8Array {
  const w = shared ?? new BinaryWriter();
  shared = undefined;
  // Taken off the shelf while in use: a write that throws leaves its half-written bytes behind.
  write(w);
  const bytes = w.finish();
  if (bytes.byteLength <= KEEP_WRITER_BYTES) shared = w;
  return bytes;
}

function usage(w: BinaryWriter, field: number, value: TokenUsageFields | undefined): void {
  if (value === undefined) return;
  w.tag(field, WireType.LengthDelimited).fork();
  uint32(w, 1, value.promptTokens);
  uint32(w, 2, value.completionTokens);
  uint32(w, 3, value.totalTokens);
  uint32(w, 4, value.cachedTokens);
  uint32(w, 5, value.reasoningTokens);
  uint32(w, 6, value.cacheWriteTokens);
  w.join();
}

function policyOutcome(w: BinaryWriter, field: number, value: PolicyOutcomeFields | undefined): void {
  if (value === undefined) return;
  w.tag(field, WireType.LengthDelimited).fork();
  string(w, 1, value.decision);
  string(w, 2, value.policyId);
  string(w, 3, value.code);
  for (const a of value.adjustments) {
    w.tag(4, WireType.LengthDelimited).fork();
    string(w, 1, a.policyId);
    string(w, 2, a.type);
    double(w, 3, a.held);
    double(w, 4, a.used);
    w.join();
  }
  w.join();
}

function guardrailOutcome(w: BinaryWriter, field: number, value: GuardrailOutcomeFields): void {
  w.tag(field, WireType.LengthDelimited).fork();
  string(w, 1, value.phase);
  string(w, 2, value.guardrailId);
  string(w, 3, value.slug);
  string(w, 4, value.versionId);
  string(w, 5, value.action);
  string(w, 6, value.explanation);
  uint32(w, 7, value.redactions);
  double(w, 8, value.durationMs);
  for (const c of value.checks) {
    w.tag(9, WireType.LengthDelimited).fork();
    string(w, 1, c.id);
    string(w, 2, c.name);
    bool(w, 3, c.passed);
    string(w, 4, c.explanation);
    string(w, 5, c.error);
    w.join();
  }
  w.join();
}

/** The fields each encoder writes, by their generated names (the tests compare them with the schemas). */
export const WRITTEN_FIELDS = {
  TokenUsage: [
    'promptTokens',
    'completionTokens',
    'totalTokens',
    'cachedTokens',
    'reasoningTokens',
    'cacheWriteTokens',
  ],
  PolicyOutcome: ['decision', 'policyId', 'code', 'adjustments'],
  PolicyAdjustment: ['policyId', 'type', 'held', 'used'],
  GuardrailOutcome: [
    'phase',
    'guardrailId',
    'slug',
    'versionId',
    'action',
    'explanation',
    'redactions',
    'durationMs',
    'checks',
  ],
  GuardrailCheckOutcome: ['id', 'name', 'passed', 'explanation', 'error'],
  RequestLogEvent: [
    'id',
    'organisationId',
    'workspaceId',
    'apiKeyId',
    'traceId',
    'spanId',
    'parentSpanId',
    'spanName',
    'metadata',
    'method',
    'path',
    'provider',
    'model',
    'integrationSlug',
    'status',
    'stream',
    'createdAtMs',
    'latencyMs',
    'requestBody',
    'responseBody',
    'usage',
    'cost',
    'errorMessage',
    'cacheStatus',
    'configSlug',
    'routePath',
    'retryCount',
    'cacheNamespace',
    'cacheForceRefresh',
    'modelsEndpoint',
    'policy',
    'guardrails',
    'w3cTraceId',
    'mcp',
    'prompt',
  ],
  PromptRun: ['promptId', 'promptSlug', 'versionId', 'versionNumber'],
  McpCall: [
    'serverId',
    'serverSlug',
    'integrationSlug',
    'method',
    'toolName',
    'errorCode',
    'toolError',
    'sessionId',
  ],
  UsageEvent: [
    'id',
    'organisationId',
    'workspaceId',
    'apiKeyId',
    'provider',
    'model',
    'usage',
    'cost',
    'occurredAtMs',
  ],
} as const;

/** switchyard.events.v1.RequestLogEvent */
export function encodeRequestLogEvent(e: RequestLogFields): Uint8Array {
  return encode((w) => writeRequestLogEvent(w, e));
}

function writeRequestLogEvent(w: BinaryWriter, e: RequestLogFields): void {
  string(w, 1, e.id);
  string(w, 2, e.organisationId);
  string(w, 3, e.workspaceId);
  string(w, 4, e.apiKeyId);
  string(w, 5, e.traceId);
  string(w, 6, e.spanId);
  string(w, 7, e.parentSpanId);
  string(w, 8, e.spanName);
  for (const key in e.metadata) {
    w.tag(9, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(key);
    w.tag(2, WireType.LengthDelimited).string(e.metadata[key]!);
    w.join();
  }
  string(w, 10, e.method);
  string(w, 11, e.path);
  string(w, 12, e.provider);
  string(w, 13, e.model);
  string(w, 14, e.integrationSlug);
  uint32(w, 15, e.status);
  bool(w, 16, e.stream);
  int64(w, 17, e.createdAtMs);
  uint32(w, 18, e.latencyMs);
  string(w, 19, e.requestBody);
  string(w, 20, e.responseBody);
  usage(w, 21, e.usage);
  double(w, 22, e.cost);
  string(w, 23, e.errorMessage);
  string(w, 24, e.cacheStatus);
  string(w, 25, e.configSlug);
  string(w, 26, e.routePath);
  uint32(w, 27, e.retryCount);
  string(w, 28, e.cacheNamespace);
  bool(w, 29, e.cacheForceRefresh);
  bool(w, 30, e.modelsEndpoint);
  policyOutcome(w, 31, e.policy);
  for (const g of e.guardrails) guardrailOutcome(w, 32, g);
  string(w, 33, e.w3cTraceId);
  mcpCall(w, 34, e.mcp);
  promptRun(w, 35, e.prompt);
}

function promptRun(w: BinaryWriter, field: number, value: PromptRunFields | undefined): void {
  if (value === undefined) return;
  w.tag(field, WireType.LengthDelimited).fork();
  string(w, 1, value.promptId);
  string(w, 2, value.promptSlug);
  string(w, 3, value.versionId);
  uint32(w, 4, value.versionNumber);
  w.join();
}

function mcpCall(w: BinaryWriter, field: number, value: McpCallFields | undefined): void {
  if (value === undefined) return;
  w.tag(field, WireType.LengthDelimited).fork();
  string(w, 1, value.serverId);
  string(w, 2, value.serverSlug);
  string(w, 3, value.integrationSlug);
  string(w, 4, value.method);
  string(w, 5, value.toolName);
  if (value.errorCode !== 0) w.tag(6, WireType.Varint).int32(value.errorCode);
  bool(w, 7, value.toolError);
  string(w, 8, value.sessionId);
  w.join();
}

/** switchyard.events.v1.UsageEvent */
export function encodeUsageEvent(e: UsageFields): Uint8Array {
  return encode((w) => writeUsageEvent(w, e));
}

function writeUsageEvent(w: BinaryWriter, e: UsageFields): void {
  string(w, 1, e.id);
  string(w, 2, e.organisationId);
  string(w, 3, e.workspaceId);
  string(w, 4, e.apiKeyId);
  string(w, 5, e.provider);
  string(w, 6, e.model);
  usage(w, 7, e.usage);
  double(w, 8, e.cost);
  int64(w, 9, e.occurredAtMs);
}
