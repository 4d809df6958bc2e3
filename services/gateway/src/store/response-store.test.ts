import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '@switchyard/core';
import type { KeyValueStore } from '@switchyard/adapters';
import { KeyValueResponseStore } from './response-store.ts';

test('a store that fails is a miss, never an error', async () => {
  const broken: KeyValueStore = {
    get: () => Promise.reject(new Error('connection refused')),
    set: () => Promise.reject(new Error('connection refused')),
    setIfAbsent: () => Promise.reject(new Error('connection refused')),
    delete: () => Promise.reject(new Error('connection refused')),
    increment: () => Promise.reject(new Error('connection refused')),
    check: () => Promise.reject(new Error('connection refused')),
    close: () => Promise.resolve(),
  };
  const logger = createLogger('test');
  logger.silent = true;
  const cache = new KeyValueResponseStore(broken, logger);
  assert.equal(await cache.get('k'), undefined);
  cache.put(
    'k',
    { status: 200, contentType: 'application/json', body: Buffer.from('{}'), stream: false },
    60,
  );
});
