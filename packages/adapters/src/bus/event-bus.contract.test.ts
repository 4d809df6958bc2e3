// One contract for every EventBus: the in-process stand-in and Kafka must behave alike.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { BusMessage, EventBus, Subscription } from './event-bus.ts';
import { KafkaEventBus } from './kafka-bus.ts';
import { EventJournal } from './event-journal.ts';
import { MemoryEventBus } from './memory-bus.ts';
import {
  captureLogger,
  eventually,
  requireServiceEnv,
  sleep,
  timed,
  uniqueSuffix,
} from '@switchyard/core/testing';

interface BusFixture {
  /** A fresh bus on the shared backend. */
  create(): Promise<EventBus>;
  /** How long a delivery may take: consumer group joins on a real broker take seconds. */
  deliveryTimeoutMs: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const text = (m: BusMessage) => decoder.decode(m.value);

/** Records what a subscription handled, in order. */
function recorder() {
  const seen: BusMessage[] = [];
  return {
    seen,
    handler: async (m: BusMessage) => {
      seen.push(m);
    },
    values: () => seen.map(text),
  };
}

function eventBusContract(name: string, fixture: () => BusFixture) {
  describe(`EventBus contract: ${name}`, () => {
    let f: BusFixture;
    before(() => {
      f = fixture();
    });

    /** Unique topic and group names per test, so no test sees another's messages. */
    function names() {
      const id = uniqueSuffix();
      return { topic: `topic-${id}`, group: (label: string) => `group-${label}-${id}` };
    }

    async function open(t: TestContext): Promise<EventBus> {
      const bus = await f.create();
      t.after(() => bus.close());
      return bus;
    }

    async function subscribe(
      t: TestContext,
      bus: EventBus,
      options: Parameters<EventBus['subscribe']>[0],
    ): Promise<Subscription> {
      const subscription = await bus.subscribe(options);
      t.after(() => subscription.stop());
      return subscription;
    }

    const within = (ms?: number) => ({ timeoutMs: ms ?? f.deliveryTimeoutMs, intervalMs: 25 });

    test('a published message reaches a subscriber with its key and value intact', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const r = recorder();
      await subscribe(t, bus, { groupId: group('a'), topics: [topic], handler: r.handler });
      const binary = new Uint8Array([0, 1, 2, 127, 128, 254, 255]);
      bus.publish({ topic, key: 'org-1/wörkspace ✓', value: binary });
      bus.publish({ topic, key: '', value: new Uint8Array() });
      await eventually(() => assert.equal(r.seen.length, 2, 'both messages arrived'), within());
      const byKey = new Map(r.seen.map((m) => [m.key, m]));
      const first = byKey.get('org-1/wörkspace ✓');
      assert.ok(first, 'the message with a unicode key arrived');
      assert.deepEqual(new Uint8Array(first.value), binary);
      assert.equal(first.topic, topic, 'the subscriber sees the topic name it subscribed to');
      assert.equal(typeof first.partition, 'number');
      assert.match(first.offset, /^\d+$/);
      assert.equal(byKey.get('')?.value.length, 0, 'an empty value arrives empty');
    });

    test('a new group without fromBeginning starts at the newest message', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      bus.publish({ topic, key: 'k', value: encoder.encode('before') });
      await bus.flush(10_000);
      const r = recorder();
      await subscribe(t, bus, { groupId: group('late'), topics: [topic], handler: r.handler });
      bus.publish({ topic, key: 'k', value: encoder.encode('after') });
      await eventually(
        () => assert.ok(r.values().includes('after'), `'after' arrived (seen: ${r.values()})`),
        within(),
      );
      await sleep(200);
      assert.deepEqual(r.values(), ['after']);
    });

    test('a new group with fromBeginning also sees messages published before it subscribed', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      for (const v of ['one', 'two', 'three']) bus.publish({ topic, key: 'k', value: encoder.encode(v) });
      await bus.flush(10_000);
      const r = recorder();
      await subscribe(t, bus, {
        groupId: group('replay'),
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      bus.publish({ topic, key: 'k', value: encoder.encode('four') });
      await eventually(() => assert.deepEqual(r.values(), ['one', 'two', 'three', 'four']), within());
    });

    test('a group resumes after its last handled message when it subscribes again', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const groupId = group('resume');
      const first = recorder();
      const sub = await bus.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handler: first.handler,
      });
      for (const v of ['m1', 'm2', 'm3']) bus.publish({ topic, key: 'k', value: encoder.encode(v) });
      await eventually(() => assert.deepEqual(first.values(), ['m1', 'm2', 'm3']), within());
      await sub.stop();

      for (const v of ['m4', 'm5']) bus.publish({ topic, key: 'k', value: encoder.encode(v) });
      await bus.flush(10_000);
      const second = recorder();
      await subscribe(t, bus, { groupId, topics: [topic], fromBeginning: true, handler: second.handler });
      await eventually(() => assert.deepEqual(second.values(), ['m4', 'm5']), within());
    });

    test('two consumer groups each receive every message', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const a = recorder();
      const b = recorder();
      await subscribe(t, bus, {
        groupId: group('a'),
        topics: [topic],
        fromBeginning: true,
        handler: a.handler,
      });
      await subscribe(t, bus, {
        groupId: group('b'),
        topics: [topic],
        fromBeginning: true,
        handler: b.handler,
      });
      const expected = Array.from({ length: 20 }, (_, i) => `m${i}`);
      expected.forEach((v, i) => bus.publish({ topic, key: `k${i % 4}`, value: encoder.encode(v) }));
      await eventually(() => {
        assert.deepEqual([...new Set(a.values())].sort(), [...expected].sort());
        assert.deepEqual([...new Set(b.values())].sort(), [...expected].sort());
      }, within());
    });

    test('within one group, every message is handled by one of its subscribers', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const groupId = group('shared');
      const a = recorder();
      const b = recorder();
      await subscribe(t, bus, { groupId, topics: [topic], fromBeginning: true, handler: a.handler });
      await subscribe(t, bus, { groupId, topics: [topic], fromBeginning: true, handler: b.handler });
      const expected = Array.from({ length: 30 }, (_, i) => `m${i}`);
      expected.forEach((v, i) => bus.publish({ topic, key: `k${i % 6}`, value: encoder.encode(v) }));
      await eventually(() => {
        const handled = new Set([...a.values(), ...b.values()]);
        assert.deepEqual([...handled].sort(), [...expected].sort());
      }, within());
    });

    test('messages with the same key are handled in the order they were published', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const r = recorder();
      await subscribe(t, bus, {
        groupId: group('order'),
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      const keys = ['alpha', 'beta', 'gamma'];
      for (let i = 0; i < 25; i++) {
        for (const key of keys) bus.publish({ topic, key, value: encoder.encode(String(i)) });
      }
      await eventually(() => assert.equal(r.seen.length, 75, 'all 75 messages arrived'), within());
      for (const key of keys) {
        const sequence = r.seen.filter((m) => m.key === key).map((m) => Number(text(m)));
        assert.deepEqual(
          sequence,
          Array.from({ length: 25 }, (_, i) => i),
          `order for key ${key}`,
        );
      }
    });

    test('a handler that throws is retried until it succeeds, and later messages still arrive after it', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const attempts = new Map<string, number>();
      const handled: string[] = [];
      await subscribe(t, bus, {
        groupId: group('retry'),
        topics: [topic],
        fromBeginning: true,
        handler: async (m) => {
          const value = text(m);
          const attempt = (attempts.get(value) ?? 0) + 1;
          attempts.set(value, attempt);
          if (value === 'poison' && attempt <= 3) throw new Error(`transient failure ${attempt}`);
          handled.push(value);
        },
      });
      for (const v of ['before', 'poison', 'after-1', 'after-2'])
        bus.publish({ topic, key: 'same-key', value: encoder.encode(v) });
      await eventually(() => assert.deepEqual(handled, ['before', 'poison', 'after-1', 'after-2']), within());
      assert.equal(attempts.get('poison'), 4, 'three failures, then the successful attempt');
      assert.equal(attempts.get('after-1'), 1);
    });

    test('batches hand over every message once, in order, none larger than the bound', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const batches: string[][] = [];
      const subscription = await bus.subscribeBatches({
        groupId: group('batches'),
        topics: [topic],
        fromBeginning: true,
        maxMessages: 7,
        handler: async (messages) => {
          batches.push(messages.map(text));
        },
      });
      t.after(() => subscription.stop());
      const expected = Array.from({ length: 40 }, (_, i) => `m${i}`);
      for (const v of expected) bus.publish({ topic, key: 'same-key', value: encoder.encode(v) });
      await eventually(() => assert.deepEqual(batches.flat(), expected), within());
      assert.ok(
        batches.every((b) => b.length >= 1 && b.length <= 7),
        `batch sizes ${batches.map((b) => b.length)}`,
      );
    });

    test("each message's trace context reaches subscribers with it, one at a time and in batches", async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const one = recorder();
      await subscribe(t, bus, {
        groupId: group('one'),
        topics: [topic],
        fromBeginning: true,
        handler: one.handler,
      });
      const batched: BusMessage[] = [];
      const subscription = await bus.subscribeBatches({
        groupId: group('batches'),
        topics: [topic],
        fromBeginning: true,
        maxMessages: 10,
        handler: async (messages) => void batched.push(...messages),
      });
      t.after(() => subscription.stop());
      const traceparent = (n: number) =>
        `00-${String(n).padStart(32, '7')}-${String(n).padStart(16, '3')}-01`;
      const sent = [
        { value: 'with state', traceContext: { traceparent: traceparent(1), tracestate: 'vendor=1' } },
        { value: 'without', traceContext: undefined },
        { value: 'parent only', traceContext: { traceparent: traceparent(2) } },
      ];
      // One key, published together: on Kafka they may travel packed, each keeping its own.
      for (const { value, traceContext } of sent) {
        bus.publish({
          topic,
          key: 'k',
          value: encoder.encode(value),
          ...(traceContext ? { traceContext } : {}),
        });
      }
      // And alone, in a record of its own.
      await bus.flush();
      bus.publish({
        topic,
        key: 'alone',
        value: encoder.encode('alone'),
        traceContext: { traceparent: traceparent(3) },
      });
      const expected = [...sent, { value: 'alone', traceContext: { traceparent: traceparent(3) } }];
      const seen = (messages: BusMessage[]) =>
        messages.map((m) => ({ value: text(m), traceContext: m.traceContext }));
      await eventually(() => assert.deepEqual(seen(one.seen), expected), within());
      await eventually(() => assert.deepEqual(seen(batched), expected), within());
    });

    test('a batch whose handler throws is handed over again whole, and nothing after it is committed first', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const groupId = group('batch-retry');
      const handled: string[] = [];
      let failures = 0;
      const first = await bus.subscribeBatches({
        groupId,
        topics: [topic],
        fromBeginning: true,
        maxMessages: 100,
        handler: async (messages) => {
          const values = messages.map(text);
          if (values.includes('poison') && failures < 2) {
            failures++;
            throw new Error(`transient failure ${failures}`);
          }
          handled.push(...values);
        },
      });
      for (const v of ['before', 'poison', 'after'])
        bus.publish({ topic, key: 'same-key', value: encoder.encode(v) });
      await eventually(() => assert.ok(handled.includes('after'), `handled: ${handled}`), within());
      assert.equal(failures, 2);
      assert.deepEqual([...new Set(handled)], ['before', 'poison', 'after']);
      await first.stop();
      // The group resumes after what it handled: only new messages arrive.
      const again: string[] = [];
      const second = await bus.subscribeBatches({
        groupId,
        topics: [topic],
        fromBeginning: true,
        maxMessages: 100,
        handler: async (messages) => {
          again.push(...messages.map(text));
        },
      });
      t.after(() => second.stop());
      bus.publish({ topic, key: 'same-key', value: encoder.encode('later') });
      await eventually(() => assert.deepEqual(again, ['later']), within());
    });

    test('stopping one subscription ends its deliveries while others continue', async (t) => {
      const bus = await open(t);
      const { topic, group } = names();
      const stopped = recorder();
      const kept = recorder();
      const sub = await bus.subscribe({
        groupId: group('stopped'),
        topics: [topic],
        fromBeginning: true,
        handler: stopped.handler,
      });
      await subscribe(t, bus, {
        groupId: group('kept'),
        topics: [topic],
        fromBeginning: true,
        handler: kept.handler,
      });
      bus.publish({ topic, key: 'k', value: encoder.encode('first') });
      await eventually(() => {
        assert.deepEqual(stopped.values(), ['first']);
        assert.deepEqual(kept.values(), ['first']);
      }, within());
      await sub.stop();
      bus.publish({ topic, key: 'k', value: encoder.encode('second') });
      await eventually(() => assert.deepEqual(kept.values(), ['first', 'second']), within());
      await sleep(300);
      assert.deepEqual(stopped.values(), ['first']);
    });

    test('flush() resolves once everything published has been accepted', async (t) => {
      const bus = await open(t);
      const { topic } = names();
      const before = bus.stats();
      for (let i = 0; i < 50; i++) bus.publish({ topic, key: `k${i}`, value: encoder.encode(String(i)) });
      const { ms } = await timed(bus.flush(15_000));
      const stats = bus.stats();
      assert.equal(stats.buffered, 0);
      assert.equal(stats.published - before.published, 50);
      assert.equal(stats.dropped, 0);
      assert.ok(ms < 15_000, 'flush resolved before its timeout');
    });

    test('check() passes against a reachable backend', async (t) => {
      const bus = await open(t);
      await bus.check();
    });

    test('close() accepts what was published, stops deliveries and resolves promptly', async () => {
      const bus = await f.create();
      const { topic, group } = names();
      const r = recorder();
      await bus.subscribe({
        groupId: group('close'),
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      bus.publish({ topic, key: 'k', value: encoder.encode('delivered') });
      await eventually(() => assert.deepEqual(r.values(), ['delivered']), within());
      bus.publish({ topic, key: 'k', value: encoder.encode('last') });
      const { ms } = await timed(bus.close());
      assert.ok(ms < 15_000, `close() took ${Math.round(ms)} ms`);
      assert.equal(bus.stats().buffered, 0, 'nothing was left behind in the buffer');
      assert.equal(bus.stats().published, 2);
      const handledAtClose = r.values().length;
      bus.publish({ topic, key: 'k', value: encoder.encode('after-close') });
      await sleep(500);
      assert.equal(r.values().length, handledAtClose, 'no handler runs after close()');
      assert.ok(!r.values().includes('after-close'));
    });
  });
}

eventBusContract('MemoryEventBus', () => ({
  create: async () => new MemoryEventBus(),
  deliveryTimeoutMs: 5_000,
}));

describe('MemoryEventBus with a journal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-contract-journal-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  eventBusContract('MemoryEventBus with a journal', () => ({
    create: async () =>
      new MemoryEventBus({ journal: EventJournal.open(join(dir, `${uniqueSuffix()}.journal`)) }),
    deliveryTimeoutMs: 5_000,
  }));
});

describe('KafkaEventBus (real broker)', () => {
  let brokers: string[] = [];
  const prefix = `contract.${uniqueSuffix()}.`;

  before(() => {
    brokers = requireServiceEnv('KAFKA_BROKERS').split(',');
  });

  after(async () => {
    if (brokers.length === 0) return;
    // Remove this run's consumer groups and topics from the shared broker. A group the broker
    // already dropped (its members left, its topic went) is fine.
    const admin = new Kafka({ clientId: 'contract-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const groups = (await admin.listGroups()).groups
        .map((g) => g.groupId)
        .filter((g) => g.startsWith(prefix));
      for (const group of groups) {
        await admin.deleteGroups([group]).catch((err: { groups?: Array<{ error?: { type?: string } }> }) => {
          if (!err.groups?.every((g) => g.error?.type === 'GROUP_ID_NOT_FOUND')) throw err;
        });
      }
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
      if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
    } finally {
      await admin.disconnect();
    }
  });

  eventBusContract('KafkaEventBus', () => ({
    create: async () => {
      const bus = new KafkaEventBus({
        brokers,
        clientId: 'switchyard-contract',
        logger: captureLogger('kafka-contract').logger,
        topicPrefix: prefix,
      });
      // The broker is shared with other suites that may restart it; start each test on a live one.
      await eventually(() => bus.check(), { timeoutMs: 60_000, intervalMs: 500 });
      return bus;
    },
    deliveryTimeoutMs: 30_000,
  }));

  test('topics are created with the partitions asked for, and batches of two partitions are handled at once', async (t) => {
    const bus = new KafkaEventBus({
      brokers,
      clientId: 'switchyard-contract',
      logger: captureLogger('kafka-partitions').logger,
      topicPrefix: prefix,
      topicPartitions: 3,
    });
    await eventually(() => bus.check(), { timeoutMs: 60_000, intervalMs: 500 });
    t.after(() => bus.close());
    const topic = `partitioned-${uniqueSuffix()}`;
    // Keys that land on different partitions, several events each.
    for (let i = 0; i < 60; i++) bus.publish({ topic, key: `key-${i % 6}`, value: encoder.encode(`e${i}`) });
    await bus.flush();
    const admin = new Kafka({ clientId: 'contract-partitions', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const metadata = await admin.fetchTopicMetadata({ topics: [prefix + topic] });
      assert.equal(metadata.topics[0]?.partitions.length, 3);
    } finally {
      await admin.disconnect();
    }
    // Each batch takes a while, so that batches of two partitions overlap when handled at once.
    let inFlight = 0;
    let mostInFlight = 0;
    const seen: string[] = [];
    const subscription = await bus.subscribeBatches({
      groupId: `group-partitioned-${uniqueSuffix()}`,
      topics: [topic],
      fromBeginning: true,
      maxMessages: 5,
      concurrency: 2,
      handler: async (messages) => {
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        await sleep(300);
        seen.push(...messages.map(text));
        inFlight--;
      },
    });
    t.after(() => subscription.stop());
    await eventually(() => assert.equal(seen.length, 60), { timeoutMs: 60_000, intervalMs: 50 });
    assert.equal(new Set(seen).size, 60);
    assert.equal(mostInFlight, 2);
  });

  describe('packing and size limits', () => {
    async function kafkaBus(
      t: TestContext,
      options: Partial<ConstructorParameters<typeof KafkaEventBus>[0]> = {},
    ) {
      const capture = captureLogger('kafka-packing');
      const bus = new KafkaEventBus({
        brokers,
        clientId: 'switchyard-contract',
        logger: capture.logger,
        topicPrefix: prefix,
        ...options,
      });
      await eventually(() => bus.check(), { timeoutMs: 60_000, intervalMs: 500 });
      t.after(() => bus.close());
      return { bus, capture };
    }
    const within = { timeoutMs: 30_000, intervalMs: 25 };

    test('events of one key published together travel packed and reach the subscriber one by one, in order', async (t) => {
      const { bus } = await kafkaBus(t, { packing: { maxPackBytes: 2_000, maxPackMessages: 50 } });
      const topic = `packed-${uniqueSuffix()}`;
      const r = recorder();
      const subscription = await bus.subscribe({
        groupId: `group-packed-${uniqueSuffix()}`,
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      t.after(() => subscription.stop());
      const sent = Array.from({ length: 120 }, (_, i) => `event ${i} ${'x'.repeat(i)}`);
      for (const value of sent) bus.publish({ topic, key: 'workspace-1', value: encoder.encode(value) });
      await bus.flush();
      await eventually(() => assert.equal(r.seen.length, sent.length), within);
      assert.deepEqual(r.values(), sent);
      assert.ok(r.seen.every((m) => m.key === 'workspace-1' && m.topic === topic));
      // Packed: the 120 events took far fewer records (offsets) than events.
      const offsets = new Set(r.seen.map((m) => m.offset));
      assert.ok(offsets.size > 1 && offsets.size < 30, `${offsets.size} records`);
      assert.equal(bus.stats().published, 120);
    });

    test('a batch the broker stored but whose answer was lost is sent again as it was: what was published meanwhile is neither lost nor doubled', async (t) => {
      const { bus } = await kafkaBus(t);
      const topic = `lost-answer-${uniqueSuffix()}`;
      const Broker = createRequire(import.meta.url)('kafkajs/src/broker/index.js') as {
        prototype: { produce(request: { topicData: Array<{ topic: string }> }): Promise<unknown> };
      };
      const produce = Broker.prototype.produce;
      t.after(() => {
        Broker.prototype.produce = produce;
      });
      const publish = (from: number, to: number) => {
        for (let i = from; i < to; i++)
          bus.publish({ topic, key: 'workspace-1', value: encoder.encode(`e${i}`) });
      };
      let answersLost = 0;
      // The broker stores the first batch of the topic, then the connection drops before its answer
      // arrives (as when the broker is killed); more events are published before it is sent again.
      Broker.prototype.produce = async function (this: unknown, request) {
        const response = await produce.call(this, request);
        if (answersLost === 0 && request.topicData.some((d) => d.topic === prefix + topic)) {
          answersLost++;
          publish(5, 15);
          throw new Error('connection closed before the answer');
        }
        return response;
      };
      publish(0, 5);
      await eventually(() => assert.equal(bus.stats().published, 15), within);
      assert.equal(answersLost, 1);

      const r = recorder();
      const subscription = await bus.subscribe({
        groupId: `group-lost-answer-${uniqueSuffix()}`,
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      t.after(() => subscription.stop());
      await eventually(() => assert.ok(r.seen.length >= 15, `${r.seen.length} of 15 events`), within);
      assert.deepEqual(
        r.values(),
        Array.from({ length: 15 }, (_, i) => `e${i}`),
      );
    });

    test('packed events each keep their trace context on the way through the broker', async (t) => {
      const { bus } = await kafkaBus(t, { packing: { maxPackBytes: 4_000, maxPackMessages: 50 } });
      const topic = `packed-traced-${uniqueSuffix()}`;
      const batched: BusMessage[] = [];
      const subscription = await bus.subscribeBatches({
        groupId: `group-packed-traced-${uniqueSuffix()}`,
        topics: [topic],
        fromBeginning: true,
        maxMessages: 100,
        handler: async (messages) => void batched.push(...messages),
      });
      t.after(() => subscription.stop());
      const traceContextOf = (i: number) =>
        i % 3 === 2
          ? undefined
          : {
              traceparent: `00-${String(i + 1).padStart(32, 'c')}-${String(i + 1).padStart(16, 'd')}-01`,
              ...(i % 3 === 1 ? { tracestate: `vendor=${i},other=x` } : {}),
            };
      for (let i = 0; i < 60; i++) {
        const traceContext = traceContextOf(i);
        bus.publish({
          topic,
          key: 'workspace-1',
          value: encoder.encode(`e${i}`),
          ...(traceContext ? { traceContext } : {}),
        });
      }
      await bus.flush();
      await eventually(() => assert.equal(batched.length, 60), within);
      assert.deepEqual(
        batched.map((m) => ({ value: text(m), traceContext: m.traceContext })),
        Array.from({ length: 60 }, (_, i) => ({ value: `e${i}`, traceContext: traceContextOf(i) })),
      );
      const offsets = new Set(batched.map((m) => m.offset));
      assert.ok(offsets.size < 10, `packed: ${offsets.size} records`);
    });

    test('a pack from an earlier release (no trace header) is read whole; a foreign record keeps its traceparent header', async (t) => {
      const { bus } = await kafkaBus(t);
      const topic = `earlier-${uniqueSuffix()}`;
      const r = recorder();
      const subscription = await bus.subscribe({
        groupId: `group-earlier-${uniqueSuffix()}`,
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      t.after(() => subscription.stop());
      const producer = new Kafka({
        clientId: 'contract-earlier',
        brokers,
        logLevel: logLevel.NOTHING,
      }).producer();
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await producer.connect();
      try {
        await producer.send({
          topic: prefix + topic,
          messages: [
            {
              key: 'k',
              value: Buffer.from([0, 0, 0, 2, 101, 49, 0, 0, 0, 2, 101, 50]),
              headers: { 'switchyard-pack': '1' },
            },
            { key: 'k', value: Buffer.from('traced elsewhere'), headers: { traceparent, tracestate: 'x=1' } },
          ],
        });
      } finally {
        await producer.disconnect();
      }
      await eventually(() => assert.equal(r.seen.length, 3), within);
      assert.deepEqual(
        r.seen.map((m) => ({ value: text(m), traceContext: m.traceContext })),
        [
          { value: 'e1', traceContext: undefined },
          { value: 'e2', traceContext: undefined },
          { value: 'traced elsewhere', traceContext: { traceparent, tracestate: 'x=1' } },
        ],
      );
    });

    test('an event larger than the broker accepts is dropped when published and holds up nothing after it', async (t) => {
      const { bus, capture } = await kafkaBus(t, { maxMessageBytes: 10_000 });
      const topic = `sized-${uniqueSuffix()}`;
      const r = recorder();
      const subscription = await bus.subscribe({
        groupId: `group-sized-${uniqueSuffix()}`,
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      t.after(() => subscription.stop());
      bus.publish({ topic, key: 'k', value: encoder.encode('before') });
      bus.publish({ topic, key: 'k', value: new Uint8Array(10_001) });
      bus.publish({ topic, key: 'k', value: encoder.encode('after') });
      await eventually(() => assert.deepEqual(r.values(), ['before', 'after']), within);
      assert.equal(bus.stats().dropped, 1);
      assert.match(capture.text(), /larger than the broker accepts/);
    });

    test('a record another producer wrote without the pack header is one event; an unknown pack format is skipped', async (t) => {
      const { bus, capture } = await kafkaBus(t);
      const topic = `foreign-${uniqueSuffix()}`;
      const r = recorder();
      const subscription = await bus.subscribe({
        groupId: `group-foreign-${uniqueSuffix()}`,
        topics: [topic],
        fromBeginning: true,
        handler: r.handler,
      });
      t.after(() => subscription.stop());
      const producer = new Kafka({
        clientId: 'contract-foreign',
        brokers,
        logLevel: logLevel.NOTHING,
      }).producer();
      await producer.connect();
      try {
        await producer.send({
          topic: prefix + topic,
          messages: [
            { key: 'k', value: Buffer.from([0, 0, 0, 1, 65]) },
            { key: 'k', value: Buffer.from('from a later release'), headers: { 'switchyard-pack': '9' } },
            { key: 'k', value: Buffer.from('last') },
          ],
        });
      } finally {
        await producer.disconnect();
      }
      await eventually(() => assert.equal(r.seen.length, 2), within);
      assert.deepEqual(r.seen[0]!.value, Buffer.from([0, 0, 0, 1, 65]));
      assert.equal(text(r.seen[1]!), 'last');
      await eventually(() => assert.match(capture.text(), /unreadable packed record/), within);
    });
  });
});
