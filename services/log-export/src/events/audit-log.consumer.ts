import type { Logger } from '@switchyard/core';
import { Topics, subscribeEvents, type EventBus, type Subscription } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { AuditLogService } from '../domain/audit-logs.ts';
import { isInvalidData } from './request-log.consumer.ts';

/** One consumer group for all replicas: each audit event is stored by one of them (at least once, once per id). */
export function consumeAuditEvents(
  bus: EventBus,
  logger: Logger,
  audit: AuditLogService,
): Promise<Subscription> {
  return subscribeEvents(bus, logger, {
    groupId: 'log-export.audit',
    topic: Topics.audit,
    schema: events.AuditEventSchema,
    handler: async (event) => {
      try {
        await audit.record(event);
      } catch (err) {
        // Retrying cannot help an event the database rejects as invalid, and would hold back every later entry.
        if (!isInvalidData(err)) throw err;
        logger.error('skipping audit event the database rejects', { id: event.id, error: String(err) });
      }
    },
  });
}
