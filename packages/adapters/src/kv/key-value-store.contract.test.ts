// One contract for every KeyValueStore: the in-memory stand-in and Redis must behave alike.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import type { KeyValueStore } from './key-value-store.ts';
import { MemoryKeyValueStore } from './memory-store.ts';
import { RedisKeyValueStore } from './redis-store.ts';
import { captureLogger, requireServiceEnv, sleep, uniqueSuffix } from '@switchyard/core/testing';

function keyValueContract(name: string, open: () => Promise<KeyValueStore>) {
  describe(`KeyValueStore contract: ${name}`, () => {
    let store: KeyValueStore;
    before(async () => {
      store = await open();
    });
    after(() => store?.close());

    /** A key no other test uses. */
    const key = (label: string) => `${label}:${uniqueSuffix()}`;

    test('get returns null for a key that was never set', async () => {
      assert.equal(await store.get(key('missing')), null);
    });

    test('set then get returns the value; set again overwrites it', async () => {
      const k = key('set');
      await store.set(k, 'first');
      assert.equal(await store.get(k), 'first');
      await store.set(k, 'second');
      assert.equal(await store.get(k), 'second');
    });

    test('values round-trip exactly, including empty and unicode strings', async () => {
      for (const value of ['', ' spaced ', 'ünïcødé ✓ 鍵', '{"json":[1,2]}', 'x'.repeat(10_000)]) {
        const k = key('exact');
        await store.set(k, value);
        assert.equal(await store.get(k), value);
      }
    });

    test('delete removes a key, and deleting a missing key is fine', async () => {
      const k = key('delete');
      await store.set(k, 'v');
      await store.delete(k);
      assert.equal(await store.get(k), null);
      await store.delete(k);
      await store.delete(key('never-set'));
    });

    test('a value set with a TTL disappears after it; one without a TTL stays', async () => {
      const short = key('ttl');
      const lasting = key('no-ttl');
      await store.set(short, 'v', 200);
      await store.set(lasting, 'v');
      assert.equal(await store.get(short), 'v', 'present before the TTL');
      await sleep(350);
      assert.equal(await store.get(short), null, 'gone after the TTL');
      assert.equal(await store.get(lasting), 'v');
      await store.delete(lasting);
    });

    test('setting a value again replaces its TTL', async () => {
      const k = key('reset-ttl');
      await store.set(k, 'v', 200);
      await store.set(k, 'w');
      await sleep(350);
      assert.equal(await store.get(k), 'w', 'a set without a TTL makes the value lasting');
      await store.delete(k);
    });

    test('increment creates a counter at the amount and adds to it', async () => {
      const k = key('counter');
      assert.equal(await store.increment(k, 5, 10_000), 5);
      assert.equal(await store.increment(k, 3, 10_000), 8);
      assert.equal(await store.increment(k, -2, 10_000), 6);
      assert.equal(await store.get(k), '6');
    });

    test('a counter created by increment expires after its TTL, then starts again', async () => {
      const k = key('counter-ttl');
      assert.equal(await store.increment(k, 1, 200), 1);
      await sleep(350);
      assert.equal(await store.get(k), null);
      assert.equal(await store.increment(k, 1, 200), 1, 'a fresh counter after expiry');
    });

    test('later increments do not extend the expiry set when the counter was created', async () => {
      const k = key('counter-window');
      await store.increment(k, 1, 500);
      await sleep(150);
      assert.equal(await store.increment(k, 1, 5_000), 2);
      await sleep(450);
      assert.equal(await store.get(k), null, 'the counter expired 500 ms after it was created');
    });

    test('a counter that is back at zero keeps the expiry from its creation', async () => {
      const k = key('counter-zero');
      assert.equal(await store.increment(k, 0, 500), 0);
      await sleep(150);
      assert.equal(await store.increment(k, 7, 5_000), 7);
      await sleep(450);
      assert.equal(await store.get(k), null, 'the counter expired 500 ms after it was created');
    });

    test('50 concurrent increments are all counted', async () => {
      const k = key('concurrent');
      const results = await Promise.all(Array.from({ length: 50 }, () => store.increment(k, 2, 10_000)));
      assert.equal(await store.get(k), '100');
      assert.deepEqual(
        [...results].sort((a, b) => a - b),
        Array.from({ length: 50 }, (_, i) => 2 * (i + 1)),
        'every call saw a distinct running total',
      );
    });

    test('setIfAbsent sets once, then refuses while the key exists', async () => {
      const k = key('lock');
      assert.equal(await store.setIfAbsent(k, 'owner-a', 10_000), true);
      assert.equal(await store.setIfAbsent(k, 'owner-b', 10_000), false);
      assert.equal(await store.get(k), 'owner-a', 'the second call did not overwrite');
      await store.delete(k);
      assert.equal(await store.setIfAbsent(k, 'owner-b', 10_000), true, 'free again after delete');
      assert.equal(await store.get(k), 'owner-b');
    });

    test('setIfAbsent succeeds again once the earlier value expired', async () => {
      const k = key('lease');
      assert.equal(await store.setIfAbsent(k, 'a', 200), true);
      await sleep(350);
      assert.equal(await store.setIfAbsent(k, 'b', 200), true);
      assert.equal(await store.get(k), 'b');
    });

    test('of many concurrent setIfAbsent calls exactly one wins', async () => {
      const k = key('race');
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.setIfAbsent(k, `owner-${i}`, 10_000)),
      );
      assert.equal(results.filter(Boolean).length, 1);
      const winner = results.indexOf(true);
      assert.equal(await store.get(k), `owner-${winner}`);
    });

    test('check() passes against a reachable backend', async () => {
      await store.check();
    });
  });
}

keyValueContract('MemoryKeyValueStore', async () => new MemoryKeyValueStore());

describe('RedisKeyValueStore (real server)', () => {
  const prefix = `test:${uniqueSuffix()}:`;
  let url = '';

  before(() => {
    url = requireServiceEnv('REDIS_URL');
  });

  after(async () => {
    if (!url) return;
    // The server is shared: remove the keys this run left without an expiry.
    const client = createClient({ url });
    await client.connect();
    try {
      const keys: string[] = [];
      for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) keys.push(...batch);
      if (keys.length > 0) await client.del(keys);
    } finally {
      await client.close();
    }
  });

  keyValueContract('RedisKeyValueStore', async () => {
    const store = new RedisKeyValueStore(url, captureLogger('redis-contract').logger, prefix);
    await store.connect();
    return store;
  });

  test('keys are written under the store prefix only', async () => {
    const logger = captureLogger('redis-contract').logger;
    const a = new RedisKeyValueStore(url, logger, `${prefix}a:`);
    const b = new RedisKeyValueStore(url, logger, `${prefix}b:`);
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.set('shared-name', 'from-a');
      assert.equal(await b.get('shared-name'), null, 'another prefix does not see the key');
      await b.set('shared-name', 'from-b');
      assert.equal(await a.get('shared-name'), 'from-a');
    } finally {
      await a.delete('shared-name');
      await b.delete('shared-name');
      await Promise.all([a.close(), b.close()]);
    }
  });
});
