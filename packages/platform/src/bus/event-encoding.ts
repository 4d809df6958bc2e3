import { ScalarType, create, toBinary, type DescField, type DescMessage } from '@bufbuild/protobuf';
import type { MessageInitShape } from '@bufbuild/protobuf';

/**
 * String fields given as their UTF-8 bytes (e.g. a request body exactly as it arrived), so
 * that text the gateway already holds as bytes is not decoded and encoded again. The bytes
 * must be valid UTF-8 (see `isUtf8` in node:buffer).
 */
export type Utf8Fields = Record<string, Uint8Array | undefined>;

export type EventEncoder<D extends DescMessage> = (
  message: MessageInitShape<D>,
  utf8?: Utf8Fields,
) => Uint8Array;

const IMPLICIT = 2; // FeatureSet_FieldPresence.IMPLICIT: proto3 fields without `optional`
const VARINT = 0;
const I64 = 1;
const LEN = 2;

/** Lengths (and embedded messages) computed while sizing, consumed in the same order while writing. */
interface Pass {
  lengths: number[];
  next: number;
  children: Uint8Array[];
  nextChild: number;
}

interface FieldCodec {
  /** Bytes the field takes (tag included), or 0 when it is not written. */
  size(message: Record<string, unknown>, utf8: Utf8Fields | undefined, pass: Pass): number;
  write(
    buf: Buffer,
    at: number,
    message: Record<string, unknown>,
    utf8: Utf8Fields | undefined,
    pass: Pass,
  ): number;
}

/** Size of a varint of an integer in [0, 2^32). */
function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  return value < 0x10000000 ? 4 : 5;
}

/** An integer in [0, 2^32) as a varint. */
function writeVarint(buf: Buffer, at: number, value: number): number {
  while (value > 0x7f) {
    buf[at++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  buf[at++] = value;
  return at;
}

function writeBigVarint(buf: Buffer, at: number, value: bigint): number {
  while (value >= 0x80n) {
    buf[at++] = Number(value & 0x7fn) | 0x80;
    value >>= 7n;
  }
  buf[at++] = Number(value);
  return at;
}

function bigVarintSize(value: bigint): number {
  let n = 1;
  while (value >= 0x80n) {
    value >>= 7n;
    n++;
  }
  return n;
}

function tagOf(number: number, wireType: number): number {
  return number * 8 + wireType;
}

function assertUint32(value: unknown, field: DescField): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw new Error(
      `cannot encode field ${field.parent.typeName}.${field.name}: invalid uint32: ${String(value)}`,
    );
  return value;
}

function assertInt32(value: unknown, field: DescField): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
    throw new Error(
      `cannot encode field ${field.parent.typeName}.${field.name}: invalid int32: ${String(value)}`,
    );
  return value;
}

/** A 64-bit integer (number, bigint or decimal string, as protobuf-es accepts) as its unsigned 64-bit pattern. */
function int64Bits(value: unknown, signed: boolean, field: DescField): bigint {
  let big: bigint;
  try {
    big = BigInt(value as string | number | bigint);
  } catch {
    throw new Error(
      `cannot encode field ${field.parent.typeName}.${field.name}: invalid int64: ${String(value)}`,
    );
  }
  if (signed ? big < -(2n ** 63n) || big >= 2n ** 63n : big < 0n || big >= 2n ** 64n)
    throw new Error(
      `cannot encode field ${field.parent.typeName}.${field.name}: int64 out of range: ${String(value)}`,
    );
  return BigInt.asUintN(64, big);
}

function scalarCodec(field: DescField & { fieldKind: 'scalar' | 'enum' }): FieldCodec | undefined {
  const name = field.localName;
  const explicit = field.presence !== IMPLICIT || field.oneof !== undefined;
  if (field.oneof) return undefined;
  const type = field.fieldKind === 'enum' ? ScalarType.INT32 : field.scalar;
  switch (type) {
    case ScalarType.STRING: {
      const tag = tagOf(field.number, LEN);
      const tagSize = varintSize(tag);
      // Whether the field is written; an empty value only with explicit presence.
      const written = (value: unknown, bytes: Uint8Array | undefined) =>
        bytes !== undefined
          ? bytes.byteLength > 0 || explicit
          : value !== undefined && (value !== '' || explicit);
      return {
        size(message, utf8, pass) {
          const bytes = utf8?.[name];
          const value = message[name];
          if (!written(value, bytes)) return 0;
          if (bytes === undefined && typeof value !== 'string')
            throw new Error(`cannot encode field ${field.parent.typeName}.${field.name}: invalid string`);
          const length = bytes !== undefined ? bytes.byteLength : Buffer.byteLength(value as string);
          pass.lengths.push(length);
          return tagSize + varintSize(length) + length;
        },
        write(buf, at, message, utf8, pass) {
          const bytes = utf8?.[name];
          const value = message[name];
          if (!written(value, bytes)) return at;
          const length = pass.lengths[pass.next++]!;
          at = writeVarint(buf, at, tag);
          at = writeVarint(buf, at, length);
          if (bytes !== undefined) buf.set(bytes, at);
          else buf.write(value as string, at, length, 'utf8');
          return at + length;
        },
      };
    }
    case ScalarType.BOOL: {
      const tag = tagOf(field.number, VARINT);
      const tagSize = varintSize(tag);
      return {
        size: (message) => {
          const value = message[name];
          return value === undefined || (value === false && !explicit) ? 0 : tagSize + 1;
        },
        write(buf, at, message) {
          const value = message[name];
          if (value === undefined || (value === false && !explicit)) return at;
          at = writeVarint(buf, at, tag);
          buf[at] = value ? 1 : 0;
          return at + 1;
        },
      };
    }
    case ScalarType.UINT32:
    case ScalarType.INT32: {
      const tag = tagOf(field.number, VARINT);
      const tagSize = varintSize(tag);
      const check = type === ScalarType.UINT32 ? assertUint32 : assertInt32;
      // A negative int32 is written as a 10-byte varint (its 64-bit two's complement).
      const bits = (value: number) => (value < 0 ? BigInt.asUintN(64, BigInt(value)) : value);
      return {
        size(message) {
          const value = message[name];
          if (value === undefined || (value === 0 && !explicit)) return 0;
          const v = bits(check(value, field));
          return tagSize + (typeof v === 'bigint' ? bigVarintSize(v) : varintSize(v));
        },
        write(buf, at, message) {
          const value = message[name];
          if (value === undefined || (value === 0 && !explicit)) return at;
          at = writeVarint(buf, at, tag);
          const v = bits(value as number);
          return typeof v === 'bigint' ? writeBigVarint(buf, at, v) : writeVarint(buf, at, v);
        },
      };
    }
    case ScalarType.UINT64:
    case ScalarType.INT64: {
      const tag = tagOf(field.number, VARINT);
      const tagSize = varintSize(tag);
      const signed = type === ScalarType.INT64;
      // Zero in any of its spellings (0, 0n, "0") is the default.
      const unset = (value: unknown) => value === undefined || (!explicit && value == 0);
      return {
        size(message) {
          const value = message[name];
          if (unset(value)) return 0;
          return tagSize + bigVarintSize(int64Bits(value, signed, field));
        },
        write(buf, at, message) {
          const value = message[name];
          if (unset(value)) return at;
          at = writeVarint(buf, at, tag);
          return writeBigVarint(buf, at, int64Bits(value, signed, field));
        },
      };
    }
    case ScalarType.DOUBLE: {
      const tag = tagOf(field.number, I64);
      const tagSize = varintSize(tag);
      const unset = (value: unknown) => value === undefined || (!explicit && Object.is(value, 0));
      return {
        size(message) {
          const value = message[name];
          if (unset(value)) return 0;
          if (typeof value !== 'number')
            throw new Error(`cannot encode field ${field.parent.typeName}.${field.name}: invalid double`);
          return tagSize + 8;
        },
        write(buf, at, message) {
          const value = message[name];
          if (unset(value)) return at;
          at = writeVarint(buf, at, tag);
          buf.writeDoubleLE(value as number, at);
          return at + 8;
        },
      };
    }
    default:
      return undefined;
  }
}

/** map<string, string>: one length-delimited entry per key, key (1) and value (2) always written. */
function stringMapCodec(field: DescField & { fieldKind: 'map' }): FieldCodec | undefined {
  if (field.mapKey !== ScalarType.STRING || field.mapKind !== 'scalar' || field.scalar !== ScalarType.STRING)
    return undefined;
  const name = field.localName;
  const tag = tagOf(field.number, LEN);
  const tagSize = varintSize(tag);
  return {
    size(message, _utf8, pass) {
      const record = message[name] as Record<string, string> | undefined;
      if (!record) return 0;
      let total = 0;
      for (const key of Object.keys(record)) {
        const value = record[key];
        if (typeof value !== 'string')
          throw new Error(`cannot encode field ${field.parent.typeName}.${field.name}: invalid string`);
        const k = Buffer.byteLength(key);
        const v = Buffer.byteLength(value);
        const entry = 1 + varintSize(k) + k + 1 + varintSize(v) + v;
        pass.lengths.push(k, v, entry);
        total += tagSize + varintSize(entry) + entry;
      }
      return total;
    },
    write(buf, at, message, _utf8, pass) {
      const record = message[name] as Record<string, string> | undefined;
      if (!record) return at;
      for (const key of Object.keys(record)) {
        const k = pass.lengths[pass.next++]!;
        const v = pass.lengths[pass.next++]!;
        const entry = pass.lengths[pass.next++]!;
        at = writeVarint(buf, at, tag);
        at = writeVarint(buf, at, entry);
        buf[at++] = 0x0a;
        at = writeVarint(buf, at, k);
        at += buf.write(key, at, k, 'utf8');
        buf[at++] = 0x12;
        at = writeVarint(buf, at, v);
        at += buf.write(record[key]!, at, v, 'utf8');
      }
      return at;
    },
  };
}

/** A singular message field: written when present, encoded on its own and embedded. */
function messageCodec(field: DescField & { fieldKind: 'message' }): FieldCodec | undefined {
  if (field.oneof || field.delimitedEncoding) return undefined;
  const child = compile(field.message);
  if (!child) return undefined;
  const name = field.localName;
  const tag = tagOf(field.number, LEN);
  const tagSize = varintSize(tag);
  return {
    size(message, _utf8, pass) {
      const value = message[name];
      if (value === undefined || value === null) return 0;
      const bytes = child(value as Record<string, unknown>);
      pass.children.push(bytes);
      return tagSize + varintSize(bytes.byteLength) + bytes.byteLength;
    },
    write(buf, at, message, _utf8, pass) {
      const value = message[name];
      if (value === undefined || value === null) return at;
      const bytes = pass.children[pass.nextChild++]!;
      at = writeVarint(buf, at, tag);
      at = writeVarint(buf, at, bytes.byteLength);
      buf.set(bytes, at);
      return at + bytes.byteLength;
    },
  };
}

type Compiled = (message: Record<string, unknown>, utf8?: Utf8Fields) => Buffer;
const compiled = new WeakMap<DescMessage, Compiled | null>();

/** The schema's fields compiled into sizers and writers; null when a field kind is not handled. */
function compile(schema: DescMessage): Compiled | undefined {
  const known = compiled.get(schema);
  if (known !== undefined) return known ?? undefined;
  // Until compiled, a message that contains itself is left to protobuf-es.
  compiled.set(schema, null);
  const codecs: FieldCodec[] = [];
  for (const field of [...schema.fields].sort((a, b) => a.number - b.number)) {
    const codec =
      field.fieldKind === 'scalar' || field.fieldKind === 'enum'
        ? scalarCodec(field)
        : field.fieldKind === 'map'
          ? stringMapCodec(field)
          : field.fieldKind === 'message'
            ? messageCodec(field)
            : undefined;
    if (!codec) return undefined;
    codecs.push(codec);
  }
  const encode: Compiled = (message, utf8) => {
    const pass: Pass = { lengths: [], next: 0, children: [], nextChild: 0 };
    let size = 0;
    for (const codec of codecs) size += codec.size(message, utf8, pass);
    const buf = Buffer.allocUnsafe(size);
    let at = 0;
    for (const codec of codecs) at = codec.write(buf, at, message, utf8, pass);
    return buf;
  };
  compiled.set(schema, encode);
  return encode;
}

/**
 * An encoder for one event schema, compiled once from its descriptor. It produces the same
 * bytes a reader decodes as `toBinary(schema, create(schema, message))`, but sizes the message
 * first and writes it into one buffer straight from the init object: no message object, no
 * per-field chunks. String fields may be given as UTF-8 bytes (`utf8`). A schema with field
 * kinds it does not handle (lists, oneofs, bytes, other map types) is encoded by protobuf-es.
 */
export function eventEncoder<D extends DescMessage>(schema: D): EventEncoder<D> {
  const fast = compile(schema);
  if (fast) return (message, utf8) => fast(message as Record<string, unknown>, utf8);
  const decoder = new TextDecoder();
  return (message, utf8) => {
    let init = message;
    if (utf8) {
      init = { ...message };
      for (const [key, bytes] of Object.entries(utf8))
        if (bytes !== undefined) (init as Record<string, unknown>)[key] = decoder.decode(bytes);
    }
    return toBinary(schema, create(schema, init));
  };
}
