import {
  Topics,
  need,
  subscribeEvents,
  type ServiceDefinition,
  type Subscription,
} from '@switchyard/platform';
import { events, policy } from '@switchyard/proto';
import { UsageCounter } from './domain/usage-counter.ts';
import { policyCallers, policyHandlers } from './grpc/policy.handlers.ts';

/** Rate-limit windows and usage counters (Redis); answers the gateway's policy check. */
export const policyService: ServiceDefinition = {
  name: 'policy',
  bus: true,
  kv: true,
  async create({ bus, kv, logger }) {
    const counter = new UsageCounter(need(kv, 'key-value store'));
    let subscription: Subscription | undefined;
    return {
      grpc: (server) => server.add(policy.PolicyService, policyHandlers(), policyCallers),
      async start() {
        subscription = await subscribeEvents(need(bus, 'event bus'), logger, {
          groupId: 'policy.usage',
          topic: Topics.usage,
          schema: events.UsageEventSchema,
          handler: async (event) => {
            await counter.record(event);
          },
        });
      },
      async stop() {
        await subscription?.stop();
      },
    };
  },
};
