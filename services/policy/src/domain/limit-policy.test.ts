import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { periodAt } from '@switchyard/rules';
import { appliesTo, couldApplyToKey, valueKey, type LimitPolicy, type RequestFacts } from './limit-policy.ts';
import { counterKey, denialMessage, tighterFirst, type Counted } from './limits.ts';

const facts: RequestFacts = {
  organisationId: 'org-1',
  workspaceId: 'ws-1',
  apiKeyId: 'key-1',
  userId: '',
  provider: 'openai',
  model: 'gpt-4o',
  metadata: { team: 'ml' },
};

function policy(overrides: Partial<LimitPolicy> = {}): LimitPolicy {
  return {
    id: 'p-1',
    name: 'Team limit',
    kind: 'rate_limit',
    organisationId: 'org-1',
    workspaceId: '',
    conditions: [],
    groupBy: ['api_key'],
    type: 'requests',
    target: 'llm',
    limit: 10,
    schedule: { kind: 'window', unit: 'rpm' },
    ...overrides,
  };
}

describe('conditions', () => {
  test('all must hold; excludes inverts one; * needs a value', () => {
    const cases: Array<[LimitPolicy['conditions'], boolean]> = [
      [[], true],
      [[{ key: 'model', value: 'gpt-4o', excludes: false }], true],
      [[{ key: 'model', value: 'gpt-4o', excludes: true }], false],
      [
        [
          { key: 'model', value: 'gpt-4o', excludes: false },
          { key: 'provider', value: 'anthropic', excludes: false },
        ],
        false,
      ],
      [[{ key: 'metadata.team', value: '*', excludes: false }], true],
      [[{ key: 'metadata.env', value: '*', excludes: false }], false],
      [[{ key: 'metadata.env', value: '*', excludes: true }], true],
      [[{ key: 'user_id', value: '*', excludes: false }], false],
      [[{ key: 'api_key', value: 'key-1', excludes: false }], true],
    ];
    for (const [conditions, expected] of cases) {
      assert.equal(appliesTo(policy({ conditions }), facts), expected, JSON.stringify(conditions));
    }
  });

  test('a workspace policy applies only in its workspace', () => {
    assert.equal(appliesTo(policy({ workspaceId: 'ws-1' }), facts), true);
    assert.equal(appliesTo(policy({ workspaceId: 'ws-2' }), facts), false);
    assert.equal(couldApplyToKey(policy({ workspaceId: 'ws-2' }), facts), false);
  });

  test('whether a policy could apply to a key looks only at what the key decides', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('model', 'provider', 'metadata.team', 'api_key', 'user_id', 'workspace_id'),
        fc.string(),
        fc.boolean(),
        (key, value, excludes) => {
          const p = policy({ conditions: [{ key, value, excludes }] });
          // Whatever the request, a policy that applies to it could apply to its key.
          if (appliesTo(p, facts)) assert.equal(couldApplyToKey(p, facts), true);
          if (['model', 'provider', 'metadata.team'].includes(key))
            assert.equal(couldApplyToKey(p, facts), true);
        },
      ),
    );
  });
});

describe('tool calls', () => {
  const toolCall: RequestFacts = {
    ...facts,
    provider: '',
    model: '',
    mcpServer: 'docs',
    toolName: 'search',
  };
  const tools = (overrides: Partial<LimitPolicy> = {}) => policy({ target: 'mcp_tools', ...overrides });

  test('conditions read the server and the tool', () => {
    const cases: Array<[LimitPolicy['conditions'], boolean]> = [
      [[{ key: 'mcp_server', value: 'docs', excludes: false }], true],
      [[{ key: 'mcp_server', value: 'tickets', excludes: false }], false],
      [[{ key: 'tool_name', value: 'search', excludes: true }], false],
      [[{ key: 'tool_name', value: '*', excludes: false }], true],
      [[{ key: 'api_key', value: 'key-1', excludes: false }], true],
    ];
    for (const [conditions, expected] of cases)
      assert.equal(appliesTo(tools({ conditions }), toolCall), expected, JSON.stringify(conditions));
    assert.equal(appliesTo(tools({ conditions: [cases[0]![0][0]!] }), { ...toolCall, mcpServer: '' }), false);
  });

  test("a model-call policy read on a tool call's facts: a model or provider condition never holds", () => {
    for (const excludes of [false, true]) {
      for (const key of ['model', 'provider']) {
        const p = policy({ kind: 'usage_limit', type: 'cost', conditions: [{ key, value: 'x', excludes }] });
        assert.equal(appliesTo(p, toolCall, 'mcp_tools'), false, `${key} excludes=${String(excludes)}`);
        assert.equal(appliesTo(p, facts), excludes, 'on a model call it reads as before');
      }
    }
    const caller = policy({
      kind: 'usage_limit',
      type: 'cost',
      conditions: [{ key: 'api_key', value: 'key-1', excludes: false }],
    });
    assert.equal(appliesTo(caller, toolCall, 'mcp_tools'), true);
  });

  test('group_by counts per tool, per server, per key', () => {
    assert.equal(
      valueKey(tools({ groupBy: ['mcp_server', 'tool_name', 'api_key'] }), toolCall),
      'mcp_server:docs,tool_name:search,api_key:key-1',
    );
    assert.equal(valueKey(tools({ groupBy: ['tool_name'] }), { ...facts }), 'tool_name:');
  });
});

describe('value_key', () => {
  test('joins group_by keys with their values in order, missing values empty', () => {
    assert.equal(
      valueKey(policy({ groupBy: ['api_key', 'metadata.team', 'metadata.env', 'workspace_id'] }), facts),
      'api_key:key-1,metadata.team:ml,metadata.env:,workspace_id:ws-1',
    );
  });
});

describe('limits', () => {
  const counted = (p: LimitPolicy, used: number): Counted => {
    const period = periodAt(p.schedule, Date.UTC(2026, 2, 14, 12, 30, 15));
    return { policy: p, period, key: counterKey(p, period), field: 'api_key:key-1', used };
  };

  test('counter keys carry the organisation as hash tag, the kind, the policy and the period', () => {
    assert.equal(counted(policy(), 0).key, `{org-1}:rl:p-1:${Date.UTC(2026, 2, 14, 12, 30)}`);
    assert.equal(
      counted(policy({ kind: 'usage_limit', schedule: { kind: 'cumulative' } }), 0).key,
      '{org-1}:ul:p-1:all',
    );
  });

  test('tightest first: least remaining fraction, then the later reset', () => {
    const loose = counted(policy({ id: 'loose', limit: 100 }), 10);
    const tight = counted(policy({ id: 'tight', limit: 10 }), 9);
    const empty = counted(policy({ id: 'zero', limit: 0 }), 0);
    const monthly = counted(policy({ id: 'month', limit: 10, schedule: { kind: 'monthly' } }), 9);
    assert.deepEqual(
      [loose, tight, empty, monthly].sort(tighterFirst).map((c) => c.policy.id),
      ['zero', 'month', 'tight', 'loose'],
    );
  });

  test('a denial names the policy by name and id, the limit, the entity and the reset', () => {
    const message = denialMessage(
      counted(policy({ kind: 'usage_limit', type: 'cost', limit: 5, schedule: { kind: 'monthly' } }), 5.25),
    );
    assert.equal(
      message,
      'Usage limit exceeded: policy "Team limit" (id p-1) allows 5 USD per calendar month for api_key:key-1, and 5.25 USD are used. It resets at 2026-04-01T00:00:00.000Z.',
    );
  });
});
