import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { BadRequest } from '@switchyard/core';
import type { ChatBody, ProviderTarget } from '../providers/types.ts';
import type { CacheHeaders } from './gateway-headers.ts';

export type CacheStatus = 'HIT' | 'MISS' | 'REFRESH' | 'DISABLED';

export interface CacheDirectives {
  enabled: boolean;
  namespace: string | undefined;
  forceRefresh: boolean;
  maxAgeSeconds: number;
}

export interface CachedResponse {
  status: number;
  contentType: string;
  body: Buffer;
  stream: boolean;
}

const DEFAULT_MAX_AGE_SECONDS = 7 * 24 * 3600;
const MAX_MAX_AGE_SECONDS = 90 * 24 * 3600;
/** Larger answers are not cached. */
export const MAX_CACHED_BYTES = 1_000_000;

/**
 * Checks the cache request headers: `<prefix>cache` (`simple` turns exact-match caching on),
 * `<prefix>cache-max-age` (seconds), `<prefix>cache-namespace`, `<prefix>cache-force-refresh`.
 */
export function cacheDirectives(
  headers: CacheHeaders,
  prefix: string,
  /** The config's `cache` setting; the headers win over it. */
  configured?: { mode: 'simple' | 'disabled'; max_age?: number | undefined },
): CacheDirectives {
  const mode = headers.cache ?? configured?.mode;
  if (mode !== undefined && mode !== 'simple' && mode !== 'disabled') {
    throw new BadRequest(`Header ${prefix}cache must be "simple" or "disabled".`, {
      param: `${prefix}cache`,
    });
  }
  const refresh = headers.forceRefresh;
  if (refresh !== undefined && refresh !== 'true' && refresh !== 'false') {
    throw new BadRequest(`Header ${prefix}cache-force-refresh must be true or false.`, {
      param: `${prefix}cache-force-refresh`,
    });
  }
  const maxAge = headers.maxAge;
  const seconds = maxAge === undefined ? (configured?.max_age ?? DEFAULT_MAX_AGE_SECONDS) : Number(maxAge);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_MAX_AGE_SECONDS) {
    throw new BadRequest(
      `Header ${prefix}cache-max-age must be whole seconds from 1 to ${MAX_MAX_AGE_SECONDS}.`,
      {
        param: `${prefix}cache-max-age`,
      },
    );
  }
  const namespace = headers.namespace;
  if (namespace !== undefined && namespace.length > 256) {
    throw new BadRequest(`Header ${prefix}cache-namespace is too long.`, {
      param: `${prefix}cache-namespace`,
    });
  }
  return { enabled: mode === 'simple', namespace, forceRefresh: refresh === 'true', maxAgeSeconds: seconds };
}

/**
 * Exact-match response cache. The key covers the workspace, the namespace, where the request
 * goes and the normalised request (key order does not matter); streamed and plain answers
 * are kept apart so each is replayed in its own form.
 */
export function responseCacheKey(
  workspaceId: string,
  directives: CacheDirectives,
  target: ProviderTarget,
  /** The request as it goes to the provider: a chat body, or another format's (see `format`). */
  body: ChatBody | Record<string, unknown>,
  /**
   * The output guardrails (id and version) the answer passes through: an answer they withheld
   * or redacted is stored as sent, so it is replayed only to requests checked the same way.
   */
  outputGuardrails: readonly string[] = [],
  /**
   * The format the route answers in, when not chat's (e.g. `messages`): its requests never
   * share an entry with chat requests of an equal body.
   */
  format?: string,
): string {
  const destination = target.integrationSlug
    ? { integration: target.integrationSlug }
    : { provider: target.provider, host: target.baseUrl ?? null };
  const normalised = stringify({
    workspaceId,
    namespace: directives.namespace ?? null,
    destination,
    body,
    ...(outputGuardrails.length > 0 ? { outputGuardrails } : {}),
    ...(format ? { format } : {}),
  });
  return `cache:chat:${createHash('sha256')
    .update(normalised ?? '')
    .digest('hex')}`;
}

/** Only a complete successful answer of a size worth keeping is stored. */
export function isCacheable(response: CachedResponse): boolean {
  return response.status === 200 && response.body.length > 0 && response.body.length <= MAX_CACHED_BYTES;
}

/**
 * Where cached answers are kept (store/response-store.ts). A store that cannot answer is a
 * miss; a write never delays or fails the request.
 */
export interface ResponseStore {
  get(key: string): Promise<CachedResponse | undefined>;
  put(key: string, response: CachedResponse, maxAgeSeconds: number): void;
}
