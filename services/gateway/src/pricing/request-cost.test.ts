import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { everyService } from '../testing/services.ts';

const upstreamKey = 'sk-cost-upstream-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: everyService,
  });
});
after(async () => {
  await h?.close();
  await fake?.close();
});

async function integration(slug: string, pricing_adjustments?: unknown) {
  return h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
      pricing_adjustments,
    },
  });
}

async function loggedCost(model: string): Promise<number> {
  const res = await h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model, messages: [{ role: 'user', content: 'price me' }] },
  });
  assert.equal(res.status, 200, res.text);
  const id = res.headers.get('x-request-id')!;
  for (let i = 0; i < 300; i++) {
    const log = await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey });
    if (log.status === 200) return log.body.cost as number;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail('the request log never arrived');
}

// The fake upstream reports 9 prompt and 3 completion tokens; gpt-4o lists $2.50 and $10 per million.
const listCost = (9 * 2.5 + 3 * 10) / 1_000_000;

test('each request log carries its cost from the price table', async () => {
  assert.equal((await integration('list')).status, 200);
  assert.ok(Math.abs((await loggedCost('@list/gpt-4o')) - listCost) < 1e-12);
});

test("an integration's pricing multiplier scales the cost", async () => {
  const created = await integration('discounted', { multiplier: { default: 0.8 } });
  assert.equal(created.status, 200, created.text);
  const shown = await h.request('GET', '/admin/v2/integrations/discounted', { key: h.adminKey });
  assert.deepEqual(shown.body.pricing_adjustments, { multiplier: { default: 0.8 } });
  assert.ok(Math.abs((await loggedCost('@discounted/gpt-4o')) - listCost * 0.8) < 1e-12);
});

test('a negative or unknown multiplier is a 400 naming it', async () => {
  const negative = await integration('bad-a', { multiplier: { default: -1 } });
  assert.equal(negative.status, 400);
  assert.equal(negative.body.error.param, 'pricing_adjustments.multiplier.default');
  const unknown = await integration('bad-b', { multiplier: { per_image: 2 } });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.param, 'pricing_adjustments.multiplier.per_image');
});
