import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { BadRequest, type KeyValueStore, type Logger } from '@switchyard/platform';
import type { ChatBody, ProviderTarget } from '../providers/types.ts';
import { headerNames } from '../http/gateway-headers.ts';

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
 * Reads the cache request headers: `<prefix>cache` (`simple` turns exact-match caching on),
 * `<prefix>cache-max-age` (seconds), `<prefix>cache-namespace`, `<prefix>cache-force-refresh`.
 */
export function cacheDirectives(
  headers: Record<string, string | string[] | undefined>,
  prefix: string,
  /** The config's `cache` setting; the headers win over it. */
  configured?: { mode: 'simple' | 'disabled'; max_age?: number | undefined },
): CacheDirectives {
  const names = headerNames(prefix);
  const value = (name: 'cache' | 'cache-force-refresh' | 'cache-max-age' | 'cache-namespace') => {
    const v = headers[names[name]];
    return Array.isArray(v) ? v[0] : v;
  };
  const mode = value('cache') ?? configured?.mode;
  if (mode !== undefined && mode !== 'simple' && mode !== 'disabled') {
    throw new BadRequest(`Header ${prefix}cache must be "simple" or "disabled".`, {
      param: `${prefix}cache`,
    });
  }
  const refresh = value('cache-force-refresh');
  if (refresh !== undefined && refresh !== 'true' && refresh !== 'false') {
    throw new BadRequest(`Header ${prefix}cache-force-refresh must be true or false.`, {
      param: `${prefix}cache-force-refresh`,
    });
  }
  const maxAge = value('cache-max-age');
  const seconds = maxAge === undefined ? (configured?.max_age ?? DEFAULT_MAX_AGE_SECONDS) : Number(maxAge);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_MAX_AGE_SECONDS) {
    throw new BadRequest(
      `Header ${prefix}cache-max-age must be whole seconds from 1 to ${MAX_MAX_AGE_SECONDS}.`,
      {
        param: `${prefix}cache-max-age`,
      },
    );
  }
  const namespace = value('cache-namespace');
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
 * are kept apart so each is replayed in its own form. A cache that cannot answer is a miss.
 */
export class ResponseCache {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
  ) {}

  key(workspaceId: string, directives: CacheDirectives, target: ProviderTarget, body: ChatBody): string {
    const destination = target.integrationSlug
      ? { integration: target.integrationSlug }
      : { provider: target.provider, host: target.baseUrl ?? null };
    const normalised = stringify({ workspaceId, namespace: directives.namespace ?? null, destination, body });
    return `cache:chat:${createHash('sha256')
      .update(normalised ?? '')
      .digest('hex')}`;
  }

  async get(key: string): Promise<CachedResponse | undefined> {
    try {
      const stored = await this.kv.get(key);
      if (!stored) return undefined;
      const entry = JSON.parse(stored) as {
        status: number;
        contentType: string;
        body: string;
        stream: boolean;
      };
      return { ...entry, body: Buffer.from(entry.body, 'base64') };
    } catch (err) {
      this.logger.warn('response cache read failed; treating as a miss', { error: String(err) });
      return undefined;
    }
  }

  /** Stores a complete successful answer; never delays or fails the request. */
  put(key: string, response: CachedResponse, maxAgeSeconds: number): void {
    if (response.status !== 200 || response.body.length === 0 || response.body.length > MAX_CACHED_BYTES)
      return;
    const value = JSON.stringify({ ...response, body: response.body.toString('base64') });
    this.kv.set(key, value, maxAgeSeconds * 1000).catch((err: unknown) => {
      this.logger.warn('response cache write failed', { error: String(err) });
    });
  }
}
