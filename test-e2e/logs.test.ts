// Logs, feedback and exports end to end, over real HTTP with their exact bodies: requests
// through the gateway reach log-export through Kafka; feedback (operation 5 among it) lands on
// their logs; an export runs in log-export and is downloaded through its signed link; an
// organisation's denied fields are refused, and a user's key sees only its own exports.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import {
  addFakeOpenAi,
  createServiceKey,
  createWorkspace,
  eventually,
  startStack,
  type Stack,
} from './harness/index.ts';

const UPSTREAM_KEY = 'sk-upstream-logs';

let stack: Stack;
let exportDir: string;
let workspaceId: string;
let serviceKey: string;
const traceId = `e2e-logs-${randomBytes(6).toString('hex')}`;
const requestIds: string[] = [];

before(async () => {
  exportDir = await mkdtemp(join(tmpdir(), 'switchyard-e2e-exports-'));
  stack = await startStack({ upstreamKey: UPSTREAM_KEY, env: { EXPORT_DIR: exportDir } });
  workspaceId = await createWorkspace(stack, 'Logs');
  serviceKey = (await createServiceKey(stack, workspaceId, 'logs e2e')).key;
  await addFakeOpenAi(stack, UPSTREAM_KEY);

  const client = new OpenAI({ apiKey: serviceKey, baseURL: `${stack.url('gateway')}/v1`, maxRetries: 0 });
  for (let i = 0; i < 3; i++) {
    const { response } = await client.chat.completions
      .create(
        { model: '@fake-openai/gpt-4o-mini', messages: [{ role: 'user', content: `export me ${i}` }] },
        { headers: { 'x-vendor-trace-id': traceId, 'x-vendor-metadata': JSON.stringify({ team: 'e2e' }) } },
      )
      .withResponse();
    requestIds.push(response.headers.get('x-request-id')!);
  }
  await eventually(
    'the three request logs to be searchable',
    async () => {
      const found = await stack.request('GET', `/v1/logs?trace_id=${traceId}`, { key: serviceKey });
      return found.status === 200 && found.body.data.length === 3 ? found : undefined;
    },
    { timeoutMs: 30_000 },
  );
});

after(async () => {
  await stack?.stop();
  await rm(exportDir, { recursive: true, force: true });
});

test('feedback: POST /v2/feedback, then operation 5 (PUT /v2/feedback/{id}) changes it; the log shows the newest', async () => {
  const created = await stack.request('POST', '/v2/feedback', {
    key: serviceKey,
    body: { trace_id: traceId, value: 2, weight: 0.5, metadata: { reviewer: 'e2e' } },
  });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.status, 'success');
  assert.equal(typeof created.body.message, 'string');
  assert.equal(created.body.feedback_ids.length, 1);
  const id = created.body.feedback_ids[0];

  const updated = await stack.request('PUT', `/v2/feedback/${id}`, {
    key: serviceKey,
    body: { value: 5, weight: 1, metadata: { reviewer: 'e2e', pass: 2 } },
  });
  assert.equal(updated.status, 200, updated.text);
  assert.deepEqual(updated.body, {
    status: 'success',
    message: 'Feedback successfully updated',
    feedback_ids: [id],
  });
  const bad = await stack.request('PUT', `/v2/feedback/${id}`, { key: serviceKey, body: { value: 11 } });
  assert.equal(bad.status, 400, bad.text);

  const log = await eventually(
    'the updated feedback on the log',
    async () => {
      const found = await stack.request('GET', `/v1/logs/${requestIds[0]}`, { key: serviceKey });
      return found.status === 200 && found.body.feedback?.[0]?.value === 5 ? found.body : undefined;
    },
    // The feedback topic is made by its first event: log-export's consumer finds it at its next metadata refresh.
    { timeoutMs: 60_000 },
  );
  assert.deepEqual(
    { value: log.feedback[0].value, weight: log.feedback[0].weight, metadata: log.feedback[0].metadata },
    { value: 5, weight: 1, metadata: { reviewer: 'e2e', pass: 2 } },
  );
});

test('an export is made, started, followed to its end, downloaded through its signed link as JSON Lines, and deleted', async () => {
  const created = await stack.request('POST', '/v1/logs/exports', {
    key: serviceKey,
    body: {
      filters: { trace_id: traceId, metadata: { team: 'e2e' } },
      requested_data: ['id', 'trace_id', 'ai_model', 'request', 'response', 'total_units', 'metadata'],
      description: 'e2e',
    },
  });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(Object.keys(created.body).sort(), ['id', 'object', 'total']);
  assert.equal(created.body.object, 'export');
  assert.equal(created.body.total, 3);
  const id: string = created.body.id;

  const draft = await stack.request('GET', `/v1/logs/exports/${id}`, { key: serviceKey });
  assert.equal(draft.body.status, 'draft');
  assert.equal(draft.body.workspace_id, workspaceId);

  const started = await stack.request('POST', `/v1/logs/exports/${id}/start`, { key: serviceKey });
  assert.deepEqual(started.body, { message: 'Export started', object: 'export' });
  const done = await eventually(
    'the export to finish',
    async () => {
      const found = await stack.request('GET', `/v1/logs/exports/${id}`, { key: serviceKey });
      return found.body.status === 'success' ? found.body : undefined;
    },
    { timeoutMs: 30_000 },
  );
  assert.deepEqual(done.progress, { exported: 3, total: 3, percent: 100 });

  const link = await stack.request('GET', `/v1/logs/exports/${id}/download`, { key: serviceKey });
  assert.equal(link.status, 200, link.text);
  assert.ok(link.body.signed_url.startsWith(stack.url('log-export')), link.body.signed_url);
  // The link needs no key.
  const file = await fetch(link.body.signed_url);
  assert.equal(file.status, 200);
  assert.equal(file.headers.get('content-type'), 'application/x-ndjson');
  const lines = (await file.text())
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(lines.map((line) => line.id).sort(), [...requestIds].sort());
  assert.deepEqual(Object.keys(lines[0]), [
    'id',
    'trace_id',
    'ai_model',
    'request',
    'response',
    'total_units',
    'metadata',
  ]);
  assert.equal(lines[0].trace_id, traceId);
  assert.equal(lines[0].ai_model, 'gpt-4o-mini');
  assert.equal(lines[0].total_units, 12);
  assert.equal(lines[0].metadata.team, 'e2e');
  assert.ok(!JSON.stringify(lines).includes(UPSTREAM_KEY), 'no provider key in an export');
  assert.ok(!JSON.stringify(lines).includes(serviceKey), 'no gateway key in an export');

  const listed = await stack.request('GET', '/v1/logs/exports', { key: serviceKey });
  assert.equal(listed.body.object, 'list');
  assert.ok(listed.body.data.some((e: { id: string }) => e.id === id));

  const deleted = await stack.request('DELETE', `/v1/logs/exports/${id}`, { key: serviceKey });
  assert.equal(deleted.status, 200, deleted.text);
  assert.deepEqual(deleted.body, {});
  assert.equal((await stack.request('GET', `/v1/logs/exports/${id}`, { key: serviceKey })).status, 404);
  assert.equal(
    (await fetch(link.body.signed_url)).status,
    404,
    'the link of a deleted export downloads nothing',
  );
});

test("the organisation's denied fields are refused, named, and shown by field-restrictions", async () => {
  const set = await stack.request('PUT', '/v1/admin/organisation/settings', {
    key: stack.adminKey,
    body: { export_settings: { deniedFields: ['request', 'response'] } },
  });
  assert.equal(set.status, 200, set.text);
  try {
    const refused = await stack.request('POST', '/v1/logs/exports', {
      key: serviceKey,
      body: { filters: { trace_id: traceId }, requested_data: ['id', 'response'] },
    });
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.body.error.message, /'response'/);
    const restrictions = await stack.request(
      'GET',
      `/v1/logs/exports/field-restrictions?workspace_id=${workspaceId}`,
      { key: stack.adminKey },
    );
    assert.equal(restrictions.status, 200, restrictions.text);
    assert.equal(restrictions.body.workspace_id, workspaceId);
    assert.deepEqual(restrictions.body.denied_fields, ['request', 'response']);
    const allowed = await stack.request('POST', '/v1/logs/exports', {
      key: serviceKey,
      body: { filters: { trace_id: traceId }, requested_data: ['id', 'cost'] },
    });
    assert.equal(allowed.status, 200, allowed.text);
  } finally {
    await stack.request('PUT', '/v1/admin/organisation/settings', {
      key: stack.adminKey,
      body: { export_settings: null },
    });
  }
});

test("another workspace's key neither sees nor changes a workspace's export; the organisation key sees it", async () => {
  const mine = await stack.request('POST', '/v1/logs/exports', {
    key: serviceKey,
    body: { filters: { trace_id: traceId }, requested_data: ['id'] },
  });
  assert.equal(mine.status, 200, mine.text);
  const { key } = await createServiceKey(stack, await createWorkspace(stack, 'Logs elsewhere'), 'elsewhere');
  assert.equal((await stack.request('GET', `/v1/logs/exports/${mine.body.id}`, { key })).status, 404);
  assert.equal((await stack.request('POST', `/v1/logs/exports/${mine.body.id}/start`, { key })).status, 404);
  assert.equal((await stack.request('DELETE', `/v1/logs/exports/${mine.body.id}`, { key })).status, 404);
  const theirs = await stack.request('GET', '/v1/logs/exports', { key });
  assert.ok(!theirs.body.data.some((e: { id: string }) => e.id === mine.body.id));
  const all = await stack.request('GET', `/v1/logs/exports?workspace_id=${workspaceId}`, {
    key: stack.adminKey,
  });
  assert.ok(all.body.data.some((e: { id: string }) => e.id === mine.body.id));
  assert.equal(
    (await stack.request('POST', `/v1/logs/exports/${mine.body.id}/cancel`, { key: serviceKey })).status,
    409,
    'a draft is not running: nothing to cancel',
  );
});
