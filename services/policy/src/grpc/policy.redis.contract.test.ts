// The policy service on real Redis (REDIS_URL): counts shared through Lua scripts, and the
// failure modes while Redis is away, with recovery when it is back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisKeyValueStore } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { TcpRelay, requireServiceEnv, sleep, uniqueSuffix } from '@switchyard/core/testing';
import { policy } from '@switchyard/proto';
import { ratePolicy, usagePolicy } from '../testing/policy-directory-stand-in.ts';
import { startPolicyHarness, type PolicyHarness } from '../testing/policy-harness.ts';

const { ALLOW, DENY } = policy.Decision;

const prefix = `test:${uniqueSuffix()}:`;
/** Redis is reached through a relay the test can cut and restore, on the same port. */
let relay: TcpRelay;
let kv: RedisKeyValueStore;
let p: PolicyHarness;

before(async () => {
  const { hostname, port } = new URL(requireServiceEnv('REDIS_URL'));
  relay = new TcpRelay({ host: hostname, port: Number(port || 6379) });
  await relay.start();
  const logger = createLogger('test');
  logger.silent = true;
  kv = new RedisKeyValueStore(`redis://127.0.0.1:${relay.port}`, logger, prefix);
  await kv.connect();
  p = await startPolicyHarness({ counters: kv.limitCounters({ timeoutMs: 500 }), startMs: Date.now() });
});

after(async () => {
  await p?.close();
  await kv?.close();
  await relay?.stop();
});

/**
 * The server is shared: rate windows expire within two minutes of the clock, and a test
 * resets the usage it made (a counter without entities is removed).
 */
async function forget(org: ReturnType<PolicyHarness['organisation']>) {
  const policyId = org.policies[0]!.id!;
  await p.ledger.resetUsage({
    organisationId: org.organisationId,
    policyId,
    entity: `api_key:${org.apiKeyId}`,
  });
}

test('a requests limit of 10 admits exactly 10 of 50 concurrent checks counted in Redis', async () => {
  const org = p.organisation((id) => ratePolicy(id, { value: 10 }));
  const responses = await Promise.all(Array.from({ length: 50 }, () => org.check()));
  assert.equal(responses.filter((r) => r.decision === ALLOW).length, 10);
  assert.ok(responses.every((r) => !r.degraded));
  const denied = responses.find((r) => r.decision === DENY)!;
  assert.equal(denied.code, 'rate_limit_exceeded');
});

test('token holds are taken in Redis and the final accrue gives back what was not used', async () => {
  const org = p.organisation((id) => usagePolicy(id, { type: 'tokens', creditLimit: 1000 }));
  const checked = await org.check({}, { tokens: 700 });
  assert.equal(checked.limits[0]!.remaining, 300);
  await org.accrue(checked.reservation, { tokens: 200 }, true);
  const next = await org.check({}, { tokens: 0 });
  assert.equal(next.limits[0]!.remaining, 800);
  const usage = await p.ledger.listUsage({
    organisationId: org.organisationId,
    policyId: org.policies[0]!.id!,
  });
  assert.deepEqual(
    usage.entities.map((e) => [e.valueKey, e.currentUsage]),
    [[`api_key:${org.apiKeyId}`, 200]],
  );
  await forget(org);
});

test('while Redis is away rate limits fail open and usage limits closed, both degraded; Redis is used again once back', async () => {
  const rate = p.organisation((id) => ratePolicy(id, { value: 100 }));
  const usage = p.organisation((id) => usagePolicy(id, { type: 'requests', creditLimit: 100 }));
  assert.equal((await usage.check()).degraded, false);

  await relay.stop();
  try {
    const open = await rate.check();
    assert.deepEqual([open.decision, open.degraded], [ALLOW, true]);
    const closed = await usage.check();
    assert.deepEqual([closed.decision, closed.code, closed.degraded], [DENY, 'policy_unavailable', true]);
  } finally {
    await relay.start();
  }

  let recovered: policy.CheckResponse | undefined;
  for (let i = 0; i < 100 && !recovered; i++) {
    const response = await usage.check();
    if (!response.degraded) recovered = response;
    else await sleep(100);
  }
  assert.equal(recovered?.decision, ALLOW, 'Redis decides again within 10 s of coming back');
  assert.equal(recovered?.limits[0]?.remaining, 98, 'the count from before the outage is kept');
  await forget(usage);
});
