import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { NO_PRICES, providerIds, providerRegistry } from '@switchyard/rules';
import { adminService, seedEnvSchema } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { PRICES, priceOf } from '../pricing/prices.ts';
import { adapterFamilies, createProviders } from './index.ts';

// The registry (packages/rules/src/providers) is the one list of providers: these tests
// hold every reader of it to every entry.

const dispatcher = new Agent();
let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
});
after(async () => {
  await h.close();
  await dispatcher.close();
});

describe('the provider registry', () => {
  test('names each provider once', () => {
    assert.equal(new Set(providerIds).size, providerRegistry.length);
    assert.deepEqual(
      providerIds,
      providerRegistry.map((p) => p.id),
    );
  });

  test('every registered provider has an adapter under its own id, and the gateway has no other', () => {
    const adapters = createProviders(dispatcher);
    assert.deepEqual([...adapters.keys()], providerIds);
    for (const provider of providerRegistry) {
      assert.ok(provider.family in adapterFamilies, `${provider.id}: no adapter for ${provider.family}`);
      assert.equal(adapters.get(provider.id)?.id, provider.id, `${provider.id}: its adapter names another`);
    }
  });

  test('every registered provider lists its prices, or says it lists none; the price table holds exactly those', () => {
    for (const provider of providerRegistry) {
      if (provider.prices === NO_PRICES) {
        assert.equal(PRICES[provider.id], undefined, provider.id);
        continue;
      }
      const models = Object.keys(provider.prices);
      assert.ok(models.length > 0, `${provider.id}: an empty price list (say NO_PRICES instead)`);
      for (const model of models) {
        assert.deepEqual(priceOf(provider.id, model), provider.prices[model], `${provider.id} ${model}`);
      }
    }
    assert.deepEqual(
      Object.keys(PRICES),
      providerRegistry.filter((p) => p.prices !== NO_PRICES).map((p) => p.id),
    );
  });

  test('admin accepts every registered provider as an ai_provider_id', async () => {
    for (const id of providerIds) {
      const res = await h.request('POST', '/admin/v2/integrations', {
        key: h.adminKey,
        json: { name: id, slug: `registry-${id}`, ai_provider_id: id },
      });
      assert.equal(res.status, 200, `${id}: ${res.text}`);
      const shown = await h.request('GET', `/admin/v2/integrations/registry-${id}`, { key: h.adminKey });
      assert.equal(shown.body.ai_provider_id, id);
    }
  });

  test('the ids admin accepts are exactly the registry’s', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: 'Nope', ai_provider_id: 'not-a-provider' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'ai_provider_id');
    // The refusal lists the accepted ids: "expected one of "openai"|"azure-openai"|...".
    const accepted = [...String(res.body.error.message).matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(accepted, providerIds);
  });

  test('all-in-one reads the API key variable of every registered provider that has one', () => {
    const keys = providerRegistry.flatMap((p) => (p.env.apiKey ? [p.env.apiKey] : []));
    for (const key of keys) assert.ok(key in seedEnvSchema.shape, key);
  });
});
