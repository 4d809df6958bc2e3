import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  limitCountersFor,
  MemoryLimitCounterStore,
  type LimitCounterStore,
  type Subscription,
} from '@switchyard/adapters';
import { env, loadConfig } from '@switchyard/core';
import { need, onChanges, type ServiceDefinition } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import { PolicyDirectory } from './clients/policy-directory.ts';
import { LimitEnforcer } from './domain/limit-enforcer.ts';
import { UsageLedger } from './domain/usage-ledger.ts';
import { policyCallers, policyHandlers } from './grpc/policy.handlers.ts';
import { usageLedgerCallers, usageLedgerHandlers } from './grpc/usage-ledger.handlers.ts';
import { limitMetrics } from './limit-metrics.ts';

const failureMode = (fallback: 'open' | 'closed') => env.string(fallback).pipe(z.enum(['open', 'closed']));

const configSchema = z.object({
  RATE_LIMIT_FAILURE_MODE: failureMode('open').meta({
    description:
      'what rate limit policies do while Redis cannot be reached: `open` decides with a limiter in each process holding the same limits, `closed` refuses (the gateway answers 503)',
  }),
  USAGE_LIMIT_FAILURE_MODE: failureMode('closed').meta({
    description:
      'what usage limit policies do while Redis cannot be reached: `closed` refuses (the gateway answers 503), `open` decides with a limiter in each process holding the same limits',
  }),
  LIMIT_STORE_TIMEOUT_MS: env.int(100, 1, 10_000).meta({
    description: 'deadline of each Redis call of a limit check; past it the failure modes decide',
  }),
});

export interface PolicyServiceOptions {
  /** The shared limit counters; by default those that go with the service's key-value store. */
  counters?: LimitCounterStore;
  /** The clock of windows and periods (tests move it). */
  now?: () => number;
}

/**
 * Rate and usage limits: counts each request against the organisation's policies in Redis,
 * answers the gateway's check, and the management API's usage questions.
 */
export function createPolicyService(options: PolicyServiceOptions = {}): ServiceDefinition {
  return {
    name: 'policy',
    bus: true,
    kv: true,
    // Without Redis the failure modes decide, and the service recovers when it is back; without
    // control-plane it serves the policies it last read.
    toleratesOutageOf: ['kv', 'policyDirectory'],
    clients: ['policyDirectory'],
    settings: configSchema,
    async create({ bus, kv, clients, env: processEnv, logger, metrics }) {
      const config = loadConfig(configSchema, processEnv);
      const counters =
        options.counters ??
        limitCountersFor(need(kv, 'key-value store'), { timeoutMs: config.LIMIT_STORE_TIMEOUT_MS });
      const local = new MemoryLimitCounterStore(options.now);
      const directory = new PolicyDirectory(
        need(clients.policyDirectory, 'policy directory client'),
        logger,
        {
          now: options.now,
        },
      );
      const failureModes = {
        rate_limit: config.RATE_LIMIT_FAILURE_MODE,
        usage_limit: config.USAGE_LIMIT_FAILURE_MODE,
      };
      const enforcer = new LimitEnforcer({
        policies: directory,
        counters,
        local,
        failureModes,
        observer: limitMetrics(metrics.registry),
        logger,
        now: options.now,
        newId: randomUUID,
      });
      const ledger = new UsageLedger({ policies: directory, counters, failureModes, now: options.now });
      let subscription: Subscription | undefined;
      return {
        grpc: (server) =>
          server
            .add(policy.PolicyService, policyHandlers(enforcer), policyCallers)
            .add(policy.UsageLedgerService, usageLedgerHandlers(ledger), usageLedgerCallers),
        async start() {
          subscription = await onChanges(need(bus, 'event bus'), logger, 'policy', (change) => {
            if (change.entity === 'policy' && change.organisationId)
              directory.invalidate(change.organisationId);
          });
        },
        async stop() {
          await subscription?.stop();
          local.close();
        },
      };
    },
  };
}

export const policyService = createPolicyService();
