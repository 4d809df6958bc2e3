import type { Request } from 'express';
import { randomUUID } from 'node:crypto';
import { BadRequest, assertStorableInput } from '@switchyard/core';
import { ROUTING_LIMITS } from '@switchyard/rules';
import {
  headerNames,
  type CacheHeaders,
  type GatewayHeaderName,
  type GatewayHeaders,
} from '../domain/gateway-headers.ts';

const MAX_HEADER_VALUE = 1024;
/** Headers that carry documents: metadata and an inline config. */
const LONG_HEADERS: Record<string, number> = { metadata: 16_384, config: ROUTING_LIMITS.maxConfigBytes };

/** Reads the `<prefix>*` request headers once, validating each. */
export function readGatewayHeaders(req: Request, prefix: string): GatewayHeaders {
  const names = headerNames(prefix);
  const single = (name: GatewayHeaderName): string | undefined => {
    const value = req.headers[names[name]];
    if (value === undefined) return undefined;
    const text = Array.isArray(value) ? value[0] : value;
    if (text === undefined || text === '') return undefined;
    if (text.length > (LONG_HEADERS[name] ?? MAX_HEADER_VALUE)) {
      throw new BadRequest(`Header ${prefix}${name} is too long.`, { param: `${prefix}${name}` });
    }
    return text;
  };
  const virtualKey = single('virtual-key');
  return {
    provider: single('provider') ?? (virtualKey === undefined ? undefined : `@${virtualKey.trim()}`),
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

/** The cache request headers as sent, for cacheDirectives to check when the request's config is known. */
export function readCacheHeaders(req: Request, prefix: string): CacheHeaders {
  const names = headerNames(prefix);
  const { headers } = req;
  return {
    cache: first(headers[names.cache]),
    forceRefresh: first(headers[names['cache-force-refresh']]),
    maxAge: first(headers[names['cache-max-age']]),
    namespace: first(headers[names['cache-namespace']]),
  };
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
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
