// Rate and usage limits end to end: three gateway processes and two policy processes on one
// private Redis. The management routes (operations 8 and 9 among them) over real HTTP; a
// limit of N admitting N under parallel load across replicas; a usage limit overspent by no
// more than the requests in flight when it was crossed, and active again the moment its
// credit_limit is raised; a stream ended when its limit runs out; one policy process killed
// mid-run; Redis killed mid-run with each failure mode doing what it says.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import {
  addFakeOpenAi,
  createServiceKey,
  createWorkspace,
  eventually,
  freePorts,
  httpRequest,
  startPrivateRedis,
  startStack,
  type ApiResponse,
  type Json,
  type PrivateRedis,
  type Stack,
} from './harness/index.ts';

const UPSTREAM_KEY = 'sk-upstream-policies';
const GATEWAYS = 3;
const POLICY_PROCESSES = 2;
/** What the fake upstream reports for every answer (prompt 9 + completion 3). */
const TOKENS_PER_ANSWER = 12;

let stack: Stack;
let redis: PrivateRedis;
let workspaceId: string;

before(async () => {
  const [redisPort] = await freePorts(1);
  redis = await startPrivateRedis(redisPort!);
  stack = await startStack({
    upstreamKey: UPSTREAM_KEY,
    replicas: { gateway: GATEWAYS, policy: POLICY_PROCESSES },
    env: {
      REDIS_URL: redis.url,
      // Nine processes share two cores here: a check slower than production's 250 ms deadline
      // would be decided by the failure mode, which is tested on its own below.
      POLICY_TIMEOUT_MS: '2000',
    },
  });
  workspaceId = await createWorkspace(stack, 'Policies');
  await addFakeOpenAi(stack, UPSTREAM_KEY);
});

after(async () => {
  await stack?.stop();
  await redis?.stop();
});

/** A fresh workspace service key: each scenario counts against its own. */
const newKey = (name: string) => createServiceKey(stack, workspaceId, name);

function admin(method: string, path: string, body?: unknown): Promise<ApiResponse> {
  return stack.request(method, path, { key: stack.adminKey, body });
}

function assertError(response: ApiResponse, status: number, code?: string): void {
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${response.text}`);
  assert.deepEqual(Object.keys(response.body).sort(), ['error']);
  assert.deepEqual(Object.keys(response.body.error).sort(), ['code', 'message', 'param', 'type']);
  if (code) assert.equal(response.body.error.code, code, response.text);
}

let turn = 0;
/** One chat completion through the next gateway replica in turn. */
function chat(key: string, body: Record<string, unknown> = {}): Promise<ApiResponse> {
  const gateways = stack.urls('gateway');
  const base = gateways[turn++ % gateways.length]!;
  return httpRequest(base, 'POST', '/v1/chat/completions', {
    key,
    body: {
      model: '@fake-openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello' }],
      ...body,
    },
    timeoutMs: 15_000,
  });
}

/** `total` requests, `concurrency` at a time, spread over the gateways; statuses in order of completion. */
async function load(
  total: number,
  concurrency: number,
  send: () => Promise<ApiResponse>,
  onDone?: (completed: number) => Promise<void> | void,
): Promise<ApiResponse[]> {
  const responses: ApiResponse[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      responses.push(await send());
      await onDone?.(responses.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return responses;
}

function countBy(responses: ApiResponse[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of responses) {
    const label = r.status === 200 ? '200' : `${r.status} ${r.body?.error?.code ?? ''}`.trim();
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/**
 * Until every policy process knows the policy: the key's own usage view (answered by one
 * policy process in turn) names it several times in a row.
 */
async function policyInForce(key: string, policyId: string): Promise<void> {
  let streak = 0;
  await eventually(
    `policy ${policyId} to be known to every policy process`,
    async () => {
      const usage = await stack.request('GET', '/v2/policies/usage', { key });
      assert.equal(usage.status, 200, usage.text);
      const named = (usage.body.data as Json[]).some((limit) => limit.policy_id === policyId);
      streak = named ? streak + 1 : 0;
      return streak >= POLICY_PROCESSES * 2 ? true : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
}

/** Rate windows are fixed hours here: a run that might straddle the hour waits for the next one. */
async function notNearTheHour(): Promise<void> {
  const intoHour = Date.now() % 3_600_000;
  if (intoHour > 3_600_000 - 60_000) await sleep(3_600_000 - intoHour + 1_000);
}

async function rateLimit(key: { id: string }, value: number): Promise<string> {
  const created = await admin('POST', '/v2/policies/rate-limits', {
    name: `rate ${randomBytes(3).toString('hex')}`,
    conditions: [{ key: 'api_key', value: key.id }],
    group_by: [{ key: 'api_key' }],
    type: 'requests',
    unit: 'rph',
    value,
  });
  assert.equal(created.status, 200, created.text);
  return created.body.id;
}

async function usageLimit(key: { id: string }, creditLimit: number): Promise<string> {
  const created = await admin('POST', '/v2/policies/usage-limits', {
    name: `usage ${randomBytes(3).toString('hex')}`,
    conditions: [{ key: 'api_key', value: key.id }],
    group_by: [{ key: 'api_key' }],
    type: 'tokens',
    credit_limit: creditLimit,
  });
  assert.equal(created.status, 200, created.text);
  return created.body.id;
}

test('operations 8 and 9: a rate-limit policy is created, read, listed by target, updated with PUT and deleted with DELETE', async () => {
  const created = await admin('POST', '/v2/policies/rate-limits', {
    name: '100 RPM per key',
    workspace_id: workspaceId,
    conditions: [{ key: 'workspace_id', value: workspaceId }],
    group_by: [{ key: 'api_key' }],
    type: 'requests',
    unit: 'rpm',
    value: 100,
  });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
  assert.equal(created.body.object, 'policy_rate_limits');
  const id: string = created.body.id;
  const path = `/v2/policies/rate-limits/${id}`;

  const read = await admin('GET', path);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.id, id);
  assert.equal(read.body.object, 'policy_rate_limits');
  assert.equal(read.body.name, '100 RPM per key');
  assert.equal(read.body.type, 'requests');
  assert.equal(read.body.unit, 'rpm');
  assert.equal(read.body.value, 100);
  assert.equal(read.body.target, 'llm');
  assert.equal(read.body.status, 'active');
  assert.equal(read.body.workspace_id, workspaceId);
  assert.deepEqual(read.body.group_by, [{ key: 'api_key' }]);

  const llm = await admin('GET', `/v2/policies/rate-limits?target=llm&workspace_id=${workspaceId}`);
  assert.equal(llm.status, 200, llm.text);
  assert.ok((llm.body.data as Json[]).some((p) => p.id === id && p.target === 'llm'));
  const tools = await admin('GET', `/v2/policies/rate-limits?target=mcp_tools&workspace_id=${workspaceId}`);
  assert.equal(tools.status, 200, tools.text);
  assert.ok(!(tools.body.data as Json[]).some((p) => p.id === id));

  // Operation 8: name, value and conditions, the body the spec gives.
  const conditions = [
    { key: 'workspace_id', value: workspaceId },
    { key: 'metadata.team', value: 'research', excludes: true },
  ];
  const updated = await admin('PUT', path, { name: '50 RPM per key', value: 50, conditions });
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.id, id);
  assert.equal(updated.body.name, '50 RPM per key');
  assert.equal(updated.body.value, 50);
  assert.deepEqual(
    (updated.body.conditions as Json[]).map((c) => [c.key, c.value, c.excludes === true]),
    [
      ['workspace_id', workspaceId, false],
      ['metadata.team', 'research', true],
    ],
  );
  assert.equal((await admin('GET', path)).body.value, 50, 'the update is stored');

  assertError(await admin('PUT', path, { value: -5 }), 400);
  assert.equal((await admin('PUT', path, { value: -5 })).body.error.param, 'value');
  assertError(await admin('PUT', path, { conditions: [{ key: 'tool_name', value: 'x' }] }), 400);
  assert.equal((await admin('GET', path)).body.value, 50, 'a refused update changes nothing');

  // Operation 9: an empty object, and the policy is gone.
  const deleted = await admin('DELETE', path);
  assert.equal(deleted.status, 200, deleted.text);
  assert.deepEqual(deleted.body, {});
  assertError(await admin('GET', path), 404);
  assertError(await admin('PUT', path, { value: 10 }), 404);
  assertError(await admin('DELETE', path), 404);
  assertError(await admin('GET', `/v2/policies/rate-limits/${randomUUIDLike()}`), 404);
});

test('usage-limit policies: periods normalised to UTC midnight, conditions changed with PUT, per-entity usage and its reset', async () => {
  const both = await admin('POST', '/v2/policies/usage-limits', {
    conditions: [{ key: 'workspace_id', value: workspaceId }],
    group_by: [{ key: 'api_key' }],
    type: 'cost',
    credit_limit: 10,
    periodic_reset: 'monthly',
    periodic_reset_days: 10,
  });
  assertError(both, 400);
  const tooLong = await admin('POST', '/v2/policies/usage-limits', {
    conditions: [{ key: 'workspace_id', value: workspaceId }],
    group_by: [{ key: 'api_key' }],
    type: 'cost',
    credit_limit: 10,
    periodic_reset_days: 366,
  });
  assertError(tooLong, 400);
  assert.equal(tooLong.body.error.param, 'periodic_reset_days');

  const key = await newKey('usage routes');
  const created = await admin('POST', '/v2/policies/usage-limits', {
    name: 'Tokens per key',
    conditions: [{ key: 'workspace_id', value: workspaceId }],
    group_by: [{ key: 'api_key' }],
    type: 'tokens',
    credit_limit: 100_000,
    alert_threshold: 80_000,
    periodic_reset_days: 30,
    next_usage_reset_at: '2030-01-15T13:45:10Z',
  });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.object, 'policy_usage_limits');
  const id: string = created.body.id;
  const path = `/v2/policies/usage-limits/${id}`;

  const read = await admin('GET', path);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.type, 'tokens');
  assert.equal(read.body.credit_limit, 100_000);
  assert.equal(read.body.alert_threshold, 80_000);
  assert.equal(read.body.periodic_reset_days, 30);
  assert.equal(read.body.periodic_reset ?? null, null);
  const nextReset = new Date(read.body.next_usage_reset_at);
  assert.equal(nextReset.getUTCHours() + nextReset.getUTCMinutes() + nextReset.getUTCSeconds(), 0);
  assert.ok(nextReset.getTime() > Date.now(), 'the next reset is ahead');
  assert.ok('last_reset_at' in read.body);

  // Conditions change with PUT.
  const narrowed = await admin('PUT', path, {
    conditions: [{ key: 'api_key', value: key.id }],
  });
  assert.equal(narrowed.status, 200, narrowed.text);
  assert.deepEqual(
    (narrowed.body.conditions as Json[]).map((c) => [c.key, c.value]),
    [['api_key', key.id]],
  );
  await policyInForce(key.key, id);

  for (let i = 0; i < 3; i++) assert.equal((await chat(key.key)).status, 200);
  const entities = await eventually(
    'the entity to show the three answers',
    async () => {
      const listed = await admin('GET', `${path}/entities`);
      assert.equal(listed.status, 200, listed.text);
      const data = listed.body.data as Json[];
      return data.length === 1 && data[0].current_usage === 3 * TOKENS_PER_ANSWER ? listed : undefined;
    },
    { timeoutMs: 10_000 },
  );
  const entity = entities.body.data[0];
  assert.equal(entity.value_key, `api_key:${key.id}`);
  assert.equal(entity.status, 'active');
  assert.equal(entities.body.total, 1);

  const own = await stack.request('GET', '/v2/policies/usage', { key: key.key });
  const mine = (own.body.data as Json[]).find((limit) => limit.policy_id === id);
  assert.ok(mine, own.text);
  assert.equal(mine.remaining, 100_000 - 3 * TOKENS_PER_ANSWER);

  const reset = await admin('PUT', `${path}/entities/${encodeURIComponent(entity.id)}/reset`);
  assert.equal(reset.status, 200, reset.text);
  assert.deepEqual(reset.body, {});
  const after = await admin('GET', `${path}/entities`);
  assert.equal(after.body.data[0]?.current_usage ?? 0, 0);

  assert.deepEqual((await admin('DELETE', path)).body, {});
  assertError(await admin('GET', path), 404);
});

test('a limit of N requests admits exactly N under parallel load through three gateways and two policy processes', async () => {
  await notNearTheHour();
  const key = await newKey('replica accuracy');
  const limit = 150;
  const policyId = await rateLimit(key, limit);
  await policyInForce(key.key, policyId);

  const fallbacksBefore = await gatewayFallbacks();
  const leasedBefore = await gatewayMetric('switchyard_gateway_policy_lease_admissions_total');
  const responses = await load(limit * 2, 24, () => chat(key.key));
  assert.equal(
    (await gatewayFallbacks()) - fallbacksBefore,
    0,
    'every check was answered by a policy process',
  );
  const counts = countBy(responses);
  assert.deepEqual(Object.keys(counts).sort(), ['200', '429 rate_limit_exceeded'], JSON.stringify(counts));
  assert.ok(Math.abs(counts['200']! - limit) <= limit * 0.01, `admitted ${counts['200']} of limit ${limit}`);
  // Exact although the gateways admitted part of the load on leases, without a check each.
  const leased = (await gatewayMetric('switchyard_gateway_policy_lease_admissions_total')) - leasedBefore;
  assert.ok(leased > 0 && leased < counts['200']!, `${leased} admitted on leases`);

  const denied = responses.find((r) => r.status === 429)!;
  assert.ok(Number(denied.headers.get('retry-after')) > 0, 'retry-after names the wait');
  assert.equal(denied.headers.get('x-ratelimit-limit-requests'), String(limit));
  assert.equal(denied.headers.get('x-ratelimit-remaining-requests'), '0');
  assert.ok(denied.headers.get('x-ratelimit-reset-requests'));
  assert.equal(denied.headers.get('x-vendor-policy-id'), policyId);
  assert.match(denied.body.error.message, new RegExp(policyId));

  // The request log says which policy denied it; an admitted request's log shows its hold.
  const logged = async (response: ApiResponse) => {
    const id = response.headers.get('x-request-id')!;
    return eventually(
      `the request log of ${id}`,
      async () => {
        const log = await stack.request('GET', `/v1/logs/${id}`, { key: key.key });
        return log.status === 200 ? log.body : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
  };
  const deniedLog = await logged(denied);
  assert.equal(deniedLog.policy.decision, 'denied');
  assert.equal(deniedLog.policy.policy_id, policyId);
  assert.equal(deniedLog.policy.code, 'rate_limit_exceeded');
  const admittedLog = await logged(responses.find((r) => r.status === 200)!);
  assert.equal(admittedLog.policy.decision, 'allowed');
  assert.deepEqual(admittedLog.policy.adjustments, [
    { policy_id: policyId, type: 'requests', held: 1, used: 1 },
  ]);

  // The official SDK raises its RateLimitError for the denial.
  const client = new OpenAI({
    apiKey: key.key,
    baseURL: `${stack.urls('gateway')[1]}/v1`,
    maxRetries: 0,
    timeout: 15_000,
  });
  const err = await client.chat.completions
    .create({ model: '@fake-openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.ok(err instanceof OpenAI.RateLimitError, `got ${String(err)}`);
  assert.equal(err.status, 429);
  assert.equal(err.code, 'rate_limit_exceeded');
  assert.ok(err.headers.get('retry-after'));
});

test('a usage limit is overspent by at most the requests in flight when it was crossed, and raising credit_limit reactivates the key at once', async () => {
  const key = await newKey('usage overspend');
  const creditLimit = 600;
  const concurrency = 12;
  const policyId = await usageLimit(key, creditLimit);
  await policyInForce(key.key, policyId);

  const responses = await load(120, concurrency, () => chat(key.key, { max_tokens: 3 }));
  const counts = countBy(responses);
  const admitted = counts['200'] ?? 0;
  const used = admitted * TOKENS_PER_ANSWER;
  assert.ok(used >= creditLimit, `only ${used} tokens were used before denials (${JSON.stringify(counts)})`);
  assert.ok(
    used <= creditLimit + concurrency * TOKENS_PER_ANSWER,
    `${used} tokens used: more than the limit plus what was in flight (${JSON.stringify(counts)})`,
  );
  assert.equal(
    admitted + (counts['429 usage_limit_exceeded'] ?? 0),
    responses.length,
    JSON.stringify(counts),
  );

  const exhausted = await chat(key.key);
  assertError(exhausted, 429, 'usage_limit_exceeded');
  assert.match(exhausted.body.error.message, new RegExp(policyId));
  const entities = await admin('GET', `/v2/policies/usage-limits/${policyId}/entities?status=exhausted`);
  assert.equal(entities.body.data.length, 1, entities.text);

  // The release log's move: credit_limit raised → active again, without waiting for a reset.
  const raised = await admin('PUT', `/v2/policies/usage-limits/${policyId}`, { credit_limit: 100_000 });
  assert.equal(raised.status, 200, raised.text);
  await eventually(
    'the key to be served again on every gateway',
    async () => {
      const results = await Promise.all(stack.urls('gateway').map(() => chat(key.key)));
      return results.every((r) => r.status === 200) ? true : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200 },
  );
});

test('a stream is charged while it runs: when its usage limit runs out it ends with an error event, before the whole answer', async () => {
  const key = await newKey('stream budget');
  const policyId = await usageLimit(key, 40);
  await policyInForce(key.key, policyId);
  const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
  const abortedBefore = stack.upstream.aborted;
  const response = await httpRequest(stack.urls('gateway')[2]!, 'POST', '/v1/chat/completions', {
    key: key.key,
    body: {
      model: '@fake-openai/slow-stream',
      stream: true,
      max_tokens: 4,
      messages: [{ role: 'user', content: words }],
    },
    timeoutMs: 20_000,
  });
  assert.equal(response.status, 200, response.text);
  const events = response.text.split('\n\n').filter(Boolean);
  assert.equal(events.at(-1), 'data: [DONE]');
  const error = JSON.parse(events.at(-2)!.slice('data: '.length));
  assert.equal(error.error.code, 'usage_limit_exceeded', events.at(-2));
  assert.match(error.error.message, new RegExp(policyId));
  const content = events
    .slice(0, -2)
    .map((e) => JSON.parse(e.slice('data: '.length)))
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '')
    .join('');
  assert.ok(content.length > 0, 'the chunks before the limit ran out were delivered');
  assert.ok(`Echo: ${words}`.startsWith(content), 'what was delivered is the start of the answer');
  assert.ok(content.length < `Echo: ${words}`.length, 'the stream ended before the whole answer');
  await eventually(
    'the upstream read to be stopped',
    async () => (stack.upstream.aborted > abortedBefore ? true : undefined),
    { timeoutMs: 5_000 },
  );
});

/** The gateways' failure-mode decisions so far (policy service unreachable), summed over replicas. */
/** A metric summed over its series and over every gateway process. */
async function gatewayMetric(name: string): Promise<number> {
  let total = 0;
  const series = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm');
  for (const base of stack.urls('gateway')) {
    const metrics = await httpRequest(base, 'GET', '/metrics');
    for (const [, value] of metrics.text.matchAll(series)) total += Number(value);
  }
  return total;
}

const gatewayFallbacks = () => gatewayMetric('switchyard_gateway_policy_fallback_decisions_total');

test('killing one policy process mid-run leaves enforcement running through the other', async () => {
  await notNearTheHour();
  const key = await newKey('policy failover');
  const limit = 100;
  const concurrency = 16;
  const policyId = await rateLimit(key, limit);
  await policyInForce(key.key, policyId);
  const fallbacksBefore = await gatewayFallbacks();

  const responses = await load(
    limit * 2,
    concurrency,
    () => chat(key.key),
    async (completed) => {
      if (completed === 60) await stack.process('policy', 1).kill();
    },
  );
  const counts = countBy(responses);
  const admitted = counts['200'] ?? 0;
  // A check cut off by the killed process is asked again of the survivor (had the killed one
  // counted it, it counts twice); one that cannot be asked again is decided by the gateway's
  // failure mode. Either way the error is bounded by the checks in flight at the kill.
  const fallbacks = (await gatewayFallbacks()) - fallbacksBefore;
  assert.ok(fallbacks <= concurrency, `${fallbacks} failure-mode decisions`);
  assert.ok(admitted >= limit - concurrency, `admitted ${admitted} (${JSON.stringify(counts)})`);
  assert.ok(
    admitted <= limit + fallbacks,
    `admitted ${admitted} with ${fallbacks} failure-mode decisions (${JSON.stringify(counts)})`,
  );
  assert.deepEqual(Object.keys(counts).sort(), ['200', '429 rate_limit_exceeded'], JSON.stringify(counts));
  const last = responses.slice(-40);
  assert.ok(
    last.every((r) => r.status === 429 && r.body.error.code === 'rate_limit_exceeded'),
    `after the kill the limit still holds: ${JSON.stringify(countBy(last))}`,
  );
});

test('with Redis gone a rate limit fails open through a local limiter and a usage limit fails closed; both recover when it is back', async () => {
  const rateKey = await newKey('chaos rate');
  const usageKey = await newKey('chaos usage');
  const ratePolicy = await rateLimit(rateKey, 1_000);
  const usagePolicy = await usageLimit(usageKey, 1_000_000);
  await policyInForce(rateKey.key, ratePolicy);
  await policyInForce(usageKey.key, usagePolicy);
  assert.equal((await chat(rateKey.key)).status, 200);
  assert.equal((await chat(usageKey.key)).status, 200);

  await redis.kill();
  try {
    for (let i = 0; i < GATEWAYS * 2; i++) {
      assert.equal((await chat(rateKey.key)).status, 200, 'fail-open: the rate-limited key is still served');
      assertError(await chat(usageKey.key), 503, 'policy_unavailable');
    }
    const metrics = await httpRequest(stack.urls('policy')[0]!, 'GET', '/metrics');
    assert.match(metrics.text, /switchyard_policy_[a-z_]*(failure|degraded)[a-z_]*\{[^}]*\}\s+[1-9]/);
  } finally {
    await redis.start();
  }
  await eventually(
    'the usage-limited key to be served again once Redis is back',
    async () => ((await chat(usageKey.key)).status === 200 ? true : undefined),
    { timeoutMs: 20_000, intervalMs: 250 },
  );
  assert.equal((await chat(rateKey.key)).status, 200);
});

function randomUUIDLike(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
