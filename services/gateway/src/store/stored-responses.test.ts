import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '@switchyard/core';
import { MemoryKeyValueStore, type KeyValueStore } from '@switchyard/adapters';
import type { StoredResponse } from '../domain/responses.ts';
import { KeyValueStoredResponses } from './stored-responses.ts';

const logger = createLogger('test');
logger.silent = true;

const stored = {
  response: {
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model: 'm',
    output: [],
    usage: null,
  },
  messages: [{ role: 'user', content: 'Hi' }],
} as StoredResponse;

test('a kept response is found by its workspace only, until it expires or is deleted', async () => {
  let now = 1_000;
  const kv = new MemoryKeyValueStore(() => now);
  const store = new KeyValueStoredResponses(kv, logger, 60);
  store.put('ws-a', 'resp_1', stored);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(await store.get('ws-a', 'resp_1'), stored);
  assert.equal(await store.get('ws-b', 'resp_1'), undefined);
  now += 59_000;
  assert.deepEqual(await store.get('ws-a', 'resp_1'), stored);
  now += 2_000;
  assert.equal(await store.get('ws-a', 'resp_1'), undefined);

  store.put('ws-a', 'resp_2', stored);
  await new Promise((resolve) => setImmediate(resolve));
  await store.delete('ws-a', 'resp_2');
  assert.equal(await store.get('ws-a', 'resp_2'), undefined);
});

test('a store that fails finds nothing, and a failed write never fails the request', async () => {
  const refused = () => Promise.reject(new Error('connection refused'));
  const broken: KeyValueStore = {
    get: refused,
    set: refused,
    setIfAbsent: refused,
    delete: refused,
    increment: refused,
    check: refused,
    close: () => Promise.resolve(),
  };
  const store = new KeyValueStoredResponses(broken, logger, 60);
  assert.equal(await store.get('ws-a', 'resp_1'), undefined);
  store.put('ws-a', 'resp_1', stored);
  await new Promise((resolve) => setImmediate(resolve));
});
