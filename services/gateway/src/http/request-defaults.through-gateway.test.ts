import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import OpenAI from 'openai';
import { Topics } from '@switchyard/adapters';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import { events } from '@switchyard/proto';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// Defaults for requests that name no provider, as the plain OpenAI SDK sees them: operations
// without a model (runs.update, fineTuning.jobs.cancel, files.content) route to the target of
// the key's, or the workspace's, default config, with no provider header at all.

const keyA = 'sk-defaults-upstream-a-0123456789';
const keyB = 'sk-defaults-upstream-b-0123456789';
let h: ServiceHarness;
let fakeA: FakeOpenAi;
let fakeB: FakeOpenAi;
let configA: { id: string; slug: string };
let configB: { id: string; slug: string };

before(async () => {
  fakeA = await startFakeOpenAi({ apiKey: keyA });
  fakeB = await startFakeOpenAi({ apiKey: keyB });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
  });
  for (const [slug, key, fake] of [
    ['defaults-a', keyA, fakeA],
    ['defaults-b', keyB, fakeB],
  ] as const) {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: slug,
        slug,
        ai_provider_id: 'openai',
        key,
        configurations: { custom_host: fake.baseUrl },
      },
    });
    assert.equal(res.status, 200, res.text);
  }
  configA = await saveConfig('Defaults to A', '@defaults-a');
  configB = await saveConfig('Defaults to B', '@defaults-b');
});
after(async () => {
  await h?.close();
  await fakeA?.close();
  await fakeB?.close();
});

async function saveConfig(name: string, provider: string) {
  const res = await h.request('POST', '/v2/configs', {
    key: h.adminKey,
    json: { name, workspace_id: h.workspaceId, config: { provider } },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data as { id: string; slug: string };
}

async function createKey(defaults?: Record<string, unknown>) {
  const res = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Defaults client', workspace_id: h.workspaceId, ...(defaults ? { defaults } : {}) },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; key: string };
}

/** The plain OpenAI SDK: the gateway key as its API key, no gateway header at all. */
const sdk = (key: string, defaultHeaders: Record<string, string> = {}) =>
  new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0, defaultHeaders });

/** Operations 2, 3 and 4: none has a model to choose a provider by. */
async function modelLessOperations(client: OpenAI) {
  const run = await client.beta.threads.runs.update('run_defaults', {
    thread_id: 'thread_defaults',
    metadata: { step: 'two' },
  });
  const job = await client.fineTuning.jobs.cancel('ftjob-defaults');
  const content = await client.files.content('file-defaults');
  return { run, job, text: await content.text() };
}

function assertAnswered({ run, job, text }: Awaited<ReturnType<typeof modelLessOperations>>) {
  assert.equal(run.id, 'run_defaults');
  assert.equal(run.thread_id, 'thread_defaults');
  assert.deepEqual(run.metadata, { step: 'two' });
  assert.equal(job.id, 'ftjob-defaults');
  assert.equal(job.status, 'cancelled');
  assert.equal(text, '{"prompt": "content of file-defaults"}\n');
}

/** The upstream paths and keys a fake saw since `from`. */
const seen = (fake: FakeOpenAi, from: number) =>
  fake.requests.slice(from).map((r) => `${r.method} ${r.path} ${r.headers.authorization}`);

const expectedUpstream = (key: string) => [
  `POST /v1/threads/thread_defaults/runs/run_defaults Bearer ${key}`,
  `POST /v1/fine_tuning/jobs/ftjob-defaults/cancel Bearer ${key}`,
  `GET /v1/files/file-defaults/content Bearer ${key}`,
];

function requestLog(requestId: string) {
  return h.bus
    .log(Topics.requestLogs)
    .map((message) => fromBinary(events.RequestLogEventSchema, message.value))
    .find((log) => log.id === requestId);
}

describe('without any default', () => {
  test('operations without a model are still 400 provider_required', async () => {
    const client = sdk((await createKey()).key);
    for (const call of [
      () => client.beta.threads.runs.update('run_1', { thread_id: 'thread_1', metadata: {} }),
      () => client.fineTuning.jobs.cancel('ftjob-1'),
      () => client.files.content('file-1'),
    ]) {
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof OpenAI.BadRequestError);
        assert.equal(err.code, 'provider_required');
        return true;
      });
    }
  });
});

describe("a key's default config", () => {
  test('routes operations 2, 3 and 4 to its target, with no provider header', async () => {
    const { key } = await createKey({ config_id: configA.slug });
    const from = fakeA.requests.length;
    assertAnswered(await modelLessOperations(sdk(key)));
    assert.deepEqual(seen(fakeA, from), expectedUpstream(keyA));
  });

  test('applies to chat as if the request had named it, and the log records the config and the metadata under the request’s own', async () => {
    const { key } = await createKey({
      config_id: configA.slug,
      metadata: { team: 'search', env: 'default' },
    });
    const { data, response } = await sdk(key, { 'x-vendor-metadata': JSON.stringify({ env: 'request' }) })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'Echo: Hi');
    assert.equal(response.headers.get('x-vendor-provider'), 'openai');
    assert.equal(fakeA.requests.at(-1)!.headers.authorization, `Bearer ${keyA}`);
    const log = requestLog(response.headers.get('x-request-id')!);
    assert.ok(log, 'no request log');
    assert.equal(log.configSlug, configA.slug);
    assert.equal(log.integrationSlug, 'defaults-a');
    assert.deepEqual({ ...log.metadata }, { team: 'search', env: 'request' });
  });

  test("the request's own provider, integration model or config wins over it", async () => {
    const { key } = await createKey({ config_id: configA.slug });
    let from = fakeB.requests.length;
    await sdk(key, { 'x-vendor-provider': '@defaults-b' }).fineTuning.jobs.cancel('ftjob-own');
    assert.deepEqual(seen(fakeB, from), [`POST /v1/fine_tuning/jobs/ftjob-own/cancel Bearer ${keyB}`]);

    from = fakeB.requests.length;
    const { response } = await sdk(key)
      .chat.completions.create({
        model: '@defaults-b/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .withResponse();
    assert.deepEqual(seen(fakeB, from), [`POST /v1/chat/completions Bearer ${keyB}`]);
    assert.equal(requestLog(response.headers.get('x-request-id')!)?.configSlug, '');

    from = fakeB.requests.length;
    await sdk(key, { 'x-vendor-config': configB.slug }).files.content('file-own');
    assert.deepEqual(seen(fakeB, from), [`GET /v1/files/file-own/content Bearer ${keyB}`]);
  });

  test("allow_config_override false refuses a request's own config with a 403 naming the header", async () => {
    const { key } = await createKey({ config_id: configA.slug, allow_config_override: false });
    const from = fakeB.requests.length;
    for (const config of [configB.slug, JSON.stringify({ provider: '@defaults-b' })]) {
      await assert.rejects(
        sdk(key, { 'x-vendor-config': config }).fineTuning.jobs.cancel('ftjob-x'),
        (err) => {
          assert.ok(err instanceof OpenAI.PermissionDeniedError);
          assert.equal(err.code, 'config_override_not_allowed');
          assert.equal(err.param, 'x-vendor-config');
          return true;
        },
      );
    }
    assert.equal(fakeB.requests.length, from);
    // Without the header, its default applies.
    assertAnswered(await modelLessOperations(sdk(key)));
  });

  test('a change of the default takes effect at once, and clearing it brings back provider_required', async () => {
    const { id, key } = await createKey({ config_id: configA.slug });
    const client = sdk(key);
    let from = fakeA.requests.length;
    await client.fineTuning.jobs.cancel('ftjob-change');
    assert.equal(fakeA.requests.length, from + 1);

    const changed = await h.request('PUT', `/v2/api-keys/${id}`, {
      key: h.adminKey,
      json: { defaults: { config_id: configB.id } },
    });
    assert.equal(changed.status, 200, changed.text);
    from = fakeB.requests.length;
    await client.fineTuning.jobs.cancel('ftjob-change');
    assert.deepEqual(seen(fakeB, from), [`POST /v1/fine_tuning/jobs/ftjob-change/cancel Bearer ${keyB}`]);

    const cleared = await h.request('PUT', `/v2/api-keys/${id}`, {
      key: h.adminKey,
      json: { defaults: null },
    });
    assert.equal(cleared.status, 200, cleared.text);
    await assert.rejects(client.fineTuning.jobs.cancel('ftjob-change'), (err) => {
      assert.ok(err instanceof OpenAI.BadRequestError);
      assert.equal(err.code, 'provider_required');
      return true;
    });
  });
});

describe("the workspace's default config", () => {
  after(async () => {
    const res = await h.request('PUT', `/v2/workspaces/${h.workspaceId}`, {
      key: h.adminKey,
      json: { defaults: { config: null } },
    });
    assert.equal(res.status, 200, res.text);
  });

  test('applies to every key of the workspace without its own, at once; a key default still wins', async () => {
    const { key } = await createKey();
    const own = await createKey({ config_id: configA.slug });
    const client = sdk(key);
    // Resolved (and cached) before the workspace default is set.
    await assert.rejects(client.files.content('file-defaults'), OpenAI.BadRequestError);
    await sdk(own.key).files.content('file-defaults');

    const set = await h.request('PUT', `/v2/workspaces/${h.workspaceId}`, {
      key: h.adminKey,
      json: { defaults: { config: configB.slug } },
    });
    assert.equal(set.status, 200, set.text);
    let from = fakeB.requests.length;
    assertAnswered(await modelLessOperations(client));
    assert.deepEqual(seen(fakeB, from), expectedUpstream(keyB));

    from = fakeA.requests.length;
    assertAnswered(await modelLessOperations(sdk(own.key)));
    assert.deepEqual(seen(fakeA, from), expectedUpstream(keyA));
  });
});
