import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { everyService } from '../testing/services.ts';

const upstreamKey = 'sk-upstream-forward-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;
let sdk: OpenAI;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: everyService,
  });
  const created = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'fake',
      slug: 'fake',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(created.status, 200, created.text);
  sdk = new OpenAI({
    apiKey: h.workspaceKey,
    baseURL: `${h.url}/v1`,
    defaultHeaders: { 'x-vendor-provider': '@fake' },
    maxRetries: 0,
  });
});

after(async () => {
  await h?.close();
  await fake?.close();
});

const last = () => fake.requests.at(-1)!;

describe('operations 2 to 4 through the official OpenAI SDK', () => {
  test('modifying a run returns the run object with the new metadata', async () => {
    const run = await sdk.beta.threads.runs.update('run_abc', {
      thread_id: 'thread_123',
      metadata: { stage: 'done' },
    });
    assert.equal(run.object, 'thread.run');
    assert.equal(run.id, 'run_abc');
    assert.equal(run.thread_id, 'thread_123');
    assert.deepEqual(run.metadata, { stage: 'done' });
    assert.equal(last().path, '/v1/threads/thread_123/runs/run_abc');
    assert.equal(last().headers.authorization, `Bearer ${upstreamKey}`);
  });

  test('cancelling a fine-tuning job returns the job, cancelled, and sends no body', async () => {
    const job = await sdk.fineTuning.jobs.cancel('ftjob-42');
    assert.equal(job.object, 'fine_tuning.job');
    assert.equal(job.id, 'ftjob-42');
    assert.equal(job.status, 'cancelled');
    assert.equal(last().path, '/v1/fine_tuning/jobs/ftjob-42/cancel');
    assert.equal(last().body, '');
  });

  test("a file's content is returned as the upstream sent it", async () => {
    const response = await sdk.files.content('file-xyz');
    assert.equal(await response.text(), '{"prompt": "content of file-xyz"}\n');
  });
});

describe('the rest of /v1, forwarded to OpenAI-format providers', () => {
  test('embeddings route by an @integration model and reach the upstream with the bare model', async () => {
    const plain = new OpenAI({ apiKey: h.workspaceKey, baseURL: `${h.url}/v1`, maxRetries: 0 });
    const result = await plain.embeddings.create({
      model: '@fake/text-embedding-3-small',
      input: ['a', 'b'],
    });
    assert.equal(result.data.length, 2);
    assert.equal(JSON.parse(last().body).model, 'text-embedding-3-small');
  });

  test('a multipart file upload streams through unchanged', async () => {
    const file = await sdk.files.create({
      file: await toFile(Buffer.from('{"messages": []}\n'), 'train.jsonl'),
      purpose: 'fine-tune',
    });
    assert.equal(file.id, 'file-uploaded');
    assert.equal(file.filename, 'train.jsonl');
    assert.equal(file.purpose, 'fine-tune');
    assert.match(String(last().headers['content-type']), /^multipart\/form-data; boundary=/);
  });

  test('a run update whose metadata is not an object is a 400 naming it, and never reaches the upstream', async () => {
    const before = fake.requests.length;
    const res = await h.request('POST', '/v1/threads/t1/runs/r1', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@fake' },
      json: { metadata: ['not', 'an', 'object'] },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'metadata');
    assert.equal(fake.requests.length, before);
  });

  test('a forwarded JSON body or query holding a NUL character is a 400 naming it, and never reaches the upstream', async () => {
    const before = fake.requests.length;
    const body = await h.request('POST', '/v1/embeddings', {
      key: h.workspaceKey,
      headers: { 'content-type': 'application/json' },
      body: '{"model":"@fake/text-embedding-3-small","input":["a","b\\u0000"]}',
    });
    assert.equal(body.status, 400, body.text);
    assert.equal(body.body.error.param, 'input[1]');
    assert.equal(body.body.error.code, 'invalid_text');
    const query = await h.request('GET', '/v1/files?purpose=a%00b', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@fake' },
    });
    assert.equal(query.status, 400, query.text);
    assert.equal(query.body.error.param, 'purpose');
    assert.equal(fake.requests.length, before);
  });

  test('an encoded path separator is refused rather than forwarded', async () => {
    const res = await h.request('GET', '/v1/files/..%2F..%2Fadmin/content', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@fake' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_path');
  });

  test('an unknown /v1 operation is a 404 in the error shape', async () => {
    const res = await h.request('GET', '/v1/nothing-here', { key: h.workspaceKey });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.type, 'not_found_error');
  });

  test('forwarded operations need a key like everything else', async () => {
    const res = await h.request('GET', '/v1/models');
    assert.equal(res.status, 401);
  });

  test('the mock provider, which speaks chat completions only, answers 501 naming the operation', async () => {
    const res = await h.request('POST', '/v1/embeddings', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': 'mock' },
      json: { model: 'm', input: 'x' },
    });
    assert.equal(res.status, 501);
    assert.match(res.body.error.message, /POST \/v1\/embeddings/);
  });

  test('an upstream error on a forwarded operation keeps its status and names the provider', async () => {
    const res = await h.request('GET', '/v1/batches/batch_1', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@fake' },
    });
    assert.equal(res.status, 404);
    assert.match(res.body.error.message, /^openai error: No batch found with id 'batch_1'/);
  });

  test('a forwarded operation is logged with its path and status', async () => {
    const res = await h.request('GET', '/v1/models', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@fake' },
    });
    assert.equal(res.status, 200);
    const id = res.headers.get('x-request-id')!;
    const deadline = Date.now() + 5_000;
    let log;
    while (Date.now() < deadline) {
      log = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
      if (log.status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(log?.status, 200);
    assert.equal(log?.body.request.path, '/v1/models');
    assert.equal(log?.body.status, 200);
    assert.equal(log?.body.provider, 'openai');
  });
});
