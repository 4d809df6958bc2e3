import type { Logger } from '@switchyard/core';
import type { KeyValueStore } from '@switchyard/adapters';
import type { CachedResponse, ResponseStore } from '../domain/response-cache.ts';

/**
 * Cached answers in the key-value store (Redis, or the all-in-one's memory store), each as
 * JSON with its body in base64. A store that cannot answer is a miss, and a failed write is
 * logged: neither reaches the request.
 */
export class KeyValueResponseStore implements ResponseStore {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
  ) {}

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

  /** Stores an answer (the domain decides which: isCacheable); never delays or fails the request. */
  put(key: string, response: CachedResponse, maxAgeSeconds: number): void {
    const value = JSON.stringify({ ...response, body: response.body.toString('base64') });
    this.kv.set(key, value, maxAgeSeconds * 1000).catch((err: unknown) => {
      this.logger.warn('response cache write failed', { error: String(err) });
    });
  }
}
