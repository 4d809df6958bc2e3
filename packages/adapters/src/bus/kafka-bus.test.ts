import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Partitioners, type PartitionerArgs } from 'kafkajs';
import { captureLogger } from '@switchyard/core/testing';
import { KafkaEventBus, rememberingPartitioner, type KafkaBusOptions } from './kafka-bus.ts';

function args(topic: string, partitions: number, key: string | null, partition?: number): PartitionerArgs {
  return {
    topic,
    partitionMetadata: Array.from({ length: partitions }, (_, i) => ({
      partitionErrorCode: 0,
      partitionId: i,
      leader: 0,
      replicas: [0],
      isr: [0],
    })),
    message: { key, value: 'v', ...(partition === undefined ? {} : { partition }) },
  };
}

describe('rememberingPartitioner', () => {
  test("chooses the default partitioner's partition for every key, also once remembered", () => {
    const reference = Partitioners.DefaultPartitioner();
    const remembering = rememberingPartitioner();
    for (const partitions of [1, 3, 12]) {
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 50; i++) {
          const key = `workspace-${i}`;
          assert.equal(remembering(args('logs', partitions, key)), reference(args('logs', partitions, key)));
        }
      }
    }
  });

  test('an explicit partition wins, and keyless messages are spread as before', () => {
    const remembering = rememberingPartitioner();
    assert.equal(remembering(args('logs', 6, 'k', 4)), 4);
    const chosen = new Set(Array.from({ length: 12 }, () => remembering(args('logs', 3, null))));
    assert.equal(chosen.size, 3);
  });
});

describe('stopIdleRequestQueueLoop', () => {
  test("kafkajs's request queue no longer re-arms its check timer when idle, and still does when it has work", async () => {
    const { createRequire } = await import('node:module');
    const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as new (
      options: Record<string, unknown>,
    ) => {
      pending: unknown[];
      throttledUntil: number;
      throttleCheckTimeoutId: NodeJS.Timeout | null;
      scheduleCheckPendingRequests(): void;
      destroy(): void;
    };
    const { stopIdleRequestQueueLoop } = await import('./kafka-bus.ts');
    stopIdleRequestQueueLoop();
    stopIdleRequestQueueLoop(); // idempotent
    const noop = () => undefined;
    const queue = new RequestQueue({
      maxInFlightRequests: 1,
      requestTimeout: 1_000,
      enforceRequestTimeout: false,
      clientId: 'test',
      broker: 'localhost:9092',
      logger: { debug: noop, info: noop, warn: noop, error: noop },
      isConnected: () => true,
    });
    try {
      queue.scheduleCheckPendingRequests();
      assert.equal(queue.throttleCheckTimeoutId ?? null, null, 'idle: no timer');
      queue.throttledUntil = Date.now() + 1_000;
      queue.scheduleCheckPendingRequests();
      assert.notEqual(queue.throttleCheckTimeoutId ?? null, null, 'throttled: a timer');
      clearTimeout(queue.throttleCheckTimeoutId!);
      queue.throttleCheckTimeoutId = null;
      queue.throttledUntil = -1;
      queue.pending.push({});
      queue.scheduleCheckPendingRequests();
      assert.notEqual(queue.throttleCheckTimeoutId ?? null, null, 'pending: a timer');
      clearTimeout(queue.throttleCheckTimeoutId!);
      queue.throttleCheckTimeoutId = null;
      queue.pending.length = 0;
    } finally {
      queue.destroy();
    }
  });
});

describe('the in-memory bound (maxBuffered)', () => {
  // Nothing listens on port 1: the broker stays away, so every event waits.
  function awayBus(t: TestContext, options: Partial<KafkaBusOptions>) {
    const bus = new KafkaEventBus({
      brokers: ['127.0.0.1:1'],
      clientId: 'switchyard-bound',
      logger: captureLogger('kafka-bound').logger,
      ...options,
    });
    t.after(() => bus.close(0));
    const publish = (count: number) => {
      for (let i = 0; i < count; i++) {
        bus.publish({ topic: 'logs', key: 'workspace-1', value: new TextEncoder().encode(`event ${i}`) });
      }
    };
    return { bus, publish };
  }

  test('holds at most maxBuffered events in memory and spills the rest to the spill folder', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kafka-bound-'));
    const { bus, publish } = awayBus(t, { maxBuffered: 3, spill: { dir } });
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    publish(5);
    const stats = bus.stats();
    assert.equal(stats.buffered, 3);
    assert.equal(stats.spilled, 2);
    assert.equal(stats.dropped, 0);
    assert.ok(statSync(join(dir, 'switchyard-bound.spill')).size > 0, 'the spill file holds the two');
  });

  test('without a spill folder, drops what is past maxBuffered and counts it', (t) => {
    const { bus, publish } = awayBus(t, { maxBuffered: 3 });
    publish(5);
    const stats = bus.stats();
    assert.equal(stats.buffered, 3);
    assert.equal(stats.spilled, 0);
    assert.equal(stats.dropped, 2);
  });
});
