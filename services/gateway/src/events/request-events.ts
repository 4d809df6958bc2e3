import { randomUUID } from 'node:crypto';
import type { Principal } from '@switchyard/access';
import { publishEvent, Topics, type EventBus } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import {
  encodeRequestLogEvent,
  encodeUsageEvent,
  type GuardrailOutcomeFields,
  type McpCallFields,
  type PolicyOutcomeFields,
  type PromptRunFields,
  type TokenUsageFields,
} from './encoding.ts';
import { costOf, type PricingMultiplier } from '../pricing/cost.ts';
import { usageOf as anthropicUsageOf } from '../providers/anthropic/chat-response.ts';
import type { MessagesUsage } from '../providers/anthropic/wire.ts';
import type { GatewayHeaders } from '../domain/gateway-headers.ts';
import type { GuardrailRun } from '../domain/guardrails.ts';

/**
 * Each logged body is cut to this many bytes of UTF-8, so that a request log event (both
 * bodies and the rest) stays under the 1 MB a Kafka broker accepts by default.
 */
export const MAX_LOGGED_BODY_BYTES = 400_000;

/** The text cut to at most `maxBytes` of UTF-8, never inside a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  // Every UTF-16 code unit takes at most 3 bytes of UTF-8.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back off continuation bytes (10xxxxxx) to the start of the character that did not fit.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.toString('utf8', 0, end);
}

/** How a request whose client went away before the answer was sent is recorded (nginx's 499). */
export const CLIENT_CLOSED_STATUS = 499;
export const CLIENT_CLOSED_MESSAGE = 'client closed request';

export interface CompletedRequest {
  requestId: string;
  /** The W3C trace the request belongs to (see requestTraceId), so that its log joins the trace. */
  w3cTraceId?: string | undefined;
  principal: Principal;
  headers: GatewayHeaders;
  method: string;
  path: string;
  provider: string;
  model: string;
  integrationSlug: string | undefined;
  /** The status of the answer: what the request used is counted by it. */
  status: number;
  /**
   * The client went away before the answer was sent: the log records CLIENT_CLOSED_STATUS
   * (499) instead of `status`, the answer's, which the client never received in full.
   */
  clientClosed?: boolean | undefined;
  stream: boolean;
  createdAtMs: number;
  latencyMs: number;
  requestBody: string;
  responseBody: string;
  errorMessage: string | undefined;
  cacheStatus?: string | undefined;
  pricing?: PricingMultiplier | undefined;
  /** The saved config the request ran with. */
  configSlug?: string | undefined;
  /** The config target that answered (or failed last), e.g. `config.targets[1]`. */
  routePath?: string | undefined;
  retries?: number | undefined;
  /** What rate and usage limits did with the request. */
  policy?: PolicyOutcomeFields | undefined;
  /** What each guardrail did with the request, in the order they ran. */
  guardrails?: readonly GuardrailRun[] | undefined;
  /** A JSON-RPC request through the MCP gateway. */
  mcp?: McpCallFields | undefined;
  /** The saved prompt a prompt completion ran (POST /v1/prompts/:id/completions). */
  prompt?: PromptRunFields | undefined;
}

/** What a request used, from its answer's usage: tokens in all, and USD. */
export interface MeasuredUsage {
  usage: TokenUsageFields | undefined;
  tokens: number;
  cost: number;
}

function usageOf(usage: unknown): TokenUsageFields | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const u = usage as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
  return {
    promptTokens: n(u.prompt_tokens),
    completionTokens: n(u.completion_tokens),
    totalTokens: n(u.total_tokens),
    cachedTokens: n((u.prompt_tokens_details as Record<string, unknown> | undefined)?.cached_tokens),
    cacheWriteTokens: n(
      (u.prompt_tokens_details as Record<string, unknown> | undefined)?.cache_creation_tokens,
    ),
    reasoningTokens: n(
      (u.completion_tokens_details as Record<string, unknown> | undefined)?.reasoning_tokens,
    ),
  };
}

/**
 * Usage from a JSON response, or from the last SSE chunk that carries it. An Anthropic message
 * (a Messages request passed through) tells its own: whole in its `usage`, streamed in
 * `message_start` and then `message_delta`.
 */
export function extractUsage(responseBody: string, stream: boolean): TokenUsageFields | undefined {
  if (!stream) {
    try {
      const usage = (JSON.parse(responseBody) as { usage?: unknown }).usage;
      return isAnthropicUsage(usage) ? usageOf(anthropicUsageOf(usage as MessagesUsage)) : usageOf(usage);
    } catch {
      return undefined;
    }
  }
  let found: TokenUsageFields | undefined;
  let anthropic: Record<string, unknown> | undefined;
  for (const line of responseBody.split('\n')) {
    if (!line.startsWith('data: {') || !line.includes('"usage"')) continue;
    try {
      const event = JSON.parse(line.slice(6)) as { type?: unknown; usage?: unknown; message?: unknown };
      if (event.type === 'message_start' && isAnthropicUsage((event.message as { usage?: unknown })?.usage)) {
        anthropic = { ...(event.message as { usage: object }).usage };
      } else if (event.type === 'message_delta' && isAnthropicUsage(event.usage)) {
        // Its counts are the running totals; a field it leaves out (or null) stands as before.
        for (const [name, value] of Object.entries(event.usage)) {
          if (value !== null && value !== undefined) anthropic = { ...anthropic, [name]: value };
        }
      } else {
        found = usageOf(event.usage) ?? found;
      }
    } catch {
      // A chunk cut by the log size cap.
    }
  }
  return anthropic ? usageOf(anthropicUsageOf(anthropic as MessagesUsage)) : found;
}

/** Anthropic's usage names its counts `input_tokens` and `output_tokens`. */
function isAnthropicUsage(usage: unknown): usage is Record<string, unknown> {
  return (
    typeof usage === 'object' &&
    usage !== null &&
    !('prompt_tokens' in usage) &&
    ('input_tokens' in usage || 'output_tokens' in usage)
  );
}

/** The usage a request's answer reports, and its cost (none for a failure or a cached answer). */
export function measureRequest(done: CompletedRequest): MeasuredUsage {
  const usage = extractUsage(done.responseBody, done.stream);
  // A cached answer cost nothing upstream.
  const cost =
    usage && done.status < 400 && done.cacheStatus !== 'HIT'
      ? costOf(done.provider, done.model, usage, done.pricing)
      : 0;
  const tokens = usage ? usage.totalTokens || usage.promptTokens + usage.completionTokens : 0;
  return { usage, tokens, cost };
}

function guardrailOutcomeOf(run: GuardrailRun): GuardrailOutcomeFields {
  return {
    phase: run.phase,
    guardrailId: run.guardrailId,
    slug: run.slug,
    versionId: run.versionId,
    action: run.action,
    explanation: run.explanation,
    redactions: run.redactions,
    durationMs: run.durationMs,
    checks: run.checks.map((c) => ({
      id: c.id,
      name: c.name,
      passed: c.passed,
      explanation: c.explanation,
      error: c.error ?? '',
    })),
  };
}

/** Publishes the request log and usage events; never blocks and never throws. */
export function publishRequestEvents(
  bus: EventBus,
  done: CompletedRequest,
  measured: MeasuredUsage = measureRequest(done),
): void {
  const { usage, cost } = measured;
  const p = done.principal;
  bus.publish({
    topic: Topics.requestLogs,
    key: p.workspaceId ?? p.organisationId,
    value: encodeRequestLogEvent({
      id: done.requestId,
      organisationId: p.organisationId,
      workspaceId: p.workspaceId ?? '',
      apiKeyId: p.apiKeyId,
      traceId: done.headers.traceId,
      spanId: done.headers.spanId ?? '',
      parentSpanId: done.headers.parentSpanId ?? '',
      spanName: done.headers.spanName ?? '',
      metadata: done.headers.metadata,
      method: done.method,
      path: done.path,
      provider: done.provider,
      model: done.model,
      integrationSlug: done.integrationSlug ?? '',
      status: done.clientClosed ? CLIENT_CLOSED_STATUS : done.status,
      stream: done.stream,
      createdAtMs: String(done.createdAtMs),
      latencyMs: Math.round(done.latencyMs),
      requestBody: truncateUtf8(done.requestBody, MAX_LOGGED_BODY_BYTES),
      responseBody: truncateUtf8(done.responseBody, MAX_LOGGED_BODY_BYTES),
      usage,
      cost,
      errorMessage: done.errorMessage ?? '',
      cacheStatus: done.cacheStatus ?? '',
      configSlug: done.configSlug ?? '',
      routePath: done.routePath ?? '',
      retryCount: done.retries ?? 0,
      cacheNamespace: done.headers.cacheNamespace ?? '',
      cacheForceRefresh: done.headers.cacheForceRefresh === 'true',
      modelsEndpoint: done.headers.modelsEndpoint === 'true',
      policy: done.policy,
      guardrails: done.guardrails?.map(guardrailOutcomeOf) ?? [],
      w3cTraceId: done.w3cTraceId ?? '',
      mcp: done.mcp,
      prompt: done.prompt,
    }),
  });
  // An MCP request is usage only when it cost something (a tool call with a cost).
  if (done.status < 400 && (done.mcp === undefined || cost > 0)) {
    bus.publish({
      topic: Topics.usage,
      key: p.apiKeyId,
      value: encodeUsageEvent({
        id: randomUUID(),
        organisationId: p.organisationId,
        workspaceId: p.workspaceId ?? '',
        apiKeyId: p.apiKeyId,
        provider: done.provider,
        model: done.model,
        usage,
        cost,
        occurredAtMs: String(done.createdAtMs),
      }),
    });
  }
  for (const run of done.guardrails ?? []) {
    if (run.feedback) publishGuardrailFeedback(bus, done, run, run.feedback);
  }
}

/**
 * A guardrail's `on_success` / `on_fail` feedback on the request's trace, as feedback sent
 * through the API travels: scored like it, and shown on the request's log. The feedback
 * takes whole values; its metadata says which guardrail gave it.
 */
function publishGuardrailFeedback(
  bus: EventBus,
  done: CompletedRequest,
  run: GuardrailRun,
  feedback: NonNullable<GuardrailRun['feedback']>,
): void {
  const p = done.principal;
  const at = String(done.createdAtMs);
  publishEvent(bus, Topics.feedback, events.FeedbackEventSchema, done.headers.traceId, {
    id: randomUUID(),
    organisationId: p.organisationId,
    workspaceId: p.workspaceId ?? '',
    traceId: done.headers.traceId,
    value: Math.round(feedback.value),
    weight: feedback.weight,
    metadataJson: JSON.stringify({
      source: 'guardrail',
      guardrail_id: run.guardrailId,
      guardrail: run.slug,
      phase: run.phase,
      passed: run.action === 'allow',
      ...(feedback.metadata === '' ? {} : { metadata: feedback.metadata }),
    }),
    createdBy: `guardrail:${run.guardrailId}`,
    createdAtMs: at,
    updatedAtMs: at,
    version: 1,
  });
}
