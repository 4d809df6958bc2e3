// Switchyard as five separate processes on real PostgreSQL, Redis and Kafka: the public API
// end to end, including a Kafka outage and a replay of the request-log topic.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test, type TestContext } from 'node:test';
import OpenAI from 'openai';
import { Topics } from '@switchyard/adapters';
import {
  signingKey,
  signJwt,
  startFakeIdentityProvider,
  type FakeIdentityProvider,
} from '@switchyard/testing';
import {
  eventually,
  killKafka,
  startKafka,
  startStack,
  type ApiResponse,
  type Json,
  type Stack,
} from './harness/index.ts';

const UPSTREAM_KEY = 'sk-upstream-secret';
const REQUEST_LOG_GROUP = 'log-export.request-logs';
const OUTAGE_REQUESTS = 20;

let stack: Stack;
let idp: FakeIdentityProvider;
const JWT_ISSUER = 'https://idp.e2e.test';
const jwtKey = signingKey('e2e-rsa');

/** What earlier scenarios created; later ones build on it. */
const state: {
  workspaceA?: string;
  workspaceB?: string;
  keyA?: { id: string; key: string };
  keyB?: { id: string; key: string };
  chat?: { requestId: string; traceId: string; prompt: string };
  stream?: { requestId: string; prompt: string };
  outageRequestIds: string[];
} = { outageRequestIds: [] };

function given<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`precondition missing: ${what} (an earlier scenario failed)`);
  return value;
}

function assertErrorShape(response: ApiResponse, status: number, type?: string): void {
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${response.text}`);
  const body = response.body as Json;
  assert.ok(body && typeof body === 'object' && body.error, `error body expected: ${response.text}`);
  assert.deepEqual(Object.keys(body).sort(), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.equal(typeof body.error.type, 'string');
  assert.ok(body.error.param === null || typeof body.error.param === 'string');
  assert.ok(body.error.code === null || typeof body.error.code === 'string');
  if (type) assert.equal(body.error.type, type);
}

function openAi(apiKey: string): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${stack.url('gateway')}/v1`, maxRetries: 0, timeout: 30_000 });
}

/** A chat completion through the saved mock integration (created by an earlier scenario). */
function mockCompletion(key: string, prompt: string, timeoutMs = 10_000): Promise<ApiResponse> {
  return stack.request('POST', '/v1/chat/completions', {
    key,
    body: { model: '@e2e-mock/mock-model', messages: [{ role: 'user', content: prompt }] },
    timeoutMs,
  });
}

/** Polls until every id is readable through GET /v1/logs/{id}; returns the logs by id. */
async function logsReadable(ids: string[], key: string, timeoutMs: number): Promise<Map<string, Json>> {
  const found = new Map<string, Json>();
  await eventually(
    `${ids.length} request log(s) to be readable via GET /v1/logs/{id}`,
    async () => {
      for (const id of ids) {
        if (found.has(id)) continue;
        const response = await stack.request('GET', `/v1/logs/${encodeURIComponent(id)}`, { key });
        if (response.status === 200) found.set(id, response.body);
        else if (response.status !== 404)
          throw new Error(`GET /v1/logs/${id}: ${response.status} ${response.text}`);
      }
      return found.size === ids.length ? true : undefined;
    },
    {
      timeoutMs,
      intervalMs: 500,
      describe: () => `still missing: ${ids.filter((id) => !found.has(id)).join(', ')}`,
    },
  );
  return found;
}

/** Until log-export's consumer group has committed the end of every partition of the request-log topic. */
async function requestLogsConsumed(timeoutMs: number): Promise<void> {
  let last = '';
  await eventually(
    'log-export to consume the request-log topic to its end',
    async () => {
      const lag = await stack.kafka.lag(REQUEST_LOG_GROUP, Topics.requestLogs);
      last = JSON.stringify(lag);
      return lag.every((p) => p.end === 0 || p.committed === p.end) ? true : undefined;
    },
    { timeoutMs, intervalMs: 500, describe: () => `offsets: ${last}` },
  );
}

async function requestLogCount(): Promise<number> {
  const { rows } = await stack.database.pool.query<{ count: string }>(
    'SELECT count(*) FROM log_export.request_logs',
  );
  return Number(rows[0]!.count);
}

before(async () => {
  idp = await startFakeIdentityProvider([jwtKey]);
  stack = await startStack({
    upstreamKey: UPSTREAM_KEY,
    env: {
      JWT_JWKS_URIS: idp.jwksUrl,
      // The organisation control-plane bootstraps on first start.
      JWT_ORGANISATION: 'default',
      JWT_ISSUER,
      JWT_AUDIENCE: 'switchyard-e2e',
    },
  });
});

after(async () => {
  await stack?.stop();
  await idp?.close();
});

test('the admin key from SWITCHYARD_ADMIN_KEY creates workspaces and workspace keys; a new key is shown in full once, then only masked', async () => {
  for (const name of ['A', 'B'] as const) {
    const workspace = await stack.request('POST', '/v2/workspaces', {
      key: stack.adminKey,
      body: { name: `Workspace ${name} ${stack.runId}` },
    });
    assert.equal(workspace.status, 200, workspace.text);
    assert.equal(workspace.body.object, 'workspace');
    assert.match(workspace.body.id, /^[0-9a-f-]{36}$/);

    const created = await stack.request('POST', '/v2/api-keys/workspace/service', {
      key: stack.adminKey,
      body: { name: `Service key ${name}`, workspace_id: workspace.body.id },
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.workspace_id, workspace.body.id);
    assert.equal(created.body.type, 'workspace-service');
    const fullKey: string = created.body.key;
    assert.match(fullKey, /^sy-[\w-]{40,}$/, 'the create response carries the full key');

    const shown = await stack.request('GET', `/v2/api-keys/${created.body.id}`, { key: stack.adminKey });
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.id, created.body.id);
    assert.match(shown.body.key, /\*{4,}$/, 'a read shows the key masked');
    assert.ok(
      fullKey.startsWith(shown.body.key.replace(/\*+$/, '')),
      'the masked key is a prefix of the real one',
    );
    assert.ok(!shown.text.includes(fullKey), 'a read never carries the full key');

    if (name === 'A') {
      state.workspaceA = workspace.body.id;
      state.keyA = { id: created.body.id, key: fullKey };
    } else {
      state.workspaceB = workspace.body.id;
      state.keyB = { id: created.body.id, key: fullKey };
    }
  }
  assert.notEqual(state.workspaceA, state.workspaceB);
});

test('an integration pointing at the upstream keeps its key secret: the detail view shows masked_key only', async () => {
  const created = await stack.request('POST', '/admin/v2/integrations', {
    key: stack.adminKey,
    body: {
      name: 'Fake OpenAI',
      slug: 'fake-openai',
      ai_provider_id: 'openai',
      key: UPSTREAM_KEY,
      configurations: { custom_host: stack.upstream.baseUrl },
    },
  });
  assert.equal(created.status, 200, created.text);
  assert.equal(created.body.slug, 'fake-openai');
  assert.ok(!created.text.includes(UPSTREAM_KEY));

  const detail = await stack.request('GET', '/admin/v2/integrations/fake-openai', { key: stack.adminKey });
  assert.equal(detail.status, 200, detail.text);
  assert.equal(detail.body.ai_provider_id, 'openai');
  assert.equal(detail.body.configurations.custom_host, stack.upstream.baseUrl);
  assert.equal(typeof detail.body.masked_key, 'string');
  assert.notEqual(detail.body.masked_key, UPSTREAM_KEY);
  assert.match(detail.body.masked_key, /\*{4}/);
  assert.ok(!detail.text.includes(UPSTREAM_KEY), 'the secret never appears in the response');

  const { rows } = await stack.database.pool.query<{ encrypted_key: string }>(
    `SELECT encrypted_key FROM admin.integrations WHERE slug = 'fake-openai'`,
  );
  assert.equal(rows.length, 1);
  assert.ok(!rows[0]!.encrypted_key.includes(UPSTREAM_KEY), 'the key is encrypted at rest');
});

test('the OpenAI SDK gets a chat completion through an integration; the upstream sees its own key and the bare model', async () => {
  const keyA = given(state.keyA, 'workspace A key');
  const client = openAi(keyA.key);
  const traceId = `e2e-trace-${randomBytes(6).toString('hex')}`;
  const prompt = `Hello from run ${stack.runId}`;
  const before = stack.upstream.requests.length;

  const { data, response } = await client.chat.completions
    .create(
      { model: '@fake-openai/gpt-4o-mini', messages: [{ role: 'user', content: prompt }] },
      { headers: { 'x-vendor-trace-id': traceId } },
    )
    .withResponse();

  assert.equal(response.status, 200);
  assert.equal(data.object, 'chat.completion');
  assert.equal(data.choices[0]?.message.content, `Echo: ${prompt}`);
  assert.deepEqual(
    data.usage && {
      p: data.usage.prompt_tokens,
      c: data.usage.completion_tokens,
      t: data.usage.total_tokens,
    },
    {
      p: 9,
      c: 3,
      t: 12,
    },
  );
  assert.equal(response.headers.get('x-vendor-trace-id'), traceId, 'the trace id is echoed');
  assert.equal(response.headers.get('x-vendor-provider'), 'openai');
  const requestId = response.headers.get('x-request-id');
  assert.ok(requestId, 'the gateway answers with x-request-id');

  const upstreamCalls = stack.upstream.requests.slice(before);
  assert.equal(upstreamCalls.length, 1, 'exactly one upstream call');
  const call = upstreamCalls[0]!;
  assert.equal(call.path, '/v1/chat/completions');
  assert.equal(call.headers.authorization, `Bearer ${UPSTREAM_KEY}`, 'the upstream gets the integration key');
  assert.ok(!JSON.stringify(call.headers).includes(keyA.key), 'the gateway key never reaches the upstream');
  assert.equal(JSON.parse(call.body).model, 'gpt-4o-mini', 'the @integration/ prefix is removed');

  state.chat = { requestId, traceId, prompt };
});

test('a JWT signed by the local JWKS server authenticates the OpenAI SDK through the gateway, and its log is read with it', async () => {
  const workspaceA = given(state.workspaceA, 'workspace A');
  const exp = Math.floor(Date.now() / 1000) + 300;
  const token = signJwt(jwtKey, {
    sub: 'e2e-service',
    iss: JWT_ISSUER,
    aud: 'switchyard-e2e',
    exp,
    workspace: workspaceA,
    scope: 'completions.write logs.view',
  });
  const prompt = `JWT caller ${stack.runId}`;
  const { data, response } = await openAi(token)
    .chat.completions.create({
      model: '@fake-openai/gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
    })
    .withResponse();
  assert.equal(data.choices[0]?.message.content, `Echo: ${prompt}`);
  assert.ok(idp.requests.length >= 1, 'the gateway fetched the JWKS');
  const requestId = response.headers.get('x-request-id')!;
  const log = await eventually(
    `the request log of ${requestId}, read with the token`,
    async () => {
      const found = await stack.request('GET', `/v1/logs/${requestId}`, { key: token });
      return found.status === 200 ? found : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  assert.equal(log.body.workspace_id, workspaceA);

  const wrongAudience = signJwt(jwtKey, {
    sub: 'e2e-service',
    iss: JWT_ISSUER,
    aud: 'other',
    exp,
    workspace: workspaceA,
  });
  const refused = await stack.request('POST', '/v1/chat/completions', {
    key: wrongAudience,
    body: { model: '@fake-openai/gpt-4o-mini', messages: [{ role: 'user', content: 'no' }] },
  });
  assertErrorShape(refused, 401, 'authentication_error');
  const noScope = await stack.request('GET', '/v2/configs', { key: token });
  assertErrorShape(noScope, 403, 'permission_error');
});

test('an OAuth client registers, a JWT user consents, and its access token makes model calls through the gateway until it is revoked', async () => {
  const workspaceA = given(state.workspaceA, 'workspace A');
  const redirectUri = 'http://127.0.0.1:9/callback';
  const registered = await stack.request('POST', '/oauth/register', {
    body: {
      client_name: 'e2e agent',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
    },
  });
  assert.equal(registered.status, 201, registered.text);
  const clientId: string = registered.body.client_id;
  const metadata = await stack.request('GET', '/.well-known/oauth-authorization-server');
  assert.equal(metadata.status, 200, metadata.text);
  assert.deepEqual(metadata.body.code_challenge_methods_supported, ['S256']);

  // The consenting user is a JWT caller of workspace A, as in the JWT scenario.
  const user = signJwt(jwtKey, {
    sub: 'e2e-user',
    iss: JWT_ISSUER,
    aud: 'switchyard-e2e',
    exp: Math.floor(Date.now() / 1000) + 300,
    workspace: workspaceA,
    scope: 'completions.write logs.view',
  });
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'completions.write',
    state: 'e2e-state',
  });
  const shown = await stack.request('GET', `/oauth/authorize?${query.toString()}`, { key: user });
  assert.equal(shown.status, 200, shown.text);
  assert.equal(shown.body.client.client_name, 'e2e agent');
  assert.deepEqual(shown.body.scopes, ['completions.write']);
  const consent = await stack.request('POST', '/oauth/postAuthorizeConsent', {
    key: user,
    body: {
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'completions.write',
      state: 'e2e-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      approve: true,
    },
  });
  assert.equal(consent.status, 200, consent.text);
  const back = new URL(consent.body.redirect_to);
  assert.equal(back.searchParams.get('state'), 'e2e-state');

  const tokenEndpoint = async (params: Record<string, string>) => {
    const response = await fetch(`${stack.url('control-plane')}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const tokens = await tokenEndpoint({
    grant_type: 'authorization_code',
    client_id: clientId,
    code: back.searchParams.get('code')!,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(tokens.body.token_type, 'Bearer');

  const prompt = `OAuth caller ${stack.runId}`;
  const completion = await openAi(tokens.body.access_token).chat.completions.create({
    model: '@fake-openai/gpt-4o-mini',
    messages: [{ role: 'user', content: prompt }],
  });
  assert.equal(completion.choices[0]?.message.content, `Echo: ${prompt}`);

  const refreshed = await tokenEndpoint({
    grant_type: 'refresh_token',
    client_id: clientId,
    refresh_token: tokens.body.refresh_token,
  });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  const access: string = refreshed.body.access_token;
  const viaRefreshed = await stack.request('POST', '/v1/chat/completions', {
    key: access,
    body: { model: '@fake-openai/gpt-4o-mini', messages: [{ role: 'user', content: 'refreshed' }] },
  });
  assert.equal(viaRefreshed.status, 200, viaRefreshed.text);

  const revoked = await fetch(`${stack.url('control-plane')}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, token: access }).toString(),
  });
  assert.equal(revoked.status, 200);
  const refused = await eventually(
    'the gateway to refuse the revoked access token',
    async () => {
      const response = await stack.request('POST', '/v1/chat/completions', {
        key: access,
        body: { model: '@fake-openai/gpt-4o-mini', messages: [{ role: 'user', content: 'revoked' }] },
      });
      return response.status === 401 ? response : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200 },
  );
  assertErrorShape(refused, 401, 'authentication_error');
});

test('a saved config routes across the services: a failing target falls back to the next, and the response names it; inline choices are refused for a new organisation', async () => {
  const keyA = given(state.keyA, 'workspace A key');
  const mock = await stack.request('POST', '/admin/v2/integrations', {
    key: stack.adminKey,
    body: { name: 'Mock', slug: 'e2e-mock', ai_provider_id: 'mock' },
  });
  assert.equal(mock.status, 200, mock.text);
  const saved = await stack.request('POST', '/v2/configs', {
    key: keyA.key,
    body: {
      name: `Fallback ${stack.runId}`,
      config: {
        strategy: { mode: 'fallback', on_status_codes: [503] },
        targets: [
          { provider: '@fake-openai', override_params: { model: 'error-503' } },
          { provider: '@e2e-mock', override_params: { model: 'mock-model' } },
        ],
      },
    },
  });
  assert.equal(saved.status, 200, saved.text);
  const slug: string = saved.body.data.slug;

  const client = openAi(keyA.key);
  const before = stack.upstream.requests.length;
  const { data, response } = await client.chat.completions
    .create(
      { model: 'any', messages: [{ role: 'user', content: 'route me' }] },
      { headers: { 'x-vendor-config': slug } },
    )
    .withResponse();
  assert.equal(data.object, 'chat.completion');
  assert.equal(response.headers.get('x-vendor-provider'), 'mock');
  assert.equal(response.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
  assert.equal(response.headers.get('x-vendor-retry-attempt-count'), '0');
  assert.equal(stack.upstream.requests.length - before, 1, 'the first target was tried once');

  // The organisation was created today: block_inline_config is on by default.
  const settings = await stack.request('GET', '/v1/admin/organisation/settings', { key: stack.adminKey });
  assert.equal(settings.status, 200, settings.text);
  assert.equal(settings.body.block_inline_config, true);
  const inline = await stack.request('POST', '/v1/chat/completions', {
    key: keyA.key,
    headers: { 'x-vendor-provider': 'mock' },
    body: { model: 'mock-model', messages: [{ role: 'user', content: 'inline' }] },
  });
  assertErrorShape(inline, 403, 'permission_error');
  assert.equal((inline.body as Json).error.param, 'x-vendor-provider');
});

test('the OpenAI SDK streams a chat completion through the gateway; the deltas add up to the answer and usage comes last', async () => {
  const keyA = given(state.keyA, 'workspace A key');
  const client = openAi(keyA.key);
  const prompt = `Stream this please, run ${stack.runId}`;
  const before = stack.upstream.requests.length;

  const { data: stream, response } = await client.chat.completions
    .create({
      model: '@fake-openai/gpt-4o-mini',
      messages: [{ role: 'user', content: prompt }],
      stream: true,
      stream_options: { include_usage: true },
    })
    .withResponse();
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);

  let text = '';
  let chunks = 0;
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, `Echo: ${prompt}`);
  assert.ok(chunks > 3, `several chunks expected, got ${chunks}`);
  assert.equal(usage?.total_tokens, 12);

  const call = stack.upstream.requests.slice(before)[0];
  assert.ok(call, 'the upstream was called');
  assert.equal(JSON.parse(call.body).stream, true);
  assert.equal(call.headers.authorization, `Bearer ${UPSTREAM_KEY}`);

  const requestId = response.headers.get('x-request-id');
  assert.ok(requestId);
  state.stream = { requestId, prompt };
});

test('each request log travels through Kafka into log-export and is readable by its x-request-id with provider, model, status, usage and trace id', async () => {
  const keyA = given(state.keyA, 'workspace A key');
  const chat = given(state.chat, 'the SDK chat completion');
  const stream = given(state.stream, 'the SDK streaming completion');

  const logs = await logsReadable([chat.requestId, stream.requestId], keyA.key, 30_000);

  const log = logs.get(chat.requestId);
  assert.equal(log.id, chat.requestId);
  assert.equal(log.object, 'log');
  assert.equal(log.workspace_id, state.workspaceA);
  assert.equal(log.api_key_id, keyA.id);
  assert.equal(log.provider, 'openai');
  assert.equal(log.model, 'gpt-4o-mini');
  assert.equal(log.integration_slug, 'fake-openai');
  assert.equal(log.status, 200);
  assert.equal(log.stream, false);
  assert.equal(log.trace_id, chat.traceId, 'the trace id sent in x-vendor-trace-id is kept');
  assert.deepEqual(
    {
      prompt: log.usage.prompt_tokens,
      completion: log.usage.completion_tokens,
      total: log.usage.total_tokens,
    },
    { prompt: 9, completion: 3, total: 12 },
  );
  assert.equal(log.request.method, 'POST');
  assert.equal(log.request.path, '/v1/chat/completions');
  assert.equal(log.request.body.messages[0].content, chat.prompt);
  assert.equal(log.response.body.choices[0].message.content, `Echo: ${chat.prompt}`);

  const streamed = logs.get(stream.requestId);
  assert.equal(streamed.status, 200);
  assert.equal(streamed.stream, true);
  assert.equal(streamed.model, 'gpt-4o-mini');
  assert.equal(streamed.usage.total_tokens, 12, 'usage is taken from the last stream chunk');
  assert.ok(streamed.trace_id, 'a trace id is generated when none is sent');
});

test("another workspace's key gets 404 for a log and an invalid key gets 401, both as {error:{message,type,param,code}}", async () => {
  const keyB = given(state.keyB, 'workspace B key');
  const chat = given(state.chat, 'the SDK chat completion');

  const foreign = await stack.request('GET', `/v1/logs/${chat.requestId}`, { key: keyB.key });
  assertErrorShape(foreign, 404, 'not_found_error');
  assert.ok(!foreign.text.includes(chat.prompt));

  const bogus = `sy-${randomBytes(32).toString('base64url')}`;
  assertErrorShape(
    await stack.request('GET', `/v1/logs/${chat.requestId}`, { key: bogus }),
    401,
    'authentication_error',
  );
  assertErrorShape(await stack.request('GET', `/v1/logs/${chat.requestId}`), 401, 'authentication_error');
  assertErrorShape(await mockCompletion(bogus, 'hello'), 401, 'authentication_error');
});

test('while the Kafka broker is down the gateway answers every request promptly, and no request log is lost once it is back', async (t: TestContext) => {
  const keyA = given(state.keyA, 'workspace A key');
  // Warm: the key is known and the path works before the outage.
  const warm = await mockCompletion(keyA.key, 'before the outage');
  assert.equal(warm.status, 200, warm.text);

  let brokerDown = false;
  try {
    await killKafka();
    brokerDown = true;
    const outageStarted = Date.now();

    for (let i = 0; i < OUTAGE_REQUESTS; i++) {
      const prompt = `outage request ${i}`;
      const started = performance.now();
      const response = await mockCompletion(keyA.key, prompt, 10_000);
      const elapsed = performance.now() - started;
      assert.equal(response.status, 200, `request ${i}: ${response.status} ${response.text}`);
      assert.equal(response.body.choices[0].message.content, `Mock response to: ${prompt}`);
      assert.ok(elapsed < 3_000, `request ${i} took ${Math.round(elapsed)} ms with the broker down`);
      const requestId = response.headers.get('x-request-id');
      assert.ok(requestId);
      state.outageRequestIds.push(requestId);
    }
    t.diagnostic(
      `${OUTAGE_REQUESTS} requests answered in ${Date.now() - outageStarted} ms with the broker down`,
    );

    // log-export cannot do its job without the broker, so it must say so. The gateway's answer
    // is only reported: it keeps serving either way.
    const seen = await eventually(
      'log-export /readyz to report the broker missing',
      async () => {
        const ready = await stack.request('GET', '/readyz', { service: 'log-export', timeoutMs: 10_000 });
        return ready.status === 503 ? ready.body : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    assert.notEqual(seen.checks?.kafka, 'ok', `log-export: ${JSON.stringify(seen)}`);
    const gatewayReady = await stack.request('GET', '/readyz', { service: 'gateway', timeoutMs: 10_000 });
    t.diagnostic(`gateway /readyz with the broker down: ${gatewayReady.status} ${gatewayReady.text}`);

    const restarted = Date.now();
    await startKafka();
    brokerDown = false;
    t.diagnostic(`broker restarted in ${Date.now() - restarted} ms`);
  } finally {
    if (brokerDown) await startKafka();
  }

  const recovered = Date.now();
  const logs = await logsReadable(state.outageRequestIds, keyA.key, 90_000);
  t.diagnostic(
    `all ${OUTAGE_REQUESTS} logs readable ${Date.now() - recovered} ms after the broker came back`,
  );
  for (const [id, log] of logs) {
    assert.equal(log.id, id);
    assert.equal(log.status, 200);
    assert.equal(log.provider, 'mock');
  }

  for (const service of ['gateway', 'log-export'] as const) {
    await eventually(
      `${service} to be ready again`,
      async () => ((await stack.request('GET', '/readyz', { service })).status === 200 ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
  }
});

test('replaying the request-log topic from the beginning creates no duplicate logs', async (t: TestContext) => {
  const keyA = given(state.keyA, 'workspace A key');
  const ids = [given(state.chat, 'the SDK chat completion').requestId, ...state.outageRequestIds];
  assert.equal(state.outageRequestIds.length, OUTAGE_REQUESTS, 'the outage scenario must have run');

  await requestLogsConsumed(60_000);
  const before = await requestLogCount();
  assert.ok(before >= ids.length, `expected at least ${ids.length} logs, found ${before}`);

  await stack.stopService('log-export');
  // The group must be empty to move its offsets; a member that did not leave cleanly times out.
  await eventually(
    'the consumer group offsets to be reset to the earliest message',
    async () => {
      await stack.kafka.resetToEarliest(REQUEST_LOG_GROUP, Topics.requestLogs);
      return true;
    },
    { timeoutMs: 45_000, intervalMs: 1_000 },
  );
  const reset = await stack.kafka.lag(REQUEST_LOG_GROUP, Topics.requestLogs);
  const messages = reset.reduce((n, p) => n + p.end, 0);
  assert.ok(
    reset.some((p) => p.end > 0 && p.committed !== p.end),
    `the group should be behind after the reset: ${JSON.stringify(reset)}`,
  );
  t.diagnostic(`${messages} messages on the topic for ${before} stored logs; replaying`);

  await stack.startService('log-export');
  await requestLogsConsumed(60_000);

  assert.equal(await requestLogCount(), before, 'the replay added no rows');
  const { rows } = await stack.database.pool.query<{ id: string }>(
    'SELECT id FROM log_export.request_logs GROUP BY id HAVING count(*) > 1',
  );
  assert.deepEqual(rows, []);
  const logs = await logsReadable(ids, keyA.key, 10_000);
  assert.equal(logs.size, ids.length);
});

test('revoking a workspace key makes the gateway reject it within seconds, while other keys keep working', async () => {
  const keyA = given(state.keyA, 'workspace A key');
  const keyB = given(state.keyB, 'workspace B key');

  // After the broker outage, the gateway's change-event consumer must be back in its group,
  // or the revocation would wait for the consumer rather than travel at once.
  let groups = '';
  await eventually(
    "the gateway's change-event consumer group to be stable",
    async () => {
      const found = await stack.kafka.groups('gateway.changes.');
      groups = JSON.stringify(found);
      return found.length === 1 && found[0]!.state === 'Stable' && found[0]!.members === 1 ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500, describe: () => `groups: ${groups}` },
  );

  // The gateway now holds key A in its cache (30 s TTL); only the change event can drop it sooner.
  const warm = await mockCompletion(keyA.key, 'before revocation');
  assert.equal(warm.status, 200, warm.text);

  const revoked = await stack.request('DELETE', `/v2/api-keys/${keyA.id}`, { key: stack.adminKey });
  assert.equal(revoked.status, 200, revoked.text);
  const shown = await stack.request('GET', `/v2/api-keys/${keyA.id}`, { key: stack.adminKey });
  assert.equal(shown.body.status, 'revoked');

  const started = Date.now();
  const rejected = await eventually(
    'the gateway to reject the revoked key',
    async () => {
      const response = await mockCompletion(keyA.key, 'after revocation');
      return response.status === 401 ? response : undefined;
    },
    { timeoutMs: 10_000, intervalMs: 200 },
  );
  assertErrorShape(rejected, 401, 'authentication_error');
  assert.ok(Date.now() - started < 10_000);

  const other = await mockCompletion(keyB.key, 'still allowed');
  assert.equal(other.status, 200, other.text);
});
