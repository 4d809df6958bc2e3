import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { EventJournal, type JournalMessage } from './event-journal.ts';
import { frame } from './framing.ts';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `${++files}.journal`);

const message = (offset: number, text = `event ${offset}`): JournalMessage => ({
  topic: 'switchyard.audit.v1',
  offset,
  key: 'org-1/wörkspace',
  value: new TextEncoder().encode(text),
});
const texts = (messages: JournalMessage[]) => messages.map((m) => new TextDecoder().decode(m.value));

test('what was appended and committed is there when the file is opened again, without a close', () => {
  const path = freshPath();
  const journal = EventJournal.open(path);
  journal.append(message(0));
  journal.append({ ...message(1), value: new Uint8Array([0, 255, 1]) });
  journal.append({ topic: 'other', offset: 0, key: '', value: new Uint8Array() });
  journal.commit({ groupId: 'log-export.audit', topic: 'switchyard.audit.v1', offset: 1 });
  journal.flushCommits();

  const reopened = EventJournal.open(path);
  const recovered = reopened.takeRecovered();
  assert.deepEqual(recovered.messages, [
    message(0),
    { ...message(1), value: new Uint8Array([0, 255, 1]) },
    { topic: 'other', offset: 0, key: '', value: new Uint8Array() },
  ]);
  assert.deepEqual(recovered.commits, [
    { groupId: 'log-export.audit', topic: 'switchyard.audit.v1', offset: 1 },
  ]);
  assert.equal(reopened.skippedBytes, 0);
  assert.deepEqual(reopened.takeRecovered(), { messages: [], commits: [] }, 'handed over once');
  reopened.close();
  journal.close();
});

test("a group's last commit on a topic is the one kept", () => {
  const path = freshPath();
  const journal = EventJournal.open(path);
  for (const offset of [1, 2, 3]) {
    journal.commit({ groupId: 'a', topic: 't', offset });
    journal.flushCommits();
  }
  journal.commit({ groupId: 'b', topic: 't', offset: 1 });
  journal.close();
  assert.deepEqual(EventJournal.open(path).takeRecovered().commits, [
    { groupId: 'a', topic: 't', offset: 3 },
    { groupId: 'b', topic: 't', offset: 1 },
  ]);
});

test('commits are written on the next turn of the event loop, several in one write', async () => {
  const path = freshPath();
  const journal = EventJournal.open(path);
  journal.commit({ groupId: 'a', topic: 't', offset: 1 });
  journal.commit({ groupId: 'a', topic: 't', offset: 2 });
  assert.equal(journal.bytes(), 0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(EventJournal.open(path).takeRecovered().commits, [
    { groupId: 'a', topic: 't', offset: 2 },
  ]);
  assert.equal(journal.bytes(), statSync(path).size);
  journal.close();
});

test('a torn tail is dropped on open, and what is appended afterwards is read after the whole records', () => {
  const path = freshPath();
  const journal = EventJournal.open(path);
  journal.append(message(0));
  journal.append(message(1));
  const whole = journal.bytes();
  journal.append(message(2, 'cut short by a crash'));
  journal.close();
  const torn = statSync(path).size - 5;
  truncateSync(path, torn);

  const reopened = EventJournal.open(path);
  assert.deepEqual(texts(reopened.takeRecovered().messages), ['event 0', 'event 1']);
  assert.equal(reopened.skippedBytes, torn - whole);
  assert.equal(statSync(path).size, whole, 'the torn record is cut off the file');
  reopened.append(message(2, 'written again'));
  reopened.close();
  assert.deepEqual(texts(EventJournal.open(path).takeRecovered().messages), [
    'event 0',
    'event 1',
    'written again',
  ]);
});

test('a record whose checksum fails ends what is read, and so does a header cut short', () => {
  const path = freshPath();
  const journal = EventJournal.open(path);
  journal.append(message(0));
  const whole = journal.bytes();
  journal.append(message(1));
  journal.close();
  const data = readFileSync(path);
  data.writeUInt8(data.readUInt8(data.length - 1) ^ 0xff, data.length - 1);
  writeFileSync(path, data);
  const reopened = EventJournal.open(path);
  assert.deepEqual(texts(reopened.takeRecovered().messages), ['event 0']);
  assert.equal(reopened.skippedBytes, data.length - whole);
  reopened.close();

  writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from([9, 0, 0])]));
  const again = EventJournal.open(path);
  assert.deepEqual(texts(again.takeRecovered().messages), ['event 0']);
  assert.equal(again.skippedBytes, 3);
  again.close();
});

test('once the file has grown past its limit it is rewritten with only what is still needed', () => {
  const path = freshPath();
  const journal = EventJournal.open(path, { compactAtBytes: 4_096 });
  let offset = 0;
  const live = () => ({
    messages: [message(offset - 1)],
    commits: [{ groupId: 'a', topic: 'switchyard.audit.v1', offset: offset - 1 }],
  });
  let grown: number;
  do {
    journal.append(message(offset++));
    grown = journal.bytes();
    journal.compactIfDue(live);
  } while (journal.bytes() === grown);
  assert.ok(grown >= 4_096 && grown < 4_200, `rewritten at ${grown} bytes`);
  assert.ok(journal.bytes() < 200, `${journal.bytes()} bytes after compaction`);
  assert.equal(statSync(path).size, journal.bytes());
  journal.append(message(offset, 'after compaction'));
  journal.close();

  const recovered = EventJournal.open(path).takeRecovered();
  assert.deepEqual(texts(recovered.messages), [`event ${offset - 1}`, 'after compaction']);
  assert.deepEqual(recovered.commits, [{ groupId: 'a', topic: 'switchyard.audit.v1', offset: offset - 1 }]);
});

test('a file is not rewritten before it has grown past its limit, nor again before it has doubled', () => {
  const path = freshPath();
  const journal = EventJournal.open(path, { compactAtBytes: 1_000 });
  let calls = 0;
  const everything: JournalMessage[] = [];
  const live = () => {
    calls++;
    return { messages: [...everything], commits: [] };
  };
  const append = () => {
    const next = message(everything.length, 'same size');
    everything.push(next);
    journal.append(next);
  };
  append();
  const recordBytes = journal.bytes();
  while (journal.bytes() + recordBytes < 1_000) append();
  journal.compactIfDue(live);
  assert.equal(calls, 0);
  append();
  journal.compactIfDue(live);
  assert.equal(calls, 1, 'rewritten once past the limit');
  const kept = journal.bytes();
  journal.compactIfDue(live);
  assert.equal(calls, 1, 'nothing was dropped, so the next rewrite waits until the file has doubled');
  assert.equal(journal.bytes(), kept);
  journal.close();
});

test('a record that cannot be written is reported, not thrown, and the file stays readable', () => {
  const path = freshPath();
  const errors: unknown[] = [];
  const journal = EventJournal.open(path, { onError: (err) => errors.push(err) });
  journal.append(message(0));
  journal.append({ ...message(1), offset: 2 ** 49 });
  journal.append(message(1));
  journal.close();
  assert.equal(errors.length, 1);
  assert.deepEqual(texts(EventJournal.open(path).takeRecovered().messages), ['event 0', 'event 1']);
});

const traceContext = {
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  tracestate: 'vendor=abc',
};

test("a message's trace context is kept with it, also through a rewrite", () => {
  const path = freshPath();
  const journal = EventJournal.open(path, { compactAtBytes: 1 });
  const traced = { ...message(0), traceContext };
  const onlyParent = { ...message(2), traceContext: { traceparent: traceContext.traceparent } };
  journal.append(traced);
  journal.append(message(1));
  journal.append(onlyParent);
  assert.deepEqual(EventJournal.open(path).takeRecovered().messages, [traced, message(1), onlyParent]);

  journal.compactIfDue(() => ({ messages: [onlyParent, traced], commits: [] }));
  journal.close();
  assert.deepEqual(EventJournal.open(path).takeRecovered().messages, [onlyParent, traced]);
});

test('a journal written before trace contexts were kept is read as messages without one', () => {
  const path = freshPath();
  // The earlier release's message record: kind 1 | offset (6) | topic length (2) | topic | key length (4) | key | value.
  const earlierRecord = (offset: number, value: string) => {
    const topic = 'switchyard.audit.v1';
    const key = 'org-1';
    return frame(1 + 6 + 2 + topic.length + 4 + key.length + value.length, (buffer, at) => {
      at = buffer.writeUInt8(1, at);
      at = buffer.writeUIntLE(offset, at, 6);
      at = buffer.writeUInt16LE(topic.length, at);
      at += buffer.write(topic, at);
      at = buffer.writeUInt32LE(key.length, at);
      at += buffer.write(key, at);
      buffer.write(value, at);
    });
  };
  writeFileSync(path, Buffer.concat([earlierRecord(0, 'a'), earlierRecord(1, 'b')]));
  const journal = EventJournal.open(path);
  assert.deepEqual(journal.takeRecovered().messages, [
    { topic: 'switchyard.audit.v1', offset: 0, key: 'org-1', value: new TextEncoder().encode('a') },
    { topic: 'switchyard.audit.v1', offset: 1, key: 'org-1', value: new TextEncoder().encode('b') },
  ]);
  journal.append({ ...message(2), traceContext });
  journal.close();
  assert.deepEqual(EventJournal.open(path).takeRecovered().messages.at(-1), { ...message(2), traceContext });
});
