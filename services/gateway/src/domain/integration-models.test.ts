import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
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

/** A model's own settings on an integration, as requests for it reach the provider. */

const upstreamKey = 'sk-integration-models-0123456789';
const services = [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[];
/** The integration's own host, and another one a single model is sent to (both loopback, trusted). */
let integrationHost: FakeOpenAi;
let modelHost: FakeOpenAi;
let h: ServiceHarness;

before(async () => {
  integrationHost = await startFakeOpenAi({ apiKey: upstreamKey });
  modelHost = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({ services });
  const created = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'Per model',
      slug: 'per-model',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: {
        custom_host: integrationHost.baseUrl,
        headers: { 'X-Integration': 'whole' },
      },
    },
  });
  assert.equal(created.status, 200, created.text);
  // Set before the gateway first asks for the integration, so no cached copy predates them.
  const set = await h.request('PUT', '/v1/integrations/per-model/integration-models', {
    key: h.adminKey,
    json: {
      models: [
        { slug: 'with-headers', custom_headers: { 'X-Team': 'search', 'x-integration': 'model' } },
        { slug: 'elsewhere', configurations: { custom_host: modelHost.baseUrl } },
        { slug: 'house-model', enabled: true, is_custom: true },
        { slug: 'gpt-4o', enabled: false },
      ],
    },
  });
  assert.equal(set.status, 200, set.text);
});
after(async () => {
  await h?.close();
  await integrationHost?.close();
  await modelHost?.close();
});

const chat = (model: string) =>
  h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model, messages: [{ role: 'user', content: 'hi' }] },
  });

const lastRequest = (fake: FakeOpenAi) => fake.requests.at(-1)!;

test("a model's custom headers reach the provider with the request, beside the provider key", async () => {
  const before = integrationHost.requests.length;
  const res = await chat('@per-model/with-headers');
  assert.equal(res.status, 200, res.text);
  assert.equal(integrationHost.requests.length, before + 1);
  const { headers, body } = lastRequest(integrationHost);
  assert.equal(headers['x-team'], 'search');
  // The model's value of a header the integration also sets wins for that model.
  assert.equal(headers['x-integration'], 'model');
  assert.equal(headers.authorization, `Bearer ${upstreamKey}`);
  assert.equal(JSON.parse(body).model, 'with-headers');
});

test('a model with no settings of its own gets only the integration headers', async () => {
  const res = await chat('@per-model/plain');
  assert.equal(res.status, 200, res.text);
  const { headers } = lastRequest(integrationHost);
  assert.equal(headers['x-team'], undefined);
  assert.equal(headers['x-integration'], 'whole');
});

test("a model's custom_host sends that model, and only it, to its own host", async () => {
  const [atModelHost, atIntegrationHost] = [modelHost.requests.length, integrationHost.requests.length];
  const res = await chat('@per-model/elsewhere');
  assert.equal(res.status, 200, res.text);
  assert.equal(modelHost.requests.length, atModelHost + 1);
  assert.equal(integrationHost.requests.length, atIntegrationHost);
  assert.equal(lastRequest(modelHost).path, '/v1/chat/completions');
  assert.equal(JSON.parse(lastRequest(modelHost).body).model, 'elsewhere');

  const other = await chat('@per-model/gpt-4o-mini');
  assert.equal(other.status, 200, other.text);
  assert.equal(modelHost.requests.length, atModelHost + 1);
  assert.equal(integrationHost.requests.length, atIntegrationHost + 1);
});

test('<prefix>models-endpoint: true answers the integration catalogue with its enabled models, asking no provider', async () => {
  const asked = integrationHost.requests.length + modelHost.requests.length;
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: { 'x-vendor-provider': '@per-model', 'x-vendor-models-endpoint': 'true' },
  });
  assert.equal(res.status, 200, res.text);
  const ids: string[] = res.body.data.map((m: { id: string }) => m.id);
  for (const id of ['@per-model/gpt-4o-mini', '@per-model/house-model', '@per-model/with-headers'])
    assert.ok(ids.includes(id), `${id} missing from ${ids.join()}`);
  assert.ok(!ids.includes('@per-model/gpt-4o'), 'a disabled model is listed');
  assert.equal(integrationHost.requests.length + modelHost.requests.length, asked);
});

test("a config's fetch_integrated_models answers the same catalogue", async () => {
  const res = await h.request('GET', '/v1/models', {
    key: h.workspaceKey,
    headers: {
      'x-vendor-config': JSON.stringify({ fetch_integrated_models: true, provider: '@per-model' }),
    },
  });
  assert.equal(res.status, 200, res.text);
  const ids: string[] = res.body.data.map((m: { id: string }) => m.id);
  assert.ok(ids.includes('@per-model/house-model'));
  assert.ok(!ids.includes('@per-model/gpt-4o'));
});

test('a model set as disabled is refused with a 404 naming it, and the provider is not asked', async () => {
  const asked = integrationHost.requests.length + modelHost.requests.length;
  const res = await chat('@per-model/gpt-4o');
  assert.equal(res.status, 404, res.text);
  assert.equal(res.body.error.code, 'model_disabled');
  assert.match(res.body.error.message, /'gpt-4o'/);
  assert.match(res.body.error.message, /'per-model'/);
  // Named by the provider header and the bare model alike.
  const byHeader = await h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    headers: { 'x-vendor-provider': '@per-model' },
    json: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  });
  assert.equal(byHeader.status, 404, byHeader.text);
  assert.equal(byHeader.body.error.code, 'model_disabled');
  assert.equal(integrationHost.requests.length + modelHost.requests.length, asked);
  // Other models of the integration still go through.
  assert.equal((await chat('@per-model/gpt-4o-mini')).status, 200);
});
