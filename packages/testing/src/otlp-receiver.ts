import { startFakeServer, type FakeServer } from './fake-server.ts';

/** An attribute's value as OTLP/JSON writes it, made plain. */
export type SpanAttribute = string | number | boolean | SpanAttribute[] | undefined;

/** One span as a collector received it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a span without a parent. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, SpanAttribute>;
  /** OTLP's numbering: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The `service.name` of the process that sent it. */
  serviceName: string;
}

export interface OtlpReceiver extends FakeServer {
  /** Every span received so far, in the order received. */
  spans: ReceivedSpan[];
}

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: JsonValue[] };
}
type JsonAttribute = { key: string; value: JsonValue };

function plain(value: JsonValue | undefined): SpanAttribute {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributesOf(list: JsonAttribute[] | undefined): Record<string, SpanAttribute> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

/**
 * A loopback stand-in for an OpenTelemetry collector: it accepts OTLP/HTTP JSON exports on
 * `POST /v1/traces` (the exporter appends the path to the endpoint, `url`) and keeps their spans.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver = await startFakeServer<OtlpReceiver>(async (req, res, body, state) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const parsed = JSON.parse(body) as {
      resourceSpans?: Array<{
        resource?: { attributes?: JsonAttribute[] };
        scopeSpans?: Array<{
          spans?: Array<{
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            name: string;
            kind: number;
            attributes?: JsonAttribute[];
            status?: { code?: number };
          }>;
        }>;
      }>;
    };
    for (const resourceSpans of parsed.resourceSpans ?? []) {
      const serviceName = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          state.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            statusCode: span.status?.code ?? 0,
            serviceName,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  receiver.spans = [];
  return receiver;
}
