import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '@switchyard/core';
import { configSelectsProvider, integrationSlugs, parseRoutingConfig } from './routing-config.ts';

function rejects(value: unknown, param: string, root?: string) {
  assert.throws(
    () => parseRoutingConfig(value, root),
    (err: AppError) => {
      assert.equal(err.status, 400);
      assert.equal(err.param, param, err.message);
      return true;
    },
  );
}

describe('routing config', () => {
  test('accepts the documented shapes', () => {
    const config = parseRoutingConfig({
      retry: { attempts: 3, on_status_codes: [429, 503] },
      request_timeout: 10_000,
      cache: { mode: 'simple', max_age: 60 },
      strategy: { mode: 'fallback', on_status_codes: [429] },
      targets: [
        { virtual_key: 'openai-prod', override_params: { model: 'gpt-4o' } },
        {
          strategy: { mode: 'loadbalance' },
          targets: [
            { provider: '@anthropic', weight: 0.7 },
            { provider: 'openai', api_key: 'sk-x', custom_host: 'https://llm.example.com/v1', weight: 0.3 },
          ],
        },
      ],
    });
    assert.deepEqual(integrationSlugs(config), ['openai-prod', 'anthropic']);
    assert.equal(configSelectsProvider(config), true);
    assert.equal(configSelectsProvider(parseRoutingConfig({ retry: { attempts: 1 } })), false);
  });

  test('each broken rule is a 400 naming the field, under the given root', () => {
    rejects({ stratgy: { mode: 'single' } }, 'config.stratgy', 'config');
    rejects({ strategy: { mode: 'single' } }, 'config.targets');
    rejects({ targets: [{ provider: 'a' }] }, 'config.strategy');
    rejects({ strategy: { mode: 'random' }, targets: [{ provider: 'a' }] }, 'config.strategy.mode');
    rejects(
      { strategy: { mode: 'loadbalance' }, targets: [{ provider: 'a', weight: -1 }] },
      'config.targets[0].weight',
    );
    rejects({ strategy: { mode: 'loadbalance' }, targets: [{ provider: 'a', weight: 0 }] }, 'config.targets');
    rejects({ retry: { attempts: 11 } }, 'config.retry.attempts');
    rejects({ retry: { attempts: 1, on_status_codes: [99] } }, 'config.retry.on_status_codes[0]');
    rejects({ request_timeout: 0 }, 'config.request_timeout');
    rejects({ provider: '@bad slug' }, 'config.provider');
    rejects({ provider: '@saved', api_key: 'k' }, 'config.api_key');
    rejects({ virtual_key: 'saved', custom_host: 'https://h.example.com' }, 'config.custom_host');
    rejects({ provider: 'openai', custom_host: 'ftp://h.example.com' }, 'config.custom_host');
    rejects({ provider: 'a', strategy: { mode: 'single' }, targets: [{ provider: 'b' }] }, 'config.targets');
    rejects(
      {
        strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.a': 'b' }, then: 'nope' }] },
        targets: [{ name: 'yes', provider: 'a' }],
      },
      'config.strategy.conditions[0].then',
    );
    rejects(
      {
        strategy: { mode: 'conditional', conditions: [{ query: { 'body.a': 'b' }, then: 'a' }] },
        targets: [{ name: 'a', provider: 'a' }],
      },
      'config.strategy.conditions[0].query.body.a',
    );
    rejects(
      { strategy: { mode: 'conditional' }, targets: [{ name: 'a', provider: 'a' }] },
      'config.strategy.conditions',
    );
    rejects(
      { strategy: { mode: 'single', default: 'a' }, targets: [{ name: 'a', provider: 'a' }] },
      'config.strategy.default',
    );
    rejects(
      { strategy: { mode: 'single', on_status_codes: [500] }, targets: [{ provider: 'a' }] },
      'config.strategy.on_status_codes',
    );
    rejects(
      {
        strategy: { mode: 'fallback' },
        targets: [
          { name: 'x', provider: 'a' },
          { name: 'x', provider: 'b' },
        ],
      },
      'config.targets[1].name',
    );
    rejects({ cache: { mode: 'semantic' } }, 'x-vendor-config.cache.mode', 'x-vendor-config');
  });

  test('a document nested far too deep is a 400, not a stack overflow', () => {
    let node: Record<string, unknown> = { provider: 'a' };
    for (let i = 0; i < 5_000; i += 1) node = { strategy: { mode: 'single' }, targets: [node] };
    assert.throws(
      () => parseRoutingConfig(node),
      (err: AppError) => err.status === 400 && err.param === 'config.targets',
    );
  });

  test('nesting is bounded', () => {
    let node: Record<string, unknown> = { provider: 'a' };
    for (let i = 0; i < 6; i += 1) node = { strategy: { mode: 'single' }, targets: [node] };
    assert.throws(
      () => parseRoutingConfig(node),
      (err: AppError) => err.status === 400 && /nest/.test(err.message),
    );
  });
});
