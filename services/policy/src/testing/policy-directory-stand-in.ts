import { randomUUID } from 'node:crypto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { createLogger } from '@switchyard/core';
import { GrpcServer } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';

export type PolicyInit = MessageInitShape<typeof policy.PolicyDefinitionSchema>;
type Overrides = Partial<Omit<policy.PolicyDefinition, '$typeName' | '$unknown' | 'conditions'>> & {
  conditions?: Array<{ key: string; value: string; excludes?: boolean }>;
};

/** Control-plane's PolicyDirectoryService as a test chooses: the policies of each organisation. */
export async function startPolicyDirectoryStandIn() {
  const logger = createLogger('policy-directory-stand-in');
  logger.silent = true;
  const policies = new Map<string, PolicyInit[]>();
  const state = { calls: 0, failing: false };
  const server = new GrpcServer({ logger, security: {} });
  server.add(
    policy.PolicyDirectoryService,
    {
      listPolicies: async ({ organisationId }) => {
        state.calls++;
        if (state.failing) throw new Error('control-plane is away');
        return { policies: policies.get(organisationId) ?? [] };
      },
    },
    { listPolicies: ['policy'] },
  );
  const port = await server.listen('127.0.0.1', 0);
  return {
    address: `127.0.0.1:${port}`,
    policies,
    state,
    close: () => server.close(),
  };
}

/** A rate limit policy counting requests per API key, unless the test says otherwise. */
export function ratePolicy(organisationId: string, overrides: Overrides = {}): PolicyInit {
  return {
    id: randomUUID(),
    name: 'Requests per minute',
    kind: policy.PolicyKind.RATE_LIMIT,
    organisationId,
    groupBy: ['api_key'],
    type: 'requests',
    target: 'llm',
    unit: 'rpm',
    value: 5,
    ...overrides,
  } as PolicyInit;
}

/** A monthly usage limit policy counting cost per API key, unless the test says otherwise. */
export function usagePolicy(organisationId: string, overrides: Overrides = {}): PolicyInit {
  return {
    id: randomUUID(),
    name: 'Monthly budget',
    kind: policy.PolicyKind.USAGE_LIMIT,
    organisationId,
    groupBy: ['api_key'],
    type: 'cost',
    target: 'llm',
    creditLimit: 1,
    periodicReset: 'monthly',
    ...overrides,
  } as PolicyInit;
}

/** A clock the test moves: windows and periods follow it. */
export function testClock(startMs: number) {
  const clock = { ms: startMs, now: () => clock.ms };
  return clock;
}
