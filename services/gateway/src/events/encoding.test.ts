import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { create, equals, fromBinary, toBinary, type DescMessage } from '@bufbuild/protobuf';
import { events } from '@switchyard/proto';
import {
  WRITTEN_FIELDS,
  encodeRequestLogEvent,
  encodeUsageEvent,
  type RequestLogFields,
  type UsageFields,
} from './encoding.ts';

const text = fc.string({ unit: 'grapheme', maxLength: 40 });
const uint32 = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffffffff }));
const int64 = fc.oneof(fc.constant('0'), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String));
const double = fc.oneof(fc.constant(0), fc.double({ noNaN: true }));
const usage = fc.option(
  fc.record({
    promptTokens: uint32,
    completionTokens: uint32,
    totalTokens: uint32,
    cachedTokens: uint32,
    reasoningTokens: uint32,
    cacheWriteTokens: uint32,
  }),
  { nil: undefined },
);

const policyOutcome = fc.option(
  fc.record({
    decision: text,
    policyId: text,
    code: text,
    adjustments: fc.array(fc.record({ policyId: text, type: text, held: double, used: double }), {
      maxLength: 4,
    }),
  }),
  { nil: undefined },
);

const guardrailOutcomes = fc.array(
  fc.record({
    phase: text,
    guardrailId: text,
    slug: text,
    versionId: text,
    action: text,
    explanation: text,
    redactions: uint32,
    durationMs: double,
    checks: fc.array(
      fc.record({ id: text, name: text, passed: fc.boolean(), explanation: text, error: text }),
      { maxLength: 4 },
    ),
  }),
  { maxLength: 3 },
);

const requestLog: fc.Arbitrary<RequestLogFields> = fc.record({
  id: text,
  organisationId: text,
  workspaceId: text,
  apiKeyId: text,
  traceId: text,
  spanId: text,
  parentSpanId: text,
  spanName: text,
  metadata: fc.dictionary(text, text, { maxKeys: 5 }),
  method: text,
  path: text,
  provider: text,
  model: text,
  integrationSlug: text,
  status: uint32,
  stream: fc.boolean(),
  createdAtMs: int64,
  latencyMs: uint32,
  requestBody: fc.string({ unit: 'binary', maxLength: 300 }),
  responseBody: fc.string({ unit: 'binary', maxLength: 300 }),
  usage,
  cost: double,
  errorMessage: text,
  cacheStatus: text,
  configSlug: text,
  routePath: text,
  retryCount: uint32,
  cacheNamespace: text,
  cacheForceRefresh: fc.boolean(),
  modelsEndpoint: fc.boolean(),
  policy: policyOutcome,
  guardrails: guardrailOutcomes,
  w3cTraceId: text,
  mcp: fc.option(
    fc.record({
      serverId: text,
      serverSlug: text,
      integrationSlug: text,
      method: text,
      toolName: text,
      errorCode: fc.oneof(fc.constant(0), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
      toolError: fc.boolean(),
      sessionId: text,
    }),
    { nil: undefined },
  ),
  prompt: fc.option(fc.record({ promptId: text, promptSlug: text, versionId: text, versionNumber: uint32 }), {
    nil: undefined,
  }),
});

const usageEvent: fc.Arbitrary<UsageFields> = fc.record({
  id: text,
  organisationId: text,
  workspaceId: text,
  apiKeyId: text,
  provider: text,
  model: text,
  usage,
  cost: double,
  occurredAtMs: int64,
});

function sameAsTheSchema<D extends DescMessage>(schema: D, encoded: Uint8Array, init: object): void {
  const expected = create(schema, init as never);
  const decoded = fromBinary(schema, encoded);
  assert.ok(equals(schema, decoded, expected), 'decodes to the message made from the same fields');
  // And the generated encoder's bytes decode to the same message.
  assert.ok(equals(schema, fromBinary(schema, toBinary(schema, expected)), decoded));
}

describe('event encoders', () => {
  test('a request log event decodes, with the generated schema, to exactly the fields given', () => {
    fc.assert(
      fc.property(requestLog, (e) =>
        sameAsTheSchema(events.RequestLogEventSchema, encodeRequestLogEvent(e), e),
      ),
    );
  });

  test('a usage event decodes, with the generated schema, to exactly the fields given', () => {
    fc.assert(
      fc.property(usageEvent, (e) => sameAsTheSchema(events.UsageEventSchema, encodeUsageEvent(e), e)),
    );
  });

  test('every field of the schemas is written (a new field fails here until the encoder writes it)', () => {
    for (const [name, schema] of [
      ['RequestLogEvent', events.RequestLogEventSchema],
      ['UsageEvent', events.UsageEventSchema],
      ['TokenUsage', events.TokenUsageSchema],
      ['PolicyOutcome', events.PolicyOutcomeSchema],
      ['PolicyAdjustment', events.PolicyAdjustmentSchema],
      ['GuardrailOutcome', events.GuardrailOutcomeSchema],
      ['GuardrailCheckOutcome', events.GuardrailCheckOutcomeSchema],
      ['McpCall', events.McpCallSchema],
      ['PromptRun', events.PromptRunSchema],
    ] as const) {
      assert.deepEqual(schema.fields.map((f) => f.localName).sort(), [...WRITTEN_FIELDS[name]].sort(), name);
    }
  });

  test('events written one after another stay whole: a later event never changes an earlier one', () => {
    const base = fc.sample(requestLog, { numRuns: 1, seed: 7 })[0]!;
    const large = { ...base, requestBody: 'x'.repeat(200_000), responseBody: 'é'.repeat(50_000) };
    const small = { ...base, requestBody: 'hi', responseBody: '' };
    const first = encodeRequestLogEvent(large);
    const copy = Uint8Array.from(first);
    const second = encodeRequestLogEvent(small);
    const third = encodeRequestLogEvent(small);
    assert.deepEqual(first, copy);
    assert.deepEqual(second, third);
    assert.equal(fromBinary(events.RequestLogEventSchema, first).requestBody.length, 200_000);
    assert.equal(fromBinary(events.RequestLogEventSchema, second).requestBody, 'hi');
  });

  test('default values are left out, as protobuf does', () => {
    const empty = encodeUsageEvent({
      id: '',
      organisationId: '',
      workspaceId: '',
      apiKeyId: '',
      provider: '',
      model: '',
      usage: undefined,
      cost: 0,
      occurredAtMs: '0',
    });
    assert.equal(empty.length, 0);
  });
});
