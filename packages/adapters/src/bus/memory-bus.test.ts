import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { BusMessage } from './event-bus.ts';
import { EventJournal } from './event-journal.ts';
import { MemoryEventBus } from './memory-bus.ts';
import { eventually } from '@switchyard/core/testing';

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

describe('with a journal, after the process dies', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bus-journal-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;

  /** One life of the process: a bus on the journal file, abandoned without close() as a kill -9 would. */
  function lives(options: { compactAtBytes?: number } = {}) {
    const path = join(dir, `${++files}.journal`);
    return () => new MemoryEventBus({ journal: EventJournal.open(path, options) });
  }
  const text = (m: BusMessage) => Buffer.from(m.value).toString();
  const commitsWritten = () => new Promise((resolve) => setImmediate(resolve));

  test('what a group had not handled is delivered on the next start, and what it had handled is not', async () => {
    const start = lives();
    const first = start();
    const seen: string[] = [];
    await first.subscribe({
      groupId: 'log-export.audit',
      topics: ['t'],
      fromBeginning: true,
      handler: async (m) => {
        if (text(m) === '3') return new Promise(() => {}); // the process dies while this is handled
        seen.push(text(m));
      },
    });
    for (let i = 0; i < 6; i++) first.publish(message(i));
    await eventually(() => assert.deepEqual(seen, ['0', '1', '2']));
    await commitsWritten();

    const second = start();
    const after: BusMessage[] = [];
    await second.subscribe({
      groupId: 'log-export.audit',
      topics: ['t'],
      fromBeginning: true,
      handler: async (m) => void after.push(m),
    });
    await second.flush();
    assert.deepEqual(after.map(text), ['3', '4', '5']);
    assert.deepEqual(
      after.map((m) => m.offset),
      ['3', '4', '5'],
    );
    second.publish(message(6));
    await second.flush();
    assert.deepEqual(after.at(-1)?.offset, '6', 'offsets go on where they were');
    await second.close();
  });

  test('a group that had handled nothing yet, and did not read from the beginning, still gets what was published after it subscribed', async () => {
    const start = lives();
    const first = start();
    await first.subscribe({ groupId: 'g', topics: ['t'], handler: () => new Promise(() => {}) });
    first.publish(message(0));
    first.publish(message(1));

    const second = start();
    const seen: string[] = [];
    await second.subscribe({ groupId: 'g', topics: ['t'], handler: async (m) => void seen.push(text(m)) });
    await second.flush();
    assert.deepEqual(seen, ['0', '1']);
    await second.close();
  });

  test('a topic nobody consumed yet keeps its messages for the group that comes after the restart', async () => {
    const start = lives();
    const first = start();
    first.publish(message(0));
    const second = start();
    const seen: string[] = [];
    await second.subscribe({
      groupId: 'late',
      topics: ['t'],
      fromBeginning: true,
      handler: async (m) => void seen.push(text(m)),
    });
    await second.flush();
    assert.deepEqual(seen, ['0']);
    await second.close();
  });

  test("a message's trace context is delivered with it after a restart", async () => {
    const start = lives();
    const first = start();
    const traceContext = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=abc',
    };
    first.publish({ ...message(0), traceContext });
    first.publish(message(1));
    const second = start();
    const seen: BusMessage[] = [];
    await second.subscribe({
      groupId: 'late',
      topics: ['t'],
      fromBeginning: true,
      handler: async (m) => void seen.push(m),
    });
    await second.flush();
    assert.deepEqual(
      seen.map((m) => ({ value: text(m), traceContext: m.traceContext })),
      [
        { value: '0', traceContext },
        { value: '1', traceContext: undefined },
      ],
    );
    await second.close();
  });

  test('the journal stays small while groups keep up, and keeps what a slow group has not handled', async () => {
    const start = lives({ compactAtBytes: 16_384 });
    const first = start();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let fast = 0;
    await first.subscribe({
      groupId: 'fast',
      topics: ['t'],
      fromBeginning: true,
      handler: async () => void fast++,
    });
    await first.subscribe({ groupId: 'slow', topics: ['u'], fromBeginning: true, handler: () => gate });
    first.publish({ topic: 'u', key: 'k', value: Buffer.from('waiting') });
    for (let i = 0; i < 5_000; i++) {
      first.publish({ topic: 't', key: 'k', value: Buffer.alloc(100, i % 256) });
      if (i % 100 === 0) await eventually(() => assert.equal(fast, i + 1));
    }
    await eventually(() => assert.equal(fast, 5_000));
    await commitsWritten();
    const { size } = statSync(join(dir, `${files}.journal`));
    assert.ok(size < 64 * 1024, `the journal is ${size} bytes after 5,000 handled events of 100 bytes`);

    const second = start();
    const fastAgain: string[] = [];
    const slowAgain: string[] = [];
    await second.subscribe({
      groupId: 'fast',
      topics: ['t'],
      fromBeginning: true,
      handler: async (m) => void fastAgain.push(m.offset),
    });
    await second.subscribe({
      groupId: 'slow',
      topics: ['u'],
      fromBeginning: true,
      handler: async (m) => void slowAgain.push(text(m)),
    });
    second.publish(message(5_000));
    await second.flush();
    assert.deepEqual(fastAgain, ['5000']);
    assert.deepEqual(slowAgain, ['waiting']);
    release();
    await second.close();
    await first.close();
  });
});
