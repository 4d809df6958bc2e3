import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { scopesForKind, type Principal } from '@switchyard/access';
import { policy } from '@switchyard/proto';
import {
  startFakeAnthropic,
  startFakeGemini,
  startFakeOpenAi,
  type FakeAnthropic,
  type FakeGemini,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { startGatewayWithStandIns, type PolicyStandIn } from '../testing/policy-stand-ins.ts';

// The provider's request id and rate-limit headers as an OpenAI SDK client sees them through
// the gateway: answers, streams, relayed errors, fallbacks, cache hits and forwarded operations.
// Each request chooses its provider inline; a stand-in policy service decides.

const providerKey = 'sk-headers-upstream-0123456789';
const keys = new Map<string, Principal>();
let h: ServiceHarness;
let standIn: PolicyStandIn;
let gateway: Awaited<ReturnType<typeof startGatewayWithStandIns>> | undefined;
let openai: FakeOpenAi;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;

/** A new workspace key: what the gateway remembers of one key's rate limits does not touch another. */
function newKey(): string {
  const key = `sy-headers-test-${randomUUID()}`;
  keys.set(key, {
    apiKeyId: randomUUID(),
    organisationId: randomUUID(),
    workspaceId: randomUUID(),
    workspaceSlug: 'default',
    kind: 'workspace_service',
    scopes: [...scopesForKind('workspace_service')],
    expiresAt: null,
    userId: null,
    name: 'Provider headers test key',
    organisationCreatedAt: null,
  });
  return key;
}

before(async () => {
  openai = await startFakeOpenAi({ apiKey: providerKey });
  anthropic = await startFakeAnthropic({ apiKey: providerKey });
  gemini = await startFakeGemini({ apiKey: providerKey });
  gateway = await startGatewayWithStandIns(keys);
  ({ h, standIn } = gateway);
});
after(async () => {
  await gateway?.close();
  await openai?.close();
  await anthropic?.close();
  await gemini?.close();
});

/** An OpenAI client of the gateway that chooses `provider` at `host` inline, with the gateway key in x-vendor-api-key. */
function client(provider: string, host: string, extra: Record<string, string> = {}, key = newKey()) {
  return new OpenAI({
    apiKey: providerKey,
    baseURL: `${h.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      'x-vendor-api-key': key,
      'x-vendor-provider': provider,
      'x-vendor-custom-host': host,
      ...extra,
    },
  });
}

const messages = [{ role: 'user' as const, content: 'Hello there' }];

const OPENAI_RATE_LIMITS = {
  'x-ratelimit-limit-requests': '500',
  'x-ratelimit-limit-tokens': '30000',
  'x-ratelimit-remaining-requests': '499',
  'x-ratelimit-remaining-tokens': '29950',
  'x-ratelimit-reset-requests': '120ms',
  'x-ratelimit-reset-tokens': '100ms',
};

function assertOpenAiHead(headers: Headers) {
  assert.match(headers.get('x-vendor-provider-request-id') ?? '', /^req_fake_\d+$/);
  assert.notEqual(headers.get('x-request-id'), headers.get('x-vendor-provider-request-id'));
  for (const [name, value] of Object.entries(OPENAI_RATE_LIMITS))
    assert.equal(headers.get(name), value, name);
  // Cookies, the organisation and the upstream's framing stay with the gateway.
  assert.equal(headers.get('set-cookie'), null);
  assert.equal(headers.get('openai-organization'), null);
  assert.equal(headers.get('openai-processing-ms'), null);
}

describe('chat answers carry the provider headers', () => {
  test("an OpenAI answer: the provider's request id under the prefix, its rate limits as they are", async () => {
    const { data, response, request_id } = await client('openai', openai.baseUrl)
      .chat.completions.create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    assert.equal(data.choices[0]?.message.content, 'Echo: Hello there');
    assertOpenAiHead(response.headers);
    // The SDK's request id is the gateway's own.
    assert.match(request_id ?? '', /.+/);
    assert.equal(request_id, response.headers.get('x-request-id'));
    assert.notEqual(request_id, response.headers.get('x-vendor-provider-request-id'));
  });

  test("a stream's head carries them before the first chunk is read", async () => {
    const { data: stream, response } = await client('openai', openai.baseUrl)
      .chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true })
      .withResponse();
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assertOpenAiHead(response.headers);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'Echo: Hello there');
  });

  test("a relayed provider error carries them, with the provider's retry-after", async () => {
    const error = await client('openai', openai.baseUrl)
      .chat.completions.create({ model: 'error-429', messages })
      .then(
        () => assert.fail('the request succeeded'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.equal(error.headers?.get('retry-after'), '2');
    assertOpenAiHead(error.headers!);
  });

  test('a header the gateway sets itself (its policy rate limit) moves the provider one under the prefix', async () => {
    standIn.state.decide = async () => ({
      decision: policy.Decision.ALLOW,
      limits: [
        {
          policyId: 'pol-rpm',
          kind: policy.PolicyKind.RATE_LIMIT,
          type: 'requests',
          limit: 100,
          remaining: 99,
          resetAtMs: String(Date.now() + 30_000),
          failureMode: policy.FailureMode.OPEN,
          valueKey: 'api_key:test',
          windowMs: '0',
        },
      ],
    });
    try {
      const { response } = await client('openai', openai.baseUrl)
        .chat.completions.create({ model: 'gpt-4o-mini', messages })
        .withResponse();
      const headers = response.headers;
      assert.equal(headers.get('x-ratelimit-limit-requests'), '100');
      assert.equal(headers.get('x-ratelimit-remaining-requests'), '99');
      assert.equal(headers.get('x-vendor-provider-x-ratelimit-limit-requests'), '500');
      assert.equal(headers.get('x-vendor-provider-x-ratelimit-remaining-requests'), '499');
      assert.equal(headers.get('x-vendor-provider-x-ratelimit-reset-requests'), '120ms');
      // The gateway sets no token limit here: the provider's passes as it is.
      assert.equal(headers.get('x-ratelimit-limit-tokens'), '30000');
      assert.equal(headers.get('x-vendor-provider-x-ratelimit-limit-tokens'), null);
    } finally {
      standIn.state.decide = async () => ({ decision: policy.Decision.ALLOW });
    }
  });

  test('an Anthropic answer: its request-id both as it is and under the prefix, and its rate limits', async () => {
    for (const stream of [false, true]) {
      const { data, response } = await client('anthropic', anthropic.baseUrl)
        .chat.completions.create({ model: 'claude-sonnet-4-5', messages, max_tokens: 50, stream })
        .withResponse();
      if (stream) for await (const chunk of data as AsyncIterable<unknown>) void chunk;
      const headers = response.headers;
      assert.equal(headers.get('x-vendor-provider-request-id'), 'req_fake', `stream: ${stream}`);
      assert.equal(headers.get('request-id'), 'req_fake');
      assert.equal(headers.get('anthropic-ratelimit-requests-limit'), '50');
      assert.equal(headers.get('anthropic-ratelimit-tokens-remaining'), '39000');
      assert.equal(headers.get('anthropic-organization-id'), null);
    }
  });

  test('an Anthropic 529 is relayed with its retry-after and request id', async () => {
    const error = await client('anthropic', anthropic.baseUrl)
      .chat.completions.create({ model: 'error-529', messages, max_tokens: 50 })
      .then(
        () => assert.fail('the request succeeded'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 529);
    assert.equal(error.headers?.get('retry-after'), '7');
    assert.equal(error.headers?.get('x-vendor-provider-request-id'), 'req_fake');
    assert.equal(error.headers?.get('anthropic-ratelimit-requests-remaining'), '49');
  });

  test('a Google answer, which has no request id header, carries no provider request id', async () => {
    const { response } = await client('google', gemini.baseUrl)
      .chat.completions.create({ model: 'gemini-2.5-flash', messages })
      .withResponse();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-vendor-provider-request-id'), null);
    assert.equal(response.headers.get('x-vendor-provider'), 'google');
  });

  test('a fallback carries the headers of the target that answered', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        {
          provider: 'openai',
          api_key: providerKey,
          custom_host: openai.baseUrl,
          override_params: { model: 'error-503' },
        },
        { provider: 'anthropic', api_key: providerKey, custom_host: anthropic.baseUrl },
      ],
    };
    const key = newKey();
    const gatewayClient = new OpenAI({
      apiKey: providerKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-api-key': key, 'x-vendor-config': JSON.stringify(config) },
    });
    const { response } = await gatewayClient.chat.completions
      .create({ model: 'claude-sonnet-4-5', messages, max_tokens: 50 })
      .withResponse();
    const headers = response.headers;
    assert.equal(headers.get('x-vendor-provider'), 'anthropic');
    assert.equal(headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
    assert.equal(headers.get('x-vendor-provider-request-id'), 'req_fake');
    assert.equal(headers.get('anthropic-ratelimit-requests-limit'), '50');
    // Nothing of the OpenAI target that failed.
    assert.equal(headers.get('x-ratelimit-limit-requests'), null);
  });

  test('an answer from the response cache carries no provider headers', async () => {
    const chat = client('openai', openai.baseUrl, { 'x-vendor-cache': 'simple' });
    const body = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user' as const, content: `cache ${randomUUID()}` }],
    };
    const first = await chat.chat.completions.create(body).withResponse();
    assert.equal(first.response.headers.get('x-vendor-cache-status'), 'MISS');
    assertOpenAiHead(first.response.headers);
    const again = await chat.chat.completions.create(body).withResponse();
    assert.equal(again.response.headers.get('x-vendor-cache-status'), 'HIT');
    assert.deepEqual(again.data, first.data);
    assert.equal(again.response.headers.get('x-vendor-provider-request-id'), null);
    for (const name of Object.keys(OPENAI_RATE_LIMITS))
      assert.equal(again.response.headers.get(name), null, name);
  });
});

describe('forwarded operations carry them by the same rule', () => {
  test("the provider's request id is under the prefix; the gateway's x-request-id is its own", async () => {
    const { response } = await client('openai', openai.baseUrl)
      .beta.threads.runs.update('run_1', { thread_id: 'thread_1', metadata: { a: 'b' } })
      .withResponse();
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-vendor-provider-request-id'), 'req_upstream_1');
    assert.notEqual(response.headers.get('x-request-id'), 'req_upstream_1');
    assert.equal(response.headers.get('upstream-request-id'), null);
  });
});
