import winston from 'winston';
import { requestContext } from './context.ts';
import { activeTraceFields } from './tracing.ts';

export type Logger = winston.Logger;

const SECRET_KEY = /(authorization|api[-_]?key|password|secret|token|credential|cookie)/i;
const SECRET_VALUE = /\b(sk|sy|pk|rk)[-_][A-Za-z0-9_-]{8,}\b|\bBearer\s+[A-Za-z0-9._~+/=-]+/g;

/** Masks a secret so that a log reader can still tell two secrets apart. */
export function maskSecret(value: string): string {
  if (value.length <= 8) return '****';
  return `${value.slice(0, 4)}****${value.slice(-2)}`;
}

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return value;
  if (typeof value === 'string') return value.replace(SECRET_VALUE, (m) => maskSecret(m));
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Date) return value;
  // Errors have no enumerable fields and would be written as {}; keep what an operator needs.
  if (value instanceof Error) {
    const out: Record<string, unknown> = {
      name: value.name,
      message: redact(value.message, depth + 1),
      stack: redact(value.stack, depth + 1),
    };
    const code = (value as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') out.code = code;
    if (value.cause !== undefined) out.cause = redact(value.cause, depth + 1);
    return out;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEY.test(k) && typeof v === 'string' ? maskSecret(v) : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (key === 'level' || key === 'timestamp') continue;
    const value = (info as Record<string, unknown>)[key];
    (info as Record<string, unknown>)[key] =
      SECRET_KEY.test(key) && typeof value === 'string' ? maskSecret(value) : redact(value);
  }
  return info;
});

/**
 * The request a line is written for: from the request context, else (tracing on) from the
 * active trace context, which also gives the W3C trace id (`w3c_trace_id`).
 */
const contextFormat = winston.format((info) => {
  const ctx = requestContext.getStore();
  if (ctx) {
    info.request_id ??= ctx.requestId;
    if (ctx.traceId) info.trace_id ??= ctx.traceId;
  }
  const traced = activeTraceFields();
  if (traced) {
    if (traced.requestId) info.request_id ??= traced.requestId;
    if (traced.traceId) info.w3c_trace_id ??= traced.traceId;
  }
  return info;
});

/** JSON lines on stdout, secrets masked, request and trace ids attached when known. */
export function createLogger(service: string, level = 'info'): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { service },
    format: winston.format.combine(
      contextFormat(),
      winston.format.errors({ stack: true }),
      redactFormat(),
      winston.format.timestamp(),
      winston.format.json(),
    ),
    transports: [new winston.transports.Console({ stderrLevels: [] })],
  });
}
