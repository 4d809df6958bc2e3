import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { policyRequests } from '../testing/policies.ts';

// What a policy may count by depends on its target: tool calls per server or tool as well.

let h: ServiceHarness;
before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

const RATE = '/v2/policies/rate-limits';
const USAGE = '/v2/policies/usage-limits';

const toolRate = (group_by: Array<{ key: string }>, extra: Record<string, unknown> = {}) => ({
  name: 'Tool calls per minute',
  conditions: [{ key: 'mcp_server', value: 'docs' }],
  group_by,
  type: 'requests',
  unit: 'rpm',
  value: 10,
  target: 'mcp_tools',
  ...extra,
});

describe('group_by per target', () => {
  const rate = policyRequests(() => h, RATE);
  const usage = policyRequests(() => h, USAGE);

  test('an mcp_tools rate limit counts per tool, per server and per key, and reads back so', async () => {
    const id = await rate.create(toolRate([{ key: 'mcp_server' }, { key: 'tool_name' }, { key: 'api_key' }]));
    const shown = await rate.get(id);
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.target, 'mcp_tools');
    assert.deepEqual(shown.body.group_by, [{ key: 'mcp_server' }, { key: 'tool_name' }, { key: 'api_key' }]);
  });

  test('an mcp_tools usage limit of requests counts per tool', async () => {
    const id = await usage.create({
      name: 'Tool calls a month',
      conditions: [{ key: 'tool_name', value: '*' }],
      group_by: [{ key: 'tool_name' }, { key: 'workspace_id' }],
      type: 'requests',
      credit_limit: 1000,
      periodic_reset: 'monthly',
      target: 'mcp_tools',
    });
    assert.deepEqual((await usage.get(id)).body.group_by, [{ key: 'tool_name' }, { key: 'workspace_id' }]);
  });

  const refused: Array<[string, string, Record<string, unknown>, string, string]> = [
    [
      'an llm rate limit counting per tool',
      RATE,
      {
        ...toolRate([{ key: 'api_key' }, { key: 'tool_name' }]),
        target: 'llm',
        conditions: [{ key: 'model', value: 'x' }],
      },
      'group_by[1].key',
      "a policy of target 'llm' takes the group_by keys api_key, workspace_id, organisation_id, user_id, metadata.<name>",
    ],
    [
      'an llm usage limit counting per server (target by default)',
      USAGE,
      {
        conditions: [{ key: 'model', value: 'x' }],
        group_by: [{ key: 'mcp_server' }],
        type: 'cost',
        credit_limit: 10,
      },
      'group_by[0].key',
      "a policy of target 'llm' takes the group_by keys",
    ],
    [
      'an mcp_tools rate limit counting per model',
      RATE,
      toolRate([{ key: 'model' }]),
      'group_by[0].key',
      'expected api_key, workspace_id, organisation_id, user_id, mcp_server, tool_name or metadata.<name>',
    ],
  ];
  for (const [what, path, json, param, message] of refused) {
    test(`${what} is a 400 naming the keys the target takes`, async () => {
      const res = await h.request('POST', path, { key: h.adminKey, json });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
      assert.ok(res.body.error.message.includes(message), res.body.error.message);
    });
  }
});
