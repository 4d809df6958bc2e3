import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createMetrics, type Metrics } from '@switchyard/core';
import { dataPlaneRouteTemplate } from '../http/route-templates.ts';
import { metricNamesIn, parseExposition, sampleSum } from './exposition.ts';
import { gatewayMetrics, modelLabel, providerLabel, type FinishedRequest } from './gateway-metrics.ts';

/** The series of one metric in the Prometheus text (its sample lines). */
async function seriesOf(metrics: Metrics, name: string): Promise<string[]> {
  const text = await metrics.registry.metrics();
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

const finished = (overrides: Partial<FinishedRequest>): FinishedRequest => ({
  route: '/v1/chat/completions',
  status: 200,
  provider: 'openai',
  model: 'gpt-4o-mini',
  cacheStatus: 'MISS',
  policy: 'allowed',
  seconds: 0.2,
  inputTokens: 10,
  outputTokens: 5,
  cost: 0.000004,
  ...overrides,
});

describe('labels', () => {
  test('a model is named only when the provider’s price table lists it under that name', () => {
    assert.equal(modelLabel('openai', 'gpt-4o-mini'), 'gpt-4o-mini');
    assert.equal(modelLabel('anthropic', 'gpt-4o-mini'), 'other', 'listed for another provider');
    assert.equal(modelLabel('openai', 'gpt-4o-mini-2024-07-18'), 'other', 'a dated variant');
    assert.equal(modelLabel('openai', 'my-fine-tune'), 'other');
    assert.equal(modelLabel('openai', 'constructor'), 'other', 'no inherited property counts as listed');
    assert.equal(modelLabel('openai', ''), 'none');
    assert.equal(modelLabel(undefined, 'gpt-4o'), 'other');
  });

  test('a provider is its kind from the registry, never an integration slug', () => {
    assert.equal(providerLabel('openai'), 'openai');
    assert.equal(providerLabel('anthropic'), 'anthropic');
    assert.equal(providerLabel('@my-integration'), 'other');
    assert.equal(providerLabel(''), 'none');
    assert.equal(providerLabel(undefined), 'none');
  });

  test('data-plane routes are labelled by template, forwarded paths included, never by raw path', () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['POST', '/v1/chat/completions', '/v1/chat/completions'],
      ['POST', '/v1/messages', '/v1/messages'],
      ['GET', '/v1/files/file-abc/content', '/v1/files/:file_id/content'],
      ['POST', '/v1/threads/thread_1/runs/run_1', '/v1/threads/:thread_id/runs/:run_id'],
      ['POST', '/v1/fine_tuning/jobs/ftjob_1/cancel', '/v1/fine_tuning/jobs/:fine_tuning_job_id/cancel'],
      ['GET', '/v1/files', '/v1/files'],
      ['POST', '/v1/embeddings', '/v1/embeddings'],
      ['DELETE', '/v1/files/file-abc', '/v1/files/*'],
      ['DELETE', '/v1/files/file-abc/content', '/v1/files/*'],
      ['GET', '/v1/models/gpt-4o', '/v1/models/*'],
      ['GET', '/v1/files/', '/v1/files/*'],
      ['GET', '/v1/unknown/thing', undefined],
      ['GET', '/v1/filesx', undefined],
      ['GET', '/admin/v2/integrations', undefined],
    ];
    for (const [method, path, template] of cases) {
      assert.equal(dataPlaneRouteTemplate(method, path), template, `${method} ${path}`);
    }
  });
});

describe('gateway metrics', () => {
  test('flooded with made-up model and provider names, the series stay bounded', async () => {
    const metrics = createMetrics();
    const gateway = gatewayMetrics(metrics);
    for (let i = 0; i < 2_000; i++) {
      const model = `model-${randomBytes(6).toString('hex')}`;
      const provider = i % 2 === 0 ? 'openai' : `@slug-${randomBytes(4).toString('hex')}`;
      gateway.finished(finished({ provider, model }));
      gateway.upstream('/v1/chat/completions', provider, model, 200, 0.1);
      gateway.firstChunk('/v1/chat/completions', provider, model, 'MISS', 0.05);
      gateway.retried('/v1/chat/completions', provider, model);
      gateway.fellBack('/v1/chat/completions', provider, model);
    }
    // openai/other and other/other, each: one series per direction.
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_tokens_total')).length, 4);
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_cost_total')).length, 2);
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_retries_total')).length, 2);
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_fallbacks_total')).length, 2);
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_request_duration_seconds_count')).length, 2);
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_upstream_duration_seconds_count')).length, 2);
    assert.equal((await seriesOf(metrics, 'switchyard_gateway_time_to_first_token_seconds_count')).length, 2);
    const text = await metrics.registry.metrics();
    assert.doesNotMatch(text, /model-[0-9a-f]{12}|@slug-/, 'no made-up name reaches a label');
    assert.match(
      text,
      /^switchyard_gateway_tokens_total\{service="gateway",route="\/v1\/chat\/completions",provider="openai",model="other",cache_status="MISS",direction="input"\} 10000$/m,
    );
  });

  test('a finished request: its duration by status class, cache and policy, its tokens by direction and its cost', async () => {
    const metrics = createMetrics();
    const gateway = gatewayMetrics(metrics);
    gateway.finished(finished({}));
    gateway.finished(finished({ status: 429, policy: 'denied', inputTokens: 0, outputTokens: 0, cost: 0 }));
    gateway.finished(finished({ cacheStatus: 'HIT', cost: 0 }));
    gateway.finished(finished({ cacheStatus: 'made-up' }));
    const text = await metrics.registry.metrics();
    const labels = 'service="gateway",route="/v1/chat/completions"';
    assert.match(
      text,
      new RegExp(
        `^switchyard_gateway_request_duration_seconds_count\\{${labels},status_class="2xx",provider="openai",model="gpt-4o-mini",cache_status="MISS",policy_decision="allowed"\\} 1$`,
        'm',
      ),
    );
    assert.match(
      text,
      /status_class="4xx",provider="openai",model="gpt-4o-mini",cache_status="MISS",policy_decision="denied"\} 1$/m,
    );
    assert.match(
      text,
      /cache_status="DISABLED",policy_decision="allowed"\} 1$/m,
      'an unknown cache status is DISABLED',
    );
    assert.match(
      text,
      /^switchyard_gateway_tokens_total\{service="gateway",route="\/v1\/chat\/completions",provider="openai",model="gpt-4o-mini",cache_status="HIT",direction="output"\} 5$/m,
    );
    assert.match(
      text,
      /^switchyard_gateway_cost_total\{service="gateway",route="\/v1\/chat\/completions",provider="openai",model="gpt-4o-mini"\} 0\.000008$/m,
      'two answers that cost something; the cached one did not',
    );
  });

  test('is registered once per registry, however often the gateway is made on it', () => {
    const metrics = createMetrics();
    const first = gatewayMetrics(metrics);
    assert.equal(gatewayMetrics(metrics), first);
    assert.notEqual(gatewayMetrics(createMetrics()), first);
  });

  test('reports the event buffer’s depth, spill and drops as each scrape reads them', async () => {
    const metrics = createMetrics();
    const stats = { buffered: 7, spilled: 2, published: 100, dropped: 3, failedAttempts: 0 };
    gatewayMetrics(metrics, () => stats);
    let text = await metrics.registry.metrics();
    assert.match(text, /^switchyard_gateway_event_buffer_depth 7$/m);
    assert.match(text, /^switchyard_gateway_event_buffer_spilled 2$/m);
    assert.match(text, /^switchyard_gateway_events_dropped_total 3$/m);
    stats.buffered = 0;
    stats.dropped = 5;
    text = await metrics.registry.metrics();
    assert.match(text, /^switchyard_gateway_event_buffer_depth 0$/m);
    assert.match(text, /^switchyard_gateway_events_dropped_total 5$/m);
    text = await metrics.registry.metrics();
    assert.match(text, /^switchyard_gateway_events_dropped_total 5$/m, 'a scrape counts each drop once');
  });

  test('counts guardrail verdicts and policy denials by their fixed labels', async () => {
    const metrics = createMetrics();
    const gateway = gatewayMetrics(metrics);
    gateway.guardrailVerdict('/v1/chat/completions', 'input', 'deny');
    gateway.guardrailVerdict('/v1/chat/completions', 'input', 'deny');
    gateway.policyDenied('/v1/chat/completions', 'budget');
    const text = await metrics.registry.metrics();
    assert.match(
      text,
      /^switchyard_gateway_guardrail_verdicts_total\{service="gateway",route="\/v1\/chat\/completions",guardrail_phase="input",verdict="deny"\} 2$/m,
    );
    assert.match(
      text,
      /^switchyard_gateway_policy_denials_total\{service="gateway",route="\/v1\/chat\/completions",reason="budget"\} 1$/m,
    );
  });
});

describe('reading PromQL and the exposition', () => {
  test('the metric names an expression reads, without functions, labels, ranges or numbers', () => {
    assert.deepEqual(
      metricNamesIn(
        'histogram_quantile(0.95, sum by (le, route) (rate(switchyard_http_request_duration_seconds_bucket{namespace=~"$namespace",route="x"}[$__rate_interval])))',
      ),
      ['switchyard_http_request_duration_seconds_bucket'],
    );
    assert.deepEqual(
      metricNamesIn('sum(rate(a_total{x="y"}[5m])) / clamp_min(sum(rate(b_total[5m])), 1e-9) > 0.1'),
      ['a_total', 'b_total'],
    );
    assert.deepEqual(metricNamesIn('label_values(switchyard_http_requests_total, namespace)'), [
      'switchyard_http_requests_total',
    ]);
  });

  test('samples and their sums by labels', () => {
    const samples = parseExposition(
      [
        '# HELP x_total x',
        '# TYPE x_total counter',
        'x_total{a="1",b="q\\"uote"} 2',
        'x_total{a="1",b="2"} 3',
        'y 7',
      ].join('\n'),
    );
    assert.equal(sampleSum(samples, 'x_total', { a: '1' }), 5);
    assert.equal(sampleSum(samples, 'x_total', { b: 'q"uote' }), 2);
    assert.equal(sampleSum(samples, 'y', {}), 7);
  });
});
