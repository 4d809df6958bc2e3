// Tool calls (target mcp_tools) on real Redis (REDIS_URL): limited per tool and per server
// exactly, and their cost spent from the same budgets as model calls' cost.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisKeyValueStore } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { requireServiceEnv, uniqueSuffix } from '@switchyard/core/testing';
import { policy } from '@switchyard/proto';
import { ratePolicy, usagePolicy } from '../testing/policy-directory-stand-in.ts';
import { startPolicyHarness, type PolicyHarness } from '../testing/policy-harness.ts';

const { ALLOW, DENY } = policy.Decision;

let kv: RedisKeyValueStore;
let p: PolicyHarness;

before(async () => {
  const logger = createLogger('test');
  logger.silent = true;
  kv = new RedisKeyValueStore(requireServiceEnv('REDIS_URL'), logger, `test:${uniqueSuffix()}:`);
  await kv.connect();
  p = await startPolicyHarness({ counters: kv.limitCounters({ timeoutMs: 500 }), startMs: Date.now() });
});

after(async () => {
  await p?.close();
  await kv?.close();
});

const allowed = (responses: policy.CheckResponse[]) => responses.filter((r) => r.decision === ALLOW).length;

test('a per-tool limit of 3 admits exactly 3 of 20 concurrent calls of each tool, and not model calls', async () => {
  const org = p.organisation((id) =>
    ratePolicy(id, {
      name: 'Three a minute per tool',
      target: 'mcp_tools',
      groupBy: ['tool_name'],
      value: 3,
    }),
  );
  const [search, fetch] = await Promise.all([
    Promise.all(Array.from({ length: 20 }, () => org.checkTool('docs', 'search'))),
    Promise.all(Array.from({ length: 20 }, () => org.checkTool('docs', 'fetch'))),
  ]);
  assert.equal(allowed(search), 3);
  assert.equal(allowed(fetch), 3);
  const denied = search.find((r) => r.decision === DENY)!;
  assert.equal(denied.code, 'rate_limit_exceeded');
  assert.equal(denied.policyId, org.policies[0]!.id);
  assert.match(denied.message, /policy "Three a minute per tool"/);
  assert.ok(denied.message.includes('for tool_name:search'), denied.message);
  assert.ok(denied.retryAfterSeconds > 0 && denied.retryAfterSeconds <= 60, String(denied.retryAfterSeconds));
  assert.equal(denied.limits[0]!.valueKey, 'tool_name:search');

  const model = await org.check();
  assert.deepEqual([model.decision, model.limits.length], [ALLOW, 0], 'a model call is not a tool call');
});

test('a per-server limit of 5 counts every tool of the server together, each server apart', async () => {
  const org = p.organisation((id) =>
    ratePolicy(id, { target: 'mcp_tools', groupBy: ['mcp_server', 'api_key'], value: 5 }),
  );
  const tools = ['search', 'fetch', 'list'];
  const docs = await Promise.all(Array.from({ length: 30 }, (_, i) => org.checkTool('docs', tools[i % 3]!)));
  assert.equal(allowed(docs), 5);
  const denied = docs.find((r) => r.decision === DENY)!;
  assert.equal(denied.limits[0]!.valueKey, `mcp_server:docs,api_key:${org.apiKeyId}`);
  const tickets = await Promise.all(Array.from({ length: 8 }, () => org.checkTool('tickets', 'search')));
  assert.equal(allowed(tickets), 5);
});

test('conditions on the server and tool pick the calls a limit counts', async () => {
  const org = p.organisation((id) =>
    ratePolicy(id, {
      target: 'mcp_tools',
      value: 1,
      conditions: [
        { key: 'mcp_server', value: 'docs' },
        { key: 'tool_name', value: 'delete', excludes: true },
      ],
    }),
  );
  const decisions = [];
  for (const [server, tool] of [
    ['docs', 'search'],
    ['docs', 'search'],
    ['docs', 'delete'],
    ['tickets', 'search'],
  ] as const)
    decisions.push((await org.checkTool(server, tool)).decision);
  assert.deepEqual(decisions, [ALLOW, DENY, ALLOW, ALLOW]);
});

test("a tool call's cost is spent from the cost budget model calls spend, and is refused once it is gone", async () => {
  const org = p.organisation((id) => usagePolicy(id, { name: 'Team budget', creditLimit: 1 }));
  const model = await org.check({}, { cost: 0.4 });
  assert.equal(model.decision, ALLOW);
  await org.accrue(model.reservation, { cost: 0.4 }, true);

  const free = await org.checkTool('docs', 'search');
  assert.deepEqual([free.decision, free.limits.length], [ALLOW, 0], 'a call without a cost spends nothing');
  assert.equal(free.skipChecksForMs, 0, 'a call with a cost could still count');

  const tool = await org.checkTool('docs', 'search', 0.5);
  assert.equal(tool.decision, ALLOW);
  assert.equal(Number(tool.limits[0]!.remaining.toFixed(6)), 0.1);
  await org.accrue(tool.reservation, { cost: 0.7 }, true);

  const usage = await p.ledger.listUsage({
    organisationId: org.organisationId,
    policyId: org.policies[0]!.id!,
  });
  assert.deepEqual(
    usage.entities.map((e) => [e.valueKey, Number(e.currentUsage.toFixed(6))]),
    [[`api_key:${org.apiKeyId}`, 1.1]],
  );
  const { limits } = await p.ledger.keyUsage({
    organisationId: org.organisationId,
    workspaceId: org.workspaceId,
    apiKeyId: org.apiKeyId,
  });
  assert.deepEqual(
    limits.map((l) => [l.policyId, l.remaining]),
    [[org.policies[0]!.id, 0]],
  );

  const deniedTool = await org.checkTool('docs', 'fetch', 0.01);
  assert.deepEqual([deniedTool.decision, deniedTool.code], [DENY, 'usage_limit_exceeded']);
  assert.match(deniedTool.message, /policy "Team budget".*allows 1 USD per calendar month/);
  const nextMonth = new Date(p.clock.ms);
  const resetMs = Date.UTC(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1);
  assert.equal(deniedTool.retryAfterSeconds, Math.ceil((resetMs - p.clock.ms) / 1000));
  const deniedModel = await org.check({}, { cost: 0.01 });
  assert.deepEqual([deniedModel.decision, deniedModel.code], [DENY, 'usage_limit_exceeded']);

  await p.ledger.resetUsage({
    organisationId: org.organisationId,
    policyId: org.policies[0]!.id!,
    entity: `api_key:${org.apiKeyId}`,
  });
});

test('a cost budget conditioned on the model or provider does not count tool calls, even excluding one', async () => {
  const org = p.organisation(
    (id) => usagePolicy(id, { creditLimit: 0.1, conditions: [{ key: 'model', value: 'gpt-4o-mini' }] }),
    (id) =>
      usagePolicy(id, {
        creditLimit: 0.1,
        conditions: [{ key: 'provider', value: 'anthropic', excludes: true }],
      }),
  );
  for (let i = 0; i < 3; i++) assert.equal((await org.checkTool('docs', 'search', 0.5)).decision, ALLOW);
  const model = await org.check({}, { cost: 0.5 });
  assert.equal(model.limits.length, 2);
  for (const policyInit of org.policies)
    await p.ledger.resetUsage({
      organisationId: org.organisationId,
      policyId: policyInit.id!,
      entity: `api_key:${org.apiKeyId}`,
    });
});

test('a check of an unknown target is refused, naming the field', async () => {
  const org = p.organisation((id) => ratePolicy(id));
  await assert.rejects(org.check({ target: 'tools' }), (err: Error) => {
    assert.match(err.message, /target must be one of llm, mcp_tools/);
    return true;
  });
});

test("KeyUsage lists a key's tool-call limits that count per key, not those counting per server or tool", async () => {
  const org = p.organisation(
    (id) => ratePolicy(id, { target: 'mcp_tools', groupBy: ['api_key'], value: 10 }),
    (id) => ratePolicy(id, { target: 'mcp_tools', groupBy: ['tool_name'], value: 10 }),
  );
  await org.checkTool('docs', 'search');
  await org.checkTool('docs', 'fetch');
  const { limits } = await p.ledger.keyUsage({
    organisationId: org.organisationId,
    workspaceId: org.workspaceId,
    apiKeyId: org.apiKeyId,
  });
  assert.deepEqual(
    limits.map((l) => [l.policyId, l.remaining, l.valueKey]),
    [[org.policies[0]!.id, 8, `api_key:${org.apiKeyId}`]],
  );
});
