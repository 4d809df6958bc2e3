// `@switchyard/adapters`: the event bus (Kafka, in-memory with journal), typed events, the key-value
// store (Redis, in-memory) and the Postgres data source (TypeORM, embedded PGlite).
export { type BusMessage, type EventBus, type OutgoingMessage, type Subscription } from './bus/event-bus.ts';
export { EventJournal } from './bus/event-journal.ts';
export { DEFAULT_MAX_MESSAGE_BYTES, KafkaEventBus } from './bus/kafka-bus.ts';
export { MemoryEventBus } from './bus/memory-bus.ts';
export { publishChange, publishEvent, subscribeEventBatches, subscribeEvents, Topics } from './events.ts';
export { type KeyValueStore } from './kv/key-value-store.ts';
export { MemoryKeyValueStore } from './kv/memory-store.ts';
export { RedisKeyValueStore } from './kv/redis-store.ts';
export {
  type CounterAdjustment,
  type CounterField,
  type CounterTake,
  type EntityUsage,
  type LimitCounterStore,
  type TakeOutcome,
  type TakeResult,
  type UsagePage,
  type UsageQuery,
} from './kv/limit-counter-store.ts';
export { limitCountersFor } from './kv/limit-counters.ts';
export { MemoryLimitCounterStore } from './kv/memory-limit-counters.ts';
export { RedisLimitCounterStore, type RedisLimitCounterOptions } from './kv/redis-limit-counters.ts';
export {
  checkDataSource,
  createDataSource,
  isUniqueViolation,
  migrate,
  type PostgresConnector,
} from './store/data-source.ts';
export { startEmbeddedPostgres } from './store/embedded-postgres.ts';
export { startScratchDatabase, type ScratchDatabase } from './store/scratch-database.ts';
