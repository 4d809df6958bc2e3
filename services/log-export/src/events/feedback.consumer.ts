import { postgresErrorCode, type Logger } from '@switchyard/core';
import { Topics, subscribeEvents, type EventBus, type Subscription } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { Feedback, FeedbackRepository } from '../store/feedback.repository.ts';

/**
 * One consumer group for all replicas: each feedback event is applied by one of them (at
 * least once). The stored row keeps the newest version, so a redelivered or late event is
 * harmless.
 */
export function consumeFeedback(
  bus: EventBus,
  logger: Logger,
  repo: Pick<FeedbackRepository, 'upsertNewest'>,
): Promise<Subscription> {
  return subscribeEvents(bus, logger, {
    groupId: 'log-export.feedback',
    topic: Topics.feedback,
    schema: events.FeedbackEventSchema,
    handler: async (event) => {
      const feedback = feedbackOf(event);
      if (!feedback) {
        logger.error('skipping feedback event without an id, organisation, trace id or metadata object', {
          id: event.id,
        });
        return;
      }
      try {
        await repo.upsertNewest(feedback);
      } catch (err) {
        // Retrying cannot help an event the database rejects as invalid, and would hold back every later one.
        if (!isInvalidData(err)) throw err;
        logger.error('skipping feedback event the database rejects', { id: event.id, error: String(err) });
      }
    },
  });
}

/** The row an event stands for; null when it lacks what a row needs. */
export function feedbackOf(event: events.FeedbackEvent): Feedback | null {
  if (!event.id || !event.organisationId || !event.traceId) return null;
  let metadata: unknown = {};
  if (event.metadataJson) {
    try {
      metadata = JSON.parse(event.metadataJson);
    } catch {
      return null;
    }
  }
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return null;
  const createdAt = new Date(Number(event.createdAtMs));
  return {
    id: event.id,
    organisationId: event.organisationId,
    workspaceId: event.workspaceId || null,
    traceId: event.traceId,
    value: event.value,
    weight: event.weight,
    metadata: metadata as Record<string, unknown>,
    version: event.version,
    createdBy: event.createdBy,
    createdAt,
    updatedAt: event.updatedAtMs ? new Date(Number(event.updatedAtMs)) : createdAt,
  };
}

/** Postgres data exceptions (class 22) and integrity violations (class 23): the row itself is at fault. */
function isInvalidData(err: unknown): boolean {
  const code = postgresErrorCode(err);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}
