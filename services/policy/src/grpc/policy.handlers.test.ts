import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createGrpcClient } from '@switchyard/runtime';
import { policy } from '@switchyard/proto';
import { SKIP_CHECKS_FOR_MS } from './policy.handlers.ts';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { policyService } from '../service.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [policyService] });
});
after(() => h.close());

const request = {
  organisationId: '6f1c1f8e-8f57-4b0e-9a39-8d1f0f3c9a11',
  workspaceId: '0c7a5e55-2f0e-4f7e-8a52-3f7d7f0f2b21',
  apiKeyId: 'b5a4f0a5-1d8e-4a8e-9f43-0e8f6b1b7c31',
  provider: 'openai',
  model: 'gpt-4o-mini',
  metadata: { team: 'search' },
};

test('Check allows every request while no limit policies exist, and lets the gateway skip asking for a while', async () => {
  const response = await h.client('policy').check(request);
  assert.equal(response.decision, policy.Decision.ALLOW);
  assert.equal(response.retryAfterSeconds, 0);
  assert.equal(response.skipChecksForMs, SKIP_CHECKS_FOR_MS);
});

test('Check allows requests with no workspace or metadata too', async () => {
  const response = await h.client('policy').check({ ...request, workspaceId: '', metadata: {} });
  assert.equal(response.decision, policy.Decision.ALLOW);
});

test('Check refuses callers without the service token', async () => {
  const stranger = createGrpcClient(policy.PolicyService, {
    address: h.grpcAddress('policy'),
    target: 'policy',
    security: {},
  });
  try {
    await assert.rejects(stranger.check(request), { status: 503 });
  } finally {
    stranger.close();
  }
});
