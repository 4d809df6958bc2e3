import type { TraceCarrier } from '@switchyard/core';

export interface BusMessage {
  topic: string;
  key: string;
  value: Uint8Array;
  partition: number;
  offset: string;
  /** The W3C trace context the event was published in, when its publisher traced. */
  traceContext?: TraceCarrier;
}

export interface OutgoingMessage {
  topic: string;
  key: string;
  value: Uint8Array;
  /**
   * The trace context to send with the event. Left out, the bus takes the active context's
   * while tracing is on (see activeTraceCarrier).
   */
  traceContext?: TraceCarrier;
}

export type MessageHandler = (message: BusMessage) => Promise<void>;

/** Handles consecutive messages of one partition together; none of them is committed before it resolves. */
export type BatchHandler = (messages: BusMessage[]) => Promise<void>;

export interface SubscribeOptions {
  groupId: string;
  topics: string[];
  /** A new consumer group starts at the oldest retained message instead of the newest. */
  fromBeginning?: boolean;
  handler: MessageHandler;
}

export interface SubscribeBatchOptions {
  groupId: string;
  topics: string[];
  /** A new consumer group starts at the oldest retained message instead of the newest. */
  fromBeginning?: boolean;
  /**
   * The most messages handed over at once. A batch is what has arrived, up to this many: the
   * bus never waits for more to fill it.
   */
  maxMessages: number;
  /** Batches of this many partitions handled at once (each partition's in order); 1 by default. */
  concurrency?: number;
  handler: BatchHandler;
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface PublishStats {
  /** Messages waiting in memory. */
  buffered: number;
  /** Messages waiting on local disk, past the memory bound (see spill-file.ts). */
  spilled: number;
  published: number;
  dropped: number;
  failedAttempts: number;
}

/**
 * Events between services. publish() never blocks and never throws: messages wait in a
 * bounded buffer until the broker takes them. Delivery to subscribers is at-least-once,
 * so handlers must be idempotent.
 */
export interface EventBus {
  publish(message: OutgoingMessage): void;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** As subscribe, handing over what has arrived in batches (a failing batch is retried whole). */
  subscribeBatches(options: SubscribeBatchOptions): Promise<Subscription>;
  /** Resolves when everything published so far has been accepted, or after timeoutMs. */
  flush(timeoutMs?: number): Promise<void>;
  check(): Promise<void>;
  stats(): PublishStats;
  close(): Promise<void>;
}
