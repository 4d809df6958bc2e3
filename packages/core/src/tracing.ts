// OpenTelemetry traces (see docs/tracing.md): one tracer provider per process, started from
// the tracing settings and shut down last on a graceful stop. Off unless an OTLP endpoint is
// set; then nothing here registers anything (the SDK is not even loaded) and every helper
// returns at its first check, so the only cost is that check.
import {
  context,
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { z } from 'zod';
import { loadConfig, tracingEnv, type TracingConfig } from './config.ts';
import type { Logger } from './logger.ts';

export { SpanKind, SpanStatusCode, type Attributes, type Context, type Span };

/** How long one export may take before it is given up. */
const EXPORT_TIMEOUT_MS = 10_000;
/**
 * The most links a span keeps (the SDK's default is 128): a consumer's span for a batch of
 * events links each event's publisher, and the request log consumer takes up to 500 at a time.
 */
const MAX_SPAN_LINKS = 1_000;

let provider: NodeTracerProvider | undefined;
let tracerOfProcess: Tracer | undefined;

/** Whether this process records spans (an OTLP endpoint is set and tracing was started). */
export function tracingEnabled(): boolean {
  return provider !== undefined;
}

/** The process's tracer; only to be asked for while tracingEnabled(). */
export function tracer(): Tracer {
  return (tracerOfProcess ??= trace.getTracer('switchyard'));
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and unregisters the provider; the process records no more spans. */
  shutdown(): Promise<void>;
}

const off: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };

/**
 * Starts tracing for `process` (the service's name, or `all-in-one`) when the settings name
 * an OTLP endpoint: a tracer provider sampling TRACE_SAMPLE_RATIO of the traces begun here
 * (a request with a `traceparent` follows its caller's decision), exporting in batches over
 * OTLP/HTTP JSON, with the AsyncLocalStorage context manager and the W3C trace context
 * propagator. Otherwise nothing is registered.
 */
export async function startTracing(
  config: TracingConfig,
  process: string,
  logger?: Logger,
): Promise<Tracing> {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return off;
  if (provider) throw new Error('tracing is already started in this process');
  const [{ W3CTraceContextPropagator }, { OTLPTraceExporter }, resources, sdk, { ATTR_SERVICE_NAME }] =
    await Promise.all([
      import('@opentelemetry/core'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  if (provider) throw new Error('tracing is already started in this process');
  const exporter = new OTLPTraceExporter({
    url: `${endpoint.replace(/\/+$/, '')}/v1/traces`,
    headers: config.OTEL_EXPORTER_OTLP_HEADERS,
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const started = new sdk.NodeTracerProvider({
    resource: resources.defaultResource().merge(
      resources.resourceFromAttributes({
        [ATTR_SERVICE_NAME]: config.OTEL_SERVICE_NAME ?? `switchyard-${process}`,
      }),
    ),
    sampler: new sdk.ParentBasedSampler({
      root: new sdk.TraceIdRatioBasedSampler(config.TRACE_SAMPLE_RATIO),
    }),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter, { exportTimeoutMillis: EXPORT_TIMEOUT_MS })],
    spanLimits: { linkCountLimit: MAX_SPAN_LINKS },
  });
  started.register({ propagator: new W3CTraceContextPropagator() });
  provider = started;
  tracerOfProcess = undefined;
  logger?.info('tracing on', { endpoint, sample_ratio: config.TRACE_SAMPLE_RATIO });
  return {
    enabled: true,
    flush: () => started.forceFlush(),
    shutdown: async () => {
      if (provider !== started) return;
      try {
        await started.shutdown();
      } finally {
        provider = undefined;
        tracerOfProcess = undefined;
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

/** The tracing settings of an environment (see tracingEnv). */
export function tracingConfigFrom(env: NodeJS.ProcessEnv): TracingConfig {
  return loadConfig(z.object(tracingEnv), env);
}

/** Exports the spans ended so far, when tracing is on (tests wait on it). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush();
}

/** The request id the server gave the request a span serves (see requestIdOfContext). */
const REQUEST_ID = createContextKey('switchyard.request_id');

/** The context with the request's id, for log lines written in it (see logger.ts). */
export function withRequestId(ctx: Context, requestId: string): Context {
  return ctx.setValue(REQUEST_ID, requestId);
}

/** The request id and W3C trace id of the active context, when tracing is on. */
export function activeTraceFields(): { requestId?: string; traceId?: string } | undefined {
  if (!provider) return undefined;
  const ctx = context.active();
  const requestId = ctx.getValue(REQUEST_ID) as string | undefined;
  const traceId = traceIdOf(trace.getSpan(ctx));
  if (requestId === undefined && traceId === undefined) return undefined;
  return { requestId, traceId };
}

/**
 * A span's W3C trace id when the span is recorded or continues a caller's trace; undefined for
 * no span, or one begun here and not sampled (no trace holds it).
 */
export function traceIdOf(span: Span | undefined): string | undefined {
  if (!span) return undefined;
  const spanContext = span.spanContext();
  if (!trace.isSpanContextValid(spanContext)) return undefined;
  return span.isRecording() || spanContext.isRemote ? spanContext.traceId : undefined;
}

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/**
 * The trace id of a `traceparent` header (W3C Trace Context), read without tracing: undefined
 * for none, a malformed one, or the all-zero id.
 */
export function traceIdOfTraceparent(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.length !== 55) return undefined;
  const id = TRACEPARENT.exec(text.trim().toLowerCase())?.[1];
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}

type HeaderBag = Record<string, string | string[] | number | undefined>;

const headerGetter: TextMapGetter<HeaderBag> = {
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'number' ? String(value) : value;
  },
  keys: (carrier) => Object.keys(carrier),
};

/** The caller's trace context from request headers (lower-case names, as Node gives them). */
export function extractTraceContext(headers: HeaderBag): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
}

const recordSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/**
 * `headers` with the active span's `traceparent` (and `tracestate`) added, for a call to
 * another system; the same object, untouched, when tracing is off or there is no span.
 */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  if (!provider) return headers;
  const carried: Record<string, string> = {};
  propagation.inject(context.active(), carried, recordSetter);
  return carried.traceparent === undefined ? headers : { ...headers, ...carried };
}

/** Puts a carrier's entries through `set` (gRPC metadata, Kafka headers). */
export function injectTraceContext(ctx: Context, set: (key: string, value: string) => void): void {
  const carried: Record<string, string> = {};
  propagation.inject(ctx, carried, recordSetter);
  for (const [key, value] of Object.entries(carried)) set(key, value);
}

/**
 * A W3C trace context as it travels with an event: the publisher's `traceparent` and, when it
 * has one, `tracestate`.
 */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** The most `tracestate` kept with an event: W3C's limit for what a vendor must propagate. */
const MAX_TRACESTATE = 512;
/** What W3C allows in a `tracestate` (so that it fits on one line of text). */
const PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * The active context's trace context, to travel with an event published now; undefined when
 * tracing is off (after one check) or no span is active.
 */
export function activeTraceCarrier(): TraceCarrier | undefined {
  if (!provider) return undefined;
  const carried: Record<string, string> = {};
  propagation.inject(context.active(), carried, recordSetter);
  return carrierOf(carried.traceparent, carried.tracestate);
}

/**
 * A carrier from values read off the wire or a file, read without tracing: undefined for a
 * missing or malformed `traceparent` (or the all-zero trace id); a `tracestate` longer than
 * W3C's limit, or with characters it does not allow, is left out.
 */
export function carrierOf(
  traceparent: string | undefined,
  tracestate: string | undefined,
): TraceCarrier | undefined {
  if (traceparent === undefined || traceIdOfTraceparent(traceparent) === undefined) return undefined;
  return tracestate && tracestate.length <= MAX_TRACESTATE && PRINTABLE.test(tracestate)
    ? { traceparent, tracestate }
    : { traceparent };
}

/** The context a carrier names, as a remote parent or a link; the root context for none. */
export function contextOfCarrier(carrier: TraceCarrier | undefined): Context {
  if (!carrier) return ROOT_CONTEXT;
  return extractTraceContext({ traceparent: carrier.traceparent, tracestate: carrier.tracestate });
}

/** The `error.type` of an unexpected error: its class, never its message (which may hold data). */
export function errorClass(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

/** Marks a span failed with `type` as its `error.type` (an error code or class, never a message with data). */
export function failSpan(span: Span, type: string, message?: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
}

/**
 * Starts a span, the child of `parent` (by default the active context's span) and linked to the
 * spans of `linkedTo`, and returns it with the context it is active in. Only while
 * tracingEnabled().
 */
export function startSpan(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  parent: Context = context.active(),
  linkedTo: readonly Context[] = [],
): { span: Span; context: Context } {
  const links = [];
  for (const linked of linkedTo) {
    const spanContext = trace.getSpanContext(linked);
    if (spanContext && trace.isSpanContextValid(spanContext)) links.push({ context: spanContext });
  }
  const span = tracer().startSpan(
    name,
    links.length > 0 ? { kind, attributes, links } : { kind, attributes },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` with `ctx` active: the spans it starts are children of ctx's span. */
export function runInContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

/**
 * Makes the listeners of an event emitter (a request, a response) run in `ctx`: the events of
 * a request's body come from its socket, outside the request's own context otherwise.
 */
export function bindToContext<E extends object>(ctx: Context, emitter: E): E {
  return context.bind(ctx, emitter);
}

/**
 * The W3C trace id a request belongs to, for its log: its active span's while tracing is on
 * (the caller's trace when it sent a `traceparent`, else a sampled trace begun here), else the
 * caller's `traceparent`'s, read without tracing.
 */
export function requestTraceId(traceparent: string | string[] | undefined): string | undefined {
  if (provider) return traceIdOf(trace.getSpan(context.active())) ?? traceIdOfTraceparent(traceparent);
  return traceIdOfTraceparent(traceparent);
}
