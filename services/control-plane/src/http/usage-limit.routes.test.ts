import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { createLogger } from '@switchyard/core';
import { events, policy } from '@switchyard/proto';
import { GrpcServer, type ServiceDefinition } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { policyRequests } from '../testing/policies.ts';

const PATH = '/v2/policies/usage-limits';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DAY_MS = 86_400_000;

/** What the stand-in usage ledger was asked, and what it answers. */
const ledger = {
  listed: [] as policy.ListUsageRequest[],
  resets: [] as policy.ResetUsageRequest[],
  keyAsked: [] as policy.KeyUsageRequest[],
  entities: [
    { id: 'YXBpX2tleTph', valueKey: 'api_key:a', currentUsage: 12.5, status: 'active' },
    { id: 'YXBpX2tleTpi', valueKey: 'api_key:b', currentUsage: 100, status: 'exhausted' },
  ],
  /** The policy KeyUsage names first. */
  lastPolicyId: '',
  silent: false,
};

let standIn: GrpcServer;
let h: ServiceHarness;
let other: SeededOrganisation;

/** Control-plane given a client of the usage ledger, as the runtime hands it one. */
const withLedger: ServiceDefinition = { ...controlPlane, clients: ['usageLedger'] } as ServiceDefinition;

before(async () => {
  const logger = createLogger('usage-ledger-stand-in', 'error');
  logger.silent = true;
  const wait = () => (ledger.silent ? new Promise((resolve) => setTimeout(resolve, 3_000)) : undefined);
  standIn = new GrpcServer({ logger, security: {} }).add(
    policy.UsageLedgerService,
    {
      listUsage: async (request) => {
        await wait();
        ledger.listed.push(request);
        const page = ledger.entities.slice(
          request.page * request.pageSize,
          (request.page + 1) * request.pageSize,
        );
        return { entities: page, total: ledger.entities.length };
      },
      resetUsage: async (request) => {
        await wait();
        ledger.resets.push(request);
        return {
          found: ledger.entities.some((e) => e.id === request.entity || e.valueKey === request.entity),
        };
      },
      keyUsage: async (request) => {
        await wait();
        ledger.keyAsked.push(request);
        return {
          limits: [
            {
              policyId: ledger.lastPolicyId,
              kind: policy.PolicyKind.USAGE_LIMIT,
              type: 'cost',
              limit: 50,
              remaining: 37.5,
              resetAtMs: String(Date.UTC(2030, 0, 1)),
              valueKey: `api_key:${request.apiKeyId}`,
            },
            {
              policyId: '4e54a1a4-109c-43ee-b0f7-11e7d60b0066',
              kind: policy.PolicyKind.RATE_LIMIT,
              type: 'requests',
              limit: 10,
              remaining: 9,
              resetAtMs: '0',
              valueKey: 'workspace_id:w',
            },
          ],
        };
      },
    },
    { listUsage: ['control-plane'], resetUsage: ['control-plane'], keyUsage: ['control-plane'] },
  );
  const port = await standIn.listen('127.0.0.1', 0);
  h = await startServiceHarness({
    services: [withLedger],
    clientAddresses: { usageLedger: `127.0.0.1:${port}` },
  });
  other = await seedOrganisation(h.db('control-plane').manager, 'usage-other');
});
after(async () => {
  await h?.close();
  await standIn?.close();
});

const monthly = (extra: Record<string, unknown> = {}) => ({
  name: 'Monthly cost per key',
  conditions: [{ key: 'workspace_id', value: 'default' }],
  group_by: [{ key: 'api_key' }],
  type: 'cost',
  credit_limit: 1000,
  alert_threshold: 800,
  periodic_reset: 'monthly',
  ...extra,
});

const { create, get, put } = policyRequests(() => h, PATH);

function nextMonthStart(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

describe('creating and reading a usage limit policy', () => {
  test('a workspace key creates a monthly cost limit and reads it back whole', async () => {
    const created = await h.request('POST', PATH, { key: h.workspaceKey, json: monthly() });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
    assert.match(created.body.id, UUID);
    assert.equal(created.body.object, 'policy_usage_limits');
    const shown = await get(created.body.id);
    assert.equal(shown.status, 200, shown.text);
    const { created_at: createdAt, last_updated_at: updatedAt, ...rest } = shown.body;
    assert.deepEqual(rest, {
      id: created.body.id,
      name: 'Monthly cost per key',
      description: null,
      conditions: [{ key: 'workspace_id', value: h.workspaceId, excludes: false }],
      group_by: [{ key: 'api_key' }],
      type: 'cost',
      target: 'llm',
      status: 'active',
      workspace_id: h.workspaceId,
      organisation_id: h.organisationId,
      credit_limit: 1000,
      alert_threshold: 800,
      periodic_reset: 'monthly',
      periodic_reset_days: null,
      next_usage_reset_at: nextMonthStart(),
      last_reset_at: null,
      object: 'policy_usage_limits',
    });
    assert.equal(updatedAt, createdAt);
  });

  test('a period of days counts from next_usage_reset_at, normalised to UTC midnight', async () => {
    const anchor = new Date(Date.now() - 10 * DAY_MS - 5 * 3_600_000);
    const id = await create(
      monthly({
        periodic_reset: undefined,
        periodic_reset_days: 7,
        next_usage_reset_at: anchor.toISOString(),
      }),
    );
    const shown = (await get(id)).body;
    const midnight = Math.floor(anchor.getTime() / DAY_MS) * DAY_MS;
    const elapsed = Math.floor((Date.now() - midnight) / (7 * DAY_MS));
    assert.equal(shown.periodic_reset_days, 7);
    assert.equal(shown.periodic_reset, null);
    assert.equal(shown.next_usage_reset_at, new Date(midnight + (elapsed + 1) * 7 * DAY_MS).toISOString());
    assert.equal(shown.last_reset_at, null, 'the current period began before the policy existed');
  });

  test('a cumulative limit never resets', async () => {
    const id = await create(monthly({ periodic_reset: undefined, type: 'tokens', alert_threshold: null }));
    const shown = (await get(id)).body;
    assert.equal(shown.next_usage_reset_at, null);
    assert.equal(shown.last_reset_at, null);
    assert.equal(shown.alert_threshold, null);
  });
});

describe('validation', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'both periodic_reset and periodic_reset_days',
      monthly({ periodic_reset_days: 30 }),
      'periodic_reset_days',
    ],
    [
      'periodic_reset_days 0',
      monthly({ periodic_reset: null, periodic_reset_days: 0 }),
      'periodic_reset_days',
    ],
    [
      'periodic_reset_days 366',
      monthly({ periodic_reset: null, periodic_reset_days: 366 }),
      'periodic_reset_days',
    ],
    [
      'fractional periodic_reset_days',
      monthly({ periodic_reset: null, periodic_reset_days: 1.5 }),
      'periodic_reset_days',
    ],
    ['an unknown periodic_reset', monthly({ periodic_reset: 'daily' }), 'periodic_reset'],
    ['a negative credit_limit', monthly({ credit_limit: -1, alert_threshold: null }), 'credit_limit'],
    ['an alert_threshold at the credit limit', monthly({ alert_threshold: 1000 }), 'alert_threshold'],
    ['an unknown type', monthly({ type: 'seconds' }), 'type'],
    ['cost on an mcp_tools policy', monthly({ target: 'mcp_tools' }), 'type'],
    [
      'a next_usage_reset_at that is no date',
      monthly({ next_usage_reset_at: 'tomorrow' }),
      'next_usage_reset_at',
    ],
    ['no conditions', monthly({ conditions: [] }), 'conditions'],
    ['an unknown condition key', monthly({ conditions: [{ key: 'team', value: 'x' }] }), 'conditions[0].key'],
    ['no group_by', monthly({ group_by: [] }), 'group_by'],
    ['a name over 255 characters', monthly({ name: 'n'.repeat(256) }), 'name'],
    ['an unknown field', monthly({ value: 3 }), 'value'],
  ];
  for (const [what, json, param] of cases) {
    test(`creating with ${what} is a 400 naming ${param}`, async () => {
      const res = await h.request('POST', PATH, { key: h.workspaceKey, json });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, param);
    });
  }

  test('updates are checked against the policy as it stands', async () => {
    const id = await create(monthly());
    for (const [json, param] of [
      [{ credit_limit: 500 }, 'credit_limit'],
      [{ alert_threshold: 1000 }, 'alert_threshold'],
      [{ periodic_reset: 'weekly', periodic_reset_days: 3 }, 'periodic_reset_days'],
      [{ periodic_reset_days: 400 }, 'periodic_reset_days'],
      [{ conditions: [{ key: 'tool_name', value: 'x' }] }, 'conditions[0].key'],
      [{ type: 'tokens' }, 'type'],
    ] as const) {
      const res = await put(id, json);
      assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    assert.equal((await get(id)).body.credit_limit, 1000, 'unchanged');
  });
});

describe('updating', () => {
  test('PUT answers the updated policy; one kind of period replaces the other; null makes it cumulative', async () => {
    const id = await create(monthly());
    const before = (await get(id)).body;
    const raised = await put(id, {
      name: 'Raised',
      description: 'more room',
      credit_limit: 2000,
      alert_threshold: 1500,
      conditions: [{ key: 'model', value: 'gpt-4o' }],
    });
    assert.equal(raised.status, 200, raised.text);
    assert.deepEqual(raised.body, {
      ...before,
      name: 'Raised',
      description: 'more room',
      credit_limit: 2000,
      alert_threshold: 1500,
      conditions: [{ key: 'model', value: 'gpt-4o', excludes: false }],
      last_updated_at: raised.body.last_updated_at,
    });
    const anchor = '2026-01-05T17:30:00.000Z';
    const days = (await put(id, { periodic_reset_days: 30, next_usage_reset_at: anchor })).body;
    assert.equal(days.periodic_reset, null);
    assert.equal(days.periodic_reset_days, 30);
    const boundary = Date.parse('2026-01-05T00:00:00.000Z');
    const next = boundary + (Math.floor((Date.now() - boundary) / (30 * DAY_MS)) + 1) * 30 * DAY_MS;
    assert.equal(days.next_usage_reset_at, new Date(next).toISOString());
    const weekly = (await put(id, { periodic_reset: 'weekly' })).body;
    assert.equal(weekly.periodic_reset, 'weekly');
    assert.equal(weekly.periodic_reset_days, null);
    const cumulative = (await put(id, { periodic_reset: null })).body;
    assert.equal(cumulative.periodic_reset, null);
    assert.equal(cumulative.next_usage_reset_at, null);
    assert.deepEqual((await get(id)).body, cumulative);
  });

  test('reset_usage_for_value asks the policy service to reset that value and records the reset', async () => {
    const id = await create(monthly());
    const res = await put(id, { reset_usage_for_value: 'api_key:a' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(ledger.resets.at(-1), {
      ...ledger.resets.at(-1),
      organisationId: h.organisationId,
      policyId: id,
      entity: 'api_key:a',
    });
    assert.ok(Date.now() - Date.parse(res.body.last_reset_at) < 60_000);
  });

  test('DELETE archives', async () => {
    const id = await create(monthly());
    const res = await h.request('DELETE', `${PATH}/${id}`, { key: h.workspaceKey });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});
    assert.equal((await get(id)).status, 404);
    assert.equal((await get(id, h.workspaceKey, '?status=archived')).body.status, 'archived');
    const listed = await h.request('GET', `${PATH}?page_size=1000`, { key: h.workspaceKey });
    assert.ok(!listed.body.data.some((p: { id: string }) => p.id === id));
    const archived = await h.request('GET', `${PATH}?page_size=1000&status=archived`, {
      key: h.workspaceKey,
    });
    assert.ok(archived.body.data.some((p: { id: string }) => p.id === id));
  });
});

describe('listing', () => {
  test('filters by type, target and name and counts the total', async () => {
    const tag = `ul${Date.now()}`;
    const a = await create(monthly({ name: `${tag} cost` }));
    const b = await create(monthly({ name: `${tag} tokens`, type: 'tokens' }));
    const c = await create(
      monthly({
        name: `${tag} tools`,
        type: 'requests',
        target: 'mcp_tools',
        conditions: [{ key: 'mcp_server', value: 'git' }],
      }),
    );
    const ids = async (query: string) => {
      const res = await h.request('GET', `${PATH}?search=${tag}${query}`, { key: h.workspaceKey });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.object, 'list');
      assert.equal(res.body.total, res.body.data.length);
      return res.body.data.map((p: { id: string }) => p.id);
    };
    assert.deepEqual(await ids(''), [a, b, c]);
    assert.deepEqual(await ids('&type=tokens'), [b]);
    assert.deepEqual(await ids('&target=mcp_tools'), [c]);
    assert.deepEqual(await ids(`&workspace_id=${h.workspaceId}&type=cost`), [a]);
  });
});

describe('usage from the policy service', () => {
  test('include_usage=true adds each counted entity and its usage', async () => {
    const id = await create(monthly());
    const res = await get(id, h.workspaceKey, '?include_usage=true');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.value_key_usage_map, {
      'api_key:a': { current_usage: 12.5, status: 'active' },
      'api_key:b': { current_usage: 100, status: 'exhausted' },
    });
    assert.equal((await get(id)).body.value_key_usage_map, undefined);
    assert.equal((await get(id, h.workspaceKey, '?include_usage=maybe')).body.error.param, 'include_usage');
  });

  test('the entities route lists what the policy service counts, passing filters and page', async () => {
    const id = await create(monthly());
    const res = await h.request(
      'GET',
      `${PATH}/${id}/entities?status=exhausted&search=api&page_size=1&current_page=1`,
      {
        key: h.workspaceKey,
      },
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      object: 'list',
      total: 2,
      data: [{ id: 'YXBpX2tleTpi', value_key: 'api_key:b', current_usage: 100, status: 'exhausted' }],
    });
    const asked = ledger.listed.at(-1)!;
    assert.deepEqual(
      {
        org: asked.organisationId,
        policy: asked.policyId,
        status: asked.status,
        search: asked.search,
        page: asked.page,
        size: asked.pageSize,
      },
      { org: h.organisationId, policy: id, status: 'exhausted', search: 'api', page: 1, size: 1 },
    );
    for (const [query, param] of [
      ['page_size=101', 'page_size'],
      ['page_size=0', 'page_size'],
      ['status=spent', 'status'],
      ['current_page=-1', 'current_page'],
    ]) {
      const bad = await h.request('GET', `${PATH}/${id}/entities?${query}`, { key: h.workspaceKey });
      assert.equal(bad.status, 400, query);
      assert.equal(bad.body.error.param, param);
    }
  });

  test('resetting an entity answers {} and records the reset; an unknown entity is a 404', async () => {
    const id = await create(monthly());
    const reset = await h.request('PUT', `${PATH}/${id}/entities/YXBpX2tleTpi/reset`, {
      key: h.workspaceKey,
    });
    assert.equal(reset.status, 200, reset.text);
    assert.deepEqual(reset.body, {});
    assert.equal(ledger.resets.at(-1)!.entity, 'YXBpX2tleTpi');
    assert.ok(Date.now() - Date.parse((await get(id)).body.last_reset_at) < 60_000);
    const unknown = await h.request('PUT', `${PATH}/${id}/entities/bm9uZQ/reset`, { key: h.workspaceKey });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.type, 'not_found_error');
  });

  test('GET /v2/policies/usage shows any key the limits that apply to it', async () => {
    const id = await create(monthly({ name: 'Mine' }));
    ledger.lastPolicyId = id;
    const dataOnly = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Data only', workspace_id: h.workspaceId, scopes: ['completions.write'] },
    });
    const res = await h.request('GET', '/v2/policies/usage', { key: dataOnly.body.key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      object: 'list',
      data: [
        {
          policy_id: id,
          policy_name: 'Mine',
          kind: 'usage_limit',
          type: 'cost',
          value_key: `api_key:${dataOnly.body.id}`,
          limit: 50,
          remaining: 37.5,
          reset_at: '2030-01-01T00:00:00.000Z',
          object: 'policy_limit',
        },
        {
          policy_id: '4e54a1a4-109c-43ee-b0f7-11e7d60b0066',
          policy_name: null,
          kind: 'rate_limit',
          type: 'requests',
          value_key: 'workspace_id:w',
          limit: 10,
          remaining: 9,
          reset_at: null,
          object: 'policy_limit',
        },
      ],
    });
    const asked = ledger.keyAsked.at(-1)!;
    assert.equal(asked.organisationId, h.organisationId);
    assert.equal(asked.workspaceId, h.workspaceId);
    assert.equal(asked.apiKeyId, dataOnly.body.id);
    assert.equal((await h.request('GET', '/v2/policies/usage')).status, 401);
  });

  test('when the policy service does not answer in time, the usage routes answer 503 and the rest serve on', async () => {
    const id = await create(monthly());
    ledger.silent = true;
    try {
      for (const [method, path] of [
        ['GET', `${PATH}/${id}/entities`],
        ['PUT', `${PATH}/${id}/entities/YXBpX2tleTph/reset`],
        ['GET', `${PATH}/${id}?include_usage=true`],
        ['GET', '/v2/policies/usage'],
      ]) {
        const res = await h.request(method!, path!, { key: h.workspaceKey });
        assert.equal(res.status, 503, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.error.type, 'service_unavailable_error');
        assert.match(res.body.error.message, /policy service/);
      }
      assert.equal((await get(id)).status, 200);
    } finally {
      ledger.silent = false;
    }
  });
});

describe('tenancy and what other services see', () => {
  test("another workspace's and another organisation's keys find nothing, entities included", async () => {
    const id = await create(monthly());
    const workspace = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Usage elsewhere' },
    });
    const key = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'elsewhere', workspace_id: workspace.body.id },
    });
    for (const foreign of [key.body.key as string, other.adminKey, other.workspaceKey]) {
      assert.equal((await get(id, foreign)).status, 404);
      assert.equal((await put(id, { credit_limit: 1 }, foreign)).status, 404);
      assert.equal((await h.request('GET', `${PATH}/${id}/entities`, { key: foreign })).status, 404);
      assert.equal(
        (await h.request('PUT', `${PATH}/${id}/entities/YXBpX2tleTph/reset`, { key: foreign })).status,
        404,
      );
      assert.equal((await h.request('DELETE', `${PATH}/${id}`, { key: foreign })).status, 404);
    }
  });

  test('a key without the usage_limits scopes is refused with 403', async () => {
    const id = await create(monthly());
    const limited = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'Usage reader', workspace_id: h.workspaceId, scopes: ['usage_limits.read'] },
    });
    assert.equal((await get(id, limited.body.key)).status, 200);
    for (const [method, path] of [
      ['POST', PATH],
      ['GET', PATH],
      ['PUT', `${PATH}/${id}`],
      ['DELETE', `${PATH}/${id}`],
      ['PUT', `${PATH}/${id}/entities/YXBpX2tleTph/reset`],
    ]) {
      const res = await h.request(method!, path!, {
        key: limited.body.key,
        json: method === 'GET' || method === 'DELETE' ? undefined : {},
      });
      assert.equal(res.status, 403, `${method} ${path}`);
    }
  });

  test('writes and resets announce a policy change; ListPolicies gives the usage limits as the policy service needs them', async () => {
    const changes = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter((change) => change.entity === 'policy');
    const before = changes().length;
    const anchor = '2026-03-10T08:00:00Z';
    const id = await create(
      monthly({ periodic_reset: null, periodic_reset_days: 14, next_usage_reset_at: anchor }),
    );
    await put(id, { credit_limit: 1200 });
    await h.request('PUT', `${PATH}/${id}/entities/YXBpX2tleTph/reset`, { key: h.workspaceKey });
    const announced = changes().slice(before);
    assert.deepEqual(
      announced.map((c) => [c.action, c.entityId, c.organisationId]),
      [
        [events.ChangeAction.CREATED, id, h.organisationId],
        [events.ChangeAction.UPDATED, id, h.organisationId],
        [events.ChangeAction.UPDATED, id, h.organisationId],
      ],
    );
    const { policies } = await h
      .client('policyDirectory', 'policy')
      .listPolicies({ organisationId: h.organisationId });
    const shown = policies.find((p) => p.id === id)!;
    assert.equal(shown.kind, policy.PolicyKind.USAGE_LIMIT);
    assert.equal(shown.type, 'cost');
    assert.equal(shown.creditLimit, 1200);
    assert.equal(shown.alertThreshold, 800);
    assert.equal(shown.periodicReset, '');
    assert.equal(shown.periodicResetDays, 14);
    assert.equal(shown.resetAnchorMs, String(Date.parse('2026-03-10T00:00:00Z')));
    assert.deepEqual(shown.groupBy, ['api_key']);
  });
});
