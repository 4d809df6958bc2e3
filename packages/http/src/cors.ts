import type { RequestHandler } from 'express';
import { HEADER_TOKEN } from '@switchyard/core';

/** Which browser pages may call the API (CORS_ALLOWED_ORIGINS, CORS_MAX_AGE_SECONDS). */
export interface CorsOptions {
  /** Origins exactly as browsers send them, or `['*']` for any; none: CORS is off. */
  allowedOrigins: readonly string[];
  /** How long a browser may reuse a preflight's answer. */
  maxAgeSeconds: number;
  /** The gateway's header prefix (HEADER_PREFIX): its request headers are allowed, its response headers exposed. */
  headerPrefix: string;
}

/** The CORS settings of a process's configuration; a process without HEADER_PREFIX has the default one. */
export function corsOptionsFrom(config: {
  CORS_ALLOWED_ORIGINS: string[];
  CORS_MAX_AGE_SECONDS: number;
  HEADER_PREFIX?: unknown;
}): CorsOptions {
  return {
    allowedOrigins: config.CORS_ALLOWED_ORIGINS,
    maxAgeSeconds: config.CORS_MAX_AGE_SECONDS,
    headerPrefix: typeof config.HEADER_PREFIX === 'string' ? config.HEADER_PREFIX : 'x-vendor-',
  };
}

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/** The gateway's request headers, after its prefix (the gateway's GATEWAY_HEADER_NAMES, less `cache-status`). */
const GATEWAY_REQUEST_HEADERS = [
  'api-key',
  'provider',
  'virtual-key',
  'custom-host',
  'config',
  'trace-id',
  'span-id',
  'parent-span-id',
  'span-name',
  'metadata',
  'cache',
  'cache-namespace',
  'cache-force-refresh',
  'cache-max-age',
  'models-endpoint',
];

/** Request headers the official OpenAI and Anthropic SDKs send, and W3C trace context. */
const CLIENT_REQUEST_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'idempotency-key',
  'traceparent',
  'tracestate',
  'openai-organization',
  'openai-project',
  'openai-beta',
  'x-stainless-arch',
  'x-stainless-lang',
  'x-stainless-os',
  'x-stainless-package-version',
  'x-stainless-retry-count',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-timeout',
  'x-stainless-helper-method',
  'x-stainless-poll-helper',
  'x-stainless-custom-poll-interval',
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  // MCP's streamable HTTP transport.
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
];

/** The gateway's response headers, after its prefix. */
const GATEWAY_RESPONSE_HEADERS = [
  'trace-id',
  'provider',
  'cache-status',
  'last-used-option-index',
  'retry-attempt-count',
  'provider-request-id',
];

/** Response headers a page may need to read beyond those every browser shows it. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-ratelimit-limit-requests',
  'x-ratelimit-limit-tokens',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-remaining-tokens',
  'x-ratelimit-reset-requests',
  'x-ratelimit-reset-tokens',
  'anthropic-ratelimit-requests-limit',
  'anthropic-ratelimit-requests-remaining',
  'anthropic-ratelimit-requests-reset',
  'anthropic-ratelimit-tokens-limit',
  'anthropic-ratelimit-tokens-remaining',
  'anthropic-ratelimit-tokens-reset',
  'anthropic-ratelimit-input-tokens-limit',
  'anthropic-ratelimit-input-tokens-remaining',
  'anthropic-ratelimit-input-tokens-reset',
  'anthropic-ratelimit-output-tokens-limit',
  'anthropic-ratelimit-output-tokens-remaining',
  'anthropic-ratelimit-output-tokens-reset',
  'request-id',
  'retry-after-ms',
  'openai-processing-ms',
  'content-disposition',
  // MCP clients read the session an upstream keeps, and the OAuth challenge on a 401.
  'mcp-session-id',
  'www-authenticate',
];

/** Most header names a preflight may ask for and have echoed; past it the fixed list is answered. */
const MAX_ECHOED_HEADERS = 64;

/**
 * The headers a preflight asked for, lower-cased, when each is a header name (RFC 9110 token);
 * undefined when any is not, or there are none, or too many.
 */
function echoedHeaders(requested: string | undefined): string | undefined {
  if (!requested) return undefined;
  const names = requested.split(',').map((name) => name.trim().toLowerCase());
  if (names.length > MAX_ECHOED_HEADERS || !names.every((name) => HEADER_TOKEN.test(name))) return undefined;
  return names.join(', ');
}

/**
 * CORS for browser pages of the allowed origins, or undefined when none is allowed (then
 * requests are answered as if CORS did not exist). A request from an allowed origin gets
 * `Access-Control-Allow-Origin` with its origin and credentials allowed, or `*` and no
 * credentials when any origin is; one from another origin gets no CORS headers, so the browser
 * keeps the answer from the page, and is served as usual. A preflight from an allowed origin is
 * answered 204 here, before any router: no authentication, scope or body check runs for it.
 */
export function corsMiddleware(options: CorsOptions): RequestHandler | undefined {
  if (options.allowedOrigins.length === 0) return undefined;
  const anyOrigin = options.allowedOrigins.includes('*');
  const origins = new Set(options.allowedOrigins);
  const prefix = options.headerPrefix.toLowerCase();
  const exposed = [...EXPOSED_HEADERS, ...GATEWAY_RESPONSE_HEADERS.map((name) => `${prefix}${name}`)];
  // Without credentials a browser reads `*` as every header; it names the others for those that do not.
  const exposedValue = (anyOrigin ? ['*', ...exposed] : exposed).join(', ');
  const allowedHeaders = [
    ...CLIENT_REQUEST_HEADERS,
    ...GATEWAY_REQUEST_HEADERS.map((name) => `${prefix}${name}`),
  ].join(', ');
  const maxAge = String(options.maxAgeSeconds);
  return (req, res, next) => {
    // Whether the answer carries CORS headers depends on Origin: no cache may serve it to another.
    res.setHeader('vary', 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !(anyOrigin || origins.has(origin))) {
      next();
      return;
    }
    res.setHeader('access-control-allow-origin', anyOrigin ? '*' : origin);
    if (!anyOrigin) res.setHeader('access-control-allow-credentials', 'true');
    if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) {
      res.setHeader('access-control-expose-headers', exposedValue);
      next();
      return;
    }
    const requested = req.headers['access-control-request-headers'];
    res.setHeader('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    res.setHeader('access-control-allow-methods', ALLOWED_METHODS);
    res.setHeader('access-control-allow-headers', echoedHeaders(requested) ?? allowedHeaders);
    res.setHeader('access-control-max-age', maxAge);
    res.statusCode = 204;
    res.end();
  };
}
