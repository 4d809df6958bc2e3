import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../../service.ts';

const upstreamKey = 'gsk-upstream-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  await createIntegration('groq', 'groq', { custom_host: fake.baseUrl });
  await createIntegration('vllm-unset', 'vllm', {});
});
after(async () => {
  await h.close();
  await fake.close();
});

async function createIntegration(slug: string, provider: string, configurations: Record<string, unknown>) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: slug, slug, ai_provider_id: provider, key: upstreamKey, configurations },
  });
  assert.equal(res.status, 200, res.text);
}

function chat(model: string) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model, messages: [{ role: 'user', content: 'Hello there' }] },
  });
}

describe('a groq integration, through the gateway', () => {
  test('reaches the custom host with the bearer key and the bare model', async () => {
    const res = await chat('@groq/llama-3.3-70b-versatile');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-provider'), 'groq');
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello there');
    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/v1/chat/completions');
    assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
    assert.equal(JSON.parse(upstream.body).model, 'llama-3.3-70b-versatile');
  });
});

describe('a vllm integration without a custom_host', () => {
  test('is a 400 naming custom_host', async () => {
    const res = await chat('@vllm-unset/qwen');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'custom_host');
    assert.equal(res.body.error.code, 'provider_setting_missing');
  });
});
