import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  /** The spans it links to (another trace's, or its own). */
  links: Array<{ traceId: string; spanId: string }>;
}

export interface OtlpReceiver {
  /** The endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT). */
  url: string;
  /** Every span received so far, in the order received. */
  spans: ReceivedSpan[];
  close(): Promise<void>;
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
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      try {
        spans.push(...spansOf(Buffer.concat(chunks).toString('utf8')));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The spans of one OTLP/JSON export request. */
function spansOf(body: string): ReceivedSpan[] {
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
          links?: Array<{ traceId: string; spanId: string }>;
        }>;
      }>;
    }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of parsed.resourceSpans ?? []) {
    const serviceName = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
          serviceName,
          links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        });
      }
    }
  }
  return spans;
}
