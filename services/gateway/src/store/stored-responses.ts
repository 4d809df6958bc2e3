import type { Logger } from '@switchyard/core';
import type { KeyValueStore } from '@switchyard/adapters';
import type { ResponsesStore, StoredResponse } from '../domain/responses.ts';

/**
 * Translated responses kept in the key-value store (Redis, or the all-in-one's memory store)
 * for `previous_response_id`, each under its workspace and id, so that no other workspace can
 * name it, for `ttlSeconds`. A store that cannot answer finds nothing, and a failed write is
 * logged: neither fails the request that made it.
 */
export class KeyValueStoredResponses implements ResponsesStore {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly logger: Logger,
    private readonly ttlSeconds: number,
  ) {}

  async get(workspaceId: string, id: string): Promise<StoredResponse | undefined> {
    try {
      const stored = await this.kv.get(keyOf(workspaceId, id));
      return stored ? (JSON.parse(stored) as StoredResponse) : undefined;
    } catch (err) {
      this.logger.warn('stored response read failed; treating it as not found', { error: String(err) });
      return undefined;
    }
  }

  put(workspaceId: string, id: string, stored: StoredResponse): void {
    this.kv
      .set(keyOf(workspaceId, id), JSON.stringify(stored), this.ttlSeconds * 1000)
      .catch((err: unknown) => {
        this.logger.warn('stored response write failed', { error: String(err) });
      });
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    await this.kv.delete(keyOf(workspaceId, id));
  }
}

function keyOf(workspaceId: string, id: string): string {
  return `responses:${workspaceId}:${id}`;
}
