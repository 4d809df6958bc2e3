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

/** Sends requests until one is logged at `expected`: an update reaches the gateway through its change event. */
async function costBecomes(model: string, expected: number): Promise<void> {
  let cost = await loggedCost(model);
  for (let i = 0; i < 50 && Math.abs(cost - expected) >= 1e-12; i++) {
    await new Promise((r) => setTimeout(r, 50));
    cost = await loggedCost(model);
  }
  assert.ok(Math.abs(cost - expected) < 1e-12, `logged ${cost}, expected ${expected}`);
}

const update = (slug: string, json: unknown) =>
  h.request('PUT', `/admin/v2/integrations/${slug}`, { key: h.adminKey, json });

test('updating pricing_adjustments changes what the next request costs; null clears them', async () => {
  assert.equal((await integration('repriced')).status, 200);
  await costBecomes('@repriced/gpt-4o', listCost);

  const updated = await update('repriced', {
    pricing_adjustments: { multiplier: { default: 0.5, response_token: 2 } },
  });
  assert.equal(updated.status, 200, updated.text);
  assert.deepEqual(updated.body.pricing_adjustments, { multiplier: { default: 0.5, response_token: 2 } });
  await costBecomes('@repriced/gpt-4o', (9 * 2.5 * 0.5 + 3 * 10 * 2) / 1_000_000);

  // A name change leaves the adjustments as they are.
  const renamed = await update('repriced', { name: 'Repriced' });
  assert.deepEqual(renamed.body.pricing_adjustments, { multiplier: { default: 0.5, response_token: 2 } });

  const cleared = await update('repriced', { pricing_adjustments: null });
  assert.equal(cleared.status, 200, cleared.text);
  assert.equal(cleared.body.pricing_adjustments, null);
  await costBecomes('@repriced/gpt-4o', listCost);
});

test('an update with a bad multiplier is a 400 naming it, and changes nothing', async () => {
  assert.equal((await integration('badly-repriced', { multiplier: { default: 0.8 } })).status, 200);
  for (const [multiplier, param] of [
    [{ default: -1 }, 'pricing_adjustments.multiplier.default'],
    [{ reasoning_token: 1001 }, 'pricing_adjustments.multiplier.reasoning_token'],
    [{ cache_write_input_token: 'half' }, 'pricing_adjustments.multiplier.cache_write_input_token'],
    [{ per_image: 2 }, 'pricing_adjustments.multiplier.per_image'],
  ] as const) {
    const res = await update('badly-repriced', { pricing_adjustments: { multiplier } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, param);
  }
  const shown = await h.request('GET', '/admin/v2/integrations/badly-repriced', { key: h.adminKey });
  assert.deepEqual(shown.body.pricing_adjustments, { multiplier: { default: 0.8 } });
});
