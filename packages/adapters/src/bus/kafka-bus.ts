import {
  Kafka,
  Partitioners,
  logLevel,
  type Consumer,
  type ConsumerRunConfig,
  type EachBatchPayload,
  type EachMessagePayload,
  type KafkaMessage,
  type ICustomPartitioner,
  type LogEntry,
  type Producer,
} from 'kafkajs';
import { createRequire } from 'node:module';
import { activeTraceCarrier, type Logger, type TraceCarrier } from '@switchyard/core';
import type {
  BusMessage,
  EventBus,
  OutgoingMessage,
  PublishStats,
  SubscribeBatchOptions,
  SubscribeOptions,
  Subscription,
} from './event-bus.ts';
import {
  PACK_FORMAT,
  packFormat,
  packRecords,
  packTraceContexts,
  recordTraceContext,
  unpackRecord,
  type PackLimits,
} from './packing.ts';
import { PublishBuffer } from './publish-buffer.ts';
import { SpillFile } from './spill-file.ts';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  maxBuffered?: number;
  /** Prepended to every topic and consumer group, so several installations can share a cluster. */
  topicPrefix?: string;
  /**
   * The largest event accepted for publishing, in bytes. A larger one is dropped (and logged)
   * when published: the broker would refuse it (its `message.max.bytes` is 1 MB by default),
   * and retrying a refused batch would hold up every event behind it.
   */
  maxMessageBytes?: number;
  /** How events of one topic and key are packed into records (see packing.ts). */
  packing?: Partial<PackLimits>;
  /**
   * The partitions of a topic this process creates; the broker's default when not given.
   * Consumers of a group share a topic's partitions, so at most this many work at once.
   */
  topicPartitions?: number;
  /**
   * Where events go once `maxBuffered` are waiting for a broker that is away, instead of being
   * dropped (see spill-file.ts); the file is named after the client id. Without it, they are dropped.
   */
  spill?: { dir: string; maxBytes?: number };
}

export const DEFAULT_MAX_MESSAGE_BYTES = 1_000_000;
const DEFAULT_PACKING: PackLimits = { maxPackBytes: 256 * 1024, maxPackMessages: 500 };

function kafkaLogger(logger: Logger) {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, ...extra } = log;
      const method = level === logLevel.ERROR ? 'error' : level === logLevel.WARN ? 'warn' : 'debug';
      // The client reports every broker outage at ERROR; we log it once per attempt ourselves.
      logger.log(method === 'error' ? 'warn' : method, `kafka: ${message}`, { namespace, ...extra });
    };
}

/**
 * Kafka's default partitioner (murmur2 of the key, as the Java client), remembering each key's
 * partition per topic and partition count: events are keyed by a few workspaces and API keys,
 * and hashing the same key again for every event (with a copy of it and a filtered copy of the
 * partition list each time) was a visible share of the producer's work.
 */
export const rememberingPartitioner: ICustomPartitioner = () => {
  const partition = Partitioners.DefaultPartitioner();
  const known = new Map<string, { partitions: number; byKey: Map<string, number> }>();
  return (args) => {
    const { topic, partitionMetadata, message } = args;
    const key = message.key;
    if (typeof key !== 'string' || (message.partition !== undefined && message.partition !== null))
      return partition(args);
    let topicKeys = known.get(topic);
    if (!topicKeys || topicKeys.partitions !== partitionMetadata.length) {
      topicKeys = { partitions: partitionMetadata.length, byKey: new Map() };
      known.set(topic, topicKeys);
    }
    let chosen = topicKeys.byKey.get(key);
    if (chosen === undefined) {
      chosen = partition(args);
      if (topicKeys.byKey.size >= 10_000) topicKeys.byKey.clear();
      topicKeys.byKey.set(key, chosen);
    }
    return chosen;
  };
};

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

/**
 * kafkajs (2.2.4) re-arms its request queue's "check pending requests" timer after every check,
 * also when nothing is pending and the broker is not throttling the client; the delay is then
 * negative, so every broker connection runs a 1 ms setTimeout loop for its whole life
 * (tulios/kafkajs#1556, #1704). In the gateway that woke the event loop about a thousand times a
 * second per connection, on the path of the requests it was answering, and allocated a timer
 * each time. A check with nothing pending and no throttle does nothing but schedule the next one,
 * so this skips exactly that case; a throttled or busy queue is scheduled as before.
 */
export function stopIdleRequestQueueLoop(
  RequestQueue: { prototype: RequestQueueInternals } = createRequire(import.meta.url)(
    'kafkajs/src/network/requestQueue/index.js',
  ) as { prototype: RequestQueueInternals },
): void {
  const proto = RequestQueue.prototype as RequestQueueInternals & { [idleLoopStopped]?: true };
  const original = proto.scheduleCheckPendingRequests;
  if (typeof original !== 'function' || proto[idleLoopStopped]) return;
  proto[idleLoopStopped] = true;
  proto.scheduleCheckPendingRequests = function (this: RequestQueueInternals) {
    if (this.pending.length === 0 && !(this.throttledUntil > Date.now())) return;
    original.call(this);
  };
}
const idleLoopStopped = Symbol('idleLoopStopped');

/** Kafka through kafkajs: an idempotent producer behind a bounded buffer, at-least-once consumers. */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private producerConnected: Promise<void> | undefined;
  private readonly buffer: PublishBuffer;
  private readonly consumers = new Set<Consumer>();
  private readonly knownTopics = new Set<string>();
  /** Topic → its name with the installation's prefix. */
  private readonly topics = new Map<string, string>();
  private readonly maxMessageBytes: number;
  private readonly packing: PackLimits;
  private oversized = 0;

  constructor(private readonly options: KafkaBusOptions) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.packing = {
      ...DEFAULT_PACKING,
      ...options.packing,
      maxPackBytes: Math.min(
        options.packing?.maxPackBytes ?? DEFAULT_PACKING.maxPackBytes,
        this.maxMessageBytes,
      ),
    };
    stopIdleRequestQueueLoop();
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      connectionTimeout: 3_000,
      requestTimeout: 10_000,
      retry: { initialRetryTime: 100, retries: 3, maxRetryTime: 2_000 },
      logLevel: logLevel.WARN,
      logCreator: kafkaLogger(options.logger),
    });
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: true,
      createPartitioner: rememberingPartitioner,
      retry: { initialRetryTime: 100, retries: 3, maxRetryTime: 2_000 },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.producerConnected = undefined;
    });
    const logger = options.logger;
    const spill = options.spill && this.openSpill(options.spill);
    this.buffer = new PublishBuffer({
      maxBuffered: options.maxBuffered,
      spill,
      send: (batch) => this.send(batch),
      onError: (err, attempt) => {
        if (attempt === 1 || attempt % 20 === 0) {
          const { buffered, spilled } = this.buffer.stats();
          logger.warn('kafka publish failed; events kept in buffer', {
            attempt,
            buffered,
            spilled,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      },
      onDrop: (message) => logger.error('event buffer full; event dropped', { topic: message.topic }),
    });
  }

  private openSpill(settings: { dir: string; maxBytes?: number }): SpillFile {
    const logger = this.options.logger;
    const name = `${this.options.clientId.replace(/[^\w.-]/g, '_')}.spill`;
    const spill = new SpillFile({
      dir: settings.dir,
      name,
      maxBytes: settings.maxBytes,
      // Called from the constructor too, when the file cannot be opened.
      onError: (err, failures) =>
        logger.error('event spill file failed; events past the buffer are dropped', {
          dir: settings.dir,
          name,
          failures,
          error: err instanceof Error ? err.message : String(err),
        }),
    });
    if (spill.skippedBytes > 0) {
      logger.warn('event spill file ended in a torn record; dropped it', {
        path: spill.path,
        bytes: spill.skippedBytes,
      });
    }
    if (spill.recovered > 0) {
      logger.warn('sending events an earlier process left on disk', {
        path: spill.path,
        events: spill.recovered,
      });
    }
    return spill;
  }

  publish(message: OutgoingMessage): void {
    if (message.value.byteLength > this.maxMessageBytes) {
      this.oversized++;
      this.options.logger.error('event larger than the broker accepts; dropped', {
        topic: message.topic,
        bytes: message.value.byteLength,
        maxMessageBytes: this.maxMessageBytes,
      });
      return;
    }
    let topic = this.topics.get(message.topic);
    if (topic === undefined) {
      topic = this.prefix + message.topic;
      this.topics.set(message.topic, topic);
    }
    const traceContext = message.traceContext ?? activeTraceCarrier();
    this.buffer.push(
      traceContext
        ? { topic, key: message.key, value: message.value, traceContext }
        : { topic, key: message.key, value: message.value },
    );
  }

  private get prefix(): string {
    return this.options.topicPrefix ?? '';
  }

  private async connectProducer(): Promise<void> {
    this.producerConnected ??= this.producer.connect().catch((err: unknown) => {
      this.producerConnected = undefined;
      throw err;
    });
    await this.producerConnected;
  }

  private async send(batch: OutgoingMessage[]): Promise<void> {
    try {
      await this.connectProducer();
      await this.ensureTopics(batch.map((m) => m.topic));
      const byTopic = new Map<
        string,
        Array<{ key: string; value: Buffer; headers?: Record<string, string> }>
      >();
      for (const record of packRecords(batch, this.packing)) {
        let list = byTopic.get(record.topic);
        if (!list) byTopic.set(record.topic, (list = []));
        list.push(
          record.headers
            ? { key: record.key, value: record.value, headers: record.headers }
            : { key: record.key, value: record.value },
        );
      }
      await this.producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
    } catch (err) {
      // Start from a clean session next time: a broker restart can leave the producer stale.
      this.producerConnected = undefined;
      await this.producer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  /** Creates missing topics (with `topicPartitions`, else the broker's defaults); safe to call repeatedly. */
  async ensureTopics(topics: string[]): Promise<void> {
    const missing = [...new Set(topics)].filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) return;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const numPartitions = this.options.topicPartitions;
      await admin.createTopics({
        topics: missing.map((topic) => (numPartitions ? { topic, numPartitions } : { topic })),
        waitForLeaders: true,
      });
      for (const t of missing) this.knownTopics.add(t);
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * Starts a consumer. A broker that is away (or a consumer that crashes for good) does not
   * fail the caller: the consumer is started again with backoff until it runs or is stopped.
   */
  subscribe(options: SubscribeOptions): Promise<Subscription> {
    return this.consume(options, (stopped) => {
      const handle = async ({ topic, partition, message, heartbeat }: EachMessagePayload): Promise<void> => {
        const delivered = {
          topic: topic.slice(this.prefix.length),
          partition,
          offset: message.offset,
          key: message.key?.toString('utf8') ?? '',
        };
        const events = this.unpack(topic, message);
        // One by one, in order; a pack's offset is committed only after the last one.
        for (const event of events) {
          await this.retrying(delivered.topic, stopped, heartbeat, () =>
            options.handler({ ...delivered, ...event }),
          );
          if (events.length > 1) await heartbeat();
        }
      };
      return { autoCommit: true, eachMessage: handle };
    });
  }

  /**
   * As subscribe, handing over what one fetch brought of a partition in batches of at most
   * `maxMessages`. An offset is committed only once every message up to it has been handled.
   */
  subscribeBatches(options: SubscribeBatchOptions): Promise<Subscription> {
    const maxMessages = Math.max(1, Math.floor(options.maxMessages));
    return this.consume(options, (stopped) => {
      const handle = async (payload: EachBatchPayload): Promise<void> => {
        const { batch, heartbeat, resolveOffset, commitOffsetsIfNecessary, isRunning, isStale } = payload;
        const topic = batch.topic.slice(this.prefix.length);
        const pending: BusMessage[] = [];
        let unresolved: string | undefined;
        const handOver = async (messages: BusMessage[]) => {
          await this.retrying(topic, stopped, heartbeat, () => options.handler(messages));
          await heartbeat();
        };
        const resolve = async () => {
          if (unresolved === undefined) return;
          resolveOffset(unresolved);
          unresolved = undefined;
          await commitOffsetsIfNecessary();
        };
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) return;
          const key = message.key?.toString('utf8') ?? '';
          for (const event of this.unpack(batch.topic, message)) {
            pending.push({ topic, partition: batch.partition, offset: message.offset, key, ...event });
          }
          unresolved = message.offset;
          while (pending.length >= maxMessages) {
            await handOver(pending.splice(0, maxMessages));
            // A record packing several events is resolved once all of them are handled.
            if (pending.length === 0) await resolve();
          }
        }
        if (!isRunning() || isStale()) return;
        if (pending.length > 0) await handOver(pending.splice(0));
        await resolve();
      };
      return {
        autoCommit: true,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: Math.max(1, Math.floor(options.concurrency ?? 1)),
        eachBatch: handle,
      };
    });
  }

  /**
   * The events a record carries, with their trace contexts: itself, or those packed in it (none
   * when the pack is unreadable, logged).
   */
  private unpack(
    topic: string,
    message: KafkaMessage,
  ): Array<{ value: Buffer; traceContext?: TraceCarrier }> {
    const value = message.value ?? Buffer.alloc(0);
    const format = packFormat(message.headers);
    if (format === undefined) {
      const traceContext = recordTraceContext(message.headers);
      return [traceContext ? { value, traceContext } : { value }];
    }
    try {
      if (format !== PACK_FORMAT) throw new Error(`unknown pack format '${format}'`);
      const values = unpackRecord(value);
      const contexts = packTraceContexts(message.headers, values.length);
      return values.map((packed, i) => {
        const traceContext = contexts[i];
        return traceContext ? { value: packed, traceContext } : { value: packed };
      });
    } catch (err) {
      this.options.logger.error('skipping unreadable packed record', {
        topic,
        offset: message.offset,
        error: String(err),
      });
      return [];
    }
  }

  /** At-least-once: retries the handling with backoff until it succeeds, staying a live member of the group. */
  private async retrying(
    topic: string,
    stopped: () => boolean,
    heartbeat: () => Promise<void>,
    handle: () => Promise<void>,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await handle();
        return;
      } catch (err) {
        if (stopped()) throw err;
        if (attempt === 1 || attempt % 10 === 0) {
          this.options.logger.warn('event handler failed; retrying', { topic, attempt, error: String(err) });
        }
        await sleep(Math.min(5_000, 50 * 2 ** Math.min(attempt, 7)));
        // If a rebalance is under way this throws and the new owner handles the message.
        await heartbeat();
      }
    }
  }

  private async consume(
    options: { groupId: string; topics: string[]; fromBeginning?: boolean },
    runConfig: (stopped: () => boolean) => ConsumerRunConfig,
  ): Promise<Subscription> {
    const topics = options.topics.map((t) => this.prefix + t);
    const logger = this.options.logger;
    let consumer: Consumer | undefined;
    let stopped = false;
    let retryTimer: NodeJS.Timeout | undefined;
    const run = runConfig(() => stopped);

    const start = async (): Promise<void> => {
      await this.ensureTopics(topics);
      const next = this.kafka.consumer({
        groupId: this.prefix + options.groupId,
        // Short enough that a member lost with a crashed broker is replaced quickly.
        sessionTimeout: 10_000,
        heartbeatInterval: 1_000,
        // Bounds how long a stop waits for the fetch long-poll to return.
        maxWaitTimeInMs: 1_000,
        retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5_000 },
      });
      next.on(next.events.CRASH, (event) => {
        logger.warn('kafka consumer crashed', {
          groupId: options.groupId,
          error: String(event.payload.error),
          restart: event.payload.restart,
        });
        if (!event.payload.restart && !stopped) {
          consumer = undefined;
          void next.disconnect().catch(() => undefined);
          schedule(1);
        }
      });
      consumer = next;
      try {
        await next.connect();
        await next.subscribe({ topics, fromBeginning: options.fromBeginning ?? false });
        await next.run(run);
        this.consumers.add(next);
      } catch (err) {
        consumer = undefined;
        await next.disconnect().catch(() => undefined);
        throw err;
      }
    };

    const attempt = async (n: number): Promise<void> => {
      if (stopped) return;
      try {
        await start();
      } catch (err) {
        if (stopped) return;
        if (n === 0 || n % 10 === 0) {
          logger.warn('kafka consumer could not start; retrying', {
            groupId: options.groupId,
            error: String(err),
          });
        }
        schedule(n + 1);
      }
    };
    const schedule = (n: number) => {
      retryTimer = setTimeout(() => void attempt(n), Math.min(10_000, 250 * 2 ** Math.min(n, 6)));
      retryTimer.unref();
    };

    await attempt(0);
    return {
      stop: async () => {
        stopped = true;
        clearTimeout(retryTimer);
        if (consumer) {
          this.consumers.delete(consumer);
          await consumer.disconnect();
        }
      },
    };
  }

  flush(timeoutMs?: number): Promise<void> {
    return this.buffer.flush(timeoutMs);
  }

  async check(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.describeCluster();
    } finally {
      await admin.disconnect();
    }
  }

  stats(): PublishStats {
    const stats = this.buffer.stats();
    return { ...stats, dropped: stats.dropped + this.oversized };
  }

  async close(timeoutMs = 10_000): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.disconnect().catch(() => undefined)));
    await this.buffer.close(timeoutMs);
    await this.producer.disconnect().catch(() => undefined);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
