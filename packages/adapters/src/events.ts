import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import { events } from '@switchyard/proto';
import type { Logger } from '@switchyard/core';
import { processInSpan } from './bus/consumer-span.ts';
import type { BusMessage, EventBus, Subscription } from './bus/event-bus.ts';

export const Topics = {
  requestLogs: 'switchyard.request-logs.v1',
  usage: 'switchyard.usage.v1',
  changes: 'switchyard.changes.v1',
  /** Management writes, keyed by organisation. */
  audit: 'switchyard.audit.v1',
  /** Feedback on requests as written through the API, keyed by trace id. */
  feedback: 'switchyard.feedback.v1',
} as const;

export function publishEvent<D extends DescMessage>(
  bus: EventBus,
  topic: string,
  schema: D,
  key: string,
  message: MessageInitShape<D>,
): void {
  bus.publish({ topic, key, value: toBinary(schema, create(schema, message)) });
}

export interface EventSubscription<D extends DescMessage> {
  groupId: string;
  topic: string;
  schema: D;
  fromBeginning?: boolean;
  handler: (event: MessageShape<D>, message: BusMessage) => Promise<void>;
}

/**
 * Decodes each message with its schema; an undecodable message is logged and skipped. Each is
 * handled in a consumer span, the child of its publisher's (see processInSpan).
 */
export function subscribeEvents<D extends DescMessage>(
  bus: EventBus,
  logger: Logger,
  options: EventSubscription<D>,
): Promise<Subscription> {
  return bus.subscribe({
    groupId: options.groupId,
    topics: [options.topic],
    fromBeginning: options.fromBeginning ?? true,
    handler: (message) =>
      processInSpan(options.groupId, 'message', [message], async () => {
        let event: MessageShape<D>;
        try {
          event = fromBinary(options.schema, message.value);
        } catch (err) {
          logger.error('skipping undecodable event', {
            topic: message.topic,
            offset: message.offset,
            error: String(err),
          });
          return;
        }
        await options.handler(event, message);
      }),
  });
}

export interface EventBatchSubscription<D extends DescMessage> {
  groupId: string;
  topic: string;
  schema: D;
  fromBeginning?: boolean;
  /** The most events handed over at once (see SubscribeBatchOptions). */
  maxEvents: number;
  /** Batches of this many partitions handled at once (see SubscribeBatchOptions). */
  concurrency?: number;
  /** Gets the decodable events of a batch, in order; none is committed before it resolves. */
  handler: (events: Array<MessageShape<D>>) => Promise<void>;
}

/**
 * As subscribeEvents, in batches: an undecodable message is logged and left out of its batch.
 * Each batch is handled in a consumer span linked to its events' publishers (see processInSpan).
 */
export function subscribeEventBatches<D extends DescMessage>(
  bus: EventBus,
  logger: Logger,
  options: EventBatchSubscription<D>,
): Promise<Subscription> {
  return bus.subscribeBatches({
    groupId: options.groupId,
    topics: [options.topic],
    fromBeginning: options.fromBeginning ?? true,
    maxMessages: options.maxEvents,
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    handler: (messages) =>
      processInSpan(options.groupId, 'batch', messages, async () => {
        const decoded: Array<MessageShape<D>> = [];
        for (const message of messages) {
          try {
            decoded.push(fromBinary(options.schema, message.value));
          } catch (err) {
            logger.error('skipping undecodable event', {
              topic: message.topic,
              offset: message.offset,
              error: String(err),
            });
          }
        }
        if (decoded.length > 0) await options.handler(decoded);
      }),
  });
}

export function publishChange(
  bus: EventBus,
  change: MessageInitShape<typeof events.ChangeEventSchema>,
): void {
  publishEvent(bus, Topics.changes, events.ChangeEventSchema, change.entityId ?? '', {
    occurredAtMs: String(Date.now()),
    ...change,
  });
}
