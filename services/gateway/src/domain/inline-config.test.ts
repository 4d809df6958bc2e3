import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService, type Admin } from '@switchyard/admin';
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

const upstreamKey = 'sk-inline-upstream-0123456789';
const services = [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[];
const body = { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] };
let fake: FakeOpenAi;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
});
after(() => fake?.close());

function chat(h: ServiceHarness, headers: Record<string, string>, key = h.workspaceKey) {
  return h.request('POST', '/v1/chat/completions', { key, json: body, headers });
}

describe('inline provider selection (BLOCK_INLINE_CONFIG off)', () => {
  let h: ServiceHarness;
  before(async () => {
    h = await startServiceHarness({ services, env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' } });
  });
  after(() => h?.close());

  test('a direct provider with an inline custom host gets the provider key from Authorization', async () => {
    const res = await h.request('POST', '/v1/chat/completions', {
      json: body,
      headers: {
        'x-vendor-api-key': h.workspaceKey,
        authorization: `Bearer ${upstreamKey}`,
        'x-vendor-provider': 'openai',
        'x-vendor-custom-host': fake.baseUrl,
      },
    });
    assert.equal(res.status, 200, res.text);
    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
    assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey));
  });

  test('an untrusted private custom host is refused by the unsafe-host check', async () => {
    const res = await chat(h, {
      'x-vendor-provider': 'openai',
      'x-vendor-custom-host': 'http://10.1.2.3:8000/v1',
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'unsafe_custom_host');
    assert.equal(res.body.error.param, 'x-vendor-custom-host');
  });

  test('a metadata endpoint is refused as a custom host', async () => {
    const res = await chat(h, {
      'x-vendor-provider': 'openai',
      'x-vendor-custom-host': 'http://169.254.169.254/',
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'unsafe_custom_host');
  });

  test('a custom host cannot redirect a saved integration', async () => {
    const created = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: 's',
        slug: 'saved',
        ai_provider_id: 'openai',
        key: upstreamKey,
        configurations: { custom_host: fake.baseUrl },
      },
    });
    assert.equal(created.status, 200);
    const res = await chat(h, { 'x-vendor-provider': '@saved', 'x-vendor-custom-host': fake.baseUrl });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'x-vendor-custom-host');
  });

  test('an inline config routes the request and the response names the target', async () => {
    const res = await chat(h, {
      'x-vendor-config': JSON.stringify({
        strategy: { mode: 'fallback' },
        targets: [{ provider: 'openai', custom_host: fake.baseUrl, api_key: upstreamKey }],
      }),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-last-used-option-index'), 'config.targets[0]');
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${upstreamKey}`);
  });

  for (const field of ['input_guardrails', 'output_guardrails']) {
    test(`an inline config naming guardrails in ${field} is refused, not served unchecked`, async () => {
      const before = fake.requests.length;
      const res = await chat(h, {
        'x-vendor-config': JSON.stringify({
          provider: 'openai',
          custom_host: fake.baseUrl,
          api_key: upstreamKey,
          [field]: ['pii-check'],
        }),
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'guardrail_not_found');
      assert.equal(res.body.error.param, `config.${field}[0]`);
      assert.match(res.body.error.message, /pii-check/);
      assert.equal(fake.requests.length, before, 'the provider never saw the request');
    });
  }

  test('an inline config with empty guardrail lists is served', async () => {
    const res = await chat(h, {
      'x-vendor-config': JSON.stringify({
        provider: 'openai',
        custom_host: fake.baseUrl,
        api_key: upstreamKey,
        input_guardrails: [],
        output_guardrails: [],
      }),
    });
    assert.equal(res.status, 200, res.text);
  });

  test('an inline config with a private custom host is refused by the unsafe-host check', async () => {
    const res = await chat(h, {
      'x-vendor-config': JSON.stringify({
        provider: 'openai',
        custom_host: 'http://10.1.2.3/v1',
        api_key: 'k',
      }),
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'unsafe_custom_host');
    assert.equal(res.body.error.param, 'config.custom_host');
  });
});

describe('BLOCK_INLINE_CONFIG on', () => {
  let h: ServiceHarness;
  before(async () => {
    h = await startServiceHarness({
      services,
      env: { BLOCK_INLINE_CONFIG: 'true', TRUSTED_CUSTOM_HOSTS: '127.0.0.1' },
    });
    const created = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: 's',
        slug: 'saved',
        ai_provider_id: 'openai',
        key: upstreamKey,
        configurations: { custom_host: fake.baseUrl },
      },
    });
    assert.equal(created.status, 200);
  });
  after(() => h?.close());

  for (const [header, value] of [
    ['x-vendor-provider', 'mock'],
    ['x-vendor-custom-host', 'https://llm.example.com/v1'],
    ['x-vendor-config', '{}'],
  ] as const) {
    test(`a request setting ${header} is refused with 403 naming it`, async () => {
      const before = fake.requests.length;
      const res = await chat(h, {
        [header]: value,
        ...(header === 'x-vendor-provider' ? {} : { 'x-vendor-provider': '@saved' }),
      });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'inline_config_blocked');
      assert.equal(res.body.error.param, header);
      assert.equal(fake.requests.length, before);
    });
  }

  test('saved integrations keep working', async () => {
    const byHeader = await chat(h, { 'x-vendor-provider': '@saved' });
    assert.equal(byHeader.status, 200, byHeader.text);
    const byModel = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { ...body, model: '@saved/gpt-x' },
    });
    assert.equal(byModel.status, 200, byModel.text);
  });
});

describe("the organisation's block_inline_config", () => {
  let h: ServiceHarness;
  before(async () => {
    h = await startServiceHarness({ services, allowInlineConfig: false });
    await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
  });
  after(() => h?.close());

  const setting = (value: boolean | null) =>
    h.request('PUT', '/v1/admin/organisation/settings', {
      key: h.adminKey,
      json: { block_inline_config: value },
    });

  test('is on by default for an organisation created on or after 2026-06-19, and saved resources still work', async () => {
    const shown = await h.request('GET', '/v1/admin/organisation/settings', { key: h.adminKey });
    assert.equal(shown.body.block_inline_config, true);
    assert.equal(shown.body.block_inline_config_source, 'default');
    const inline = await chat(h, { 'x-vendor-provider': 'mock' });
    assert.equal(inline.status, 403);
    assert.equal(inline.body.error.param, 'x-vendor-provider');
    const inlineConfig = await chat(h, { 'x-vendor-config': '{"provider":"mock"}' });
    assert.equal(inlineConfig.status, 403);
    assert.equal(inlineConfig.body.error.param, 'x-vendor-config');
    const saved = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { ...body, model: '@mock/mock-1' },
    });
    assert.equal(saved.status, 200, saved.text);
  });

  test('turning it off takes effect at once, and turning it on again blocks again', async () => {
    assert.equal((await setting(false)).status, 200);
    await h.bus.flush();
    const allowed = await chat(h, { 'x-vendor-provider': 'mock' });
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal((await setting(true)).status, 200);
    await h.bus.flush();
    const blocked = await chat(h, { 'x-vendor-provider': 'mock' });
    assert.equal(blocked.status, 403);
    assert.equal(blocked.body.error.code, 'inline_config_blocked');
  });
});
