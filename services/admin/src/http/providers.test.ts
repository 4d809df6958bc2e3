import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger, createMetrics } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { providerIds } from '@switchyard/rules';
import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
// The gateway's own cost computation: the pricing API must answer what it charges.
import { costOf } from '../../../gateway/src/pricing/cost.ts';
import { adminService } from '../service.ts';

let h: ServiceHarness;
/** Admin's own HTTP server, as a standalone admin serves it: every admin route, whatever the ingress table routes to it. */
let admin: { url: string; close: () => Promise<void> };

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
  const logger = createLogger('admin', 'error');
  logger.silent = true;
  const app = createHttpApp({
    service: 'admin',
    logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ router: h.instance('admin').router! }],
  });
  const server = await listen(app, '127.0.0.1', 0);
  admin = {
    url: `http://127.0.0.1:${server.port}`,
    close: async () => {
      const closed = server.close();
      server.server.closeAllConnections();
      await closed;
    },
  };
});
after(async () => {
  await admin?.close();
  await h?.close();
});

/** A GET to admin, with the key if given; the body parsed as JSON. */
async function get(path: string, key?: string) {
  const res = await fetch(`${admin.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

interface Field {
  name: string;
  secret: boolean;
}

describe('provider details', () => {
  test('lists every registered provider kind with its auth types and configuration fields', async () => {
    const res = await get('/v1/providers/details', h.workspaceKey);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'list');
    assert.deepEqual(
      res.body.data.map((p: { id: string }) => p.id),
      providerIds,
    );
    assert.equal(res.body.total, providerIds.length);
    const openai = res.body.data.find((p: { id: string }) => p.id === 'openai');
    assert.equal(openai.name, 'OpenAI');
    assert.deepEqual(openai.provider_auth_types, ['bearer']);
    assert.deepEqual(
      openai.configurations.map((f: Field) => [f.name, f.secret]),
      [
        ['key', true],
        ['custom_host', false],
        ['headers', true],
      ],
    );
    assert.ok(openai.priced_models.includes('gpt-4o'));
  });

  test('one provider: Bedrock takes AWS credentials, the secret ones marked secret', async () => {
    const res = await get('/v1/providers/details/bedrock', h.workspaceKey);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.id, 'bedrock');
    assert.equal(res.body.object, 'provider');
    assert.deepEqual(res.body.provider_auth_types, ['aws-sigv4', 'bearer']);
    assert.equal(res.body.default_base_url, null);
    const secret = Object.fromEntries(res.body.configurations.map((f: Field) => [f.name, f.secret]));
    assert.deepEqual(secret, {
      key: true,
      custom_host: false,
      headers: true,
      aws_region: false,
      aws_access_key_id: false,
      aws_secret_access_key: true,
      aws_session_token: true,
    });
  });

  test('a provider that takes no credential lists no key; one with no prices lists no priced models', async () => {
    const mock = await get('/v1/providers/details/mock', h.adminKey);
    assert.equal(mock.status, 200, mock.text);
    assert.deepEqual(mock.body.configurations, []);
    const groq = await get('/v1/providers/details/groq', h.adminKey);
    assert.equal(groq.status, 200, groq.text);
    assert.deepEqual(groq.body.priced_models, []);
    assert.equal(groq.body.default_base_url, 'https://api.groq.com/openai/v1');
  });

  test('an unknown provider is 404 and a malformed id 400, in the one error shape', async () => {
    const unknown = await get('/v1/providers/details/no-such-provider', h.adminKey);
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.param, 'provider');
    assert.match(unknown.body.error.message, /no-such-provider/);
    const malformed = await get('/v1/providers/details/Not_A_Provider', h.adminKey);
    assert.equal(malformed.status, 400, malformed.text);
    assert.equal(malformed.body.error.type, 'invalid_request_error');
  });

  test('needs a credential', async () => {
    const res = await get('/v1/providers/details');
    assert.equal(res.status, 401, res.text);
  });

  test('include_configurations=true is refused to API keys, admin or workspace: it needs system auth', async () => {
    for (const key of [h.adminKey, h.workspaceKey]) {
      for (const path of [
        '/v1/providers/details?include_configurations=true',
        '/v1/providers/details/bedrock?include_configurations=true',
      ]) {
        const res = await get(path, key);
        assert.equal(res.status, 403, `${path}: ${res.text}`);
        assert.equal(res.body.error.param, 'include_configurations');
        assert.equal(res.body.error.code, 'system_auth_required');
        assert.match(res.body.error.message, /system/);
        assert.equal(res.body.data, undefined);
      }
    }
  });

  test('include_configurations=false answers as without it', async () => {
    const plain = await get('/v1/providers/details/openai', h.adminKey);
    const off = await get('/v1/providers/details/openai?include_configurations=false', h.adminKey);
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.body, plain.body);
  });

  test('any other include_configurations value is 400', async () => {
    for (const query of [
      'include_configurations=yes',
      'include_configurations=1',
      'include_configurations=',
      'include_configurations=true&include_configurations=false',
    ]) {
      const res = await get(`/v1/providers/details?${query}`, h.adminKey);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.match(res.body.error.message, /include_configurations/);
    }
  });
});

describe('model pricing', () => {
  /** What the gateway charges for a million tokens, prompt or completion alone, in USD. */
  const charged = (provider: string, model: string) => ({
    prompt: costOf(provider, model, {
      promptTokens: 1_000_000,
      completionTokens: 0,
      cachedTokens: 0,
      reasoningTokens: 0,
    }),
    completion: costOf(provider, model, {
      promptTokens: 0,
      completionTokens: 1_000_000,
      cachedTokens: 0,
      reasoningTokens: 0,
    }),
    cached: costOf(provider, model, {
      promptTokens: 1_000_000,
      completionTokens: 0,
      cachedTokens: 1_000_000,
      reasoningTokens: 0,
    }),
  });
  /** USD cents per token, as answered, for a million tokens in USD. */
  const perMillion = (entry: { price: number }) => (entry.price * 1_000_000) / 100;
  const close = (actual: number, expected: number, what: string) =>
    assert.ok(
      Math.abs(actual - expected) <= 1e-9 * Math.max(1, expected),
      `${what}: ${actual} != ${expected}`,
    );

  for (const [provider, model] of [
    ['openai', 'gpt-4o'],
    ['openai', 'gpt-4o-2024-08-06'],
    ['openai', 'gpt-4o-mini'],
    ['azure-openai', 'gpt-4.1-nano'],
    ['anthropic', 'claude-3-5-sonnet-20241022'],
    ['bedrock', 'us.anthropic.claude-3-5-haiku-20241022-v1:0'],
    ['google', 'gemini-2.5-pro'],
  ] as const) {
    test(`${provider}/${model} is priced as the gateway charges for it`, async () => {
      const res = await get(`/v1/model-configs/pricing/${provider}/${encodeURIComponent(model)}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.currency, 'USD');
      const { pay_as_you_go: rates } = res.body;
      const expected = charged(provider, model);
      assert.ok(expected.prompt > 0 && expected.completion > 0, 'the gateway lists a price for it');
      close(perMillion(rates.request_token), expected.prompt, 'prompt');
      close(perMillion(rates.response_token), expected.completion, 'completion');
      close(perMillion(rates.cache_read_input_token), expected.cached, 'cached prompt');
    });
  }

  test('is also served without /v1, and needs no credential', async () => {
    const bare = await get('/model-configs/pricing/openai/gpt-4o');
    const versioned = await get('/v1/model-configs/pricing/openai/gpt-4o', h.adminKey);
    assert.equal(bare.status, 200, bare.text);
    assert.deepEqual(bare.body, versioned.body);
    assert.deepEqual(bare.body.pay_as_you_go.request_token, { price: 0.00025 });
    assert.deepEqual(bare.body.pay_as_you_go.response_token, { price: 0.001 });
  });

  test('an unknown provider or model is 404', async () => {
    const provider = await get('/v1/model-configs/pricing/no-such-provider/gpt-4o');
    assert.equal(provider.status, 404, provider.text);
    assert.equal(provider.body.error.param, 'provider');
    const model = await get('/v1/model-configs/pricing/openai/no-such-model');
    assert.equal(model.status, 404, model.text);
    assert.equal(model.body.error.param, 'model');
    assert.equal(charged('openai', 'no-such-model').prompt, 0);
    // A provider that lists no prices: the gateway charges 0, and there is no price to show.
    const unpriced = await get('/v1/model-configs/pricing/groq/llama-3.3-70b-versatile');
    assert.equal(unpriced.status, 404, unpriced.text);
  });

  test('a malformed provider or model is 400', async () => {
    for (const path of [
      '/v1/model-configs/pricing/OpenAI!/gpt-4o',
      `/v1/model-configs/pricing/openai/${encodeURIComponent('gpt 4o')}`,
      `/v1/model-configs/pricing/openai/${'a'.repeat(300)}`,
      `/v1/model-configs/pricing/openai/${encodeURIComponent('../etc')}`,
    ]) {
      const res = await get(path);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.equal(res.body.error.type, 'invalid_request_error');
    }
  });
});
