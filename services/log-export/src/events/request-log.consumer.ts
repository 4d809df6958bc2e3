import { postgresErrorCode, type Logger } from '@switchyard/core';
import { Topics, subscribeEvents, type EventBus, type Subscription } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { RequestLogService } from '../domain/request-logs.ts';

/** One consumer group for all replicas: each request log is stored by exactly one of them (at least once). */
export function consumeRequestLogs(
  bus: EventBus,
  logger: Logger,
  logs: RequestLogService,
): Promise<Subscription> {
  return subscribeEvents(bus, logger, {
    groupId: 'log-export.request-logs',
    topic: Topics.requestLogs,
    schema: events.RequestLogEventSchema,
    handler: async (event) => {
      try {
        await logs.record(event);
      } catch (err) {
        // Retrying cannot help an event the database rejects as invalid, and would hold back every later log.
        if (!isInvalidData(err)) throw err;
        logger.error('skipping request log the database rejects', { id: event.id, error: String(err) });
      }
    },
  });
}

/** Postgres data exceptions (class 22) and integrity violations (class 23): the row itself is at fault. */
export function isInvalidData(err: unknown): boolean {
  const code = postgresErrorCode(err);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}
