import type { Request } from 'express';
import { randomUUID } from 'node:crypto';
import { BadRequest, ROUTING_LIMITS, assertStorableInput } from '@switchyard/platform';

export interface GatewayHeaders {
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

const MAX_HEADER_VALUE = 1024;
/** Headers that carry documents: metadata and an inline config. */
const LONG_HEADERS: Record<string, number> = { metadata: 16_384, config: ROUTING_LIMITS.maxConfigBytes };

const NAMES = [
  'provider',
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
type Name = (typeof NAMES)[number];
export type HeaderNames = Record<Name, string>;

/** The full header names for a prefix, made once: every request reads and writes them. */
const prefixed = new Map<string, HeaderNames>();

export function headerNames(prefix: string): HeaderNames {
  let names = prefixed.get(prefix);
  if (names === undefined) {
    names = Object.fromEntries(NAMES.map((name) => [name, `${prefix}${name}`])) as HeaderNames;
    prefixed.set(prefix, names);
  }
  return names;
}

/** Reads the `<prefix>*` request headers once, validating each. */
export function readGatewayHeaders(req: Request, prefix: string): GatewayHeaders {
  const names = headerNames(prefix);
  const single = (name: Name): string | undefined => {
    const value = req.headers[names[name]];
    if (value === undefined) return undefined;
    const text = Array.isArray(value) ? value[0] : value;
    if (text === undefined || text === '') return undefined;
    if (text.length > (LONG_HEADERS[name] ?? MAX_HEADER_VALUE)) {
      throw new BadRequest(`Header ${prefix}${name} is too long.`, { param: `${prefix}${name}` });
    }
    return text;
  };
  return {
    provider: single('provider'),
    customHost: single('custom-host'),
    config: single('config'),
    traceId: single('trace-id') ?? randomUUID(),
    spanId: single('span-id'),
    parentSpanId: single('parent-span-id'),
    spanName: single('span-name'),
    metadata: parseMetadata(single('metadata'), `${prefix}metadata`),
    cacheNamespace: single('cache-namespace'),
    cacheForceRefresh: single('cache-force-refresh'),
    modelsEndpoint: single('models-endpoint'),
  };
}

function parseMetadata(raw: string | undefined, header: string): Record<string, string> {
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new BadRequest(`Header ${header} must be a JSON object of strings.`, { param: header });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequest(`Header ${header} must be a JSON object of strings.`, { param: header });
  }
  // Metadata is stored with the request's log.
  assertStorableInput(parsed, 'header', header);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') {
      throw new BadRequest(`Header ${header}: value of '${key}' must be a string.`, { param: header });
    }
    out[key] = value;
  }
  return out;
}
