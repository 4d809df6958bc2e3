import { postgresErrorCode, type Logger } from '@switchyard/core';
import { Topics, subscribeEventBatches, type EventBus, type Subscription } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { RequestLogService } from '../domain/request-logs.ts';

/** The most logs stored in one statement: larger batches gain little and hold a transaction longer. */
export const REQUEST_LOG_BATCH = 500;

/**
 * One consumer group for all replicas: each request log is stored by exactly one of them (at
 * least once). Logs are stored a batch at a time, what has arrived up to REQUEST_LOG_BATCH;
 * the batch's offsets are committed only once it is stored. Batches of up to `concurrency`
 * partitions are stored at once.
 */
export function consumeRequestLogs(
  bus: EventBus,
  logger: Logger,
  logs: RequestLogService,
  concurrency = 1,
): Promise<Subscription> {
  return subscribeEventBatches(bus, logger, {
    groupId: 'log-export.request-logs',
    topic: Topics.requestLogs,
    schema: events.RequestLogEventSchema,
    maxEvents: REQUEST_LOG_BATCH,
    concurrency,
    handler: async (batch) => {
      try {
        await logs.recordAll(batch);
        return;
      } catch (err) {
        if (!isInvalidData(err)) throw err;
      }
      // A row the database rejects fails its batch: the others are stored one by one, without it.
      for (const event of batch) {
        try {
          await logs.record(event);
        } catch (err) {
          // Retrying cannot help an event the database rejects as invalid, and would hold back every later log.
          if (!isInvalidData(err)) throw err;
          logger.error('skipping request log the database rejects', { id: event.id, error: String(err) });
        }
      }
    },
  });
}

/** Postgres data exceptions (class 22) and integrity violations (class 23): the row itself is at fault. */
export function isInvalidData(err: unknown): boolean {
  const code = postgresErrorCode(err);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}
