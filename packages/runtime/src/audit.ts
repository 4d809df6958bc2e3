import { randomUUID } from 'node:crypto';
import { events } from '@switchyard/proto';
import { type AuditSink, isScope, READS, scopePlane } from '@switchyard/access';
import { type EventBus, publishEvent, Topics } from '@switchyard/adapters';
import type { Logger } from '@switchyard/core';
import type { DeclaredRoute } from './scoped-router.ts';

function isManagementWrite(route: DeclaredRoute): boolean {
  if (route.method === 'ALL') {
    return route.examples.some((e) => !READS.has(e.method) && scopePlane(e.scope) !== 'data');
  }
  if (READS.has(route.method)) return false;
  return route.scope === null || !isScope(route.scope) || scopePlane(route.scope) !== 'data';
}

/**
 * The audit sink the runtime gives a service: its events go on the service's bus. A service
 * that serves management writes without a bus is a wiring error, not a silent gap.
 */
export function serviceAuditSink(
  service: string,
  routes: DeclaredRoute[] | undefined,
  bus: EventBus | undefined,
  logger: Logger,
): AuditSink | undefined {
  // A service without management writes (the gateway) gets no sink, and no step per request.
  if (!(routes ?? []).some(isManagementWrite)) return undefined;
  if (!bus) {
    throw new Error(
      `service wiring error: ${service} serves management writes, and its audit trail needs the event bus`,
    );
  }
  return busAuditSink(bus, service, logger);
}

/**
 * Publishes each entry as an AuditEvent keyed by organisation on the asynchronous bus
 * (publish buffers and never blocks); anything that goes wrong is logged, never thrown: a
 * failing bus does not fail the request, which has been answered by then anyway.
 */
export function busAuditSink(bus: EventBus, service: string, logger: Logger): AuditSink {
  return (entry) => {
    try {
      publishEvent(bus, Topics.audit, events.AuditEventSchema, entry.organisationId, {
        ...entry,
        id: randomUUID(),
        service,
      });
    } catch (err) {
      logger.error('could not publish audit event', {
        method: entry.method,
        route: entry.route,
        error: String(err),
      });
    }
  };
}
