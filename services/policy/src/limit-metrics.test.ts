import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { limitMetrics } from './limit-metrics.ts';

test('decisions, failure-mode decisions and store round trips are counted, once per registry however often the service is made', async () => {
  const registry = new Registry();
  const first = limitMetrics(registry);
  const second = limitMetrics(registry);
  first.decision('deny', 'rate_limit_exceeded');
  second.decision('deny', 'rate_limit_exceeded');
  first.decision('skip', '');
  first.failureMode('usage_limit', 'closed');
  first.storeSeconds('take', 0.002);
  const text = await registry.metrics();
  assert.match(text, /switchyard_policy_decisions_total\{decision="deny",code="rate_limit_exceeded"\} 2/);
  assert.match(text, /switchyard_policy_decisions_total\{decision="skip",code=""\} 1/);
  assert.match(text, /switchyard_policy_failure_mode_decisions_total\{kind="usage_limit",mode="closed"\} 1/);
  assert.match(text, /switchyard_policy_store_duration_seconds_count\{operation="take"\} 1/);
});
