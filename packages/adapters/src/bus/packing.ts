import type { OutgoingMessage } from './event-bus.ts';

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
  /** How many messages the record holds (1: a plain record, no header). */
  messages: number;
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
 * limits. A message that fills a pack on its own goes as a plain record.
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
    const close = () => {
      if (pending.length === 1) {
        const only = pending[0]!;
        records.push({ topic: only.topic, key: only.key, value: view(only.value), messages: 1 });
      } else if (pending.length > 1) {
        const first = pending[0]!;
        records.push({
          topic: first.topic,
          key: first.key,
          value: pack(pending, pendingBytes),
          messages: pending.length,
        });
      }
      pending = [];
      pendingBytes = 0;
    };
    for (const m of group) {
      const framed = FRAME_HEADER_BYTES + m.value.byteLength;
      if (
        pending.length > 0 &&
        (pendingBytes + framed > limits.maxPackBytes || pending.length >= limits.maxPackMessages)
      ) {
        close();
      }
      pending.push(m);
      pendingBytes += framed;
    }
    close();
  }
  return records;
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
  const header = headers?.[PACK_HEADER];
  if (header === undefined) return undefined;
  return Buffer.isBuffer(header) ? header.toString('utf8') : String(header);
}
