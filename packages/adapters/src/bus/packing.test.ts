import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { OutgoingMessage } from './event-bus.ts';
import { PACK_FORMAT, PACK_HEADER, packFormat, packRecords, unpackRecord } from './packing.ts';

const limits = { maxPackBytes: 1024, maxPackMessages: 10 };

function message(topic: string, key: string, text: string): OutgoingMessage {
  return { topic, key, value: new TextEncoder().encode(text) };
}

/** Every record's messages, in order, as text. */
function contents(records: ReturnType<typeof packRecords>) {
  return records.map((r) => ({
    topic: r.topic,
    key: r.key,
    values: (r.messages === 1 ? [r.value] : unpackRecord(r.value)).map((b) => b.toString('utf8')),
  }));
}

describe('packRecords / unpackRecord', () => {
  test('messages of one topic and key share a record, in publishing order; other keys and topics get their own', () => {
    const batch = [
      message('logs', 'w1', 'a'),
      message('logs', 'w2', 'b'),
      message('logs', 'w1', 'c'),
      message('usage', 'w1', 'd'),
      message('logs', 'w1', 'e'),
    ];
    assert.deepEqual(contents(packRecords(batch, limits)), [
      { topic: 'logs', key: 'w1', values: ['a', 'c', 'e'] },
      { topic: 'logs', key: 'w2', values: ['b'] },
      { topic: 'usage', key: 'w1', values: ['d'] },
    ]);
  });

  test('a lone message goes as a plain record (its own bytes); a pack says how many it holds', () => {
    const [plain, packed] = packRecords(
      [message('t', 'k1', 'only'), message('t', 'k2', 'x'), message('t', 'k2', 'y')],
      limits,
    );
    assert.equal(plain!.messages, 1);
    assert.equal(plain!.value.toString('utf8'), 'only');
    assert.equal(packed!.messages, 2);
    assert.equal(packed!.value.length, 2 * 4 + 2);
  });

  test('a pack never exceeds the byte or message limit; a message too big for any pack goes alone', () => {
    const big = 'x'.repeat(2_000);
    const batch = [
      ...Array.from({ length: 25 }, (_, i) => message('t', 'k', `m${i}`)),
      message('t', 'k', big),
      ...Array.from({ length: 3 }, (_, i) => message('t', 'k', 'y'.repeat(400) + i)),
    ];
    const records = packRecords(batch, limits);
    for (const r of records) {
      assert.ok(r.messages <= limits.maxPackMessages);
      if (r.messages > 1) assert.ok(r.value.length <= limits.maxPackBytes, `${r.value.length} bytes`);
    }
    assert.deepEqual(
      contents(records).flatMap((r) => r.values),
      batch.map((m) => Buffer.from(m.value).toString('utf8')),
    );
    assert.equal(records.find((r) => r.value.toString('utf8') === big)?.messages, 1);
  });

  test('any batch comes back message for message, in order per topic and key', () => {
    const arbitraryMessage = fc.record({
      topic: fc.constantFrom('a', 'b'),
      key: fc.constantFrom('k1', 'k2', 'k3', ''),
      value: fc.uint8Array({ maxLength: 300 }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryMessage, { maxLength: 60 }), (batch) => {
        const records = packRecords(batch, { maxPackBytes: 700, maxPackMessages: 7 });
        for (const id of new Set(batch.map((m) => `${m.topic}/${m.key}`))) {
          const sent = batch.filter((m) => `${m.topic}/${m.key}` === id).map((m) => Buffer.from(m.value));
          const received = records
            .filter((r) => `${r.topic}/${r.key}` === id)
            .flatMap((r) => (r.messages === 1 ? [r.value] : unpackRecord(r.value)));
          assert.deepEqual(received, sent);
        }
      }),
    );
  });

  test('a malformed pack is refused, not misread', () => {
    assert.throws(() => unpackRecord(Buffer.from([0, 0, 1])), /truncated/);
    assert.throws(() => unpackRecord(Buffer.from([0, 0, 0, 9, 1, 2])), /longer than the record/);
    assert.deepEqual(unpackRecord(Buffer.alloc(0)), []);
  });

  test('the pack header is read from Buffer or string header values', () => {
    assert.equal(packFormat(undefined), undefined);
    assert.equal(packFormat({}), undefined);
    assert.equal(packFormat({ [PACK_HEADER]: Buffer.from(PACK_FORMAT) }), PACK_FORMAT);
    assert.equal(packFormat({ [PACK_HEADER]: '2' }), '2');
  });
});
