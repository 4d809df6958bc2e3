import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { OutgoingMessage } from './event-bus.ts';
import { frame } from './framing.ts';
import { SpillFile, type SpillFileOptions } from './spill-file.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-spill-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function open(t: TestContext, options: SpillFileOptions): SpillFile {
  const spill = new SpillFile(options);
  t.after(() => spill.close());
  return spill;
}

const message = (n: number): OutgoingMessage => ({
  topic: 'switchyard.request-log.v1',
  key: 'org-1/wörkspace',
  value: new TextEncoder().encode(`event ${n}`),
});
const texts = (messages: OutgoingMessage[]) => messages.map((m) => new TextDecoder().decode(m.value));

test('appended messages are read back in order, a part at a time, and the file is emptied once all is read', (t) => {
  const spill = open(t, { dir: join(tempDir(t), 'created') });
  // Larger than one read, so that a read is widened to hold it.
  const large = { topic: 't', key: 'k', value: new Uint8Array(1_500_000).fill(7) };
  const empty = { topic: 'other', key: '', value: new Uint8Array() };
  for (const m of [message(0), large, empty, message(1), message(2)]) assert.equal(spill.append(m), true);
  assert.equal(spill.count, 5);

  const first = spill.take(2);
  assert.deepEqual(first, { messages: [message(0), large], lost: 0 });
  assert.equal(spill.count, 3);
  assert.ok(statSync(spill.path).size > 1_500_000, 'nothing is removed before all of it is read');

  spill.append(message(3));
  assert.deepEqual(spill.take(10), { messages: [empty, message(1), message(2), message(3)], lost: 0 });
  assert.equal(spill.count, 0);
  assert.equal(statSync(spill.path).size, 0, 'emptied once everything was read back');
  assert.deepEqual(spill.take(10), { messages: [], lost: 0 });

  spill.append(message(4));
  assert.deepEqual(texts(spill.take(10).messages), ['event 4'], 'appends after emptying start afresh');
});

test('what one process appended and did not read back is there for the next, without a close', (t) => {
  const dir = tempDir(t);
  const earlier = new SpillFile({ dir });
  for (let i = 0; i < 4; i++) earlier.append(message(i));
  earlier.take(1);

  const next = open(t, { dir });
  assert.equal(next.recovered, 4, 'what was read back but perhaps not sent is sent again');
  assert.equal(next.count, 4);
  assert.equal(next.skippedBytes, 0);
  assert.deepEqual(texts(next.take(10).messages), ['event 0', 'event 1', 'event 2', 'event 3']);
  earlier.close();
});

test('a torn last record is dropped on open, and what is appended after it is read back', (t) => {
  const dir = tempDir(t);
  const earlier = new SpillFile({ dir });
  for (let i = 0; i < 3; i++) earlier.append(message(i));
  const whole = earlier.bytes();
  earlier.append(message(3));
  earlier.close();
  truncateSync(earlier.path, earlier.bytes() - 3);

  const next = open(t, { dir });
  assert.equal(next.recovered, 3);
  assert.equal(next.skippedBytes, earlier.bytes() - 3 - whole);
  assert.equal(statSync(next.path).size, whole, 'the torn record is cut off');
  next.append(message(4));
  assert.deepEqual(texts(next.take(10).messages), ['event 0', 'event 1', 'event 2', 'event 4']);
});

test('a message that would grow the file past maxBytes is refused; there is room again once it is emptied', (t) => {
  const dir = tempDir(t);
  const probe = open(t, { dir: join(dir, 'probe') });
  probe.append(message(0));
  const recordBytes = probe.bytes();

  const spill = open(t, { dir, maxBytes: 2 * recordBytes });
  assert.equal(spill.append(message(0)), true);
  assert.equal(spill.append(message(1)), true);
  assert.equal(spill.append(message(2)), false);
  assert.equal(spill.count, 2);
  assert.equal(spill.take(1).messages.length, 1);
  assert.equal(spill.append(message(3)), false, 'read back but not emptied: the file is as large');
  assert.deepEqual(texts(spill.take(10).messages), ['event 1']);
  assert.equal(spill.append(message(4)), true);
});

test('a folder that cannot be made: appends return false and the failure is reported, never thrown', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'not-a-folder');
  writeFileSync(file, 'x');
  const errors: Array<{ code: unknown; failures: number }> = [];
  const spill = open(t, {
    dir: join(file, 'spill'),
    onError: (err, failures) => errors.push({ code: (err as NodeJS.ErrnoException).code, failures }),
  });
  assert.equal(spill.recovered, 0);
  for (let i = 0; i < 3; i++) assert.equal(spill.append(message(i)), false);
  assert.equal(spill.count, 0);
  assert.deepEqual(spill.take(10), { messages: [], lost: 0 });
  assert.deepEqual(errors, [{ code: 'ENOTDIR', failures: 1 }], 'reported once, not once per message');
});

test('a write that fails is reported with how many failed since the last report', (t) => {
  const dir = tempDir(t);
  // Every write to /dev/full fails with ENOSPC, as on a full disk.
  symlinkSync('/dev/full', join(dir, 'events.spill'));
  const errors: Array<{ code: unknown; failures: number }> = [];
  const report = (err: unknown, failures: number) =>
    errors.push({ code: (err as NodeJS.ErrnoException).code, failures });

  const spill = open(t, { dir, onError: report, reportEveryMs: 0 });
  assert.equal(spill.append(message(0)), false);
  assert.equal(spill.append(message(1)), false);
  assert.deepEqual(errors, [
    { code: 'ENOSPC', failures: 1 },
    { code: 'ENOSPC', failures: 1 },
  ]);
  assert.equal(spill.count, 0);

  errors.length = 0;
  const quiet = open(t, { dir, onError: report, reportEveryMs: 3_600_000 });
  for (let i = 0; i < 5; i++) assert.equal(quiet.append(message(i)), false);
  assert.deepEqual(errors, [{ code: 'ENOSPC', failures: 1 }], 'later failures wait for the next report');
});

const traceContext = {
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  tracestate: 'vendor=abc',
};

test("a message's trace context is kept on disk with it, and read back by this process and the next", (t) => {
  const dir = tempDir(t);
  const earlier = new SpillFile({ dir });
  const traced = { ...message(0), traceContext };
  const onlyParent = { ...message(1), traceContext: { traceparent: traceContext.traceparent } };
  for (const m of [traced, message(2), onlyParent]) assert.equal(earlier.append(m), true);
  assert.deepEqual(earlier.take(1).messages, [traced]);
  earlier.close();

  const next = open(t, { dir });
  assert.equal(next.recovered, 3);
  assert.deepEqual(next.take(10).messages, [traced, message(2), onlyParent]);
});

test('a file written before trace contexts were kept is read as messages without one', (t) => {
  const dir = tempDir(t);
  // The earlier release's record: topic length (2) | topic | key length (4) | key | value.
  const earlierRecord = (topic: string, key: string, value: string) =>
    frame(2 + topic.length + 4 + key.length + value.length, (buffer, at) => {
      at = buffer.writeUInt16LE(topic.length, at);
      at += buffer.write(topic, at);
      at = buffer.writeUInt32LE(key.length, at);
      at += buffer.write(key, at);
      buffer.write(value, at);
    });
  writeFileSync(
    join(dir, 'events.spill'),
    Buffer.concat([earlierRecord('logs', 'w1', 'first'), earlierRecord('logs', 'w2', 'second')]),
  );
  const spill = open(t, { dir });
  assert.equal(spill.recovered, 2);
  spill.append({ ...message(3), traceContext });
  const { messages } = spill.take(10);
  assert.deepEqual(messages.slice(0, 2), [
    { topic: 'logs', key: 'w1', value: new TextEncoder().encode('first') },
    { topic: 'logs', key: 'w2', value: new TextEncoder().encode('second') },
  ]);
  assert.deepEqual(messages[2], { ...message(3), traceContext });
});
