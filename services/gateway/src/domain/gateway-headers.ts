/**
 * The gateway's own headers (`<prefix>provider`, `<prefix>trace-id`, ...): what a request
 * says in them, once read and checked, and their full names for a prefix. The HTTP layer
 * reads them (http/gateway-headers.ts); routing, the request log and the response headers
 * the gateway sets name them from here.
 */
export interface GatewayHeaders {
  /** `<prefix>provider`, else `@<slug>` of `<prefix>virtual-key` (a saved integration, as Portkey clients name one). */
  provider: string | undefined;
  customHost: string | undefined;
  config: string | undefined;
  traceId: string;
  spanId: string | undefined;
  parentSpanId: string | undefined;
  spanName: string | undefined;
  metadata: Record<string, string>;
  /** Recorded on the request log as sent; checked where they take effect. */
  cacheNamespace: string | undefined;
  cacheForceRefresh: string | undefined;
  modelsEndpoint: string | undefined;
}

/** The cache request headers exactly as sent (the first value of a repeated one); checked by cacheDirectives. */
export interface CacheHeaders {
  cache: string | undefined;
  forceRefresh: string | undefined;
  maxAge: string | undefined;
  namespace: string | undefined;
}

export const GATEWAY_HEADER_NAMES = [
  'provider',
  'virtual-key',
  'custom-host',
  'config',
  'trace-id',
  'span-id',
  'parent-span-id',
  'span-name',
  'metadata',
  'cache-namespace',
  'cache-force-refresh',
  'models-endpoint',
  'cache',
  'cache-max-age',
  'cache-status',
  'api-key',
] as const;
export type GatewayHeaderName = (typeof GATEWAY_HEADER_NAMES)[number];
export type HeaderNames = Record<GatewayHeaderName, string>;

/** The full header names for a prefix, made once: every request reads and writes them. */
const prefixed = new Map<string, HeaderNames>();

export function headerNames(prefix: string): HeaderNames {
  let names = prefixed.get(prefix);
  if (names === undefined) {
    names = Object.fromEntries(GATEWAY_HEADER_NAMES.map((name) => [name, `${prefix}${name}`])) as HeaderNames;
    prefixed.set(prefix, names);
  }
  return names;
}
