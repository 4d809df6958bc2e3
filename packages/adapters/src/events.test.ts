import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromBinary } from '@bufbuild/protobuf';
import { events } from '@switchyard/proto';
import { MemoryEventBus } from './bus/memory-bus.ts';
import { Topics, publishChange, publishEvent, subscribeEvents } from './events.ts';
import { captureLogger, eventually, settleLogs } from '@switchyard/core/testing';

describe('typed events', () => {
  test('an event published with its schema arrives decoded, keyed as published', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const received: Array<{ event: events.UsageEvent; key: string }> = [];
    await subscribeEvents(bus, captureLogger().logger, {
      groupId: 'usage-test',
      topic: Topics.usage,
      schema: events.UsageEventSchema,
      handler: async (event, message) => {
        received.push({ event, key: message.key });
      },
    });
    publishEvent(bus, Topics.usage, events.UsageEventSchema, 'key-1', {
      id: 'u1',
      apiKeyId: 'key-1',
      model: 'gpt-4o',
      usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 },
      cost: 0.25,
      occurredAtMs: '1763700000000',
    });
    await eventually(() => assert.equal(received.length, 1));
    const { event, key } = received[0]!;
    assert.equal(key, 'key-1');
    assert.equal(event.id, 'u1');
    assert.equal(event.model, 'gpt-4o');
    assert.equal(event.usage?.totalTokens, 7);
    assert.equal(event.cost, 0.25);
    assert.equal(event.occurredAtMs, '1763700000000');
  });

  test('an undecodable message is logged and skipped, and later events still arrive', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const log = captureLogger();
    const ids: string[] = [];
    await subscribeEvents(bus, log.logger, {
      groupId: 'skip-test',
      topic: Topics.changes,
      schema: events.ChangeEventSchema,
      handler: async (event) => {
        ids.push(event.id);
      },
    });
    bus.publish({ topic: Topics.changes, key: 'x', value: new Uint8Array([0xff, 0xff, 0xff, 0xff]) });
    publishChange(bus, { id: 'c1', entity: 'api_key', entityId: 'k1' });
    await eventually(() => assert.deepEqual(ids, ['c1']));
    await settleLogs();
    const line = log.lines().find((l) => l.message === 'skipping undecodable event');
    assert.ok(line);
    assert.equal(line.topic, Topics.changes);
    assert.equal(line.offset, '0');
  });

  test('publishChange keys the event by entity id and stamps the time', async (t) => {
    const bus = new MemoryEventBus();
    t.after(() => bus.close());
    const before = Date.now();
    publishChange(bus, {
      id: 'c1',
      entity: 'integration',
      entityId: 'int-9',
      action: events.ChangeAction.UPDATED,
    });
    const [message] = bus.log(Topics.changes);
    assert.ok(message);
    assert.equal(message.key, 'int-9');
    const change = fromBinary(events.ChangeEventSchema, message.value);
    assert.equal(change.action, events.ChangeAction.UPDATED);
    assert.ok(Number(change.occurredAtMs) >= before && Number(change.occurredAtMs) <= Date.now());
  });
});
