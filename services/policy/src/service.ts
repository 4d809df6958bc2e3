import type { Subscription } from '@switchyard/adapters';
import { need, type ServiceDefinition } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import { UsageCounter } from './domain/usage-counter.ts';
import { consumeUsageEvents } from './events/usage.consumer.ts';
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
        subscription = await consumeUsageEvents(need(bus, 'event bus'), logger, counter);
      },
      async stop() {
        await subscription?.stop();
      },
    };
  },
};
