import { createClient, type RedisClientType } from 'redis';
import type { Logger } from '@switchyard/core';
import type { KeyValueStore } from './key-value-store.ts';
import { RedisLimitCounterStore, type RedisLimitCounterOptions } from './redis-limit-counters.ts';

// INCRBY and set the expiry only when this call created the counter, atomically. (Comparing
// the result with the amount would also re-arm the expiry of a counter that was at zero.)
const INCREMENT_SCRIPT = `
local created = redis.call('EXISTS', KEYS[1]) == 0
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if created then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v`;

export class RedisKeyValueStore implements KeyValueStore {
  private readonly client: RedisClientType;
  private connecting: Promise<unknown> | undefined;

  constructor(url: string, logger: Logger, keyPrefix = 'switchyard:') {
    this.prefix = keyPrefix;
    this.client = createClient({
      url,
      // Fail fast while disconnected instead of queueing: callers have fallbacks.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 3_000,
        reconnectStrategy: (retries) => Math.min(2_000, 50 * 2 ** Math.min(retries, 6)),
      },
    });
    let lastLogged = 0;
    this.client.on('error', (err: Error) => {
      if (Date.now() - lastLogged > 10_000) {
        lastLogged = Date.now();
        logger.warn('redis error', { error: err.message });
      }
    });
  }

  private readonly prefix: string;

  async connect(): Promise<void> {
    this.connecting ??= this.client.connect();
    await this.connecting;
  }

  async get(key: string): Promise<string | null> {
    return this.client.get(this.prefix + key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    await this.client.set(
      this.prefix + key,
      value,
      ttlMs ? { expiration: { type: 'PX', value: ttlMs } } : undefined,
    );
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    const result = await this.client.set(this.prefix + key, value, {
      condition: 'NX',
      expiration: { type: 'PX', value: ttlMs },
    });
    return result === 'OK';
  }

  async delete(key: string): Promise<void> {
    await this.client.del(this.prefix + key);
  }

  async increment(key: string, amount: number, ttlMs: number): Promise<number> {
    const result = await this.client.eval(INCREMENT_SCRIPT, {
      keys: [this.prefix + key],
      arguments: [String(amount), String(ttlMs)],
    });
    return Number(result);
  }

  /** Limit counters on this store's connection and under its key prefix. */
  limitCounters(options?: RedisLimitCounterOptions): RedisLimitCounterStore {
    return new RedisLimitCounterStore(this.client, this.prefix, options);
  }

  async check(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    if (this.client.isOpen) await this.client.close();
  }
}
