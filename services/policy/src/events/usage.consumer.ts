import type { Logger } from '@switchyard/core';
import { Topics, subscribeEvents, type EventBus, type Subscription } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import type { UsageCounter } from '../domain/usage-counter.ts';

/** One consumer group for all replicas: each usage event is counted by one of them (at least once, once per id). */
export function consumeUsageEvents(
  bus: EventBus,
  logger: Logger,
  counter: UsageCounter,
): Promise<Subscription> {
  return subscribeEvents(bus, logger, {
    groupId: 'policy.usage',
    topic: Topics.usage,
    schema: events.UsageEventSchema,
    handler: async (event) => {
      await counter.record(event);
    },
  });
}
