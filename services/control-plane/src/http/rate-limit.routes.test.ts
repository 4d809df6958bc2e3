import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events, policy } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { policyRequests } from '../testing/policies.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  other = await seedOrganisation(h.db('control-plane').manager, 'rate-other');
});
after(() => h.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PATH = '/v2/policies/rate-limits';

const rpm = (extra: Record<string, unknown> = {}) => ({
  name: '100 RPM per API key',
  conditions: [{ key: 'metadata.team', value: 'ml' }],
  group_by: [{ key: 'api_key' }],
  type: 'requests',
  unit: 'rpm',
  value: 100,
  ...extra,
});

const { create, get, listed } = policyRequests(() => h, PATH);

async function workspaceWithKey(name: string, scopes?: string[]) {
  const workspace = await createWorkspace(h, name);
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: `${name} key`, workspace_id: workspace.id, ...(scopes ? { scopes } : {}) },
  });
  assert.equal(key.status, 200, key.text);
  return {
    id: workspace.id,
    slug: workspace.slug,
    key: key.body.key as string,
    keyId: key.body.id as string,
  };
}

describe('creating and reading a rate limit policy', () => {
  test('a workspace key creates a policy in its workspace and reads it back whole', async () => {
    const created = await h.request('POST', PATH, {
      key: h.workspaceKey,
      json: rpm({ description: 'per key' }),
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['id', 'object']);
    assert.match(created.body.id, UUID);
    assert.equal(created.body.object, 'policy_rate_limits');

    const shown = await get(created.body.id);
    assert.equal(shown.status, 200, shown.text);
    const { created_at: createdAt, last_updated_at: updatedAt, ...rest } = shown.body;
    assert.deepEqual(rest, {
      id: created.body.id,
      name: '100 RPM per API key',
      description: 'per key',
      conditions: [{ key: 'metadata.team', value: 'ml', excludes: false }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 100,
      target: 'llm',
      status: 'active',
      workspace_id: h.workspaceId,
      organisation_id: h.organisationId,
      object: 'policy_rate_limits',
    });
    assert.ok(!Number.isNaN(Date.parse(createdAt)));
    assert.equal(updatedAt, createdAt);
  });

  test('an organisation admin key creates organisation-wide policies, or one of the workspace it names by slug', async () => {
    const workspace = await workspaceWithKey('Rate named');
    const orgWide = await create(rpm(), h.adminKey);
    assert.equal((await get(orgWide, h.adminKey)).body.workspace_id, null);
    const explicit = await create(rpm({ workspace_id: null }), h.adminKey);
    assert.equal((await get(explicit, h.adminKey)).body.workspace_id, null);
    const named = await create(rpm({ workspace_id: workspace.slug }), h.adminKey);
    assert.equal((await get(named, h.adminKey)).body.workspace_id, workspace.id);
    assert.equal((await get(named, workspace.key)).status, 200);
  });

  test('condition values naming a workspace by slug are stored as its id; api_key, organisation_id and * are kept', async () => {
    const workspace = await workspaceWithKey('Rate conditions');
    const id = await create(
      rpm({
        target: 'mcp_tools',
        conditions: [
          { key: 'workspace_id', value: workspace.slug },
          { key: 'api_key', value: workspace.keyId, excludes: true },
          { key: 'organisation_id', value: h.organisationId },
          { key: 'tool_name', value: '*' },
        ],
        group_by: [{ key: 'workspace_id' }, { key: 'metadata.team' }],
      }),
      h.adminKey,
    );
    const shown = (await get(id, h.adminKey)).body;
    assert.deepEqual(shown.conditions, [
      { key: 'workspace_id', value: workspace.id, excludes: false },
      { key: 'api_key', value: workspace.keyId, excludes: true },
      { key: 'organisation_id', value: h.organisationId, excludes: false },
      { key: 'tool_name', value: '*', excludes: false },
    ]);
    assert.deepEqual(shown.group_by, [{ key: 'workspace_id' }, { key: 'metadata.team' }]);
    assert.equal(shown.target, 'mcp_tools');
  });
});

describe('validation', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['no conditions', rpm({ conditions: [] }), 'conditions'],
    [
      'a condition key the target does not take',
      rpm({ conditions: [{ key: 'mcp_server', value: 'x' }] }),
      'conditions[0].key',
    ],
    [
      'an mcp_tools policy with a model condition',
      rpm({ target: 'mcp_tools', conditions: [{ key: 'model', value: 'x' }] }),
      'conditions[0].key',
    ],
    ['an empty metadata name', rpm({ conditions: [{ key: 'metadata.', value: 'x' }] }), 'conditions[0].key'],
    ['an empty condition value', rpm({ conditions: [{ key: 'model', value: '' }] }), 'conditions[0].value'],
    [
      'an unknown field in a condition',
      rpm({ conditions: [{ key: 'model', value: 'x', op: 'eq' }] }),
      'conditions[0].op',
    ],
    [
      'a workspace that does not exist',
      rpm({ conditions: [{ key: 'workspace_id', value: 'nowhere' }] }),
      'conditions[0].value',
    ],
    [
      'an api key that does not exist',
      rpm({ conditions: [{ key: 'api_key', value: '4e54a1a4-109c-43ee-b0f7-11e7d60b0066' }] }),
      'conditions[0].value',
    ],
    [
      'another organisation',
      rpm({ conditions: [{ key: 'organisation_id', value: '4e54a1a4-109c-43ee-b0f7-11e7d60b0066' }] }),
      'conditions[0].value',
    ],
    ['no group_by', rpm({ group_by: [] }), 'group_by'],
    ['an unknown group_by key', rpm({ group_by: [{ key: 'model' }] }), 'group_by[0].key'],
    [
      'a group_by key given twice',
      rpm({ group_by: [{ key: 'api_key' }, { key: 'api_key' }] }),
      'group_by[1].key',
    ],
    ['a value of 0', rpm({ value: 0 }), 'value'],
    ['a fractional value', rpm({ value: 1.5 }), 'value'],
    ['a value as text', rpm({ value: '100' }), 'value'],
    ['an unknown unit', rpm({ unit: 'rpw' }), 'unit'],
    ['an unknown type', rpm({ type: 'cost' }), 'type'],
    [
      'tokens on an mcp_tools policy',
      rpm({ target: 'mcp_tools', type: 'tokens', conditions: [{ key: 'tool_name', value: 'x' }] }),
      'type',
    ],
    ['an unknown target', rpm({ target: 'agents' }), 'target'],
    ['a name over 255 characters', rpm({ name: 'n'.repeat(256) }), 'name'],
    ['a description over 500 characters', rpm({ description: 'd'.repeat(501) }), 'description'],
    ['an unknown field', rpm({ burst: 10 }), 'burst'],
    ['no type', { ...rpm(), type: undefined }, 'type'],
  ];
  for (const [what, json, param] of cases) {
    test(`creating with ${what} is a 400 naming ${param}`, async () => {
      const res = await h.request('POST', PATH, { key: h.adminKey, json });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param);
    });
  }

  test('updating with no field, a bad value, an unknown field or type is a 400 naming it', async () => {
    const id = await create(rpm());
    for (const [json, param] of [
      [{ value: -1 }, 'value'],
      [{ unit: 'rps' }, 'unit'],
      [{ type: 'tokens' }, 'type'],
      [{ group_by: [{ key: 'api_key' }] }, 'group_by'],
      [{ conditions: [] }, 'conditions'],
      [{ conditions: [{ key: 'tool_name', value: 'search' }] }, 'conditions[0].key'],
      [{ name: '' }, 'name'],
    ] as const) {
      const res = await h.request('PUT', `${PATH}/${id}`, { key: h.workspaceKey, json });
      assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
      assert.equal(res.body.error.param, param, JSON.stringify(json));
    }
    const empty = await h.request('PUT', `${PATH}/${id}`, { key: h.workspaceKey, json: {} });
    assert.equal(empty.status, 400);
  });

  test('list filters outside their values are a 400 naming them', async () => {
    for (const [query, param] of [
      ['status=deleted', 'status'],
      ['unit=rpw', 'unit'],
      ['type=cost', 'type'],
      ['target=agents', 'target'],
      ['page_size=0', 'page_size'],
    ]) {
      const res = await h.request('GET', `${PATH}?${query}`, { key: h.adminKey });
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.param, param);
    }
  });
});

describe('updating and archiving', () => {
  test('PUT changes name, value, unit, description and conditions and answers the updated policy', async () => {
    const id = await create(rpm());
    const before = (await get(id)).body;
    const res = await h.request('PUT', `${PATH}/${id}`, {
      key: h.workspaceKey,
      json: {
        name: 'Renamed',
        value: 250,
        unit: 'rph',
        description: 'hourly now',
        conditions: [{ key: 'model', value: 'gpt-4o', excludes: true }],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      ...before,
      name: 'Renamed',
      value: 250,
      unit: 'rph',
      description: 'hourly now',
      conditions: [{ key: 'model', value: 'gpt-4o', excludes: true }],
      last_updated_at: res.body.last_updated_at,
    });
    assert.ok(Date.parse(res.body.last_updated_at) >= Date.parse(before.last_updated_at));
    assert.deepEqual((await get(id)).body, res.body);
    const cleared = await h.request('PUT', `${PATH}/${id}`, {
      key: h.workspaceKey,
      json: { description: null },
    });
    assert.equal(cleared.body.description, null);
    assert.equal(cleared.body.name, 'Renamed');
  });

  test('DELETE archives: get and list no longer find it unless asked for status archived, and it cannot be changed', async () => {
    const id = await create(rpm({ name: 'Doomed' }));
    const deleted = await h.request('DELETE', `${PATH}/${id}`, { key: h.workspaceKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, {});
    const gone = await get(id);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.type, 'not_found_error');
    assert.ok(!(await listed(h.workspaceKey)).some((p) => p.id === id));
    const archived = await get(id, h.workspaceKey, '?status=archived');
    assert.equal(archived.status, 200);
    assert.equal(archived.body.status, 'archived');
    assert.ok((await listed(h.workspaceKey, '&status=archived')).some((p) => p.id === id));
    assert.equal(
      (await h.request('PUT', `${PATH}/${id}`, { key: h.workspaceKey, json: { value: 5 } })).status,
      404,
    );
    assert.equal((await h.request('DELETE', `${PATH}/${id}`, { key: h.workspaceKey })).status, 404);
  });

  test('concurrent PUTs leave the row as one of them wrote it', async () => {
    const id = await create(rpm());
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        h.request('PUT', `${PATH}/${id}`, {
          key: h.workspaceKey,
          json: { name: `writer ${i}`, value: i + 1, unit: i % 2 ? 'rph' : 'rpd' },
        }),
      ),
    );
    for (const res of results) assert.equal(res.status, 200, res.text);
    const final = (await get(id)).body;
    const writer = Number(/^writer (\d+)$/.exec(final.name)![1]);
    assert.equal(final.value, writer + 1);
    assert.equal(final.unit, writer % 2 ? 'rph' : 'rpd');
  });
});

describe('listing', () => {
  test('filters by workspace, target, type, unit and name, pages, and counts the total', async () => {
    const workspace = await workspaceWithKey('Rate listing');
    const tag = `lst${Date.now()}`;
    const a = await create(rpm({ name: `${tag} Alpha`, unit: 'rpd' }), workspace.key);
    const b = await create(rpm({ name: `${tag} beta`, type: 'tokens' }), workspace.key);
    const c = await create(
      rpm({ name: `${tag} gamma`, target: 'mcp_tools', conditions: [{ key: 'mcp_server', value: 'git' }] }),
      workspace.key,
    );
    const ids = (list: Array<{ id: string }>) => list.map((p) => p.id);
    assert.deepEqual(ids(await listed(workspace.key)), [a, b, c]);
    assert.deepEqual(ids(await listed(h.adminKey, `&workspace_id=${workspace.slug}`)), [a, b, c]);
    assert.deepEqual(ids(await listed(workspace.key, '&target=mcp_tools')), [c]);
    assert.deepEqual(ids(await listed(workspace.key, '&target=llm')), [a, b]);
    assert.deepEqual(ids(await listed(workspace.key, '&type=tokens')), [b]);
    assert.deepEqual(ids(await listed(workspace.key, '&unit=rpd')), [a]);
    assert.deepEqual(ids(await listed(h.adminKey, `&search=${tag}%20ALPHA`)), [a]);
    assert.deepEqual(ids(await listed(h.adminKey, '&search=%25')), [], '% is itself, not a pattern');
    const page = await h.request('GET', `${PATH}?page_size=2&current_page=1&workspace_id=${workspace.id}`, {
      key: h.adminKey,
    });
    assert.equal(page.body.object, 'list');
    assert.equal(page.body.total, 3);
    assert.deepEqual(ids(page.body.data), [c]);
    assert.equal(page.body.data[0].object, 'policy_rate_limits');
  });
});

describe('tenancy and scopes', () => {
  test("another workspace's key and another organisation's keys find nothing", async () => {
    const id = await create(rpm());
    const elsewhere = await workspaceWithKey('Rate elsewhere');
    for (const key of [elsewhere.key, other.workspaceKey, other.adminKey]) {
      assert.equal((await get(id, key)).status, 404);
      assert.equal((await h.request('PUT', `${PATH}/${id}`, { key, json: { value: 1 } })).status, 404);
      assert.equal((await h.request('DELETE', `${PATH}/${id}`, { key })).status, 404);
      assert.ok(!(await listed(key)).some((p) => p.id === id));
    }
    assert.equal((await get(id)).body.value, 100, 'unchanged');
  });

  test('a workspace key sees no organisation-wide policy and cannot create one', async () => {
    const orgWide = await create(rpm(), h.adminKey);
    assert.equal((await get(orgWide)).status, 404);
    const refused = await h.request('POST', PATH, { key: h.workspaceKey, json: rpm({ workspace_id: null }) });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.param, 'workspace_id');
  });

  test('a workspace key cannot name another workspace, or its keys, nor list it', async () => {
    const elsewhere = await workspaceWithKey('Rate foreign');
    const asPolicyWorkspace = await h.request('POST', PATH, {
      key: h.workspaceKey,
      json: rpm({ workspace_id: elsewhere.id }),
    });
    assert.equal(asPolicyWorkspace.status, 404);
    for (const condition of [
      { key: 'workspace_id', value: elsewhere.id },
      { key: 'api_key', value: elsewhere.keyId },
    ]) {
      const res = await h.request('POST', PATH, {
        key: h.workspaceKey,
        json: rpm({ conditions: [condition] }),
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, 'conditions[0].value');
    }
    assert.equal(
      (await h.request('GET', `${PATH}?workspace_id=${elsewhere.id}`, { key: h.workspaceKey })).status,
      404,
    );
  });

  test('a key without the rate_limits scopes is refused with 403', async () => {
    const limited = await workspaceWithKey('Rate unscoped', ['configs.read']);
    const id = await create(rpm());
    for (const [method, path, json] of [
      ['POST', PATH, rpm()],
      ['GET', PATH, undefined],
      ['GET', `${PATH}/${id}`, undefined],
      ['PUT', `${PATH}/${id}`, { value: 1 }],
      ['DELETE', `${PATH}/${id}`, undefined],
    ] as const) {
      const res = await h.request(method, path, { key: limited.key, json });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.error.code, 'missing_scope');
    }
    assert.equal((await h.request('GET', PATH)).status, 401);
  });
});

describe('what other services see', () => {
  test('every write announces a policy change naming the organisation, and is audited', async () => {
    const changes = () =>
      h.bus
        .log(Topics.changes)
        .map((message) => fromBinary(events.ChangeEventSchema, message.value))
        .filter((change) => change.entity === 'policy');
    const audits = () =>
      h.bus.log(Topics.audit).map((message) => fromBinary(events.AuditEventSchema, message.value));
    const [changesBefore, auditsBefore] = [changes().length, audits().length];
    const id = await create(rpm());
    await h.request('PUT', `${PATH}/${id}`, { key: h.workspaceKey, json: { value: 7 } });
    await h.request('DELETE', `${PATH}/${id}`, { key: h.workspaceKey });
    const announced = changes().slice(changesBefore);
    assert.deepEqual(
      announced.map((change) => change.action),
      [events.ChangeAction.CREATED, events.ChangeAction.UPDATED, events.ChangeAction.DELETED],
    );
    for (const change of announced) {
      assert.equal(change.entityId, id);
      assert.equal(change.organisationId, h.organisationId);
      assert.equal(change.workspaceId, h.workspaceId);
    }
    const audited = audits().slice(auditsBefore);
    assert.deepEqual(
      audited.map((entry) => `${entry.method} ${entry.route}`),
      [
        'POST /v2/policies/rate-limits',
        'PUT /v2/policies/rate-limits/:id',
        'DELETE /v2/policies/rate-limits/:id',
      ],
    );
    assert.ok(audited.every((entry) => entry.organisationId === h.organisationId));
  });

  test('ListPolicies answers the policy service the active policies of the organisation it names', async () => {
    const mine = await create(rpm({ name: 'Directory rate', unit: 'rph', value: 42 }));
    const archived = await create(rpm());
    await h.request('DELETE', `${PATH}/${archived}`, { key: h.workspaceKey });
    await create(rpm(), other.workspaceKey);

    const directory = h.client('policyDirectory', 'policy');
    const { policies } = await directory.listPolicies({ organisationId: h.organisationId });
    assert.ok(policies.every((p) => p.organisationId === h.organisationId));
    assert.ok(!policies.some((p) => p.id === archived));
    const shown = policies.find((p) => p.id === mine)!;
    assert.equal(shown.kind, policy.PolicyKind.RATE_LIMIT);
    assert.equal(shown.name, 'Directory rate');
    assert.equal(shown.workspaceId, h.workspaceId);
    assert.equal(shown.type, 'requests');
    assert.equal(shown.target, 'llm');
    assert.equal(shown.unit, 'rph');
    assert.equal(shown.value, 42);
    assert.deepEqual(shown.groupBy, ['api_key']);
    assert.deepEqual(
      shown.conditions.map(({ key, value, excludes }) => ({ key, value, excludes })),
      [{ key: 'metadata.team', value: 'ml', excludes: false }],
    );
    assert.deepEqual((await directory.listPolicies({ organisationId: 'not-a-uuid' })).policies, []);
    await assert.rejects(
      h.client('policyDirectory', 'gateway').listPolicies({ organisationId: h.organisationId }),
    );
  });
});
