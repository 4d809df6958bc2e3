import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryEventBus } from './memory-bus.ts';

const message = (i: number) => ({ topic: 't', key: 'k', value: Buffer.from(String(i)) });

test('messages every active group has handled are dropped, so memory does not grow with traffic', async () => {
  const bus = new MemoryEventBus();
  let handled = 0;
  await bus.subscribe({
    groupId: 'a',
    topics: ['t'],
    fromBeginning: true,
    handler: async () => void handled++,
  });
  for (let i = 0; i < 20_000; i++) {
    bus.publish(message(i));
    if (i % 500 === 0) await bus.flush();
  }
  await bus.flush();
  assert.equal(handled, 20_000);
  assert.ok(bus.retained('t') < 2_048, `retained ${bus.retained('t')}`);
  await bus.close();
});

test('a slow group keeps what it has not handled yet', async () => {
  const bus = new MemoryEventBus();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen: string[] = [];
  await bus.subscribe({ groupId: 'fast', topics: ['t'], fromBeginning: true, handler: async () => {} });
  await bus.subscribe({
    groupId: 'slow',
    topics: ['t'],
    fromBeginning: true,
    handler: async (m) => {
      await gate;
      seen.push(Buffer.from(m.value).toString());
    },
  });
  for (let i = 0; i < 5_000; i++) bus.publish(message(i));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(bus.retained('t') >= 4_999);
  release();
  await bus.flush();
  assert.equal(seen.length, 5_000);
  assert.equal(seen[4_999], '4999');
  await bus.close();
});

test('a topic nobody consumes keeps only the newest messages, and a late reader from the beginning gets those', async () => {
  const bus = new MemoryEventBus();
  for (let i = 0; i < 12_000; i++) bus.publish(message(i));
  assert.ok(bus.retained('t') <= 10_000 + 1_024);
  const seen: string[] = [];
  await bus.subscribe({
    groupId: 'late',
    topics: ['t'],
    fromBeginning: true,
    handler: async (m) => void seen.push(Buffer.from(m.value).toString()),
  });
  await bus.flush();
  assert.equal(seen.at(-1), '11999');
  assert.ok(seen.length >= 10_000);
  assert.equal(Number(seen[0]), 12_000 - seen.length);
  await bus.close();
});
