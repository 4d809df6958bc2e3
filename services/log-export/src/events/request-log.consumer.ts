import { Topics, subscribeEvents, type EventBus, type Logger, type Subscription } from '@switchyard/platform';
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
      await logs.record(event);
    },
  });
}
