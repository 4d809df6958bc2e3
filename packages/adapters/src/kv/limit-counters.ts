import type { KeyValueStore } from './key-value-store.ts';
import type { LimitCounterStore } from './limit-counter-store.ts';
import { MemoryKeyValueStore } from './memory-store.ts';
import { MemoryLimitCounterStore } from './memory-limit-counters.ts';
import { RedisKeyValueStore } from './redis-store.ts';
import type { RedisLimitCounterOptions } from './redis-limit-counters.ts';

/**
 * The limit counters that go with a key-value store: Redis counters on a Redis store's
 * connection, counters in memory beside the in-memory stand-in (all-in-one).
 */
export function limitCountersFor(
  kv: KeyValueStore,
  options: RedisLimitCounterOptions = {},
): LimitCounterStore {
  if (kv instanceof RedisKeyValueStore) return kv.limitCounters(options);
  if (kv instanceof MemoryKeyValueStore) return new MemoryLimitCounterStore();
  throw new Error('limit counters need a Redis or an in-memory key-value store');
}
