import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ServiceUnavailable, createLogger, createMetrics } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { createGrpcClient } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import { TcpRelay, deferred } from '@switchyard/core/testing';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { gatewayService } from '../service.ts';
import {
  startGatewayWithStandIns,
  startIdentityStandIn,
  startOrganisationSettingsStandIn,
  newPrincipal,
  startPolicyStandIn,
  unusedAddress,
  type PolicyStandIn,
} from '../testing/policy-stand-ins.ts';
import { PolicyGate } from './policy-gate.ts';

const logger = createLogger('test');
logger.silent = true;

type Decide = PolicyStandIn['state']['decide'];

/** What the gate is asked about a request of `who` to the openai gpt-4o model. */
function ask(who: Principal, metadata: Record<string, string>, estimate = { tokens: 100, cost: 0.001 }) {
  return {
    principal: who,
    provider: 'openai',
    model: 'gpt-4o',
    metadata,
    requestId: 'req-1',
    estimate: () => estimate,
  };
}

const principal = newPrincipal();
const workspaceKey = 'sy-workspace-key-for-policy-tests-0000';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const deny =
  (retryAfterSeconds = 0): Decide =>
  async () => ({
    decision: policy.Decision.DENY,
    code: 'budget_exhausted',
    message: 'The monthly budget is used up.',
    retryAfterSeconds,
  });

describe('PolicyGate', () => {
  let standIn: PolicyStandIn;
  const clients: Array<{ close(): void }> = [];

  before(async () => {
    standIn = await startPolicyStandIn();
  });
  after(async () => {
    clients.forEach((c) => c.close());
    await standIn.close();
  });

  function gate(address: string, options: { failOpen: boolean; timeoutMs?: number }) {
    const client = createGrpcClient(policy.PolicyService, {
      address,
      target: 'policy',
      security: {},
      caller: 'gateway',
    });
    clients.push(client);
    return new PolicyGate(client, logger, {
      // Generous unless a test is about the deadline: a fresh channel's first call on a loaded machine can take longer than the production 250 ms.
      timeoutMs: options.timeoutMs ?? 5_000,
      failOpen: options.failOpen,
    });
  }

  test('lets an allowed request through, asking about its caller, provider, model and metadata', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    await gate(standIn.address, { failOpen: false }).check(ask(principal, { team: 'search' }));
    const asked = standIn.checks.at(-1)!;
    assert.equal(asked.organisationId, principal.organisationId);
    assert.equal(asked.workspaceId, principal.workspaceId);
    assert.equal(asked.apiKeyId, principal.apiKeyId);
    assert.equal(asked.provider, 'openai');
    assert.equal(asked.model, 'gpt-4o');
    assert.deepEqual(asked.metadata, { team: 'search' });
  });

  test('skips the call while the policy service says nothing applies to the key, then asks again', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW, skipChecksForMs: 150 });
    const g = gate(standIn.address, { failOpen: false });
    const before = standIn.checks.length;
    await g.check(ask(principal, {}));
    await g.check(ask(principal, {}));
    await g.check(ask(principal, {}));
    assert.equal(standIn.checks.length - before, 1);
    await sleep(200);
    await g.check(ask(principal, {}));
    assert.equal(standIn.checks.length - before, 2);
  });

  test('a policy change ends the skip at once', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW, skipChecksForMs: 60_000 });
    const g = gate(standIn.address, { failOpen: false });
    await g.check(ask(principal, {}));
    standIn.state.decide = deny(3);
    g.policiesChanged();
    await assert.rejects(g.check(ask(principal, {})), { status: 429 });
  });

  test('a key is not skipped because of another key', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW, skipChecksForMs: 60_000 });
    const g = gate(standIn.address, { failOpen: false });
    await g.check(ask(principal, {}));
    standIn.state.decide = deny(3);
    await assert.rejects(g.check(ask({ ...principal, apiKeyId: randomUUID() }, {})), {
      status: 429,
    });
  });

  test('a tool call is asked about with target mcp_tools, its server and tool; skipping model calls does not skip it', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW, skipChecksForMs: 60_000 });
    const g = gate(standIn.address, { failOpen: false });
    const who = newPrincipal();
    await g.check(ask(who, {}));
    const asked = standIn.checks.at(-1)!;
    assert.equal(asked.target, 'llm');
    standIn.state.decide = deny(4);
    await assert.rejects(
      g.check({
        ...ask(who, {}, { tokens: 0, cost: 0.2 }),
        provider: 'mcp',
        model: 'search',
        target: 'mcp_tools',
        mcpServer: 'crm',
        toolName: 'search',
      }),
      { status: 429, headers: { 'retry-after': '4' } },
    );
    const toolCheck = standIn.checks.at(-1)!;
    assert.equal(toolCheck.target, 'mcp_tools');
    assert.equal(toolCheck.mcpServer, 'crm');
    assert.equal(toolCheck.toolName, 'search');
    assert.equal(toolCheck.estimate?.cost, 0.2);
    // The key's model calls are still skipped.
    const before = standIn.checks.length;
    await g.check(ask(who, {}));
    assert.equal(standIn.checks.length, before);
  });

  test('turns a DENY into a 429 carrying retry-after and the policy’s code and message', async () => {
    standIn.state.decide = deny(7);
    await assert.rejects(gate(standIn.address, { failOpen: true }).check(ask(principal, {})), {
      status: 429,
      code: 'budget_exhausted',
      message: 'The monthly budget is used up.',
      headers: { 'retry-after': '7' },
    });
  });

  test('a DENY without a retry time still asks the client to wait a second', async () => {
    standIn.state.decide = deny(0);
    await assert.rejects(gate(standIn.address, { failOpen: true }).check(ask(principal, {})), {
      status: 429,
      headers: { 'retry-after': '1' },
    });
  });

  test('a policy service that is down lets requests through when failing open', async () => {
    await gate(await unusedAddress(), { failOpen: true }).check(ask(principal, {}));
  });

  test('a policy service that is down is a 503 when not failing open', async () => {
    await assert.rejects(gate(await unusedAddress(), { failOpen: false }).check(ask(principal, {})), {
      status: 503,
    });
  });

  test('a check cut off by a replica that goes away is asked again of another, within the deadline', async (t) => {
    const dying = await startPolicyStandIn();
    const released = deferred();
    t.after(async () => {
      released.resolve();
      await dying.close();
    });
    // The dying replica is reached through a relay, so that its connections can be cut mid-call.
    const relay = new TcpRelay({ host: '127.0.0.1', port: Number(dying.address.split(':')[1]) });
    await relay.start();
    dying.state.decide = async () => {
      setImmediate(() => void relay.stop());
      await released.promise;
      return { decision: policy.Decision.DENY };
    };
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    const before = standIn.checks.length;
    const gated = gate(`127.0.0.1:${relay.port},${standIn.address}`, { failOpen: false });
    // Round-robin: within a few checks one lands on the dying replica; none may fail.
    for (let i = 0; i < 4; i++) await gated.check(ask(principal, {}));
    assert.equal(dying.checks.length, 1, 'the dying replica was asked once, and cut off');
    assert.equal(standIn.checks.length - before, 4, 'every check was answered by the other replica');
  });

  test('a policy service slower than the deadline counts as down', async () => {
    standIn.state.decide = async () => {
      await sleep(1_000);
      return { decision: policy.Decision.DENY };
    };
    const started = performance.now();
    await gate(standIn.address, { failOpen: true, timeoutMs: 100 }).check(ask(principal, {}));
    assert.ok(performance.now() - started < 800, 'waited for the slow answer');
    await assert.rejects(
      gate(standIn.address, { failOpen: false, timeoutMs: 100 }).check(ask(principal, {})),
      { status: 503 },
    );
  });
});

describe('PolicyGate when the policy service cannot answer', () => {
  test('decides from the limits last seen for the key, and counts each decision by kind and mode', async () => {
    const standIn = await startPolicyStandIn();
    const client = createGrpcClient(policy.PolicyService, {
      address: standIn.address,
      target: 'policy',
      security: {},
      caller: 'gateway',
    });
    const metrics = createMetrics();
    const g = new PolicyGate(client, logger, { timeoutMs: 5_000, failOpen: true, metrics });
    try {
      const rateKey = { ...principal, apiKeyId: randomUUID() };
      const closedKey = { ...principal, apiKeyId: randomUUID() };
      const windowEnd = Math.ceil((Date.now() + 1) / 3_600_000) * 3_600_000;
      standIn.state.decide = async (request) => ({
        decision: policy.Decision.ALLOW,
        limits: [
          {
            policyId: request.apiKeyId === rateKey.apiKeyId ? 'pol-rph' : 'pol-budget',
            kind:
              request.apiKeyId === rateKey.apiKeyId
                ? policy.PolicyKind.RATE_LIMIT
                : policy.PolicyKind.USAGE_LIMIT,
            type: request.apiKeyId === rateKey.apiKeyId ? 'tokens' : 'cost',
            limit: 250,
            remaining: 250,
            resetAtMs: String(request.apiKeyId === rateKey.apiKeyId ? windowEnd : 0),
            failureMode:
              request.apiKeyId === rateKey.apiKeyId ? policy.FailureMode.OPEN : policy.FailureMode.CLOSED,
            valueKey: 'api_key:x',
          },
        ],
      });
      await g.check(ask(rateKey, {}));
      await g.check(ask(closedKey, {}));
      standIn.state.decide = async () => {
        throw new ServiceUnavailable('down');
      };
      // Tokens: admitted while the window's tokens are under the limit, then the estimate is held.
      for (let i = 0; i < 3; i++) assert.equal((await g.check(ask(rateKey, {}))).decision, 'failed_open');
      await assert.rejects(g.check(ask(rateKey, {})), { status: 429, code: 'rate_limit_exceeded' });
      await assert.rejects(g.check(ask(closedKey, {})), { status: 503, code: 'policy_unavailable' });
      assert.equal(
        (await g.check(ask({ ...principal, apiKeyId: randomUUID() }, {}))).decision,
        'failed_open',
      );
      const text = await metrics.registry.metrics();
      assert.match(
        text,
        /switchyard_gateway_policy_fallback_decisions_total\{kind="rate_limit",mode="open"\} 4/,
      );
      assert.match(
        text,
        /switchyard_gateway_policy_fallback_decisions_total\{kind="usage_limit",mode="closed"\} 1/,
      );
      assert.match(text, /switchyard_gateway_policy_fallback_decisions_total\{kind="unseen",mode="open"\} 1/);
    } finally {
      client.close();
      await standIn.close();
    }
  });
});

const mockChat = {
  method: 'POST',
  headers: { 'x-vendor-provider': 'mock' },
  json: { model: 'mock-1', messages: [{ role: 'user', content: 'Hi' }] },
};

describe('the gateway with its default policy settings', () => {
  let h: ServiceHarness;
  let standIn: PolicyStandIn;
  let close: () => Promise<void>;

  before(async () => {
    ({ h, standIn, close } = await startGatewayWithStandIns(new Map([[workspaceKey, principal]])));
  });
  after(() => close());

  const send = () => h.request(mockChat.method, '/v1/chat/completions', { ...mockChat, key: workspaceKey });

  test('answers a policy DENY with 429 and retry-after', async () => {
    standIn.state.decide = deny(7);
    const res = await send();
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '7');
    assert.deepEqual(res.body.error, {
      message: 'The monthly budget is used up.',
      type: 'rate_limit_error',
      param: null,
      code: 'budget_exhausted',
    });
  });

  test('lets requests through when the policy service fails', async () => {
    standIn.state.decide = async () => {
      throw new ServiceUnavailable('policy store is down');
    };
    const res = await send();
    assert.equal(res.status, 200, res.text);
  });

  test('lets requests through when the policy service does not answer in time', async () => {
    standIn.state.decide = async () => {
      await sleep(1_000);
      return { decision: policy.Decision.DENY };
    };
    const res = await send();
    assert.equal(res.status, 200, res.text);
  });

  test('asks the policy service about every request', async () => {
    standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    const before = standIn.checks.length;
    assert.equal((await send()).status, 200);
    assert.equal(standIn.checks.length, before + 1);
    assert.equal(standIn.checks.at(-1)!.provider, 'mock');
    assert.equal(standIn.checks.at(-1)!.model, 'mock-1');
  });
});

describe('the gateway with POLICY_FAIL_OPEN=false', () => {
  let h: ServiceHarness;
  let identityStandIn: Awaited<ReturnType<typeof startIdentityStandIn>>;
  let settingsStandIn: Awaited<ReturnType<typeof startOrganisationSettingsStandIn>>;

  before(async () => {
    identityStandIn = await startIdentityStandIn(new Map([[workspaceKey, principal]]));
    settingsStandIn = await startOrganisationSettingsStandIn();
    h = await startServiceHarness({
      services: [gatewayService],
      env: { POLICY_FAIL_OPEN: 'false' },
      clientAddresses: {
        identity: identityStandIn.address,
        policy: await unusedAddress(),
        integrations: await unusedAddress(),
        configs: await unusedAddress(),
        organisationSettings: settingsStandIn.address,
      },
    });
  });
  after(async () => {
    await h.close();
    await identityStandIn.close();
    await settingsStandIn.close();
  });

  test('refuses requests with 503 while the policy service is down', async () => {
    const res = await h.request(mockChat.method, '/v1/chat/completions', { ...mockChat, key: workspaceKey });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.type, 'service_unavailable_error');
    assert.equal(res.body.error.code, 'policy_unavailable');
  });
});
