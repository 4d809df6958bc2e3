import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '@switchyard/core';
import type { Principal } from '@switchyard/access';
import { createGrpcClient } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import { deferred } from '@switchyard/core/testing';
import { newPrincipal, startPolicyStandIn, type PolicyStandIn } from '../testing/policy-stand-ins.ts';
import { PolicyGate } from './policy-gate.ts';

const logger = createLogger('test');
logger.silent = true;

const RESET_AT = Date.UTC(2026, 10, 26, 12, 1);

function ask(who: Principal, metadata: Record<string, string> = {}, tokens = 100) {
  return {
    principal: who,
    provider: 'openai',
    model: 'gpt-4o',
    metadata,
    requestId: randomUUID(),
    estimate: () => ({ tokens, cost: 0 }),
  };
}

/**
 * A policy service with one rate limit of `limit` requests a minute and one token rate limit,
 * that grants every lease asked for in full and reads metadata key `team`.
 */
function leasing(limit = 1_000): PolicyStandIn['state']['decide'] {
  let remaining = limit;
  return async (request) => {
    const counted = 1 + request.lease;
    remaining -= counted;
    const hold = (type: string, amount: number) => ({
      policyId: `pol-${type}`,
      kind: policy.PolicyKind.RATE_LIMIT,
      type,
      counter: `{${request.organisationId}}:rl:pol-${type}:0`,
      field: `api_key:${request.apiKeyId}`,
      held: amount,
      leased: request.lease * amount,
      expiresAtMs: String(RESET_AT + 60_000),
    });
    const tokens = request.estimate?.tokens ?? 0;
    return {
      decision: policy.Decision.ALLOW,
      reservation: { id: randomUUID(), holds: [hold('requests', 1), hold('tokens', tokens)] },
      limits: [
        {
          policyId: 'pol-requests',
          kind: policy.PolicyKind.RATE_LIMIT,
          type: 'requests',
          limit,
          remaining,
          resetAtMs: String(RESET_AT),
          valueKey: `api_key:${request.apiKeyId}`,
        },
      ],
      metadataKeys: ['team'],
    };
  };
}

describe('PolicyGate leases', () => {
  let standIn: PolicyStandIn;
  const clients: Array<{ close(): void }> = [];
  let clock = RESET_AT - 30_000;

  before(async () => {
    standIn = await startPolicyStandIn();
  });
  after(async () => {
    clients.forEach((c) => c.close());
    await standIn.close();
  });

  function gate(leaseRequests?: number, timeoutMs = 5_000) {
    const client = createGrpcClient(policy.PolicyService, {
      address: standIn.address,
      target: 'policy',
      security: {},
      caller: 'gateway',
    });
    clients.push(client);
    const g = new PolicyGate(client, logger, {
      timeoutMs,
      failOpen: false,
      leaseRequests,
      now: () => clock,
    });
    return g;
  }

  const checksOf = (who: Principal) => standIn.checks.filter((c) => c.apiKeyId === who.apiKeyId);
  const returnsOf = (who: Principal) =>
    standIn.accruals.filter((a) => a.unused && a.organisationId === who.organisationId);

  test('a kind of request seen once is checked alone; seen again, the gateway leases more and admits them without a call', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    await g.check(ask(who));
    assert.deepEqual(
      checksOf(who).map((c) => c.lease),
      [0],
      'the first request asks for no lease',
    );
    await g.check(ask(who)); // asks for 1 more
    const third = await g.check(ask(who)); // admitted on that lease
    assert.deepEqual(
      checksOf(who).map((c) => c.lease),
      [0, 1],
    );
    // Leases double: 2 more, then 4 more, admitting the requests between without a call.
    for (let i = 0; i < 7; i++) await g.check(ask(who));
    assert.deepEqual(
      checksOf(who).map((c) => c.lease),
      [0, 1, 2, 4],
    );
    assert.equal(third.decision, 'allowed');
    // What is left counts what this gateway holds: 1000 − 10 requests so far.
    const last = await g.check(ask(who));
    assert.equal(last.headers['x-ratelimit-remaining-requests'], String(1000 - 11));
    assert.equal(last.headers['x-ratelimit-limit-requests'], '1000');
  });

  test('metadata no policy reads does not split a lease; a key policies read does', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    await g.check(ask(who, { team: 'a', trace: '1' }));
    await g.check(ask(who, { team: 'a', trace: '2' }));
    await g.check(ask(who, { team: 'a', trace: '3' }));
    assert.equal(checksOf(who).length, 2, 'the third came out of the lease');
    await g.check(ask(who, { team: 'b' }));
    assert.equal(checksOf(who).length, 3, 'another team is checked');
  });

  test('a request that needs more tokens than the lease holds is checked', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    await g.check(ask(who, {}, 100));
    await g.check(ask(who, {}, 100)); // leases 100 tokens more
    await g.check(ask(who, {}, 500));
    assert.equal(checksOf(who).length, 3);
  });

  test('requests that find the lease empty while one is being taken wait for it instead of asking too', async () => {
    const gateOpen = deferred<void>();
    const decide = leasing();
    let calls = 0;
    standIn.state.decide = async (request) => {
      calls += 1;
      if (request.lease >= 2) await gateOpen.promise;
      return decide(request);
    };
    const g = gate();
    const who = newPrincipal();
    await g.check(ask(who));
    await g.check(ask(who));
    await g.check(ask(who)); // the lease of 1 is used up
    const before = calls;
    const waiting = Array.from({ length: 4 }, () => g.check(ask(who)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(calls - before, 1, 'one check for the four');
    gateOpen.resolve();
    const holds = await Promise.all(waiting);
    assert.ok(holds.every((h) => h.decision === 'allowed'));
    assert.equal(calls - before, 2, 'two of the three waiters came out of the lease of 2, the third asked');
    assert.ok(checksOf(who).at(-1)!.lease >= 1);
  });

  test('when the check they wait for goes unanswered, the waiters are decided by the failure mode at once, not asked again', async () => {
    const release = deferred<void>();
    const decide = leasing();
    let calls = 0;
    standIn.state.decide = async (request) => {
      calls += 1;
      if (request.lease >= 2) await release.promise;
      return decide(request);
    };
    const g = gate(undefined, 300);
    const who = newPrincipal();
    try {
      for (let i = 0; i < 3; i++) await g.check(ask(who)); // the lease of 1 is used up
      const before = calls;
      const holds = await Promise.all(Array.from({ length: 3 }, () => g.check(ask(who))));
      // The limits last seen fail open: the gateway's own limiter admits them.
      assert.deepEqual(
        holds.map((h) => h.decision),
        ['failed_open', 'failed_open', 'failed_open'],
      );
      assert.equal(calls - before, 1, 'one check for the three');
    } finally {
      release.resolve();
    }
  });

  test('a kind of request seen less often than once a second never asks for a lease', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    for (let i = 0; i < 4; i++) {
      await g.check(ask(who));
      clock += 1_500;
    }
    assert.deepEqual(
      checksOf(who).map((c) => c.lease),
      [0, 0, 0, 0],
    );
  });

  test('a finished request settles into the lease when it can, and the rest goes to the policy service', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    await g.check(ask(who, {}, 100));
    await g.check(ask(who, {}, 100)); // leases 100 tokens more
    const hold = await g.check(ask(who, {}, 100)); // from the lease: 0 tokens left in it
    hold.settle({ tokens: 30, cost: 0 });
    await g.flushSettlements();
    const settled = standIn.accruals.filter((a) => a.organisationId === who.organisationId);
    assert.equal(settled.length, 0, '70 tokens went back into the lease, not to the policy service');
    const key = `{${who.organisationId}}:rl:pol-tokens:0\napi_key:${who.apiKeyId}`;
    assert.equal(g.leases.balances().get(key), 70);

    // Asked of the policy service (no request is left in the lease), which leases 2 × 50 more.
    const big = await g.check(ask(who, {}, 50));
    assert.equal(g.leases.balances().get(key), 170);
    big.settle({ tokens: 1_000, cost: 0 }); // 950 more than held: more than the lease has
    await g.flushSettlements();
    const [sent] = standIn.accruals.filter((a) => a.organisationId === who.organisationId);
    assert.equal(sent?.used?.tokens, 1_000);
    assert.deepEqual(
      sent?.reservation?.holds.map((h) => [h.type, h.held]),
      [['tokens', 50]],
    );
  });

  test('a lease unused for a second is given back; so is every lease when policies change', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    for (let i = 0; i < 4; i++) await g.check(ask(who)); // leases 1 (used by the third), then 2
    clock += 500;
    g.leases.sweep();
    await g.flushSettlements();
    assert.equal(returnsOf(who).length, 0, 'not idle yet');
    clock += 1_000;
    g.leases.sweep();
    await g.flushSettlements();
    const [returned] = returnsOf(who);
    assert.deepEqual(returned?.reservation?.holds.map((h) => [h.type, h.held]).sort(), [
      ['requests', 2],
      ['tokens', 200],
    ]);

    const other = newPrincipal();
    for (let i = 0; i < 2; i++) await g.check(ask(other)); // leases 1
    g.policiesChanged();
    await g.flushSettlements();
    assert.equal(returnsOf(other).length, 1);
    await g.check(ask(other));
    assert.equal(checksOf(other).length, 3, 'after a change every request is checked again');
    assert.equal(checksOf(other).at(-1)!.lease, 0);
  });

  test('no lease is admitted past the end of its window', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    for (let i = 0; i < 2; i++) await g.check(ask(who)); // leases 1
    const saved = clock;
    clock = RESET_AT;
    await g.check(ask(who));
    assert.equal(checksOf(who).length, 3, 'checked in the new window');
    clock = saved;
  });

  test('with POLICY_LEASE_REQUESTS=0 every request is checked', async () => {
    standIn.state.decide = leasing();
    const g = gate(0);
    const who = newPrincipal();
    for (let i = 0; i < 5; i++) await g.check(ask(who));
    assert.deepEqual(
      checksOf(who).map((c) => c.lease),
      [0, 0, 0, 0, 0],
    );
  });

  test('stopping gives back what is leased', async () => {
    standIn.state.decide = leasing();
    const g = gate();
    const who = newPrincipal();
    for (let i = 0; i < 2; i++) await g.check(ask(who));
    await g.close();
    assert.equal(returnsOf(who).length, 1);
  });
});
