import { carrierOf, type TraceCarrier } from '@switchyard/core';
import type { OutgoingMessage } from './event-bus.ts';
import { traceOfText, traceText } from './trace-text.ts';

/**
 * Several messages of one topic and key travel as one Kafka record: the record carries this
 * header, and its value is the messages one after another, each as a 4-byte big-endian length
 * and its bytes. The producer's work per record (encoding, checksums, bookkeeping) is paid
 * once for the whole pack instead of once per event, and the consumer hands each message to
 * its handler on its own, in order, so subscribers see no difference. A record without the
 * header is one message.
 */
export const PACK_HEADER = 'switchyard-pack';
export const PACK_FORMAT = '1';
/**
 * The trace contexts of a pack's messages, when any has one: a line per message, in order
 * (see traceText), empty for a message without. A header rather than a new pack format, so
 * that a consumer of an earlier release still reads the pack, and a pack without it (written
 * by an earlier release, or with tracing off) is read as messages without trace context.
 */
export const PACK_TRACE_HEADER = 'switchyard-pack-trace';
/** A plain record's trace context travels in the W3C headers, as other Kafka clients send it. */
export const TRACEPARENT_HEADER = 'traceparent';
export const TRACESTATE_HEADER = 'tracestate';

export interface PackLimits {
  /** Largest record value a pack may grow to. */
  maxPackBytes: number;
  /** Most messages in one pack. */
  maxPackMessages: number;
}

export interface OutgoingRecord {
  topic: string;
  key: string;
  value: Buffer;
  /** How many messages the record holds (1: a plain record, without the pack header). */
  messages: number;
  /** The pack header and the trace context, as far as there are any. */
  headers?: Record<string, string>;
}

const FRAME_HEADER_BYTES = 4;

function view(value: Uint8Array): Buffer {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function pack(messages: OutgoingMessage[], bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const m of messages) {
    out.writeUInt32BE(m.value.byteLength, at);
    out.set(m.value, at + FRAME_HEADER_BYTES);
    at += FRAME_HEADER_BYTES + m.value.byteLength;
  }
  return out;
}

/**
 * The records a batch is sent as: each key's messages in publishing order, packed up to the
 * limits (the trace header counting towards the bytes). A message that fills a pack on its own
 * goes as a plain record.
 */
export function packRecords(batch: readonly OutgoingMessage[], limits: PackLimits): OutgoingRecord[] {
  const groups = new Map<string, OutgoingMessage[]>();
  for (const m of batch) {
    const id = `${m.topic}\u0000${m.key}`;
    let group = groups.get(id);
    if (!group) groups.set(id, (group = []));
    group.push(m);
  }
  const records: OutgoingRecord[] = [];
  for (const group of groups.values()) {
    let pending: OutgoingMessage[] = [];
    let pendingBytes = 0;
    let traceLines: string[] | undefined;
    let traceBytes = 0;
    const close = () => {
      if (pending.length === 1) {
        const only = pending[0]!;
        records.push({
          topic: only.topic,
          key: only.key,
          value: view(only.value),
          messages: 1,
          ...(only.traceContext ? { headers: traceHeaders(only.traceContext) } : {}),
        });
      } else if (pending.length > 1) {
        const first = pending[0]!;
        const headers: Record<string, string> = { [PACK_HEADER]: PACK_FORMAT };
        if (traceLines) headers[PACK_TRACE_HEADER] = traceLines.join('\n');
        records.push({
          topic: first.topic,
          key: first.key,
          value: pack(pending, pendingBytes),
          messages: pending.length,
          headers,
        });
      }
      pending = [];
      pendingBytes = 0;
      traceLines = undefined;
      traceBytes = 0;
    };
    for (const m of group) {
      const framed = FRAME_HEADER_BYTES + m.value.byteLength;
      const line = m.traceContext ? traceText(m.traceContext) : '';
      if (
        pending.length > 0 &&
        (pendingBytes + traceBytes + framed + line.length + 1 > limits.maxPackBytes ||
          pending.length >= limits.maxPackMessages)
      ) {
        close();
      }
      if (line !== '' && !traceLines) traceLines = pending.map(() => '');
      traceLines?.push(line);
      pending.push(m);
      pendingBytes += framed;
      traceBytes += line.length + 1;
    }
    close();
  }
  return records;
}

function traceHeaders(carrier: TraceCarrier): Record<string, string> {
  return carrier.tracestate
    ? { [TRACEPARENT_HEADER]: carrier.traceparent, [TRACESTATE_HEADER]: carrier.tracestate }
    : { [TRACEPARENT_HEADER]: carrier.traceparent };
}

/** The messages of a packed record's value; throws when the value is not a well-formed pack. */
export function unpackRecord(value: Buffer): Buffer[] {
  const messages: Buffer[] = [];
  let at = 0;
  while (at < value.length) {
    if (value.length - at < FRAME_HEADER_BYTES) throw new Error('truncated pack frame header');
    const length = value.readUInt32BE(at);
    at += FRAME_HEADER_BYTES;
    if (length > value.length - at) throw new Error('pack frame longer than the record');
    messages.push(value.subarray(at, at + length));
    at += length;
  }
  return messages;
}

/**
 * A consumed record's pack format from its headers as kafkajs gives them: undefined for a
 * plain record, PACK_FORMAT for a pack, anything else for a format this release cannot read.
 */
export function packFormat(headers: Record<string, unknown> | undefined): string | undefined {
  return headerText(headers, PACK_HEADER);
}

/** A plain record's trace context from its W3C headers; undefined without a valid `traceparent`. */
export function recordTraceContext(headers: Record<string, unknown> | undefined): TraceCarrier | undefined {
  return carrierOf(headerText(headers, TRACEPARENT_HEADER), headerText(headers, TRACESTATE_HEADER));
}

/**
 * The trace context of each of a pack's `count` messages, in order; all undefined when the pack
 * has no trace header, or one with another number of lines (it is then not trusted).
 */
export function packTraceContexts(
  headers: Record<string, unknown> | undefined,
  count: number,
): Array<TraceCarrier | undefined> {
  const lines = headerText(headers, PACK_TRACE_HEADER)?.split('\n');
  if (lines?.length !== count) return new Array<undefined>(count).fill(undefined);
  return lines.map(traceOfText);
}

/** A header's value as text: kafkajs gives a Buffer (or several, for a repeated header: the first counts). */
function headerText(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  let header = headers?.[name];
  if (Array.isArray(header)) header = header[0];
  if (header === undefined || header === null) return undefined;
  return Buffer.isBuffer(header) ? header.toString('utf8') : String(header);
}
