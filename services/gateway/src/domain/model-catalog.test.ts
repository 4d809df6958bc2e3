import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
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

let h: ServiceHarness;
let fake: FakeOpenAi;
let otherWorkspaceKey: string;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: 'sk-x' });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[],
  });
  const other = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name: 'Other' } });
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'k', workspace_id: other.body.id },
  });
  otherWorkspaceKey = key.body.key;
  for (const [slug, provider, workspace_id] of [
    ['shared-openai', 'openai', undefined],
    ['team-claude', 'anthropic', h.workspaceId],
    ['other-team', 'google', other.body.id],
  ]) {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: slug,
        slug,
        ai_provider_id: provider,
        key: 'sk-x',
        workspace_id,
        configurations: { custom_host: fake.baseUrl },
      },
    });
    assert.equal(res.status, 200, res.text);
  }
});
after(async () => {
  await h?.close();
  await fake?.close();
});

test('lists the models of every integration the workspace may use, as it would request them', async () => {
  const sdk = new OpenAI({ apiKey: h.workspaceKey, baseURL: `${h.url}/v1`, maxRetries: 0 });
  const ids = [];
  for await (const model of sdk.models.list()) ids.push(model.id);
  assert.ok(ids.includes('@shared-openai/gpt-4o-mini'));
  assert.ok(ids.includes('@team-claude/claude-sonnet-4'));
  assert.ok(!ids.some((id) => id.startsWith('@other-team/')), "another workspace's integration leaked");
});

test("another workspace sees its own integrations and the organisation's shared ones", async () => {
  const res = await h.request('GET', '/v1/models', { key: otherWorkspaceKey });
  const ids: string[] = res.body.data.map((m: { id: string }) => m.id);
  assert.ok(ids.some((id) => id.startsWith('@other-team/gemini-')));
  assert.ok(ids.some((id) => id.startsWith('@shared-openai/')));
  assert.ok(!ids.some((id) => id.startsWith('@team-claude/')));
});

test("with a provider chosen, the provider's own list is returned", async () => {
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: { 'x-vendor-provider': '@shared-openai' },
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    res.body.data.map((m: { id: string }) => m.id),
    ['gpt-4o-mini'],
  );
});

test('<prefix>models-endpoint: true answers from the catalog, narrowed to the provider named', async () => {
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: { 'x-vendor-provider': '@shared-openai', 'x-vendor-models-endpoint': 'true' },
  });
  assert.equal(res.status, 200, res.text);
  const ids: string[] = res.body.data.map((m: { id: string }) => m.id);
  assert.ok(ids.length > 1);
  assert.ok(
    ids.every((id) => id.startsWith('@shared-openai/')),
    ids.join(),
  );
});

test("a config's fetch_integrated_models lists the catalog models of the integrations it routes to", async () => {
  const before = fake.requests.length;
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: {
      'x-vendor-config': JSON.stringify({
        fetch_integrated_models: true,
        strategy: { mode: 'fallback' },
        targets: [{ virtual_key: 'team-claude' }, { provider: '@shared-openai' }],
      }),
    },
  });
  assert.equal(res.status, 200, res.text);
  const ids: string[] = res.body.data.map((m: { id: string }) => m.id);
  assert.ok(ids.some((id) => id.startsWith('@team-claude/')));
  assert.ok(ids.some((id) => id.startsWith('@shared-openai/')));
  assert.equal(fake.requests.length, before, 'the provider was asked');
});

test('a config that names a provider without fetch_integrated_models gets the provider list', async () => {
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: { 'x-vendor-config': JSON.stringify({ provider: '@shared-openai' }) },
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    res.body.data.map((m: { id: string }) => m.id),
    ['gpt-4o-mini'],
  );
  assert.equal(res.headers.get('x-vendor-last-used-option-index'), 'config');
});

test('<prefix>models-endpoint must be true or false', async () => {
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: { 'x-vendor-models-endpoint': 'yes' },
  });
  assert.equal(res.status, 400);
  assert.equal(res.body.error.param, 'x-vendor-models-endpoint');
});
