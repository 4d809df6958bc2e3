// One contract for every LimitCounterStore: the in-memory one and Redis must behave alike.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import type { CounterTake, LimitCounterStore } from './limit-counter-store.ts';
import { MemoryLimitCounterStore } from './memory-limit-counters.ts';
import { RedisKeyValueStore } from './redis-store.ts';
import { captureLogger, requireServiceEnv, sleep, uniqueSuffix } from '@switchyard/core/testing';

function limitCounterContract(name: string, open: () => Promise<LimitCounterStore>) {
  describe(`LimitCounterStore contract: ${name}`, () => {
    let store: LimitCounterStore;
    before(async () => {
      store = await open();
    });

    /** A counter key no other test uses, under one organisation's hash tag. */
    const counter = (label: string) => `{org-${uniqueSuffix()}}:rl:${label}:0`;
    const requests = (key: string, field: string, limit: number): CounterTake => ({
      key,
      field,
      amount: 1,
      limit,
      rule: 'count',
      ttlMs: 60_000,
    });
    const tokens = (key: string, field: string, amount: number, limit: number): CounterTake => ({
      key,
      field,
      amount,
      limit,
      rule: 'below',
      ttlMs: 60_000,
    });

    test('a count limit of 3 admits three requests and refuses the fourth, reporting the usage', async () => {
      const key = counter('count');
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await store.take([requests(key, 'api_key:a', 3)]));
      assert.deepEqual(
        results.map((r) => [r.admitted, r.outcomes[0], r.used[0]]),
        [
          [true, 'taken', 1],
          [true, 'taken', 2],
          [true, 'taken', 3],
          [false, 'refused', 3],
        ],
      );
    });

    test('a below limit admits while usage is under it and holds the whole amount, then refuses', async () => {
      const key = counter('below');
      assert.deepEqual(await store.take([tokens(key, 'e', 60, 100)]), {
        admitted: true,
        outcomes: ['taken'],
        used: [60],
        granted: [0],
      });
      assert.deepEqual((await store.take([tokens(key, 'e', 60, 100)])).used, [120], 'passes the limit');
      assert.deepEqual(await store.take([tokens(key, 'e', 1, 100)]), {
        admitted: false,
        outcomes: ['refused'],
        used: [120],
        granted: [0],
      });
    });

    test('entities of one counter are counted apart', async () => {
      const key = counter('fields');
      assert.equal((await store.take([requests(key, 'a', 1)])).admitted, true);
      assert.equal((await store.take([requests(key, 'a', 1)])).admitted, false);
      assert.equal((await store.take([requests(key, 'b', 1)])).admitted, true);
    });

    test('takes across counters are all or nothing: one refusal writes none of them', async () => {
      const [open, full] = [counter('open'), counter('full')];
      await store.take([requests(full, 'e', 1)]);
      const result = await store.take([tokens(open, 'e', 50, 1000), requests(full, 'e', 1)]);
      assert.deepEqual(result, {
        admitted: false,
        outcomes: ['unchecked', 'refused'],
        used: [0, 1],
        granted: [0, 0],
      });
      assert.deepEqual(
        await store.read([
          { key: open, field: 'e' },
          { key: full, field: 'e' },
        ]),
        [0, 1],
      );
    });

    test('of 40 concurrent requests under a limit of 15 exactly 15 are admitted', async () => {
      const key = counter('race');
      const results = await Promise.all(
        Array.from({ length: 40 }, () => store.take([requests(key, 'e', 15)])),
      );
      assert.equal(results.filter((r) => r.admitted).length, 15);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [15]);
    });

    test('a lease takes more than the request, at most a share of what is left, in whole requests for a count', async () => {
      const key = counter('lease');
      const lease = (extra: number): CounterTake => ({ ...requests(key, 'e', 100), extra, share: 0.25 });
      // 100 − 1 = 99 left after the request; a quarter of it is 24.75, so 24 requests.
      assert.deepEqual(await store.take([lease(50)]), {
        admitted: true,
        outcomes: ['taken'],
        used: [25],
        granted: [24],
      });
      assert.deepEqual((await store.take([lease(5)])).granted, [5], 'less than the share: all of it');
      // Near the limit the share shrinks to nothing: one request, no lease.
      await store.settle([{ key, field: 'e', delta: 97 - 31 }]);
      assert.deepEqual(await store.take([lease(50)]), {
        admitted: true,
        outcomes: ['taken'],
        used: [98],
        granted: [0],
      });
    });

    test('a lease of tokens is fractional, never past the limit, and nothing is leased on a refusal', async () => {
      const key = counter('lease-tokens');
      const full = counter('lease-full');
      await store.take([requests(full, 'e', 1)]);
      const refused = await store.take([
        { ...tokens(key, 'e', 10, 100), extra: 50, share: 0.5 },
        requests(full, 'e', 1),
      ]);
      assert.deepEqual(refused.granted, [0, 0]);
      const taken = await store.take([{ ...tokens(key, 'e', 10, 100), extra: 50, share: 0.5 }]);
      assert.deepEqual([taken.used, taken.granted], [[55], [45]]);
      // A `below` take past the limit is admitted while usage is under it, but leases nothing.
      const over = await store.take([{ ...tokens(key, 'e', 60, 100), extra: 10, share: 1 }]);
      assert.deepEqual([over.admitted, over.used, over.granted], [true, [115], [0]]);
    });

    test('fractional amounts add up (cost in USD)', async () => {
      const key = counter('cost');
      await store.take([tokens(key, 'e', 0.1, 10)]);
      const { used } = await store.take([tokens(key, 'e', 0.2, 10)]);
      assert.ok(Math.abs(used[0]! - 0.3) < 1e-9, `0.1 + 0.2 ≈ 0.3, got ${used[0]}`);
    });

    test('settle adds a delta, gives back a negative one and never goes below 0', async () => {
      const key = counter('settle');
      await store.take([tokens(key, 'e', 100, 1000)]);
      await store.settle([{ key, field: 'e', delta: 25 }]);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [125]);
      await store.settle([{ key, field: 'e', delta: -100 }]);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [25]);
      await store.settle([{ key, field: 'e', delta: -500 }]);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [0]);
    });

    test('settle skips a counter that does not exist and does not make it', async () => {
      const key = counter('gone');
      await store.settle([{ key, field: 'e', delta: 40 }]);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [0]);
      assert.equal((await store.list(key, { limit: 10, offset: 0, count: 10 })).total, 0);
    });

    test('an existing-only take skips a missing counter and takes from one that exists', async () => {
      const key = counter('extend');
      const skipped = await store.take([{ ...tokens(key, 'e', 10, 100), existingOnly: true }]);
      assert.deepEqual(skipped, { admitted: true, outcomes: ['skipped'], used: [0], granted: [0] });
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [0]);
      await store.take([tokens(key, 'e', 10, 100)]);
      const taken = await store.take([{ ...tokens(key, 'e', 10, 100), existingOnly: true }]);
      assert.deepEqual(taken, { admitted: true, outcomes: ['taken'], used: [20], granted: [0] });
    });

    test('a counter expires after the TTL it got when made; later takes do not extend it', async () => {
      const key = counter('ttl');
      await store.take([{ ...requests(key, 'e', 10), ttlMs: 400 }]);
      await sleep(150);
      await store.take([{ ...requests(key, 'e', 10), ttlMs: 10_000 }]);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [2]);
      await sleep(400);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [0], 'gone 400 ms after it was made');
      assert.deepEqual((await store.take([{ ...requests(key, 'e', 10), ttlMs: 400 }])).used, [1]);
    });

    test('a counter with TTL 0 never expires (a cumulative usage limit)', async () => {
      const key = counter('forever');
      await store.take([{ ...requests(key, 'e', 10), ttlMs: 0 }]);
      await sleep(300);
      assert.deepEqual(await store.read([{ key, field: 'e' }]), [1]);
      await store.reset(key, 'e');
    });

    test('read answers 0 for entities and counters without usage', async () => {
      const key = counter('read');
      await store.take([tokens(key, 'a', 7, 100)]);
      assert.deepEqual(
        await store.read([
          { key, field: 'a' },
          { key, field: 'b' },
          { key: counter('none'), field: 'a' },
        ]),
        [7, 0, 0],
      );
    });

    test('list orders entities by usage, pages them, and filters by status and search', async () => {
      const key = counter('list');
      const usage: Record<string, number> = {
        'api_key:alpha': 5,
        'api_key:beta': 12,
        'api_key:gamma': 10,
        'metadata.team:Alpha': 1,
      };
      for (const [field, amount] of Object.entries(usage))
        await store.take([tokens(key, field, amount, 100)]);
      const page = (query: Partial<Parameters<LimitCounterStore['list']>[1]>) =>
        store.list(key, { limit: 10, offset: 0, count: 10, ...query });

      assert.deepEqual(await page({ count: 2 }), {
        entities: [
          { field: 'api_key:beta', used: 12, exhausted: true },
          { field: 'api_key:gamma', used: 10, exhausted: true },
        ],
        total: 4,
      });
      assert.deepEqual(
        (await page({ offset: 2, count: 2 })).entities.map((e) => e.field),
        ['api_key:alpha', 'metadata.team:Alpha'],
      );
      assert.deepEqual(
        (await page({ status: 'active' })).entities.map((e) => e.field),
        ['api_key:alpha', 'metadata.team:Alpha'],
      );
      assert.deepEqual((await page({ status: 'exhausted' })).total, 2);
      assert.deepEqual(
        (await page({ search: 'ALPHA' })).entities.map((e) => e.field),
        ['api_key:alpha', 'metadata.team:Alpha'],
      );
      assert.deepEqual(await page({ offset: 10 }), { entities: [], total: 4 });
    });

    test('reset forgets one entity and says whether it had usage', async () => {
      const key = counter('reset');
      await store.take([tokens(key, 'a', 3, 100)]);
      await store.take([tokens(key, 'b', 4, 100)]);
      assert.equal(await store.reset(key, 'a'), true);
      assert.equal(await store.reset(key, 'a'), false);
      assert.equal(await store.reset(counter('never'), 'a'), false);
      assert.deepEqual(
        await store.read([
          { key, field: 'a' },
          { key, field: 'b' },
        ]),
        [0, 4],
      );
      assert.equal((await store.take([requests(key, 'a', 1)])).admitted, true, 'counts from 0 again');
    });

    test('check() passes against a reachable backend', async () => {
      await store.check();
    });
  });
}

limitCounterContract('MemoryLimitCounterStore', async () => new MemoryLimitCounterStore());

describe('RedisLimitCounterStore (real server)', () => {
  const prefix = `test:${uniqueSuffix()}:`;
  let url = '';
  let kv: RedisKeyValueStore | undefined;

  before(() => {
    url = requireServiceEnv('REDIS_URL');
  });

  after(async () => {
    await kv?.close();
    if (!url) return;
    // The server is shared: remove what this run left, expiring or not.
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

  limitCounterContract('RedisLimitCounterStore', async () => {
    kv = new RedisKeyValueStore(url, captureLogger('redis-contract').logger, prefix);
    await kv.connect();
    return kv.limitCounters({ timeoutMs: 2_000 });
  });

  test('counters are hashes under the store prefix, with the organisation as hash tag', async () => {
    const counters = kv!.limitCounters();
    await counters.take([
      { key: '{org-1}:ul:policy-1:all', field: 'api_key:k', amount: 2, limit: 5, rule: 'count', ttlMs: 0 },
    ]);
    const client = createClient({ url });
    await client.connect();
    try {
      assert.deepEqual(
        { ...(await client.hGetAll(`${prefix}{org-1}:ul:policy-1:all`)) },
        { 'api_key:k': '2' },
      );
      assert.equal(
        await client.pTTL(`${prefix}{org-1}:ul:policy-1:all`),
        -1,
        'a cumulative counter never expires',
      );
    } finally {
      await client.close();
    }
  });
});
