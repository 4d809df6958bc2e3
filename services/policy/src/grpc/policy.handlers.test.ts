import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { RedisKeyValueStore } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { createGrpcClient } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import { SKIP_CHECKS_FOR_MS } from '../domain/limit-enforcer.ts';
import { ratePolicy, usagePolicy } from '../testing/policy-directory-stand-in.ts';
import { startPolicyHarness, type PolicyHarness } from '../testing/policy-harness.ts';

const { ALLOW, DENY } = policy.Decision;

let p: PolicyHarness;
before(async () => {
  p = await startPolicyHarness();
});
after(() => p.close());

describe('Check', () => {
  test('allows every request of an organisation without policies and lets the gateway skip asking', async () => {
    const org = p.organisation();
    const response = await org.check();
    assert.equal(response.decision, ALLOW);
    assert.equal(response.skipChecksForMs, SKIP_CHECKS_FOR_MS);
    assert.equal(response.reservation, undefined);
  });

  test('a requests limit of 5 admits exactly 5 of 20 concurrent checks, then names the policy, the entity and the reset', async () => {
    const org = p.organisation((id) => ratePolicy(id, { name: 'Five a minute', value: 5 }));
    const responses = await Promise.all(Array.from({ length: 20 }, () => org.check()));
    assert.equal(responses.filter((r) => r.decision === ALLOW).length, 5);
    const denied = responses.find((r) => r.decision === DENY)!;
    const policyId = org.policies[0]!.id!;
    assert.equal(denied.code, 'rate_limit_exceeded');
    assert.equal(denied.policyId, policyId);
    assert.match(denied.message, /policy "Five a minute"/);
    assert.ok(denied.message.includes(`(id ${policyId})`));
    assert.ok(denied.message.includes(`api_key:${org.apiKeyId}`));
    assert.ok(denied.message.includes('2026-03-14T12:31:00.000Z'), denied.message);
    assert.equal(denied.retryAfterSeconds, 45, 'the minute window ends 45 s after 12:30:15');
    assert.equal(denied.skipChecksForMs, 0);
    assert.deepEqual(
      denied.limits.map((l) => [l.policyId, l.remaining, l.resetAtMs, l.valueKey]),
      [[policyId, 0, String(Date.UTC(2026, 2, 14, 12, 31)), `api_key:${org.apiKeyId}`]],
    );
  });

  test('an allowed request gets every applying limit, tightest first, and one hold per counter', async () => {
    const org = p.organisation(
      (id) => ratePolicy(id, { name: 'Loose', value: 100 }),
      (id) => usagePolicy(id, { name: 'Tight', type: 'requests', creditLimit: 2 }),
    );
    const response = await org.check({}, { tokens: 50, cost: 0.01 });
    assert.equal(response.decision, ALLOW);
    assert.deepEqual(
      response.limits.map((l) => [l.type, l.limit, l.remaining, l.failureMode]),
      [
        ['requests', 2, 1, policy.FailureMode.CLOSED],
        ['requests', 100, 99, policy.FailureMode.OPEN],
      ],
    );
    assert.equal(response.reservation?.holds.length, 2);
    const usageHold = response.reservation!.holds.find((h) => h.kind === policy.PolicyKind.USAGE_LIMIT)!;
    assert.equal(
      usageHold.counter,
      `{${org.organisationId}}:ul:${org.policies[1]!.id}:${Date.UTC(2026, 2, 1)}`,
    );
    assert.equal(usageHold.field, `api_key:${org.apiKeyId}`);
    assert.equal(usageHold.expiresAtMs, String(Date.UTC(2026, 3, 1) + 60_000));
  });

  test('refuses a negative estimate, naming the field', async () => {
    const org = p.organisation((id) => ratePolicy(id));
    await assert.rejects(org.check({}, { tokens: -1 }), { status: 400, param: 'estimate.tokens' });
  });
});

describe('leases', () => {
  test('a check asking for a lease takes that many more requests, at most a share of what is left; Settle with unused gives them back', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 1000 }));
    const leased = await org.check({ lease: 30 });
    assert.equal(leased.decision, ALLOW);
    assert.equal(leased.reservation!.holds[0]!.held, 1);
    assert.equal(leased.reservation!.holds[0]!.leased, 30);
    assert.equal(leased.limits[0]!.remaining, 1000 - 31, 'the lease is counted at once');
    // 1000 − 31 − 1 = 968 left; a sixteenth of it is 60.5: 60 requests, not 500.
    const capped = await org.check({ lease: 500 });
    assert.equal(capped.reservation!.holds[0]!.leased, 60);

    const hold = leased.reservation!.holds[0]!;
    await p.gateway.settle({
      settlements: [
        {
          organisationId: org.organisationId,
          reservation: { id: 'lease', holds: [{ ...hold, held: 25 }] },
          unused: true,
        },
      ],
    });
    assert.equal((await org.check()).limits[0]!.remaining, 1000 - 31 - 61 + 25 - 1);
  });

  test('a lease of tokens is the estimate times the requests asked for, and the response names the metadata keys policies read', async () => {
    const org = p.organisation(
      (id) => ratePolicy(id, { type: 'tokens', value: 100_000, groupBy: ['metadata.team'] }),
      (id) =>
        usagePolicy(id, {
          type: 'tokens',
          creditLimit: 1_000_000,
          conditions: [{ key: 'metadata.env', value: 'prod', excludes: false }],
        }),
    );
    const response = await org.check({ lease: 4, metadata: { env: 'prod', team: 'a' } }, { tokens: 100 });
    assert.deepEqual(
      response.reservation!.holds.map((h) => [h.type, h.held, h.leased]),
      [
        ['tokens', 100, 400],
        ['tokens', 100, 400],
      ],
    );
    assert.deepEqual(response.metadataKeys, ['env', 'team']);
  });

  test('an unused lease naming another organisation’s counter is refused, and a negative one too', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 1000 }));
    const other = p.organisation((id) => ratePolicy(id, { value: 1000 }));
    const foreign = (await other.check({ lease: 5 })).reservation!;
    await assert.rejects(
      p.gateway.accrue({ organisationId: org.organisationId, reservation: foreign, unused: true }),
      { status: 400 },
    );
    const own = (await org.check({ lease: 5 })).reservation!;
    await assert.rejects(
      p.gateway.accrue({
        organisationId: org.organisationId,
        reservation: { id: 'x', holds: [{ ...own.holds[0]!, held: -5 }] },
        unused: true,
      }),
      { status: 400, param: 'reservation.holds.held' },
    );
  });
});

describe('tokens: holds and reconciliation', () => {
  test('the final accrue gives back what a request did not use and charges what it used beyond its hold', async () => {
    const org = p.organisation((id) => ratePolicy(id, { type: 'tokens', value: 1000 }));
    const first = await org.check({}, { tokens: 600 });
    assert.equal(first.limits[0]!.remaining, 400);
    const settled = await org.accrue(first.reservation, { tokens: 100 }, true);
    assert.equal(settled.allowed, true);
    assert.equal(settled.reservation?.holds[0]?.held, 100);

    const second = await org.check({}, { tokens: 0 });
    assert.equal(second.limits[0]!.remaining, 900, '500 tokens were given back');
    await org.accrue(second.reservation, { tokens: 950 }, true);
    const third = await org.check({}, { tokens: 10 });
    assert.equal(third.decision, DENY, '100 + 950 tokens passed the limit');
    assert.equal(third.code, 'rate_limit_exceeded');
  });

  test('Settle settles many finished requests at once; one it must refuse leaves the others settled', async () => {
    const org = p.organisation((id) => ratePolicy(id, { type: 'tokens', value: 1000 }));
    const other = p.organisation((id) => ratePolicy(id, { type: 'tokens', value: 1000 }));
    const first = await org.check({}, { tokens: 300 });
    const second = await org.check({}, { tokens: 300 });
    const foreign = await other.check({}, { tokens: 300 });
    await p.gateway.settle({
      settlements: [
        { organisationId: org.organisationId, reservation: first.reservation, used: { tokens: 50 } },
        // A hold of another organisation named as this one's: refused, nothing changes.
        { organisationId: org.organisationId, reservation: foreign.reservation, used: { tokens: 0 } },
        { organisationId: org.organisationId, reservation: second.reservation, used: { tokens: 20 } },
      ],
    });
    assert.equal((await org.check({}, { tokens: 0 })).limits[0]!.remaining, 1000 - 50 - 20);
    assert.equal((await other.check({}, { tokens: 0 })).limits[0]!.remaining, 700);
  });

  test('a request is admitted while tokens used are under the limit, and its whole estimate is held', async () => {
    const org = p.organisation((id) => ratePolicy(id, { type: 'tokens', value: 1000 }));
    assert.equal((await org.check({}, { tokens: 900 })).decision, ALLOW);
    const over = await org.check({}, { tokens: 900 });
    assert.equal(over.decision, ALLOW, '900 < 1000');
    assert.equal(over.limits[0]!.remaining, 0);
    assert.equal((await org.check({}, { tokens: 1 })).decision, DENY);
  });

  test('a stream takes more every other block and is ended when the limit runs out; the final accrue settles', async () => {
    const org = p.organisation((id) => usagePolicy(id, { type: 'tokens', creditLimit: 1000 }));
    const checked = await org.check({}, { tokens: 100 });
    let reservation = checked.reservation;

    let step = await org.accrue(reservation, { tokens: 80 }, false);
    assert.equal(step.allowed, true);
    assert.equal(step.reservation?.holds[0]?.held, 100, 'nothing more taken while under the hold');

    step = await org.accrue(reservation, { tokens: 300 }, false);
    assert.equal(step.allowed, true);
    assert.equal(step.reservation?.holds[0]?.held, 500, 'the shortfall of 200 and as much again');
    reservation = step.reservation;

    step = await org.accrue(reservation, { tokens: 900 }, false);
    assert.equal(step.allowed, true, '500 used < 1000');
    assert.equal(step.reservation?.holds[0]?.held, 1300);
    reservation = step.reservation;

    step = await org.accrue(reservation, { tokens: 1400 }, false);
    assert.equal(step.allowed, false);
    assert.equal(step.code, 'usage_limit_exceeded');
    assert.equal(step.policyId, org.policies[0]!.id);
    assert.match(step.message, /policy "Monthly budget"/);

    const final = await org.accrue(reservation, { tokens: 1400 }, true);
    assert.equal(final.allowed, true);
    const usage = await p.ledger.listUsage({
      organisationId: org.organisationId,
      policyId: org.policies[0]!.id!,
    });
    assert.equal(usage.entities[0]?.currentUsage, 1400);
  });

  test('an accrue naming another organisation’s counter is refused', async () => {
    const org = p.organisation((id) => ratePolicy(id, { type: 'tokens', value: 1000 }));
    const other = p.organisation((id) => ratePolicy(id, { type: 'tokens', value: 1000 }));
    const checked = await other.check({}, { tokens: 10 });
    await assert.rejects(org.accrue(checked.reservation, { tokens: 0 }, true), {
      status: 400,
      param: 'reservation.holds',
    });
  });
});

describe('usage limits', () => {
  test('cost: admitted while under the credit limit, then refused until the month ends', async () => {
    const org = p.organisation((id) => usagePolicy(id, { name: 'Team budget', creditLimit: 1 }));
    assert.equal((await org.check({}, { cost: 0.6 })).decision, ALLOW);
    assert.equal((await org.check({}, { cost: 0.6 })).decision, ALLOW);
    const denied = await org.check({}, { cost: 0.01 });
    assert.equal(denied.decision, DENY);
    assert.equal(denied.code, 'usage_limit_exceeded');
    assert.match(denied.message, /allows 1 USD per calendar month/);
    assert.ok(denied.message.includes('2026-04-01T00:00:00.000Z'));
    assert.equal(denied.retryAfterSeconds, Math.ceil((Date.UTC(2026, 3, 1) - p.clock.ms) / 1000));
  });

  test('requests: the credit limit is a count of requests', async () => {
    const org = p.organisation((id) => usagePolicy(id, { type: 'requests', creditLimit: 2 }));
    const decisions = [];
    for (let i = 0; i < 3; i++) decisions.push((await org.check()).decision);
    assert.deepEqual(decisions, [ALLOW, ALLOW, DENY]);
  });

  test('a cumulative limit never resets: retry-after 0 and a reset time of 0', async () => {
    const org = p.organisation((id) =>
      usagePolicy(id, { type: 'tokens', creditLimit: 10, periodicReset: '' }),
    );
    assert.equal((await org.check({}, { tokens: 50 })).decision, ALLOW);
    const denied = await org.check({}, { tokens: 1 });
    assert.equal(denied.decision, DENY);
    assert.equal(denied.retryAfterSeconds, 0);
    assert.equal(denied.limits[0]!.resetAtMs, '0');
    assert.match(denied.message, /does not reset/);
  });

  test('an exhausted key is allowed at once when the credit limit is raised', async () => {
    const org = p.organisation((id) => usagePolicy(id, { type: 'requests', creditLimit: 1 }));
    assert.equal((await org.check()).decision, ALLOW);
    assert.equal((await org.check()).decision, DENY);
    await org.change([{ ...org.policies[0]!, creditLimit: 3 }]);
    const allowed = await org.check();
    assert.equal(allowed.decision, ALLOW);
    assert.equal(allowed.limits[0]!.remaining, 1);
  });

  test('policies are read once per organisation until a change event names it', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 100 }));
    const before = p.directory.state.calls;
    await Promise.all(Array.from({ length: 10 }, () => org.check()));
    await org.check();
    assert.equal(p.directory.state.calls - before, 1, 'concurrent misses share one read');
    await org.change([]);
    assert.equal((await org.check()).skipChecksForMs, SKIP_CHECKS_FOR_MS, 'the archived policy is gone');
    assert.equal(p.directory.state.calls - before, 2);
  });
});

describe('windows and periods roll over', () => {
  test('a rate window opens again when the minute ends', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 1 }));
    assert.equal((await org.check()).decision, ALLOW);
    assert.equal((await org.check()).decision, DENY);
    p.clock.ms += 45_000;
    assert.equal((await org.check()).decision, ALLOW);
    p.clock.ms -= 45_000;
  });

  test('a monthly limit resets on the 1st, 00:00 UTC, also across February of a leap year', async () => {
    const start = p.clock.ms;
    try {
      p.clock.ms = Date.UTC(2028, 1, 29, 23, 59, 59);
      const org = p.organisation((id) => usagePolicy(id, { type: 'requests', creditLimit: 1 }));
      assert.equal((await org.check()).decision, ALLOW);
      const denied = await org.check();
      assert.equal(denied.decision, DENY);
      assert.equal(denied.retryAfterSeconds, 1);
      p.clock.ms = Date.UTC(2028, 2, 1);
      assert.equal((await org.check()).decision, ALLOW);
    } finally {
      p.clock.ms = start;
    }
  });

  test('an N-day limit runs in periods of N days from its anchor', async () => {
    const start = p.clock.ms;
    try {
      const anchor = Date.UTC(2026, 2, 10, 17, 45); // normalised down to 2026-03-10 00:00
      const org = p.organisation((id) =>
        usagePolicy(id, {
          type: 'requests',
          creditLimit: 1,
          periodicReset: '',
          periodicResetDays: 3,
          resetAnchorMs: String(anchor),
        }),
      );
      p.clock.ms = Date.UTC(2026, 2, 15, 23, 0);
      assert.equal((await org.check()).decision, ALLOW);
      const denied = await org.check();
      assert.ok(denied.message.includes('2026-03-16T00:00:00.000Z'), denied.message);
      assert.match(denied.message, /every 3 days/);
      p.clock.ms = Date.UTC(2026, 2, 16);
      assert.equal((await org.check()).decision, ALLOW);
    } finally {
      p.clock.ms = start;
    }
  });
});

describe('whom a policy applies to', () => {
  test('conditions must all hold; excludes inverts one; * matches any present value', async () => {
    const org = p.organisation((id) =>
      ratePolicy(id, {
        value: 1,
        conditions: [
          { key: 'model', value: 'gpt-4o' },
          { key: 'metadata.team', value: 'ml', excludes: true },
          { key: 'metadata.env', value: '*' },
        ],
      }),
    );
    const counted = { model: 'gpt-4o', metadata: { env: 'prod' } };
    assert.equal((await org.check(counted)).limits.length, 1);
    assert.equal((await org.check(counted)).decision, DENY);
    assert.equal((await org.check({ ...counted, model: 'gpt-4o-mini' })).decision, ALLOW, 'another model');
    assert.equal(
      (await org.check({ model: 'gpt-4o', metadata: { env: 'prod', team: 'ml' } })).decision,
      ALLOW,
      'excluded team',
    );
    assert.equal((await org.check({ model: 'gpt-4o', metadata: {} })).decision, ALLOW, 'no env at all');
  });

  test('group_by counts each entity apart, and a request without the value counts under the empty one', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 1, groupBy: ['metadata.team', 'api_key'] }));
    const ml = await org.check({ metadata: { team: 'ml' } });
    assert.equal(ml.limits[0]!.valueKey, `metadata.team:ml,api_key:${org.apiKeyId}`);
    assert.equal((await org.check({ metadata: { team: 'search' } })).decision, ALLOW);
    assert.equal((await org.check({ metadata: { team: 'ml' } })).decision, DENY);
    const none = await org.check({ metadata: {} });
    assert.equal(none.limits[0]!.valueKey, `metadata.team:,api_key:${org.apiKeyId}`);
    assert.equal(
      (await org.check({ metadata: { team: '' } })).decision,
      DENY,
      'leaving it out does not escape',
    );
  });

  test('a workspace policy applies only in its workspace', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 1 }));
    await org.change([{ ...org.policies[0]!, workspaceId: org.workspaceId }]);
    assert.equal((await org.check()).limits.length, 1);
    const elsewhere = await org.check({ workspaceId: 'another-workspace' });
    assert.equal(elsewhere.decision, ALLOW);
    assert.equal(elsewhere.skipChecksForMs, SKIP_CHECKS_FOR_MS);
  });

  test('skip_checks_for_ms only when no policy could apply to the key, whatever the request', async () => {
    const org = p.organisation(
      (id) => ratePolicy(id, { conditions: [{ key: 'api_key', value: 'some-other-key' }] }),
      (id) => ratePolicy(id, { conditions: [{ key: 'user_id', value: '*' }] }),
    );
    assert.equal((await org.check()).skipChecksForMs, SKIP_CHECKS_FOR_MS, 'neither can ever count this key');

    const byModel = p.organisation((id) =>
      ratePolicy(id, { conditions: [{ key: 'model', value: 'gpt-4o' }] }),
    );
    const other = await byModel.check({ model: 'o3' });
    assert.equal(other.decision, ALLOW);
    assert.equal(other.skipChecksForMs, 0, 'a request for gpt-4o would be counted');
    assert.equal(other.reservation, undefined);

    const mcp = p.organisation((id) => ratePolicy(id, { target: 'mcp_tools' }));
    assert.equal(
      (await mcp.check()).skipChecksForMs,
      SKIP_CHECKS_FOR_MS,
      'mcp_tools policies do not limit model calls',
    );
  });
});

describe('UsageLedgerService', () => {
  async function spend(org: ReturnType<PolicyHarness['organisation']>, apiKeyId: string, cost: number) {
    const checked = await org.check({ apiKeyId }, { cost });
    await org.accrue(checked.reservation, { cost }, true);
  }

  test('ListUsage pages the entities of the current period by usage, with search and status', async () => {
    const org = p.organisation((id) => usagePolicy(id, { creditLimit: 1 }));
    const policyId = org.policies[0]!.id!;
    await spend(org, 'key-a', 0.2);
    await spend(org, 'key-b', 1.5);
    await spend(org, 'key-c', 0.7);
    const list = (query: { status?: string; search?: string; page?: number; pageSize?: number } = {}) =>
      p.ledger.listUsage({ organisationId: org.organisationId, policyId, ...query });

    const all = await list();
    assert.equal(all.total, 3);
    assert.deepEqual(
      all.entities.map((e) => [e.valueKey, e.status]),
      [
        ['api_key:key-b', 'exhausted'],
        ['api_key:key-c', 'active'],
        ['api_key:key-a', 'active'],
      ],
    );
    assert.equal(all.entities[0]!.id, Buffer.from('api_key:key-b').toString('base64url'));
    assert.equal(all.periodStartMs, String(Date.UTC(2026, 2, 1)));
    assert.equal(all.nextResetMs, String(Date.UTC(2026, 3, 1)));
    assert.deepEqual(
      (await list({ page: 2, pageSize: 2 })).entities.map((e) => e.valueKey),
      ['api_key:key-a'],
    );
    assert.deepEqual(
      (await list({ status: 'exhausted' })).entities.map((e) => e.valueKey),
      ['api_key:key-b'],
    );
    assert.deepEqual(
      (await list({ search: 'KEY-C' })).entities.map((e) => e.valueKey),
      ['api_key:key-c'],
    );
    await assert.rejects(list({ status: 'spent' }), { status: 400, param: 'status' });
  });

  test('ResetUsage by id makes an exhausted entity active again; a second reset finds nothing', async () => {
    const org = p.organisation((id) => usagePolicy(id, { creditLimit: 1 }));
    const policyId = org.policies[0]!.id!;
    await spend(org, org.apiKeyId, 2);
    assert.equal((await org.check({}, { cost: 0.1 })).decision, DENY);
    const id = Buffer.from(`api_key:${org.apiKeyId}`).toString('base64url');
    const reset = await p.ledger.resetUsage({ organisationId: org.organisationId, policyId, entity: id });
    assert.equal(reset.found, true);
    assert.equal((await org.check({}, { cost: 0.1 })).decision, ALLOW);
    const byValueKey = { organisationId: org.organisationId, policyId, entity: 'api_key:nobody' };
    assert.equal((await p.ledger.resetUsage(byValueKey)).found, false);
  });

  test('another organisation’s or an unknown policy is not found', async () => {
    const org = p.organisation((id) => usagePolicy(id));
    const other = p.organisation();
    const policyId = org.policies[0]!.id!;
    await assert.rejects(p.ledger.listUsage({ organisationId: other.organisationId, policyId }), {
      status: 404,
    });
    await assert.rejects(
      p.ledger.resetUsage({ organisationId: org.organisationId, policyId: 'nope', entity: 'a:b' }),
      {
        status: 404,
      },
    );
  });

  test('KeyUsage lists the limits that can apply to a key and where it stands, tightest first', async () => {
    const org = p.organisation(
      (id) => usagePolicy(id, { creditLimit: 10 }),
      (id) => ratePolicy(id, { value: 4 }),
      (id) => ratePolicy(id, { conditions: [{ key: 'api_key', value: 'someone-else' }] }),
    );
    await org.check({}, { cost: 1 });
    await org.check({}, { cost: 1 });
    const { limits } = await p.ledger.keyUsage({
      organisationId: org.organisationId,
      workspaceId: org.workspaceId,
      apiKeyId: org.apiKeyId,
    });
    assert.deepEqual(
      limits.map((l) => [l.policyId, l.remaining]),
      [
        [org.policies[1]!.id, 2],
        [org.policies[0]!.id, 8],
      ],
    );
  });

  test('only control-plane may call it', async () => {
    const asGateway = p.h.client('usageLedger', 'gateway');
    await assert.rejects(asGateway.listUsage({ organisationId: 'o', policyId: 'p' }));
  });
});

describe('control-plane unreachable', () => {
  test('the last known policies serve on; with none known, the failure modes decide', async () => {
    const org = p.organisation((id) => ratePolicy(id, { value: 1 }));
    assert.equal((await org.check()).decision, ALLOW);
    p.directory.state.failing = true;
    try {
      await org.change(org.policies);
      const denied = await org.check();
      assert.equal(denied.code, 'rate_limit_exceeded', 'still limited by the last known policy');

      const unknown = p.organisation((id) => ratePolicy(id));
      const response = await unknown.check();
      assert.equal(response.decision, DENY, 'usage limits fail closed by default');
      assert.equal(response.code, 'policy_unavailable');
      assert.equal(response.degraded, true);
    } finally {
      p.directory.state.failing = false;
    }
  });
});

describe('Redis unreachable', () => {
  let down: PolicyHarness;
  let kv: RedisKeyValueStore;

  before(async () => {
    const logger = createLogger('test');
    logger.silent = true;
    kv = new RedisKeyValueStore(`redis://${await closedLoopbackAddress()}`, logger);
    kv.connect().catch(() => {});
    down = await startPolicyHarness({ counters: kv.limitCounters({ timeoutMs: 200 }) });
  });
  after(async () => {
    await down.close();
    await kv.close();
  });

  test('nothing is leased while the in-process limiter decides', async () => {
    const org = down.organisation((id) => ratePolicy(id, { value: 1000 }));
    const response = await org.check({ lease: 10 });
    assert.equal(response.decision, ALLOW);
    assert.equal(response.degraded, true);
    assert.equal(response.reservation!.holds[0]!.leased, 0);
  });

  test('rate limits fail open: an in-process limiter holds the same limits, and says degraded', async () => {
    const org = down.organisation((id) => ratePolicy(id, { value: 2 }));
    const responses = [await org.check(), await org.check(), await org.check()];
    assert.deepEqual(
      responses.map((r) => [r.decision, r.degraded]),
      [
        [ALLOW, true],
        [ALLOW, true],
        [DENY, true],
      ],
    );
    assert.equal(responses[2]!.code, 'rate_limit_exceeded');
    const settled = await org.accrue(responses[0]!.reservation, {}, true);
    assert.equal(settled.allowed, true);
  });

  test('usage limits fail closed: policy_unavailable, naming the policy', async () => {
    const org = down.organisation(
      (id) => ratePolicy(id, { value: 100 }),
      (id) => usagePolicy(id),
    );
    const response = await org.check({}, { cost: 0.1 });
    assert.equal(response.decision, DENY);
    assert.equal(response.code, 'policy_unavailable');
    assert.equal(response.policyId, org.policies[1]!.id);
    assert.equal(response.degraded, true);
  });
});

test('Check refuses callers without the service token', async () => {
  const stranger = createGrpcClient(policy.PolicyService, {
    address: p.h.grpcAddress('policy'),
    target: 'policy',
    security: {},
  });
  try {
    await assert.rejects(stranger.check(p.organisation().request()), { status: 503 });
  } finally {
    stranger.close();
  }
});

async function closedLoopbackAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `127.0.0.1:${port}`;
}
