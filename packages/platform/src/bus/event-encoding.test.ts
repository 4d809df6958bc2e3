import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ScalarType,
  create,
  fromBinary,
  toBinary,
  type DescField,
  type DescMessage,
} from '@bufbuild/protobuf';
import { events, identity, policy } from '@switchyard/proto';
import { eventEncoder } from './event-encoding.ts';

/** Every field set to a value that is not its default (negative, beyond 2^53, multi-byte text). */
function populated(schema: DescMessage, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) out[field.localName] = sample(field, depth);
  return out;
}

function sample(field: DescField, depth: number): unknown {
  switch (field.fieldKind) {
    case 'scalar':
      return scalarSample(field.scalar, field.name);
    case 'enum':
      return field.enum.values[field.enum.values.length - 1]!.number;
    case 'map':
      return field.mapKind === 'scalar' &&
        field.scalar === ScalarType.STRING &&
        field.mapKey === ScalarType.STRING
        ? { team: 'blue', ключ: 'значение', empty: '' }
        : {};
    case 'message':
      return depth < 2 ? populated(field.message, depth + 1) : undefined;
    case 'list':
      return [];
  }
}

function scalarSample(type: ScalarType, name: string): unknown {
  switch (type) {
    case ScalarType.STRING:
      return `${name}: é ✓ 😀`;
    case ScalarType.BOOL:
      return true;
    case ScalarType.UINT32:
      return 4_000_000_000;
    case ScalarType.INT32:
      return -5;
    case ScalarType.INT64:
    case ScalarType.UINT64:
      return '9007199254740993';
    case ScalarType.DOUBLE:
      return 0.125;
    default:
      return undefined;
  }
}

const schemas: DescMessage[] = [
  events.RequestLogEventSchema,
  events.UsageEventSchema,
  events.ChangeEventSchema,
  events.TokenUsageSchema,
  policy.CheckRequestSchema,
  policy.CheckResponseSchema,
  identity.ApiKeyPrincipalSchema,
  identity.ResolveApiKeyResponseSchema,
  identity.ResolveApiKeyRequestSchema,
];

function sameAsProtobufEs(schema: DescMessage, init: Record<string, unknown>): void {
  const expected = toBinary(schema, create(schema, init as never));
  const actual = eventEncoder(schema)(init as never);
  assert.deepEqual(Buffer.from(actual), Buffer.from(expected), `${schema.typeName} bytes`);
  assert.deepEqual(fromBinary(schema, actual), create(schema, init as never));
}

describe('eventEncoder', () => {
  for (const schema of schemas) {
    test(`${schema.typeName}: the same bytes as protobuf-es, for defaults and for every field set`, () => {
      sameAsProtobufEs(schema, {});
      sameAsProtobufEs(schema, populated(schema));
    });
  }

  test('zero values are left out as protobuf-es leaves them out, -0 and large numbers are kept', () => {
    const schema = events.RequestLogEventSchema;
    sameAsProtobufEs(schema, { id: '', status: 0, stream: false, createdAtMs: '0', cost: 0, metadata: {} });
    sameAsProtobufEs(schema, { cost: -0, latencyMs: 0xffffffff, createdAtMs: '18446744073709551' });
    sameAsProtobufEs(schema, { usage: {} });
  });

  test('string fields given as UTF-8 bytes are written as they are', () => {
    const schema = events.RequestLogEventSchema;
    const encode = eventEncoder(schema);
    const requestBody = '{"messages":[{"content":"héllo 😀"}]}';
    const bytes = encode(
      { id: 'r1' },
      { requestBody: Buffer.from(requestBody), responseBody: new Uint8Array() },
    );
    const decoded = fromBinary(schema, bytes);
    assert.equal(decoded.requestBody, requestBody);
    assert.equal(decoded.responseBody, '');
    assert.deepEqual(
      Buffer.from(bytes),
      Buffer.from(toBinary(schema, create(schema, { id: 'r1', requestBody }))),
    );
  });

  test('values protobuf-es refuses are refused too', () => {
    const encode = eventEncoder(events.RequestLogEventSchema);
    assert.throws(() => encode({ status: -1 }));
    assert.throws(() => encode({ status: 1.5 }));
    assert.throws(() => encode({ createdAtMs: 'soon' }));
  });
});
