import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
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
  signingKey,
  signJwt,
  startFakeIdentityProvider,
  startFakeOpenAi,
  startServiceHarness,
  type FakeIdentityProvider,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// Defaults for requests that name no provider, as the plain OpenAI SDK sees them: operations
// without a model (runs.update, fineTuning.jobs.cancel, files.content) route to the target of
// the key's, or the workspace's, default config, with no provider header at all. Callers
// authenticated by a JWT or an OAuth access token get the workspace's default config too.

const keyA = 'sk-defaults-upstream-a-0123456789';
const keyB = 'sk-defaults-upstream-b-0123456789';
const ISSUER = 'https://idp.defaults.test';
const signing = signingKey('defaults-rsa');
let h: ServiceHarness;
let idp: FakeIdentityProvider;
let fakeA: FakeOpenAi;
let fakeB: FakeOpenAi;
let configA: { id: string; slug: string };
let configB: { id: string; slug: string };

before(async () => {
  fakeA = await startFakeOpenAi({ apiKey: keyA });
  fakeB = await startFakeOpenAi({ apiKey: keyB });
  idp = await startFakeIdentityProvider([signing]);
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
    env: {
      JWT_JWKS_URIS: idp.jwksUrl,
      JWT_ORGANISATION: 'default',
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: 'switchyard',
    },
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
  await idp?.close();
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

/** A token of the workspace's identity provider, acting in the default workspace. */
const jwt = () =>
  signJwt(signing, {
    sub: 'svc-defaults',
    iss: ISSUER,
    aud: 'switchyard',
    exp: Math.floor(Date.now() / 1000) + 300,
    workspace: 'default',
  });

/** An OAuth access token a JWT caller consented to, for a public client with PKCE. */
async function oauthAccessToken(): Promise<string> {
  const redirect = 'https://app.example.com/callback';
  const registered = await h.request('POST', '/oauth/register', {
    json: { client_name: 'Defaults agent', redirect_uris: [redirect], grant_types: ['authorization_code'] },
  });
  assert.equal(registered.status, 201, registered.text);
  const clientId = registered.body.client_id as string;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = {
    client_id: clientId,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'defaults',
  };
  const key = jwt();
  const shown = await h.request(
    'GET',
    `/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      scope: 'completions.write models.read fine_tuning.write files.read assistants.write',
      ...authorize,
    }).toString()}`,
    { key },
  );
  assert.equal(shown.status, 200, shown.text);
  const consent = await h.request('POST', '/oauth/postAuthorizeConsent', {
    key,
    json: { ...authorize, scope: shown.body.scope, approve: true },
  });
  assert.equal(consent.status, 200, consent.text);
  const code = new URL(consent.body.redirect_to).searchParams.get('code')!;
  const token = await h.request('POST', '/oauth/token', {
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      redirect_uri: redirect,
      code_verifier: verifier,
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(token.status, 200, token.text);
  return token.body.access_token as string;
}

async function setWorkspaceDefault(config: string | null) {
  const res = await h.request('PUT', `/v2/workspaces/${h.workspaceId}`, {
    key: h.adminKey,
    json: { defaults: { config } },
  });
  assert.equal(res.status, 200, res.text);
  // Gateways learn of it from the workspace's change event.
  await h.bus.flush();
}

const assertProviderRequired = (call: Promise<unknown>) =>
  assert.rejects(call, (err: unknown) => {
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.code, 'provider_required');
    return true;
  });

describe("callers authenticated by a JWT or an OAuth access token get the workspace's default config", () => {
  after(() => setWorkspaceDefault(null));

  test('their operations without a model, and chat, go to its target; their own provider wins', async () => {
    await setWorkspaceDefault(configB.slug);
    for (const token of [jwt(), await oauthAccessToken()]) {
      let from = fakeB.requests.length;
      assertAnswered(await modelLessOperations(sdk(token)));
      assert.deepEqual(seen(fakeB, from), expectedUpstream(keyB));

      from = fakeB.requests.length;
      const { data, response } = await sdk(token)
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] })
        .withResponse();
      assert.equal(data.choices[0]!.message.content, 'Echo: Hi');
      assert.deepEqual(seen(fakeB, from), [`POST /v1/chat/completions Bearer ${keyB}`]);
      assert.equal(requestLog(response.headers.get('x-request-id')!)?.configSlug, configB.slug);

      from = fakeA.requests.length;
      await sdk(token, { 'x-vendor-provider': '@defaults-a' }).fineTuning.jobs.cancel('ftjob-own');
      assert.deepEqual(seen(fakeA, from), [`POST /v1/fine_tuning/jobs/ftjob-own/cancel Bearer ${keyA}`]);
    }
  });

  test('a change of the default reaches them with no restart, and clearing it brings back provider_required', async () => {
    await setWorkspaceDefault(null);
    const callers = [jwt(), await oauthAccessToken()];
    // Each caller's workspace (and the token's principal) is looked up and kept before the change.
    for (const token of callers) await assertProviderRequired(sdk(token).fineTuning.jobs.cancel('ftjob-ws'));

    await setWorkspaceDefault(configA.slug);
    for (const token of callers) {
      const from = fakeA.requests.length;
      await sdk(token).fineTuning.jobs.cancel('ftjob-ws');
      assert.deepEqual(seen(fakeA, from), [`POST /v1/fine_tuning/jobs/ftjob-ws/cancel Bearer ${keyA}`]);
    }

    await setWorkspaceDefault(configB.id);
    for (const token of callers) {
      const from = fakeB.requests.length;
      await sdk(token).fineTuning.jobs.cancel('ftjob-ws');
      assert.deepEqual(seen(fakeB, from), [`POST /v1/fine_tuning/jobs/ftjob-ws/cancel Bearer ${keyB}`]);
    }

    await setWorkspaceDefault(null);
    for (const token of callers) await assertProviderRequired(sdk(token).fineTuning.jobs.cancel('ftjob-ws'));
  });
});

describe('GET /v1/models with a default config', () => {
  after(() => setWorkspaceDefault(null));

  /** The ids GET /v1/models answers, through the plain SDK. */
  async function modelIds(client: OpenAI): Promise<string[]> {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    return ids;
  }

  test('without one, the integrated catalog of every integration', async () => {
    const ids = await modelIds(sdk((await createKey()).key));
    assert.ok(ids.includes('@defaults-a/gpt-4o-mini'), ids.join());
    assert.ok(ids.includes('@defaults-b/gpt-4o-mini'), ids.join());
  });

  test("a key's default config answers as the config header does: its target's own list", async () => {
    const { key } = await createKey({ config_id: configA.slug });
    let from = fakeA.requests.length;
    const withDefault = await modelIds(sdk(key));
    assert.deepEqual(seen(fakeA, from), [`GET /v1/models Bearer ${keyA}`]);

    from = fakeA.requests.length;
    const withHeader = await modelIds(sdk((await createKey()).key, { 'x-vendor-config': configA.slug }));
    assert.deepEqual(seen(fakeA, from), [`GET /v1/models Bearer ${keyA}`]);
    assert.deepEqual(withDefault, withHeader);
    assert.deepEqual(withDefault, ['gpt-4o-mini']);
  });

  test('asked for the catalog, it lists only the models of the integrations the default config routes to', async () => {
    const { key } = await createKey({ config_id: configA.slug });
    const from = fakeA.requests.length;
    const ids = await modelIds(sdk(key, { 'x-vendor-models-endpoint': 'true' }));
    assert.equal(fakeA.requests.length, from, 'no provider was asked');
    assert.ok(ids.length > 0 && ids.every((id) => id.startsWith('@defaults-a/')), ids.join());

    const catalogConfig = await h.request('POST', '/v2/configs', {
      key: h.adminKey,
      json: {
        name: 'Catalog of B',
        workspace_id: h.workspaceId,
        config: { provider: '@defaults-b', fetch_integrated_models: true },
      },
    });
    assert.equal(catalogConfig.status, 200, catalogConfig.text);
    const listed = await modelIds(sdk((await createKey({ config_id: catalogConfig.body.data.slug })).key));
    assert.ok(listed.length > 0 && listed.every((id) => id.startsWith('@defaults-b/')), listed.join());
  });

  test("the request's own provider wins over the default config", async () => {
    const { key } = await createKey({ config_id: configA.slug });
    const from = fakeB.requests.length;
    await modelIds(sdk(key, { 'x-vendor-provider': '@defaults-b' }));
    assert.deepEqual(seen(fakeB, from), [`GET /v1/models Bearer ${keyB}`]);
  });

  test("the workspace's default config applies to the models list of a key without one and of a JWT caller", async () => {
    await setWorkspaceDefault(configB.slug);
    for (const client of [sdk((await createKey()).key), sdk(jwt())]) {
      const from = fakeB.requests.length;
      assert.deepEqual(await modelIds(client), ['gpt-4o-mini']);
      assert.deepEqual(seen(fakeB, from), [`GET /v1/models Bearer ${keyB}`]);
    }
  });
});
