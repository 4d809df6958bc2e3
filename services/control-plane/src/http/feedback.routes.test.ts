import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';
import { seedOrganisation, type SeededOrganisation } from '../testing/organisations.ts';
import { createWorkspace } from '../testing/workspaces.ts';

let h: ServiceHarness;
let other: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  other = await seedOrganisation(h.db('control-plane').manager, 'feedback-other');
});
after(() => h.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PATH = '/v2/feedback';

interface Answer {
  status: string;
  message: string;
  feedback_ids: string[];
}

interface Stored {
  id: string;
  organisation_id: string;
  workspace_id: string | null;
  trace_id: string;
  value: number;
  weight: number;
  metadata: Record<string, unknown>;
  version: number;
}

const post = (json: unknown, key = h.workspaceKey) => h.request('POST', PATH, { key, json });
const put = (id: string, json: unknown, key = h.workspaceKey) =>
  h.request('PUT', `${PATH}/${id}`, { key, json });

async function send(json: unknown, key = h.workspaceKey): Promise<Answer> {
  const res = await post(json, key);
  assert.equal(res.status, 200, res.text);
  return res.body as Answer;
}

async function stored(id: string): Promise<Stored | undefined> {
  const [row] = (await h.db('control-plane').query(
    `SELECT id, organisation_id, workspace_id, trace_id, value, weight, metadata, version
       FROM control_plane.feedback WHERE id = $1`,
    [id],
  )) as Stored[];
  return row;
}

async function count(): Promise<number> {
  const [row] = (await h
    .db('control-plane')
    .query(`SELECT count(*)::int AS n FROM control_plane.feedback`)) as [{ n: number }];
  return row.n;
}

/** The feedback events published since `since` messages, with the key each was published under. */
function published(since = 0) {
  return h.bus
    .log(Topics.feedback)
    .slice(since)
    .map((message) => ({ key: message.key, event: fromBinary(events.FeedbackEventSchema, message.value) }));
}

const trace = () => `trace-${randomUUID()}`;

/** A workspace key of another workspace of the same organisation. */
async function otherWorkspaceKey(): Promise<{ workspaceId: string; key: string }> {
  const workspace = await createWorkspace(h, `Feedback elsewhere ${randomUUID().slice(0, 8)}`);
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'elsewhere', workspace_id: workspace.id },
  });
  assert.equal(res.status, 200, res.text);
  return { workspaceId: workspace.id, key: res.body.key as string };
}

describe('sending feedback', () => {
  test('one entry from a workspace key: stored in its workspace, weight 1 and no metadata unless given, published under the trace id', async () => {
    const traceId = trace();
    const since = h.bus.log(Topics.feedback).length;
    const answer = await send({ trace_id: traceId, value: 7 });
    assert.deepEqual(Object.keys(answer).sort(), ['feedback_ids', 'message', 'status']);
    assert.equal(answer.status, 'success');
    assert.equal(typeof answer.message, 'string');
    assert.equal(answer.feedback_ids.length, 1);
    const [id] = answer.feedback_ids as [string];
    assert.match(id, UUID);
    assert.deepEqual(await stored(id), {
      id,
      organisation_id: h.organisationId,
      workspace_id: h.workspaceId,
      trace_id: traceId,
      value: 7,
      weight: 1,
      metadata: {},
      version: 1,
    });

    const [sent, ...more] = published(since);
    assert.equal(more.length, 0);
    assert.equal(sent!.key, traceId);
    const { event } = sent!;
    assert.equal(event.id, id);
    assert.equal(event.organisationId, h.organisationId);
    assert.equal(event.workspaceId, h.workspaceId);
    assert.equal(event.traceId, traceId);
    assert.equal(event.value, 7);
    assert.equal(event.weight, 1);
    assert.deepEqual(JSON.parse(event.metadataJson), {});
    assert.equal(event.version, 1);
    assert.match(event.createdBy, UUID);
    assert.ok(Number(event.createdAtMs) > 0);
    assert.equal(event.updatedAtMs, event.createdAtMs);
  });

  test('a list: stored together and answered in the order sent, each published under its own trace id', async () => {
    const traces = [trace(), trace(), trace()];
    const since = h.bus.log(Topics.feedback).length;
    const answer = await send([
      { trace_id: traces[0], value: -10, weight: 0 },
      {
        trace_id: traces[1],
        value: 10,
        weight: 0.25,
        metadata: { user: 'u-1', tags: ['a', 'b'], nested: { ok: true } },
      },
      { trace_id: traces[2], value: 0, weight: 1, metadata: {} },
    ]);
    assert.equal(answer.feedback_ids.length, 3);
    const rows = await Promise.all(answer.feedback_ids.map(stored));
    assert.deepEqual(
      rows.map((row) => [row!.trace_id, row!.value, row!.weight]),
      [
        [traces[0], -10, 0],
        [traces[1], 10, 0.25],
        [traces[2], 0, 1],
      ],
    );
    assert.deepEqual(rows[1]!.metadata, { user: 'u-1', tags: ['a', 'b'], nested: { ok: true } });
    const sent = published(since);
    assert.deepEqual(
      sent.map(({ key, event }) => [key, event.id]),
      traces.map((traceId, i) => [traceId, answer.feedback_ids[i]]),
    );
    assert.deepEqual(JSON.parse(sent[1]!.event.metadataJson), {
      user: 'u-1',
      tags: ['a', 'b'],
      nested: { ok: true },
    });
  });

  test('null weight and metadata read as not given', async () => {
    const [id] = (await send({ trace_id: trace(), value: 3, weight: null, metadata: null })).feedback_ids;
    const row = await stored(id!);
    assert.equal(row!.weight, 1);
    assert.deepEqual(row!.metadata, {});
  });

  test("an organisation admin key's feedback goes to the workspace it names (id or slug), else to the organisation", async () => {
    const workspace = await createWorkspace(h, 'Feedback named');
    const answer = await send(
      [
        { trace_id: trace(), value: 1 },
        { trace_id: trace(), value: 2, workspace_id: workspace.id },
        { trace_id: trace(), value: 3, workspace_id: workspace.slug },
      ],
      h.adminKey,
    );
    const rows = await Promise.all(answer.feedback_ids.map(stored));
    assert.deepEqual(
      rows.map((row) => row!.workspace_id),
      [null, workspace.id, workspace.id],
    );
    const [own] = (await send({ trace_id: trace(), value: 4, workspace_id: h.workspaceId })).feedback_ids;
    assert.equal((await stored(own!))!.workspace_id, h.workspaceId, 'a workspace key may name its own');
  });

  const tooManyKeys = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
  const entry = { trace_id: 'trace-bounds', value: 1 };
  const cases: Array<[string, unknown, string]> = [
    ['a value above 10', { ...entry, value: 11 }, 'value'],
    ['a value below -10', { ...entry, value: -11 }, 'value'],
    ['a value that is not an integer', { ...entry, value: 1.5 }, 'value'],
    ['a value as text', { ...entry, value: '1' }, 'value'],
    ['no value', { trace_id: 'trace-bounds' }, 'value'],
    ['a weight above 1', { ...entry, weight: 1.01 }, 'weight'],
    ['a negative weight', { ...entry, weight: -0.1 }, 'weight'],
    ['metadata that is a list', { ...entry, metadata: ['a'] }, 'metadata'],
    ['metadata that is text', { ...entry, metadata: 'a' }, 'metadata'],
    ['metadata with more than 64 keys', { ...entry, metadata: tooManyKeys }, 'metadata'],
    ['metadata above 16 KiB', { ...entry, metadata: { note: 'x'.repeat(16_400) } }, 'metadata'],
    ['an empty trace id', { ...entry, trace_id: '' }, 'trace_id'],
    ['no trace id', { value: 1 }, 'trace_id'],
    ['a field the API does not take', { ...entry, rating: 5 }, 'rating'],
    ['a bad entry in a list', [entry, { ...entry, weight: 2 }], '[1].weight'],
  ];
  for (const [what, json, param] of cases) {
    test(`${what} is a 400 naming ${param}, and nothing is stored`, async () => {
      const [before, sent] = [await count(), h.bus.log(Topics.feedback).length];
      const res = await post(json);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param, res.text);
      assert.equal(await count(), before);
      assert.equal(h.bus.log(Topics.feedback).length, sent);
    });
  }

  test('an empty list, and a list of more than 100, are refused with 400', async () => {
    const before = await count();
    for (const json of [[], Array.from({ length: 101 }, () => entry)]) {
      const res = await post(json);
      assert.equal(res.status, 400, res.text);
    }
    const hundred = await send(
      Array.from({ length: 100 }, (_, i) => ({ trace_id: `trace-many-${i}`, value: 1 })),
    );
    assert.equal(hundred.feedback_ids.length, 100);
    assert.equal(new Set(hundred.feedback_ids).size, 100);
    assert.equal(await count(), before + 100);
  });
});

describe('changing feedback', () => {
  test('PUT sets the value, and the weight and metadata when given; each write publishes the next version', async () => {
    const traceId = trace();
    const [id] = (await send({ trace_id: traceId, value: 1, weight: 0.5, metadata: { first: true } }))
      .feedback_ids as [string];
    const since = h.bus.log(Topics.feedback).length;

    const changed = await put(id, { value: -3 });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.feedback_ids, [id]);
    assert.equal(changed.body.status, 'success');
    assert.deepEqual(
      { ...(await stored(id)) },
      {
        id,
        organisation_id: h.organisationId,
        workspace_id: h.workspaceId,
        trace_id: traceId,
        value: -3,
        weight: 0.5,
        metadata: { first: true },
        version: 2,
      },
      'weight and metadata not given stay as they were',
    );

    const again = await put(id, { value: 9, weight: 0.75, metadata: { second: 2 } });
    assert.equal(again.status, 200, again.text);
    const row = await stored(id);
    assert.deepEqual([row!.value, row!.weight, row!.metadata, row!.version], [9, 0.75, { second: 2 }, 3]);

    const sent = published(since);
    assert.deepEqual(
      sent.map(({ key, event }) => [key, event.id, event.version, event.value, event.weight]),
      [
        [traceId, id, 2, -3, 0.5],
        [traceId, id, 3, 9, 0.75],
      ],
    );
    assert.deepEqual(JSON.parse(sent[1]!.event.metadataJson), { second: 2 });
    assert.ok(Number(sent[1]!.event.updatedAtMs) >= Number(sent[1]!.event.createdAtMs));
  });

  test('out-of-bounds changes are 400s naming the field, and change nothing', async () => {
    const [id] = (await send({ trace_id: trace(), value: 1 })).feedback_ids as [string];
    for (const [json, param] of [
      [{ value: 11 }, 'value'],
      [{ weight: 0.5 }, 'value'],
      [{ value: 1, weight: 3 }, 'weight'],
      [{ value: 1, metadata: [1] }, 'metadata'],
      [{ value: 1, trace_id: 'moved' }, 'trace_id'],
    ] as const) {
      const res = await put(id, json);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, param, res.text);
    }
    assert.equal((await stored(id))!.version, 1);
  });

  test('the SDK path /v1/feedback serves the same routes', async () => {
    const created = await h.request('POST', '/v1/feedback', {
      key: h.workspaceKey,
      json: { trace_id: 'sdk-trace', value: 5 },
    });
    assert.equal(created.status, 200, created.text);
    const [id] = created.body.feedback_ids as string[];
    const updated = await h.request('PUT', `/v1/feedback/${id}`, {
      key: h.workspaceKey,
      json: { value: -2 },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await stored(id!))!.value, -2);
  });

  test('an id that names no feedback is a 404', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await put(id, { value: 1 });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.type, 'not_found_error', res.text);
    }
  });
});

describe('tenancy and scopes', () => {
  test("another organisation's key finds none of its feedback and cannot send into its workspaces", async () => {
    const [id] = (await send({ trace_id: trace(), value: 5 })).feedback_ids as [string];
    const since = h.bus.log(Topics.feedback).length;
    for (const key of [other.adminKey, other.workspaceKey]) {
      const res = await put(id, { value: -5 }, key);
      assert.equal(res.status, 404, res.text);
      assert.ok(!res.text.includes(h.workspaceId));
    }
    const into = await post({ trace_id: trace(), value: 1, workspace_id: h.workspaceId }, other.adminKey);
    assert.equal(into.status, 404, into.text);
    assert.equal((await stored(id))!.value, 5, 'unchanged');
    assert.equal(h.bus.log(Topics.feedback).length, since, 'nothing published');
  });

  test("a workspace key changes its workspace's feedback only; an organisation admin key any of the organisation's", async () => {
    const elsewhere = await otherWorkspaceKey();
    const [mine] = (await send({ trace_id: trace(), value: 1 })).feedback_ids as [string];
    const [theirs] = (await send({ trace_id: trace(), value: 1 }, elsewhere.key)).feedback_ids as [string];
    const [organisation] = (await send({ trace_id: trace(), value: 1 }, h.adminKey)).feedback_ids as [string];
    assert.equal((await stored(theirs))!.workspace_id, elsewhere.workspaceId);

    assert.equal((await put(mine, { value: 2 }, elsewhere.key)).status, 404);
    assert.equal((await put(theirs, { value: 2 })).status, 404);
    assert.equal(
      (await put(organisation, { value: 2 })).status,
      404,
      "the organisation's is not a workspace's",
    );
    const into = await post({ trace_id: trace(), value: 1, workspace_id: h.workspaceId }, elsewhere.key);
    assert.equal(into.status, 404, into.text);
    for (const id of [mine, theirs, organisation]) assert.equal((await stored(id))!.value, 1);

    for (const id of [mine, theirs, organisation]) {
      const res = await put(id, { value: 4 }, h.adminKey);
      assert.equal(res.status, 200, res.text);
      assert.equal((await stored(id))!.value, 4);
    }
  });

  test('a key without feedback.write is refused with 403; one holding only it may send and change', async () => {
    const keyWith = async (scopes: string[]) => {
      const res = await h.request('POST', '/v2/api-keys/workspace/service', {
        key: h.adminKey,
        json: { name: 'feedback scopes', workspace_id: h.workspaceId, scopes },
      });
      assert.equal(res.status, 200, res.text);
      return res.body.key as string;
    };
    const without = await keyWith(['completions.write', 'logs.view']);
    const only = await keyWith(['feedback.write']);
    const [id] = (await send({ trace_id: trace(), value: 1 })).feedback_ids as [string];

    for (const res of [
      await post({ trace_id: trace(), value: 1 }, without),
      await put(id, { value: 2 }, without),
    ]) {
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.code, 'missing_scope');
    }
    assert.equal((await post({ trace_id: trace(), value: 1 }, only)).status, 200);
    assert.equal((await put(id, { value: 2 }, only)).status, 200);
    assert.equal((await h.request('POST', PATH, { json: { trace_id: trace(), value: 1 } })).status, 401);
  });
});
