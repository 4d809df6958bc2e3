import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import {
  eventually,
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';
import {
  metricFamilies,
  metricNamesIn,
  metricsTable,
  parseExposition,
  sampleSum,
  type Sample,
} from './exposition.ts';

// What a platform team scrapes from GET /metrics after chat requests (plain, streamed, cached,
// with a retry and a fallback, denied by a guardrail and by a rate limit) and a forwarded
// operation, through the whole stack.

const upstreamKey = 'sk-metrics-upstream-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;
let samples: Sample[];
/** The metric families GET /metrics exposes: every series the process's services registered. */
let families: Map<string, string>;
const CHAT = '/v1/chat/completions';
const openai = { service: 'gateway', route: CHAT, provider: 'openai' };
/** Rate-limited requests the gateway answered 429. */
let denied = 0;

const hello = (model: string, content = 'Hello there', extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content }],
  ...extra,
});

function chat(json: unknown, headers: Record<string, string> = {}) {
  return h.request('POST', CHAT, { key: h.workspaceKey, json, headers });
}

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
  });
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

  // A plain completion: the fake reports 9 prompt and 3 completion tokens.
  const plain = await chat(hello('@up/gpt-4o-mini'));
  assert.equal(plain.status, 200, plain.text);
  assert.deepEqual(plain.body.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });

  // A stream with its usage.
  const streamed = await chat(
    hello('@up/gpt-4o', 'Hello there', { stream: true, stream_options: { include_usage: true } }),
  );
  assert.equal(streamed.status, 200, streamed.text);
  assert.match(streamed.text, /data: \[DONE\]/);

  // The same question twice with the cache on: a miss, then a hit.
  const question = hello('@up/gpt-4.1-mini', `cache me ${randomUUID()}`);
  const miss = await chat(question, { 'x-vendor-cache': 'simple' });
  const hit = await chat(question, { 'x-vendor-cache': 'simple' });
  assert.equal(miss.headers.get('x-vendor-cache-status'), 'MISS');
  assert.equal(hit.headers.get('x-vendor-cache-status'), 'HIT');

  // A target that fails twice (one retry), then the fallback's next target answers.
  const fallback = await chat(hello('@up/gpt-4.1-nano'), {
    'x-vendor-config': JSON.stringify({
      strategy: { mode: 'fallback' },
      targets: [
        { provider: '@up', retry: { attempts: 1 }, override_params: { model: 'error-503' } },
        { provider: '@up' },
      ],
    }),
  });
  assert.equal(fallback.status, 200, fallback.text);
  assert.equal(fallback.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');

  // An input guardrail that denies.
  const guard = await h.request('POST', '/v1/guardrails', {
    key: h.adminKey,
    json: {
      name: 'no secrets',
      checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
      actions: { deny: true },
    },
  });
  assert.equal(guard.status, 200, guard.text);
  const refused = await chat(hello('gpt-4o-mini', 'this is classified'), {
    'x-vendor-config': JSON.stringify({ provider: '@up', input_guardrails: [guard.body.slug] }),
  });
  assert.equal(refused.status, 446, refused.text);

  // A rate limit of one request a minute for this metadata: the next request is refused.
  const team = `metrics-${randomUUID().slice(0, 8)}`;
  const policy = await h.request('POST', '/v2/policies/rate-limits', {
    key: h.workspaceKey,
    json: {
      name: 'one a minute',
      conditions: [{ key: 'metadata.team', value: team }],
      group_by: [{ key: 'api_key' }],
      type: 'requests',
      unit: 'rpm',
      value: 1,
    },
  });
  assert.equal(policy.status, 200, policy.text);
  await eventually(
    async () => {
      const res = await chat(hello('@up/o1'), { 'x-vendor-metadata': JSON.stringify({ team }) });
      if (res.status === 429) denied++;
      return denied > 0 ? true : undefined;
    },
    { what: 'a 429 from the rate limit', intervalMs: 50 },
  );

  // A forwarded operation, specified by the interface.
  const content = await h.request('GET', '/v1/files/file-abc/content', {
    key: h.workspaceKey,
    headers: { 'x-vendor-config': JSON.stringify({ provider: '@up' }) },
  });
  assert.equal(content.status, 200, content.text);

  // The request events go out after the answer; the last ones are counted once the log has them.
  const scrape = async () => {
    const text = (await h.request('GET', '/metrics')).text;
    families = metricFamilies(text);
    return parseExposition(text);
  };
  samples = await eventually(
    async () => {
      const now = await scrape();
      const finished = sampleSum(now, 'switchyard_gateway_request_duration_seconds_count', {});
      return finished >= 8 + denied ? now : undefined;
    },
    { what: 'every request counted' },
  );
});
after(async () => {
  await h?.close();
  await fake?.close();
});

const value = (name: string, labels: Record<string, string>) => sampleSum(samples, name, labels);

describe('GET /metrics after traffic through the gateway', () => {
  test('tokens and cost: the usage the provider reported, by provider and listed model', () => {
    const mini = { ...openai, model: 'gpt-4o-mini', cache_status: 'DISABLED' };
    assert.equal(value('switchyard_gateway_tokens_total', { ...mini, direction: 'input' }), 9);
    assert.equal(value('switchyard_gateway_tokens_total', { ...mini, direction: 'output' }), 3);
    const cost = value('switchyard_gateway_cost_total', { ...openai, model: 'gpt-4o-mini' });
    assert.ok(Math.abs(cost - (9 * 0.15 + 3 * 0.6) / 1e6) < 1e-12, `cost ${cost}`);
  });

  test('a streamed answer: its time to first token, once, and its usage', () => {
    const gpt4o = { ...openai, model: 'gpt-4o' };
    assert.equal(value('switchyard_gateway_time_to_first_token_seconds_count', gpt4o), 1);
    assert.equal(value('switchyard_gateway_tokens_total', { ...gpt4o, direction: 'output' }), 3);
    assert.equal(
      value('switchyard_gateway_time_to_first_token_seconds_count', { ...openai, model: 'gpt-4o-mini' }),
      0,
      'a whole answer has no first token',
    );
  });

  test('the cache: a miss then a hit, the hit costing nothing', () => {
    const model = { ...openai, model: 'gpt-4.1-mini' };
    const count = 'switchyard_gateway_request_duration_seconds_count';
    assert.equal(value(count, { ...model, cache_status: 'MISS', status_class: '2xx' }), 1);
    assert.equal(value(count, { ...model, cache_status: 'HIT', status_class: '2xx' }), 1);
    assert.equal(
      value('switchyard_gateway_tokens_total', { ...model, cache_status: 'HIT', direction: 'input' }),
      9,
    );
    const cost = value('switchyard_gateway_cost_total', model);
    assert.ok(Math.abs(cost - (9 * 0.4 + 3 * 1.6) / 1e6) < 1e-12, `only the miss cost: ${cost}`);
  });

  test('a retry and a fallback, labelled by the target that failed; its upstream calls by status class', () => {
    const failed = { ...openai, model: 'other' };
    assert.equal(value('switchyard_gateway_retries_total', failed), 1);
    assert.equal(value('switchyard_gateway_fallbacks_total', failed), 1);
    assert.equal(
      value('switchyard_gateway_upstream_duration_seconds_count', { ...failed, status_class: '5xx' }),
      2,
    );
    assert.equal(
      value('switchyard_gateway_upstream_duration_seconds_count', {
        ...openai,
        model: 'gpt-4.1-nano',
        status_class: '2xx',
      }),
      1,
    );
  });

  test('a guardrail that denied, and a rate limit that refused', () => {
    assert.equal(
      value('switchyard_gateway_guardrail_verdicts_total', {
        route: CHAT,
        guardrail_phase: 'input',
        verdict: 'deny',
      }),
      1,
    );
    assert.equal(
      value('switchyard_gateway_policy_denials_total', { route: CHAT, reason: 'rate_limit' }),
      denied,
    );
    assert.equal(
      value('switchyard_gateway_request_duration_seconds_count', {
        ...openai,
        model: 'o1',
        status_class: '4xx',
        policy_decision: 'denied',
      }),
      denied,
    );
    assert.equal(
      value('switchyard_gateway_request_duration_seconds_count', {
        route: CHAT,
        status_class: '4xx',
        policy_decision: 'none',
      }),
      1,
      'the input guardrail refused the request before any policy check',
    );
  });

  test('HTTP series by route template and status class: a forwarded operation is not unmatched', () => {
    const forwarded = { route: '/v1/files/:file_id/content', method: 'GET' };
    assert.equal(
      value('switchyard_http_requests_total', { ...forwarded, status: '200', status_class: '2xx' }),
      1,
    );
    assert.equal(
      value('switchyard_http_request_duration_seconds_count', { ...forwarded, status_class: '2xx' }),
      1,
    );
    assert.equal(
      value('switchyard_gateway_request_duration_seconds_count', {
        route: '/v1/files/:file_id/content',
        provider: 'openai',
        model: 'none',
      }),
      1,
    );
    assert.equal(value('switchyard_http_requests_total', { route: 'unmatched' }), 0);
    assert.equal(value('switchyard_http_requests_total', { route: CHAT, status_class: '4xx' }), 1 + denied);
    assert.ok(!samples.some((s) => s.labels.route?.includes('file-abc')), 'no raw path in a label');
  });

  test('the event buffer is reported', () => {
    assert.equal(value('switchyard_gateway_event_buffer_depth', {}), 0);
    assert.equal(value('switchyard_gateway_events_dropped_total', {}), 0);
    assert.ok(samples.some((s) => s.name === 'switchyard_gateway_event_buffer_depth'));
  });
});

const root = new URL('../../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** Whether a name is a registered metric, or a series of a registered histogram. */
function registered(name: string): boolean {
  if (families.has(name)) return true;
  const histogram = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  return histogram !== undefined && families.get(histogram) === 'histogram';
}

describe('what reads the metrics names only registered ones', () => {
  test('every query of the Grafana dashboard', () => {
    const dashboard = JSON.parse(read('helm/switchyard/dashboards/switchyard.json')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
      templating: { list: Array<{ query?: unknown }> };
    };
    const expressions = dashboard.panels.flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({ where: panel.title, expr: target.expr })),
    );
    for (const variable of dashboard.templating.list) {
      const query = (variable.query as { query?: string } | undefined)?.query;
      if (query) expressions.push({ where: 'a variable', expr: query });
    }
    assert.ok(expressions.length >= 20, `${expressions.length} queries`);
    for (const { where, expr } of expressions) {
      const names = metricNamesIn(expr);
      assert.ok(names.length > 0, `${where}: ${expr} reads no metric`);
      for (const name of names) assert.ok(registered(name), `${where}: ${name} is not registered`);
    }
  });

  test('every alert of the PrometheusRule', () => {
    const template = read('helm/switchyard/templates/servicemonitor.yaml');
    const names = [...template.matchAll(/\bswitchyard_\w+/g)].map(([name]) => name);
    assert.ok(names.includes('switchyard_gateway_events_dropped_total'));
    for (const name of names) assert.ok(registered(name), `${name} is not registered`);
  });

  test('docs/metrics.md lists every metric the services register, as the code describes it', async () => {
    const doc = read('docs/metrics.md');
    const listed = /<!-- metrics:begin -->\n([\s\S]*?)\n<!-- metrics:end -->/.exec(doc)?.[1];
    // The registry's metric objects carry their label names beside name, type and help.
    const table = metricsTable(
      h.metrics.registry.getMetricsAsArray() as unknown as Parameters<typeof metricsTable>[0],
    );
    assert.equal(listed, table, 'the table between the markers in docs/metrics.md is out of date');
    for (const [name] of doc.matchAll(/\bswitchyard_\w+/g)) {
      assert.ok(registered(name), `docs/metrics.md names ${name}, which is not registered`);
    }
  });
});
