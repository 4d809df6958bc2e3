import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutgoingMessage } from './event-bus.ts';
import { PublishBuffer, type PublishBufferOptions } from './publish-buffer.ts';
import { SpillFile } from './spill-file.ts';
import { deferred, eventually, sleep, timed } from '@switchyard/core/testing';

function message(n: number, topic = 'events'): OutgoingMessage {
  return { topic, key: `k${n % 3}`, value: new TextEncoder().encode(String(n)) };
}

const numbers = (messages: OutgoingMessage[]) =>
  messages.map((m) => Number(new TextDecoder().decode(m.value)));

interface Harness {
  buffer: PublishBuffer;
  /** Every batch handed to send, including attempts that failed. */
  attempts: Array<{ at: number; batch: number[]; ok: boolean }>;
  /** What the broker accepted, in order. */
  delivered: number[];
  errors: Array<{ attempt: number; message: string }>;
  dropped: number[];
}

/**
 * A buffer in front of a fake broker. `outcome` decides each send: resolve to accept the
 * batch, throw to refuse it, or wait to hold it in flight.
 */
function harness(
  t: TestContext,
  outcome: (batch: number[], attempt: number) => Promise<void> | void,
  options: Partial<PublishBufferOptions> = {},
): Harness {
  const h: Omit<Harness, 'buffer'> = { attempts: [], delivered: [], errors: [], dropped: [] };
  const buffer = new PublishBuffer({
    send: async (batch) => {
      const values = numbers(batch);
      const record = { at: performance.now(), batch: values, ok: false };
      h.attempts.push(record);
      await outcome(values, h.attempts.length);
      record.ok = true;
      h.delivered.push(...values);
    },
    onError: (err, attempt) =>
      h.errors.push({ attempt, message: err instanceof Error ? err.message : String(err) }),
    onDrop: (m) => h.dropped.push(...numbers([m])),
    ...options,
  });
  t.after(() => buffer.close(0));
  return { ...h, buffer };
}

describe('PublishBuffer', () => {
  test('sends messages pushed within the linger time as one batch', async (t) => {
    const h = harness(t, () => {}, { lingerMs: 30 });
    for (let i = 0; i < 5; i++) h.buffer.push(message(i));
    assert.equal(h.attempts.length, 0, 'nothing is sent synchronously');
    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2, 3, 4]));
    assert.deepEqual(
      h.attempts.map((a) => a.batch),
      [[0, 1, 2, 3, 4]],
    );
  });

  test('splits a backlog into batches of at most maxBatch, in order', async (t) => {
    const h = harness(t, () => {}, { maxBatch: 3, lingerMs: 20 });
    for (let i = 0; i < 8; i++) h.buffer.push(message(i));
    await eventually(() => assert.equal(h.delivered.length, 8));
    assert.deepEqual(
      h.attempts.map((a) => a.batch),
      [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7],
      ],
    );
    assert.deepEqual(h.buffer.stats(), {
      buffered: 0,
      spilled: 0,
      published: 8,
      dropped: 0,
      failedAttempts: 0,
    });
  });

  test('messages pushed while a batch is in flight follow in a later batch', async (t) => {
    const gate = deferred();
    const h = harness(t, (_batch, attempt) => (attempt === 1 ? gate.promise : undefined), { lingerMs: 1 });
    h.buffer.push(message(0));
    await eventually(() => assert.equal(h.attempts.length, 1));
    h.buffer.push(message(1));
    h.buffer.push(message(2));
    await sleep(20);
    assert.equal(h.attempts.length, 1, 'one batch at a time');
    gate.resolve();
    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2]));
    assert.deepEqual(
      h.attempts.map((a) => a.batch),
      [[0], [1, 2]],
    );
  });

  test('messages pushed while a batch is in flight wait for the linger, not only for the broker', async (t) => {
    const gate = deferred();
    const h = harness(t, (_batch, attempt) => (attempt === 1 ? gate.promise : undefined), {
      lingerMs: 200,
    });
    h.buffer.push(message(0));
    await eventually(() => assert.equal(h.attempts.length, 1));
    h.buffer.push(message(1));
    gate.resolve();
    await sleep(20);
    assert.equal(h.attempts.length, 1, 'the next batch lingers after the broker answered');
    h.buffer.push(message(2));
    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2]));
    assert.deepEqual(
      h.attempts.map((a) => a.batch),
      [[0], [1, 2]],
      'a steady trickle goes in one batch per linger',
    );
  });

  test('retries a failed send with growing backoff, losing and reordering nothing', async (t) => {
    const h = harness(
      t,
      (_batch, attempt) => {
        if (attempt <= 3) throw new Error(`broker away (${attempt})`);
      },
      { lingerMs: 1, maxBatch: 2 },
    );
    h.buffer.push(message(0));
    h.buffer.push(message(1));
    await eventually(() => assert.equal(h.attempts.length, 2));
    h.buffer.push(message(2)); // pushed during the outage
    h.buffer.push(message(3));
    h.buffer.push(message(4));

    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2, 3, 4]), { timeoutMs: 5_000 });
    assert.deepEqual(
      h.attempts.map((a) => a.batch),
      [[0, 1], [0, 1], [0, 1], [0, 1], [2, 3], [4]],
      'the failed batch is retried as it was, then the rest follows in order',
    );
    assert.deepEqual(
      h.errors.map((e) => e.attempt),
      [1, 2, 3],
    );
    assert.equal(h.errors[0]!.message, 'broker away (1)');
    const gaps = [1, 2, 3].map((i) => h.attempts[i]!.at - h.attempts[i - 1]!.at);
    assert.ok(gaps[0]! >= 90, `first retry after ${gaps[0]} ms, expected about 100`);
    assert.ok(gaps[1]! >= 190, `second retry after ${gaps[1]} ms, expected about 200`);
    assert.ok(gaps[2]! >= 390, `third retry after ${gaps[2]} ms, expected about 400`);
    assert.ok(gaps[2]! > gaps[0]!, 'the backoff grows');
    assert.deepEqual(h.buffer.stats(), {
      buffered: 0,
      spilled: 0,
      published: 5,
      dropped: 0,
      failedAttempts: 3,
    });
  });

  test('a failed batch is retried as it was; messages pushed during the outage wait for the next batch', async (t) => {
    // The broker may have stored a batch whose answer was lost; the idempotent producer's retry
    // is recognised by its sequence numbers, so it must carry the same records, not more.
    const h = harness(
      t,
      (_batch, attempt) => {
        if (attempt <= 2) throw new Error('answer lost');
      },
      { lingerMs: 1, maxBatch: 10, retryDelayMs: () => 20 },
    );
    h.buffer.push(message(0));
    h.buffer.push(message(1));
    await eventually(() => assert.equal(h.attempts.length, 1));
    h.buffer.push(message(2));
    h.buffer.push(message(3));

    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2, 3]), { timeoutMs: 5_000 });
    assert.deepEqual(
      h.attempts.map((a) => a.batch),
      [
        [0, 1],
        [0, 1],
        [0, 1],
        [2, 3],
      ],
    );
  });

  test('counts buffered messages, including the batch in flight', async (t) => {
    const gate = deferred();
    const h = harness(t, () => gate.promise, { lingerMs: 1 });
    for (let i = 0; i < 4; i++) h.buffer.push(message(i));
    await eventually(() => assert.equal(h.attempts.length, 1));
    assert.equal(h.buffer.stats().buffered, 4);
    gate.resolve();
    await eventually(() => assert.equal(h.buffer.stats().buffered, 0));
    assert.equal(h.buffer.stats().published, 4);
  });

  test('drops new messages once the buffer is full and counts them', async (t) => {
    const broker = deferred();
    const h = harness(t, () => broker.promise, { maxBuffered: 3, lingerMs: 1 });
    for (let i = 0; i < 6; i++) h.buffer.push(message(i));
    assert.deepEqual(h.dropped, [3, 4, 5], 'the newest messages are the ones dropped');
    assert.deepEqual(h.buffer.stats(), {
      buffered: 3,
      spilled: 0,
      published: 0,
      dropped: 3,
      failedAttempts: 0,
    });

    broker.resolve();
    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2]));
    h.buffer.push(message(6));
    await eventually(() => assert.deepEqual(h.delivered, [0, 1, 2, 6]), { timeoutMs: 1_000 });
    assert.deepEqual(h.buffer.stats(), {
      buffered: 0,
      spilled: 0,
      published: 4,
      dropped: 3,
      failedAttempts: 0,
    });
  });

  test('keeps what it holds while the broker is away, up to maxBuffered', async (t) => {
    let brokerUp = false;
    const h = harness(
      t,
      () => {
        if (!brokerUp) throw new Error('broker away');
      },
      { maxBuffered: 5, lingerMs: 1 },
    );
    for (let i = 0; i < 7; i++) h.buffer.push(message(i));
    await sleep(150);
    assert.ok(h.errors.length >= 1);
    assert.deepEqual(h.dropped, [5, 6]);
    assert.equal(h.buffer.stats().buffered, 5);
    brokerUp = true;
    await h.buffer.flush(3_000);
    assert.deepEqual(h.delivered, [0, 1, 2, 3, 4]);
  });

  test('flush() resolves once everything pushed has been accepted', async (t) => {
    const h = harness(
      t,
      async () => {
        await sleep(40);
      },
      { lingerMs: 1_000, maxBatch: 2 },
    );
    for (let i = 0; i < 5; i++) h.buffer.push(message(i));
    const { ms } = await timed(h.buffer.flush(5_000));
    assert.deepEqual(h.delivered, [0, 1, 2, 3, 4], 'everything was accepted when flush resolved');
    assert.equal(h.buffer.stats().buffered, 0);
    assert.ok(ms < 1_000, `flush sent at once instead of waiting for the linger time (${Math.round(ms)} ms)`);
  });

  test('flush() waits through a retry and resolves when the retry succeeds', async (t) => {
    const h = harness(
      t,
      (_batch, attempt) => {
        if (attempt === 1) throw new Error('leader moved');
      },
      { lingerMs: 1 },
    );
    h.buffer.push(message(0));
    await h.buffer.flush(5_000);
    assert.deepEqual(h.delivered, [0]);
    assert.equal(h.buffer.stats().failedAttempts, 1);
  });

  test('flush() resolves at its timeout while the broker is away, keeping the messages', async (t) => {
    const h = harness(
      t,
      () => {
        throw new Error('broker away');
      },
      { lingerMs: 1 },
    );
    h.buffer.push(message(0));
    h.buffer.push(message(1));
    const { ms } = await timed(h.buffer.flush(250));
    assert.ok(ms >= 240 && ms < 1_000, `flush resolved after ${Math.round(ms)} ms`);
    assert.equal(h.buffer.stats().buffered, 2);
    assert.deepEqual(h.delivered, []);
  });

  test('flush() with nothing buffered resolves at once', async (t) => {
    const h = harness(t, () => {});
    const { ms } = await timed(h.buffer.flush(5_000));
    assert.ok(ms < 50);
  });

  test('close() flushes, then drops and counts anything pushed afterwards', async (t) => {
    const h = harness(t, () => {}, { lingerMs: 500 });
    h.buffer.push(message(0));
    await h.buffer.close(2_000);
    assert.deepEqual(h.delivered, [0]);
    h.buffer.push(message(1));
    assert.deepEqual(h.dropped, [1]);
    await sleep(20);
    assert.deepEqual(h.delivered, [0]);
    assert.deepEqual(h.buffer.stats(), {
      buffered: 0,
      spilled: 0,
      published: 1,
      dropped: 1,
      failedAttempts: 0,
    });
  });
});

describe('PublishBuffer with a spill file', () => {
  function tempDir(t: TestContext): string {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-spill-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** A broker that refuses every send until `up` is set; retries come at once. */
  function outage() {
    const broker = { up: false };
    const outcome = () => {
      if (!broker.up) throw new Error('broker away');
    };
    return { broker, outcome, options: { lingerMs: 1, retryDelayMs: () => 1 } };
  }

  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

  test('past maxBuffered, messages wait on disk while the broker is away and are all sent once, in order, when it returns', async (t) => {
    const spill = new SpillFile({ dir: tempDir(t) });
    const gate = deferred();
    let up = false;
    const h = harness(
      t,
      async () => {
        if (!up) throw new Error('broker away');
        await gate.promise;
      },
      { maxBuffered: 4, maxBatch: 2, lingerMs: 1, retryDelayMs: () => 1, spill },
    );
    for (let i = 0; i < 10; i++) h.buffer.push(message(i));
    assert.deepEqual(h.dropped, []);
    assert.deepEqual(h.buffer.stats(), {
      buffered: 4,
      spilled: 6,
      published: 0,
      dropped: 0,
      failedAttempts: 0,
    });
    await eventually(() => assert.ok(h.errors.length >= 2, 'the broker refused'));

    up = true;
    const refused = h.attempts.length;
    await eventually(() => assert.ok(h.attempts.length > refused, 'a send is in flight'));
    // The disk still holds older messages: new ones go after them, not ahead into memory.
    h.buffer.push(message(10));
    h.buffer.push(message(11));
    assert.equal(h.buffer.stats().spilled, 8);
    gate.resolve();
    await h.buffer.flush(5_000);

    assert.deepEqual(h.delivered, range(0, 12), 'every message, once, in order');
    assert.deepEqual(h.dropped, []);
    const { failedAttempts, ...stats } = h.buffer.stats();
    assert.deepEqual(stats, { buffered: 0, spilled: 0, published: 12, dropped: 0 });
    assert.equal(failedAttempts, h.errors.length);
    assert.equal(statSync(spill.path).size, 0, 'the file is emptied');

    h.buffer.push(message(12));
    assert.deepEqual(h.buffer.stats().spilled, 0, 'with the disk empty, messages wait in memory again');
    await h.buffer.flush(5_000);
    assert.deepEqual(h.delivered, range(0, 13));
  });

  test('past the spill bound, messages are dropped and counted', async (t) => {
    const dir = tempDir(t);
    const probe = new SpillFile({ dir: join(dir, 'probe') });
    probe.append(message(0));
    const recordBytes = probe.bytes();
    probe.close();

    const { broker, outcome, options } = outage();
    const spill = new SpillFile({ dir, maxBytes: 3 * recordBytes });
    const h = harness(t, outcome, { ...options, maxBuffered: 2, spill });
    for (let i = 0; i < 8; i++) h.buffer.push(message(i));
    assert.deepEqual(h.dropped, [5, 6, 7], 'the newest past both bounds are dropped');
    assert.deepEqual(h.buffer.stats(), {
      buffered: 2,
      spilled: 3,
      published: 0,
      dropped: 3,
      failedAttempts: 0,
    });

    broker.up = true;
    await h.buffer.flush(5_000);
    assert.deepEqual(h.delivered, [0, 1, 2, 3, 4]);
    const { failedAttempts: _, ...stats } = h.buffer.stats();
    assert.deepEqual(stats, { buffered: 0, spilled: 0, published: 5, dropped: 3 });
  });

  test('messages a previous process left on disk are sent on start, ahead of new ones', async (t) => {
    const dir = tempDir(t);
    const earlier = new SpillFile({ dir });
    for (let i = 0; i < 5; i++) earlier.append(message(i));
    earlier.close();

    const h = harness(t, () => {}, { maxBuffered: 3, lingerMs: 1, spill: new SpillFile({ dir }) });
    assert.deepEqual(h.buffer.stats(), {
      buffered: 3,
      spilled: 2,
      published: 0,
      dropped: 0,
      failedAttempts: 0,
    });
    h.buffer.push(message(5));
    await eventually(() => assert.deepEqual(h.delivered, range(0, 6)));
    assert.deepEqual(h.buffer.stats(), {
      buffered: 0,
      spilled: 0,
      published: 6,
      dropped: 0,
      failedAttempts: 0,
    });
  });

  test("each message's trace context reaches the broker with it, from memory, from disk, and from a previous process's disk", async (t) => {
    const traced = (n: number): OutgoingMessage => ({
      ...message(n),
      traceContext: {
        traceparent: `00-${String(n).padStart(32, '1')}-${String(n).padStart(16, '2')}-01`,
        ...(n % 2 === 0 ? { tracestate: `vendor=${n}` } : {}),
      },
    });
    const dir = tempDir(t);
    const earlier = new SpillFile({ dir });
    earlier.append(traced(0));
    earlier.append(message(1));
    earlier.close();

    const sent: OutgoingMessage[] = [];
    let up = false;
    const buffer = new PublishBuffer({
      send: async (batch) => {
        if (!up) throw new Error('broker away');
        sent.push(...batch);
      },
      onError: () => {},
      onDrop: () => assert.fail('nothing is dropped'),
      maxBuffered: 3,
      lingerMs: 1,
      retryDelayMs: () => 1,
      spill: new SpillFile({ dir }),
    });
    t.after(() => buffer.close(0));
    // Two already wait in memory (from the earlier file): one more in memory, the rest on disk.
    for (let i = 2; i < 7; i++) buffer.push(i === 4 ? message(i) : traced(i));
    assert.deepEqual(buffer.stats().spilled, 4);
    up = true;
    await buffer.flush(5_000);
    assert.deepEqual(sent, [traced(0), message(1), traced(2), traced(3), message(4), traced(5), traced(6)]);
  });

  test('a torn last record left by a killed process is skipped; the whole ones before it are sent', async (t) => {
    const dir = tempDir(t);
    const earlier = new SpillFile({ dir });
    for (let i = 0; i < 4; i++) earlier.append(message(i));
    earlier.close();
    truncateSync(earlier.path, earlier.bytes() - 2);

    const spill = new SpillFile({ dir });
    assert.ok(spill.skippedBytes > 0);
    const h = harness(t, () => {}, { lingerMs: 1, spill });
    await h.buffer.flush(5_000);
    assert.deepEqual(h.delivered, [0, 1, 2]);
    assert.deepEqual(h.buffer.stats(), {
      buffered: 0,
      spilled: 0,
      published: 3,
      dropped: 0,
      failedAttempts: 0,
    });
  });

  test('a spill folder that cannot be made: messages past maxBuffered are dropped and counted, push never throws', async (t) => {
    const file = join(tempDir(t), 'not-a-folder');
    writeFileSync(file, 'x');
    const spillErrors: unknown[] = [];
    const spill = new SpillFile({ dir: file, onError: (err) => spillErrors.push(err) });
    const { broker, outcome, options } = outage();
    const h = harness(t, outcome, { ...options, maxBuffered: 2, spill });
    for (let i = 0; i < 5; i++) h.buffer.push(message(i));
    assert.deepEqual(h.dropped, [2, 3, 4]);
    assert.deepEqual(h.buffer.stats(), {
      buffered: 2,
      spilled: 0,
      published: 0,
      dropped: 3,
      failedAttempts: 0,
    });
    assert.equal(spillErrors.length, 1, 'the failure is reported, once');

    broker.up = true;
    await h.buffer.flush(5_000);
    assert.deepEqual(h.delivered, [0, 1]);
  });

  test('a spill write that fails (a full disk) drops and counts the message, push never throws', async (t) => {
    const dir = tempDir(t);
    // Every write to /dev/full fails with ENOSPC.
    symlinkSync('/dev/full', join(dir, 'events.spill'));
    const spillErrors: string[] = [];
    const spill = new SpillFile({
      dir,
      onError: (err) => spillErrors.push(String((err as NodeJS.ErrnoException).code)),
    });
    const { broker, outcome, options } = outage();
    const h = harness(t, outcome, { ...options, maxBuffered: 2, spill });
    for (let i = 0; i < 6; i++) h.buffer.push(message(i));
    assert.deepEqual(h.dropped, [2, 3, 4, 5]);
    assert.deepEqual(h.buffer.stats(), {
      buffered: 2,
      spilled: 0,
      published: 0,
      dropped: 4,
      failedAttempts: 0,
    });
    assert.deepEqual(spillErrors, ['ENOSPC'], 'reported once for the four failures');

    broker.up = true;
    await h.buffer.flush(5_000);
    assert.deepEqual(h.delivered, [0, 1]);
  });
});
