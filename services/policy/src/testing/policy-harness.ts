import { randomUUID } from 'node:crypto';
import { MemoryLimitCounterStore, publishChange, type LimitCounterStore } from '@switchyard/adapters';
import type { policy } from '@switchyard/proto';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { createPolicyService } from '../service.ts';
import { startPolicyDirectoryStandIn, testClock, type PolicyInit } from './policy-directory-stand-in.ts';

type RequestOverrides = Partial<
  Pick<
    policy.CheckRequest,
    | 'organisationId'
    | 'workspaceId'
    | 'apiKeyId'
    | 'userId'
    | 'provider'
    | 'model'
    | 'metadata'
    | 'target'
    | 'lease'
    | 'mcpServer'
    | 'toolName'
  >
>;

export interface PolicyHarnessOptions {
  /** The shared counters; by default in memory on the test clock. */
  counters?: LimitCounterStore;
  env?: Record<string, string>;
  startMs?: number;
}

/**
 * The policy service on the test harness, reading its policies from a stand-in directory,
 * with a clock the test moves. Each test uses an organisation of its own (`organisation()`).
 */
export async function startPolicyHarness(options: PolicyHarnessOptions = {}) {
  const directory = await startPolicyDirectoryStandIn();
  const clock = testClock(options.startMs ?? Date.UTC(2026, 2, 14, 12, 30, 15));
  const counters = options.counters ?? new MemoryLimitCounterStore(clock.now);
  let h: ServiceHarness;
  try {
    h = await startServiceHarness({
      services: [createPolicyService({ counters, now: clock.now })],
      clientAddresses: { policyDirectory: directory.address },
      env: options.env,
    });
  } catch (err) {
    await directory.close();
    throw err;
  }
  const gateway = h.client('policy');
  const ledger = h.client('usageLedger', 'control-plane');

  /** A new organisation, with these policies and one workspace key. */
  function organisation(...policies: Array<(organisationId: string) => PolicyInit>) {
    const organisationId = randomUUID();
    const defined = policies.map((make) => make(organisationId));
    directory.policies.set(organisationId, defined);
    const request = (overrides: RequestOverrides = {}, tokens = 0, cost = 0) => ({
      organisationId,
      workspaceId: workspaceId,
      apiKeyId,
      provider: 'openai',
      model: 'gpt-4o-mini',
      metadata: {},
      target: 'llm',
      estimate: { tokens, cost },
      ...overrides,
    });
    const workspaceId = randomUUID();
    const apiKeyId = randomUUID();
    return {
      organisationId,
      workspaceId,
      apiKeyId,
      policies: defined,
      request,
      check: (overrides: RequestOverrides = {}, estimate: { tokens?: number; cost?: number } = {}) =>
        gateway.check(request(overrides, estimate.tokens ?? 0, estimate.cost ?? 0)),
      /** A tool call's check, as the MCP gateway asks: no provider or model, the server and the tool. */
      checkTool: (mcpServer: string, toolName: string, cost = 0) =>
        gateway.check(
          request({ target: 'mcp_tools', provider: '', model: '', mcpServer, toolName }, 0, cost),
        ),
      accrue: (
        reservation: policy.Reservation | undefined,
        used: { tokens?: number; cost?: number },
        final: boolean,
      ) =>
        gateway.accrue({
          organisationId,
          reservation,
          used: { tokens: used.tokens ?? 0, cost: used.cost ?? 0 },
          final,
        }),
      /** Replaces the organisation's policies and says so, as control-plane does on a write. */
      async change(next: PolicyInit[]) {
        directory.policies.set(organisationId, next);
        publishChange(h.bus, {
          id: randomUUID(),
          entity: 'policy',
          entityId: next[0]?.id ?? '',
          organisationId,
          action: events.ChangeAction.UPDATED,
        });
        await h.bus.flush();
      },
    };
  }

  return {
    h,
    directory,
    clock,
    gateway,
    ledger,
    organisation,
    async close() {
      await h.close();
      await directory.close();
    },
  };
}

export type PolicyHarness = Awaited<ReturnType<typeof startPolicyHarness>>;
