import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { Topics, type EventBus, type Principal } from '@switchyard/platform';
import { eventEncoder, type Utf8Fields } from '@switchyard/platform/bus/event-encoding';
import { events } from '@switchyard/proto';
import { costOf, type PricingMultiplier } from '../pricing/cost.ts';
import type { GatewayHeaders } from '../http/gateway-headers.ts';

const MAX_LOGGED_BODY = 1_000_000;

export interface CompletedRequest {
  requestId: string;
  principal: Principal;
  headers: GatewayHeaders;
  method: string;
  path: string;
  provider: string;
  model: string;
  integrationSlug: string | undefined;
  status: number;
  stream: boolean;
  createdAtMs: number;
  latencyMs: number;
  /** As the client sent it; bytes are logged as they are when they are valid UTF-8. */
  requestBody: string | Buffer;
  /** As the client received it (a bounded copy); likewise. */
  responseBody: string | Buffer;
  errorMessage: string | undefined;
  cacheStatus?: string | undefined;
  pricing?: PricingMultiplier | undefined;
  /** The saved config the request ran with. */
  configSlug?: string | undefined;
  /** The config target that answered (or failed last), e.g. `config.targets[1]`. */
  routePath?: string | undefined;
  retries?: number | undefined;
}

interface UsageFields {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
}

function usageOf(usage: unknown): UsageFields | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const u = usage as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);
  return {
    promptTokens: n(u.prompt_tokens),
    completionTokens: n(u.completion_tokens),
    totalTokens: n(u.total_tokens),
    cachedTokens: n((u.prompt_tokens_details as Record<string, unknown> | undefined)?.cached_tokens),
    reasoningTokens: n(
      (u.completion_tokens_details as Record<string, unknown> | undefined)?.reasoning_tokens,
    ),
  };
}

/** Usage from a JSON response, or from the last SSE chunk that carries it. */
export function extractUsage(responseBody: string, stream: boolean): UsageFields | undefined {
  if (!stream) {
    try {
      return usageOf((JSON.parse(responseBody) as { usage?: unknown }).usage);
    } catch {
      return undefined;
    }
  }
  let found: UsageFields | undefined;
  for (const line of responseBody.split('\n')) {
    if (!line.startsWith('data: {') || !line.includes('"usage"')) continue;
    try {
      found = usageOf((JSON.parse(line.slice(6)) as { usage?: unknown }).usage) ?? found;
    } catch {
      // A chunk cut by the log size cap.
    }
  }
  return found;
}

const encodeRequestLog = eventEncoder(events.RequestLogEventSchema);
const encodeUsage = eventEncoder(events.UsageEventSchema);

/**
 * A body for the log: its bytes as they are when they can stand for the text (valid UTF-8,
 * within the cap, which is then not reached as the text has no more characters than bytes),
 * so the body is not decoded and encoded again; otherwise its text, cut at the cap.
 */
function loggedBody(body: string | Buffer, text: () => string): { bytes?: Buffer; text: string } {
  if (typeof body === 'string') return { text: body.slice(0, MAX_LOGGED_BODY) };
  if (body.length <= MAX_LOGGED_BODY && isUtf8(body)) return { bytes: body, text: '' };
  return { text: text().slice(0, MAX_LOGGED_BODY) };
}

/** Publishes the request log and usage events; never blocks and never throws. */
export function publishRequestEvents(bus: EventBus, done: CompletedRequest): void {
  const responseText =
    typeof done.responseBody === 'string' ? done.responseBody : done.responseBody.toString('utf8');
  const usage = extractUsage(responseText, done.stream);
  // A cached answer cost nothing upstream.
  const cost =
    usage && done.status < 400 && done.cacheStatus !== 'HIT'
      ? costOf(done.provider, done.model, usage, done.pricing)
      : 0;
  const p = done.principal;
  const request = loggedBody(done.requestBody, () => done.requestBody.toString('utf8'));
  const response = loggedBody(done.responseBody, () => responseText);
  const utf8: Utf8Fields = { requestBody: request.bytes, responseBody: response.bytes };
  const requestLog = encodeRequestLog(
    {
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
      status: done.status,
      stream: done.stream,
      createdAtMs: String(done.createdAtMs),
      latencyMs: Math.round(done.latencyMs),
      requestBody: request.text,
      responseBody: response.text,
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
    },
    utf8,
  );
  bus.publish({ topic: Topics.requestLogs, key: p.workspaceId ?? p.organisationId, value: requestLog });
  if (done.status < 400) {
    const usageEvent = encodeUsage({
      id: randomUUID(),
      organisationId: p.organisationId,
      workspaceId: p.workspaceId ?? '',
      apiKeyId: p.apiKeyId,
      provider: done.provider,
      model: done.model,
      usage,
      cost,
      occurredAtMs: String(done.createdAtMs),
    });
    bus.publish({ topic: Topics.usage, key: p.apiKeyId, value: usageEvent });
  }
}
