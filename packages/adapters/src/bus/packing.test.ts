import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { TraceCarrier } from '@switchyard/core';
import type { OutgoingMessage } from './event-bus.ts';
import {
  PACK_FORMAT,
  PACK_HEADER,
  PACK_TRACE_HEADER,
  packFormat,
  packRecords,
  packTraceContexts,
  recordTraceContext,
  unpackRecord,
  type OutgoingRecord,
} from './packing.ts';

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

/** A publisher's trace context, as W3C Trace Context writes it. */
function traced(n: number, tracestate?: string): TraceCarrier {
  const traceparent = `00-${n.toString(16).padStart(32, 'a')}-${n.toString(16).padStart(16, 'b')}-01`;
  return tracestate ? { traceparent, tracestate } : { traceparent };
}

/** What a consumer makes of a record as the broker hands it back: its headers as Buffers. */
function consumed(record: OutgoingRecord) {
  const headers = Object.fromEntries(
    Object.entries(record.headers ?? {}).map(([name, value]) => [name, Buffer.from(value)]),
  );
  if (packFormat(headers) === undefined) {
    return [{ text: record.value.toString('utf8'), traceContext: recordTraceContext(headers) }];
  }
  const values = unpackRecord(record.value);
  const contexts = packTraceContexts(headers, values.length);
  return values.map((value, i) => ({ text: value.toString('utf8'), traceContext: contexts[i] }));
}

describe('trace contexts in records', () => {
  test('each packed message keeps its own trace context, in order; a message without one gets none', () => {
    const batch = [
      { ...message('logs', 'w1', 'a'), traceContext: traced(1, 'vendor=abc,other=x y') },
      message('logs', 'w1', 'b'),
      { ...message('logs', 'w1', 'c'), traceContext: traced(3) },
    ];
    const [record] = packRecords(batch, limits);
    assert.equal(record!.messages, 3);
    assert.deepEqual(consumed(record!), [
      { text: 'a', traceContext: traced(1, 'vendor=abc,other=x y') },
      { text: 'b', traceContext: undefined },
      { text: 'c', traceContext: traced(3) },
    ]);
  });

  test("a lone message's trace context travels in the W3C traceparent and tracestate headers", () => {
    const [record] = packRecords([{ ...message('t', 'k', 'only'), traceContext: traced(7, 'v=1') }], limits);
    assert.deepEqual(record!.headers, { traceparent: traced(7).traceparent, tracestate: 'v=1' });
    assert.deepEqual(consumed(record!), [{ text: 'only', traceContext: traced(7, 'v=1') }]);
  });

  test('without trace contexts, records are written as before: no trace header at all', () => {
    const [plain, packed] = packRecords(
      [message('t', 'k1', 'only'), message('t', 'k2', 'x'), message('t', 'k2', 'y')],
      limits,
    );
    assert.equal(plain!.headers, undefined);
    assert.deepEqual(packed!.headers, { [PACK_HEADER]: PACK_FORMAT });
  });

  test('a pack written by an earlier release (no trace header) is read as messages without trace context', () => {
    // The value as the earlier release framed it: a 4-byte big-endian length before each message.
    const value = Buffer.concat([
      Buffer.from([0, 0, 0, 2]),
      Buffer.from('e1'),
      Buffer.from([0, 0, 0, 2]),
      Buffer.from('e2'),
    ]);
    const headers = { [PACK_HEADER]: Buffer.from('1') };
    assert.equal(packFormat(headers), PACK_FORMAT);
    const values = unpackRecord(value);
    assert.deepEqual(values.map(String), ['e1', 'e2']);
    assert.deepEqual(packTraceContexts(headers, values.length), [undefined, undefined]);
  });

  test('a trace header that does not match the pack, or a malformed traceparent, is not trusted', () => {
    const lines = `${traced(1).traceparent}\n${traced(2).traceparent}`;
    assert.deepEqual(packTraceContexts({ [PACK_TRACE_HEADER]: Buffer.from(lines) }, 3), [
      undefined,
      undefined,
      undefined,
    ]);
    assert.deepEqual(
      packTraceContexts({ [PACK_TRACE_HEADER]: Buffer.from(`00-zz\n${traced(2).traceparent}`) }, 2),
      [undefined, traced(2)],
    );
    assert.equal(recordTraceContext({ traceparent: Buffer.from('00-0-0-01') }), undefined);
    assert.equal(recordTraceContext({}), undefined);
    assert.deepEqual(
      recordTraceContext({
        traceparent: Buffer.from(traced(4).traceparent),
        tracestate: Buffer.from('a=1\nb=2'),
      }),
      traced(4),
      'a tracestate W3C does not allow is left out',
    );
  });

  test('the trace header counts towards the byte limit of a pack', () => {
    const batch = Array.from({ length: 30 }, (_, i) => ({
      ...message('t', 'k', `m${i}`),
      traceContext: traced(i, 'vendor=' + 'x'.repeat(40)),
    }));
    const records = packRecords(batch, { maxPackBytes: 1024, maxPackMessages: 100 });
    for (const r of records) {
      const headerBytes = Buffer.byteLength(r.headers?.[PACK_TRACE_HEADER] ?? '');
      if (r.messages > 1)
        assert.ok(r.value.length + headerBytes <= 1024, `${r.value.length + headerBytes} bytes`);
    }
    assert.ok(records.length > 1);
    assert.deepEqual(
      records.flatMap(consumed),
      batch.map((m) => ({ text: Buffer.from(m.value).toString('utf8'), traceContext: m.traceContext })),
    );
  });

  test('any batch comes back with every message its own trace context, in order per topic and key', () => {
    const arbitraryMessage = fc.record({
      topic: fc.constantFrom('a', 'b'),
      key: fc.constantFrom('k1', 'k2'),
      value: fc.uint8Array({ maxLength: 100 }),
      trace: fc.option(fc.nat({ max: 1_000 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryMessage, { maxLength: 40 }), (generated) => {
        const batch: OutgoingMessage[] = generated.map(({ trace, ...m }) =>
          trace === undefined ? m : { ...m, traceContext: traced(trace) },
        );
        const records = packRecords(batch, { maxPackBytes: 700, maxPackMessages: 7 });
        for (const id of new Set(batch.map((m) => `${m.topic}/${m.key}`))) {
          const sent = batch
            .filter((m) => `${m.topic}/${m.key}` === id)
            .map((m) => ({ text: Buffer.from(m.value).toString('utf8'), traceContext: m.traceContext }));
          const received = records.filter((r) => `${r.topic}/${r.key}` === id).flatMap(consumed);
          assert.deepEqual(received, sent);
        }
      }),
    );
  });
});
