import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminService, type Admin } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  eventually,
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

const upstreamKey = 'sk-routing-upstream-0123456789';
const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];
let h: ServiceHarness;
let fake: FakeOpenAi;

const hello = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'route me' }],
  ...extra,
});

/** The fake OpenAI upstream, reached through the saved `up` integration, with the model it should play. */
const upstream = (model: string, extra: Record<string, unknown> = {}) => ({
  provider: '@up',
  override_params: { model, ...extra },
});

function chat(json: unknown, config: unknown, headers: Record<string, string> = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json,
    headers: { 'x-vendor-config': typeof config === 'string' ? config : JSON.stringify(config), ...headers },
  });
}

function sentBody(body: string): Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const upstreamCalls = (model: string) => fake.requests.filter((r) => sentBody(r.body).model === model);

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({ services, allowInlineConfig: false });
  await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
  const created = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'Upstream',
      slug: 'up',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(created.status, 200, created.text);
});
after(async () => {
  await h?.close();
  await fake?.close();
});

describe('saved configs', () => {
  async function save(config: unknown, name = `c-${randomUUID().slice(0, 8)}`): Promise<string> {
    const res = await h.request('POST', '/v2/configs', { key: h.workspaceKey, json: { name, config } });
    assert.equal(res.status, 200, res.text);
    return res.body.data.slug as string;
  }

  test('fallback: a failing target is passed over and the response names the one that answered', async () => {
    const slug = await save({
      strategy: { mode: 'fallback' },
      targets: [upstream('error-503'), { provider: '@mock' }],
    });
    const res = await chat(hello('mock-1'), slug);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
    assert.equal(res.headers.get('x-vendor-retry-attempt-count'), '0');
    assert.equal(res.headers.get('x-vendor-provider'), 'mock');
    assert.equal(upstreamCalls('error-503').length >= 1, true);
  });

  test('a saved config is found by its id too, and saved configs work while inline config is blocked', async () => {
    const created = await h.request('POST', '/v2/configs', {
      key: h.workspaceKey,
      json: { name: 'by-id', config: { provider: '@mock' } },
    });
    const res = await chat(hello('mock-1'), created.body.data.id);
    assert.equal(res.status, 200, res.text);
    const inline = await chat(hello('mock-1'), { provider: '@mock' });
    assert.equal(inline.status, 403);
    assert.equal(inline.body.error.param, 'x-vendor-config');
  });

  test('fallback only on the listed statuses: another failure reaches the client with the provider named', async () => {
    const slug = await save({
      strategy: { mode: 'fallback', on_status_codes: [429] },
      targets: [upstream('error-400'), { provider: '@mock' }],
    });
    const res = await chat(hello('mock-1'), slug);
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /^openai error/);
    assert.equal(res.headers.get('x-vendor-last-used-option-index'), 'config.targets[0]');
  });

  test('retries with backoff until the provider answers, and says how many it took', async () => {
    const model = `fail-first-2-${randomUUID().slice(0, 8)}`;
    const slug = await save({ retry: { attempts: 3 }, ...upstream(model) });
    const res = await chat(hello('anything'), slug);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-retry-attempt-count'), '2');
    assert.equal(upstreamCalls(model).length, 3);
  });

  test('a per-config request timeout answers 408 in the one error shape', async () => {
    const slug = await save({ request_timeout: 150, ...upstream('hang') });
    const res = await chat(hello('x'), slug);
    assert.equal(res.status, 408, res.text);
    assert.equal(typeof res.body.error.message, 'string');
  });

  test('a timed-out target falls back to the next', async () => {
    const slug = await save({
      strategy: { mode: 'fallback' },
      targets: [{ request_timeout: 150, ...upstream('hang') }, { provider: '@mock' }],
    });
    const res = await chat(hello('mock-1'), slug);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
  });

  test('override_params reach the provider', async () => {
    const model = `override-${randomUUID().slice(0, 8)}`;
    const slug = await save(upstream(model, { temperature: 0.25, max_tokens: 7 }));
    const res = await chat(hello('client-model', { temperature: 1.5 }), slug);
    assert.equal(res.status, 200, res.text);
    const sent = sentBody(upstreamCalls(model).at(-1)!.body);
    assert.equal(sent.temperature, 0.25);
    assert.equal(sent.max_tokens, 7);
  });

  test('override_params that make an invalid request are a 400 naming the config field', async () => {
    const slug = await save(upstream('x', { temperature: 9 }));
    const res = await chat(hello('x'), slug);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'config.override_params.temperature');
  });

  test('conditional routing on metadata', async () => {
    const model = `paid-${randomUUID().slice(0, 8)}`;
    const slug = await save({
      strategy: {
        mode: 'conditional',
        conditions: [{ query: { 'metadata.plan': 'paid' }, then: 'upstream' }],
        default: 'mock',
      },
      targets: [
        { name: 'mock', provider: '@mock' },
        { name: 'upstream', ...upstream(model) },
      ],
    });
    const paid = await chat(hello('x'), slug, { 'x-vendor-metadata': '{"plan":"paid"}' });
    assert.equal(paid.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
    assert.equal(upstreamCalls(model).length, 1);
    const free = await chat(hello('mock-1'), slug, { 'x-vendor-metadata': '{"plan":"free"}' });
    assert.equal(free.status, 200, free.text);
    assert.equal(free.headers.get('x-vendor-last-used-option-index'), 'config.targets[0]');
  });

  test('weighted load balancing spreads requests over the targets', async () => {
    const slug = await save({
      strategy: { mode: 'loadbalance' },
      targets: [
        { provider: '@mock', weight: 1 },
        { ...upstream(`lb-${randomUUID().slice(0, 8)}`), weight: 1 },
      ],
    });
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i += 1) {
      const res = await chat(hello('mock-1'), slug);
      assert.equal(res.status, 200, res.text);
      seen.add(res.headers.get('x-vendor-last-used-option-index')!);
    }
    assert.deepEqual([...seen].sort(), ['config.targets[0]', 'config.targets[1]']);
  });

  test('a stream falls back before it starts and is delivered by the next target, through the official SDK', async () => {
    const slug = await save({
      strategy: { mode: 'fallback' },
      targets: [upstream('error-502'), upstream('streamed')],
    });
    const sdk = new OpenAI({
      apiKey: h.workspaceKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': slug },
    });
    const stream = await sdk.chat.completions.create({
      model: 'ignored',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'Echo: stream please');
    const plain = await sdk.chat.completions.create({
      model: 'ignored',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(plain.choices[0]!.message.content, 'Echo: hi');
  });

  test('the request log names the config, the target that answered and the retries', async () => {
    const model = `fail-first-1-${randomUUID().slice(0, 8)}`;
    const slug = await save({ retry: { attempts: 2 }, ...upstream(model) });
    const res = await chat(hello('x'), slug);
    assert.equal(res.status, 200, res.text);
    const id = res.headers.get('x-request-id')!;
    const log = await eventually(async () => {
      const found = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
      return found.status === 200 ? found.body : undefined;
    });
    assert.equal(log.config, slug);
    assert.deepEqual(log.route, { target: 'config', retry_count: 1 });
  });

  test('the request headers are recorded on the request log', async () => {
    const res = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: hello('@mock/mock-1'),
      headers: {
        'x-vendor-trace-id': 'trace-rec',
        'x-vendor-span-id': 'span-rec',
        'x-vendor-parent-span-id': 'parent-rec',
        'x-vendor-span-name': 'name-rec',
        'x-vendor-metadata': '{"team":"search"}',
        'x-vendor-cache': 'simple',
        'x-vendor-cache-namespace': 'ns-rec',
        'x-vendor-cache-force-refresh': 'true',
      },
    });
    assert.equal(res.status, 200, res.text);
    const models = await h.request('GET', '/v1/models', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@up', 'x-vendor-models-endpoint': 'true' },
    });
    assert.equal(models.status, 200, models.text);
    const read = (id: string) =>
      eventually(async () => {
        const found = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
        return found.status === 200 ? found.body : undefined;
      });
    const log = await read(res.headers.get('x-request-id')!);
    assert.equal(log.trace_id, 'trace-rec');
    assert.equal(log.span_id, 'span-rec');
    assert.equal(log.parent_span_id, 'parent-rec');
    assert.equal(log.span_name, 'name-rec');
    assert.deepEqual(log.metadata, { team: 'search' });
    assert.equal(log.cache_namespace, 'ns-rec');
    assert.equal(log.cache_force_refresh, true);
    assert.equal(log.cache_status, 'REFRESH');
    const modelsLog = await read(models.headers.get('x-request-id')!);
    assert.equal(modelsLog.models_endpoint, true);
    assert.equal(modelsLog.request.path, '/v1/models');
  });

  test('a changed config takes effect at once', async () => {
    const name = `changing-${randomUUID().slice(0, 8)}`;
    const slug = await save({ provider: '@mock' }, name);
    assert.equal((await chat(hello('mock-1'), slug)).headers.get('x-vendor-provider'), 'mock');
    const model = `changed-${randomUUID().slice(0, 8)}`;
    const updated = await h.request('PUT', `/v2/configs/${slug}`, {
      key: h.workspaceKey,
      json: { config: upstream(model) },
    });
    assert.equal(updated.status, 200, updated.text);
    await h.bus.flush();
    const res = await chat(hello('x'), slug);
    assert.equal(res.headers.get('x-vendor-provider'), 'openai');
    assert.equal(upstreamCalls(model).length, 1);
    const removed = await h.request('DELETE', `/v2/configs/${slug}`, { key: h.workspaceKey });
    assert.equal(removed.status, 200);
    await h.bus.flush();
    const gone = await chat(hello('x'), slug);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'config_not_found');
  });

  test("another workspace's config is not found", async () => {
    const slug = await save({ provider: '@mock' });
    const other = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: `Other ${randomUUID().slice(0, 6)}` },
    });
    const key = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'k', workspace_id: other.body.id },
    });
    const res = await h.request('POST', '/v1/chat/completions', {
      key: key.body.key,
      json: hello('mock-1'),
      headers: { 'x-vendor-config': slug },
    });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.param, 'x-vendor-config');
  });

  test('an unknown config and a malformed header are answered with their own errors', async () => {
    const unknown = await chat(hello('x'), 'pc-nothing-000000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'config_not_found');
    const malformed = await chat(hello('x'), 'not a slug!');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.param, 'x-vendor-config');
  });
});

describe('inline configs, where the organisation allows them', () => {
  before(async () => {
    const res = await h.request('PUT', '/v1/admin/organisation/settings', {
      key: h.adminKey,
      json: { block_inline_config: false },
    });
    assert.equal(res.status, 200);
    await h.bus.flush();
  });

  test('an inline config routes like a saved one', async () => {
    const res = await chat(hello('mock-1'), {
      strategy: { mode: 'fallback' },
      targets: [upstream('error-500'), { provider: 'mock' }],
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
  });

  test('a broken inline config is a 400 naming the field', async () => {
    const res = await chat(hello('x'), {
      strategy: { mode: 'loadbalance' },
      targets: [{ provider: 'mock', weight: -2 }],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'config.targets[0].weight');
    const notJson = await chat(hello('x'), '{"strategy":');
    assert.equal(notJson.status, 400);
    assert.equal(notJson.body.error.param, 'x-vendor-config');
  });

  test("a config's cache setting turns the response cache on", async () => {
    const config = { cache: { mode: 'simple', max_age: 60 }, provider: 'mock' };
    const body = hello('mock-1', { messages: [{ role: 'user', content: `cache ${randomUUID()}` }] });
    const first = await chat(body, config);
    assert.equal(first.headers.get('x-vendor-cache-status'), 'MISS');
    const second = await chat(body, config);
    assert.equal(second.headers.get('x-vendor-cache-status'), 'HIT');
    assert.deepEqual(second.body, first.body);
  });
});
