import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// Batches through the gateway with the `openai` SDK, against the fake OpenAI upstream and the
// real control-plane: the gateway records each batch it passes, the record is read and changed
// at /v2/batches, and the results come back through GET /v1/batches/:id/output without the
// client naming the provider again.

const services = [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[];
const UPSTREAM_KEY = 'sk-batches-upstream-0123456789';

interface BatchRecordBody {
  id: string;
  workspace_id: string;
  api_key_id: string | null;
  provider: string | null;
  integration_slug: string | null;
  status: string | null;
  endpoint: string | null;
  input_file_id: string | null;
  output_file_id: string | null;
  internal_output_file_id: string | null;
}

async function addIntegration(h: ServiceHarness, fake: FakeOpenAi, slug: string): Promise<void> {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'openai',
      key: UPSTREAM_KEY,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(res.status, 200, res.text);
}

function sdk(h: ServiceHarness, headers: Record<string, string> = {}, key = h.workspaceKey) {
  return new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0, defaultHeaders: headers });
}

/** Retries `probe` until it stops throwing (what the gateway records, it records in the background); then its last failure. */
async function eventually<T>(probe: () => Promise<T>, { timeoutMs = 5_000 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await probe();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** The GET /metrics line of the batch record counter for `operation` and `outcome`, as a number. */
async function recordCount(h: ServiceHarness, operation: string, outcome: string): Promise<number> {
  const text = (await h.request('GET', '/metrics')).text;
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('switchyard_gateway_batch_records_total{') &&
        l.includes(`operation="${operation}"`) &&
        l.includes(`outcome="${outcome}"`),
    );
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('batches through the gateway, recorded in control-plane', () => {
  let h: ServiceHarness;
  let fake: FakeOpenAi;

  before(async () => {
    fake = await startFakeOpenAi({ apiKey: UPSTREAM_KEY });
    h = await startServiceHarness({ services });
    await addIntegration(h, fake, 'oai-batches');
  });
  after(async () => {
    await h?.close();
    await fake?.close();
  });

  const record = async (id: string, key = h.workspaceKey) => h.request('GET', `/v2/batches/${id}`, { key });

  test('create with the SDK, see the record, set internal_output_file_id, download the output without naming the provider', async () => {
    const created = await sdk(h, { 'x-vendor-provider': '@oai-batches' }).batches.create({
      input_file_id: 'file-input-1',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    assert.match(created.id, /^batch_fake_/);
    assert.equal(created.status, 'validating');

    // The record appears in the background, with where the batch went and who created it.
    const stored = await eventually(async () => {
      const res = await record(created.id);
      assert.equal(res.status, 200, res.text);
      return res.body as BatchRecordBody;
    });
    assert.equal(stored.workspace_id, h.workspaceId);
    assert.equal(stored.provider, 'openai');
    assert.equal(stored.integration_slug, 'oai-batches');
    assert.equal(stored.status, 'validating');
    assert.equal(stored.endpoint, '/v1/chat/completions');
    assert.equal(stored.input_file_id, 'file-input-1');
    assert.equal(stored.output_file_id, null);
    assert.equal(typeof stored.api_key_id, 'string');

    const listed = await h.request('GET', '/v2/batches?integration=oai-batches', { key: h.workspaceKey });
    assert.equal(listed.status, 200);
    assert.ok((listed.body.data as BatchRecordBody[]).some((b) => b.id === created.id));

    // The record has no output file yet: the output route asks the provider, which has finished.
    const client = sdk(h);
    const first = await client.batches.retrieve(created.id);
    assert.equal(first.status, 'completed', 'the read found its provider from the record');
    const outputFileId = `file-output-${created.id}`;
    await eventually(async () => {
      const res = await record(created.id);
      assert.equal((res.body as BatchRecordBody).status, 'completed');
      assert.equal((res.body as BatchRecordBody).output_file_id, outputFileId);
    });

    const output = await h.request('GET', `/v1/batches/${created.id}/output`, { key: h.workspaceKey });
    assert.equal(output.status, 200, output.text);
    assert.equal(output.text, `{"prompt": "content of ${outputFileId}"}\n`);
    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, `/v1/files/${outputFileId}/content`);

    // The gateway's own output file, once set, is what the results are read from.
    const put = await h.request('PUT', `/v2/batches/${created.id}`, {
      key: h.workspaceKey,
      json: { internal_output_file_id: 'file-gateway-results' },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.internal_output_file_id, 'file-gateway-results');
    const internal = await h.request('GET', `/v1/batches/${created.id}/output`, { key: h.workspaceKey });
    assert.equal(internal.status, 200, internal.text);
    assert.equal(internal.text, '{"prompt": "content of file-gateway-results"}\n');
  });

  test('a record without an output file asks the provider first and records what it says', async () => {
    const created = await sdk(h, { 'x-vendor-provider': '@oai-batches' }).batches.create({
      input_file_id: 'file-input-2',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await eventually(async () => assert.equal((await record(created.id)).status, 200));
    const output = await h.request('GET', `/v1/batches/${created.id}/output`, { key: h.workspaceKey });
    assert.equal(output.status, 200, output.text);
    assert.equal(output.text, `{"prompt": "content of file-output-${created.id}"}\n`);
    await eventually(async () => {
      const res = await record(created.id);
      assert.equal((res.body as BatchRecordBody).status, 'completed');
      assert.equal((res.body as BatchRecordBody).output_file_id, `file-output-${created.id}`);
    });
  });

  test('a batch still running answers 409 naming its status; cancel updates the record', async () => {
    const created = await sdk(h, { 'x-vendor-provider': '@oai-batches' }).batches.create({
      input_file_id: 'file-input-3',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { fake_status: 'in_progress' },
    });
    await eventually(async () => assert.equal((await record(created.id)).status, 200));
    const output = await h.request('GET', `/v1/batches/${created.id}/output`, { key: h.workspaceKey });
    assert.equal(output.status, 409, output.text);
    assert.equal(output.body.error.code, 'batch_not_completed');
    assert.match(output.body.error.message, /in_progress/);
    await eventually(async () =>
      assert.equal(((await record(created.id)).body as BatchRecordBody).status, 'in_progress'),
    );

    const cancelled = await sdk(h).batches.cancel(created.id);
    assert.equal(cancelled.status, 'cancelling');
    await eventually(async () =>
      assert.equal(((await record(created.id)).body as BatchRecordBody).status, 'cancelling'),
    );
  });

  test('another workspace, an unknown batch or a bad id: the one error shape, and the provider is not asked', async () => {
    const created = await sdk(h, { 'x-vendor-provider': '@oai-batches' }).batches.create({
      input_file_id: 'file-input-4',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await eventually(async () => assert.equal((await record(created.id)).status, 200));
    const workspace = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Batches elsewhere' },
    });
    assert.equal(workspace.status, 200, workspace.text);
    const key = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'elsewhere', workspace_id: workspace.body.id },
    });
    assert.equal(key.status, 200, key.text);
    const elsewhere = key.body.key as string;

    const seen = fake.requests.length;
    for (const [path, status, code] of [
      [`/v1/batches/${created.id}/output`, 404, 'batch_not_found'],
      ['/v1/batches/batch_unknown/output', 404, 'batch_not_found'],
    ] as const) {
      const res = await h.request('GET', path, { key: elsewhere });
      assert.equal(res.status, status, res.text);
      assert.equal(res.body.error.code, code);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'param', 'type']);
    }
    const bad = await h.request('GET', `/v1/batches/${'x'.repeat(300)}/output`, { key: h.workspaceKey });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.param, 'batch_id');
    assert.equal(fake.requests.length, seen);
    assert.equal((await record(created.id, elsewhere)).status, 404);
  });

  test('the record write is counted', async () => {
    assert.ok((await recordCount(h, 'record', 'ok')) >= 4);
  });
});

describe('batches while control-plane cannot record them', () => {
  let h: ServiceHarness;
  let fake: FakeOpenAi;
  let silent: Server;
  const sockets: Socket[] = [];

  before(async () => {
    fake = await startFakeOpenAi({ apiKey: UPSTREAM_KEY });
    // A batch records service that accepts connections and never answers.
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    h = await startServiceHarness({ services, clientAddresses: { batchRecords: `127.0.0.1:${port}` } });
    await addIntegration(h, fake, 'oai-unrecorded');
  });
  after(async () => {
    await h?.close();
    await fake?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
  });

  test("the client's batch is created as the provider answered, without waiting; the failure is counted", async () => {
    const client = sdk(h, { 'x-vendor-provider': '@oai-unrecorded' });
    // A first request through the gateway warms its caches (key, integration); a list records nothing.
    await client.batches.list();
    const started = performance.now();
    const created = await client.batches.create({
      input_file_id: 'file-input-5',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const elapsed = performance.now() - started;
    // The record's deadline is 2 s; the answer comes well before it.
    assert.ok(elapsed < 1_000, `the answer waited ${Math.round(elapsed)} ms`);
    assert.match(created.id, /^batch_fake_/);
    assert.equal(created.status, 'validating');
    await eventually(async () => assert.ok((await recordCount(h, 'record', 'failed')) >= 1), {
      timeoutMs: 10_000,
    });
    // Without a record the output route cannot tell: a 503 in the one error shape, not a hang.
    const output = await h.request('GET', `/v1/batches/${created.id}/output`, { key: h.workspaceKey });
    assert.equal(output.status, 503, output.text);
    assert.equal(output.body.error.code, 'batch_records_unavailable');
  });
});
