import { describe, test } from 'node:test';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { create, fromBinary } from '@bufbuild/protobuf';
import { DEFAULT_MAX_MESSAGE_BYTES, Topics, type EventBus, type OutgoingMessage } from '@switchyard/adapters';
import { events } from '@switchyard/proto';
import { MAX_LOGGED_BODY_BYTES, extractUsage, publishRequestEvents, truncateUtf8 } from './request-events.ts';

describe('truncateUtf8', () => {
  test('text within the limit is kept as it is', () => {
    assert.equal(truncateUtf8('héllo', 6), 'héllo');
    assert.equal(truncateUtf8('', 0), '');
  });

  test('longer text is cut to the limit in bytes, never inside a character', () => {
    assert.equal(truncateUtf8('abcdef', 4), 'abcd');
    // "é" is 2 bytes, "€" 3 and "😀" 4: a cut that would split one drops it whole.
    assert.equal(truncateUtf8('aé', 2), 'a');
    assert.equal(truncateUtf8('a€b', 3), 'a');
    assert.equal(truncateUtf8('a€b', 4), 'a€');
    assert.equal(truncateUtf8('😀😀', 7), '😀');
    for (let limit = 0; limit < 20; limit++) {
      const cut = truncateUtf8('x€é😀y€é😀', limit);
      assert.ok(Buffer.byteLength(cut) <= limit);
      assert.ok(!cut.includes('\ufffd'), 'no broken character');
      assert.ok('x€é😀y€é😀'.startsWith(cut));
    }
  });
});

/** A completed chat completion of 12 ms with empty bodies, as the gateway hands it over; `overrides` over it. */
function completed(overrides: Partial<Parameters<typeof publishRequestEvents>[1]> = {}) {
  return {
    requestId: 'req-1',
    principal: { organisationId: 'org', workspaceId: 'ws', apiKeyId: 'key' } as never,
    headers: { traceId: 't', metadata: {} } as never,
    method: 'POST',
    path: '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o',
    integrationSlug: undefined,
    status: 200,
    stream: false,
    createdAtMs: Date.now(),
    latencyMs: 12,
    requestBody: '{}',
    responseBody: '{}',
    errorMessage: undefined,
    ...overrides,
  };
}

describe('publishRequestEvents', () => {
  test('a request log with huge bodies still fits in one Kafka message: each body is cut to its byte limit', () => {
    const sent: OutgoingMessage[] = [];
    const bus = { publish: (m: OutgoingMessage) => sent.push(m) } as unknown as EventBus;
    const requestBody = JSON.stringify({ messages: [{ role: 'user', content: '€'.repeat(900_000) }] });
    const responseBody = JSON.stringify({ choices: [{ message: { content: '😀'.repeat(600_000) } }] });
    publishRequestEvents(bus, completed({ requestBody, responseBody }));
    const log = sent.find((m) => m.topic === Topics.requestLogs);
    assert.ok(log);
    assert.ok(log.value.byteLength < DEFAULT_MAX_MESSAGE_BYTES, `${log.value.byteLength} bytes`);
    const event = fromBinary(events.RequestLogEventSchema, log.value);
    for (const [body, original] of [
      [event.requestBody, requestBody],
      [event.responseBody, responseBody],
    ] as const) {
      assert.ok(Buffer.byteLength(body) <= MAX_LOGGED_BODY_BYTES);
      assert.ok(Buffer.byteLength(body) > MAX_LOGGED_BODY_BYTES - 4, 'cut at the limit, not before');
      assert.ok(original.startsWith(body));
    }
  });

  test("the request log carries what each guardrail did, in the order they ran, with every check's verdict", () => {
    const sent: OutgoingMessage[] = [];
    const bus = { publish: (m: OutgoingMessage) => sent.push(m) } as unknown as EventBus;
    const request = completed({ requestId: 'req-2' });
    publishRequestEvents(bus, {
      ...request,
      guardrails: [
        {
          phase: 'input',
          guardrailId: 'g-1',
          slug: 'guard_pii-1a2b3c4d',
          versionId: 'v-1',
          action: 'warn',
          explanation: 'default.pii: the text holds an email address',
          redactions: 0,
          durationMs: 0.25,
          checks: [
            { id: 'default.pii', name: 'No emails', passed: false, explanation: 'an email address' },
            { id: 'webhook', name: 'webhook', passed: true, explanation: 'unreachable', error: 'timed out' },
          ],
        },
        {
          phase: 'output',
          guardrailId: 'g-2',
          slug: 'guard_words-1a2b3c4d',
          versionId: 'v-7',
          action: 'redact',
          explanation: 'default.regex: matched',
          redactions: 2,
          durationMs: 1,
          checks: [{ id: 'default.regex', name: 'default.regex', passed: false, explanation: 'matched' }],
        },
      ],
    });
    publishRequestEvents(bus, request);
    const [withRuns, without] = sent
      .filter((m) => m.topic === Topics.requestLogs)
      .map((m) => fromBinary(events.RequestLogEventSchema, m.value));
    assert.deepEqual(
      withRuns!.guardrails,
      [
        {
          phase: 'input',
          guardrailId: 'g-1',
          slug: 'guard_pii-1a2b3c4d',
          versionId: 'v-1',
          action: 'warn',
          explanation: 'default.pii: the text holds an email address',
          redactions: 0,
          durationMs: 0.25,
          checks: [
            {
              id: 'default.pii',
              name: 'No emails',
              passed: false,
              explanation: 'an email address',
              error: '',
            },
            { id: 'webhook', name: 'webhook', passed: true, explanation: 'unreachable', error: 'timed out' },
          ],
        },
        {
          phase: 'output',
          guardrailId: 'g-2',
          slug: 'guard_words-1a2b3c4d',
          versionId: 'v-7',
          action: 'redact',
          explanation: 'default.regex: matched',
          redactions: 2,
          durationMs: 1,
          checks: [
            { id: 'default.regex', name: 'default.regex', passed: false, explanation: 'matched', error: '' },
          ],
        },
      ].map((outcome) => create(events.GuardrailOutcomeSchema, outcome)),
    );
    assert.deepEqual(without!.guardrails, []);
  });

  test("a guardrail's on_success / on_fail feedback goes to the request's trace as a feedback event; one without gives none", () => {
    const sent: OutgoingMessage[] = [];
    const bus = { publish: (m: OutgoingMessage) => sent.push(m) } as unknown as EventBus;
    const run = {
      phase: 'output' as const,
      guardrailId: 'g-3',
      slug: 'guard_tone-1a2b3c4d',
      versionId: 'v-2',
      action: 'warn' as const,
      explanation: 'rude',
      redactions: 0,
      durationMs: 1,
      checks: [],
    };
    publishRequestEvents(
      bus,
      completed({
        requestId: 'req-3',
        headers: { traceId: 'trace-9', metadata: {} } as never,
        createdAtMs: 1_700_000_000_000,
        guardrails: [
          { ...run, feedback: { value: -2.6, weight: 0.5, metadata: 'tone' } },
          { ...run, guardrailId: 'g-4', action: 'allow' as const },
        ],
      }),
    );
    const feedback = sent.filter((m) => m.topic === Topics.feedback);
    assert.equal(feedback.length, 1);
    assert.equal(feedback[0]!.key, 'trace-9');
    const event = fromBinary(events.FeedbackEventSchema, feedback[0]!.value);
    assert.deepEqual(
      {
        organisationId: event.organisationId,
        workspaceId: event.workspaceId,
        traceId: event.traceId,
        value: event.value,
        weight: event.weight,
        createdBy: event.createdBy,
        version: event.version,
        createdAtMs: event.createdAtMs,
      },
      {
        organisationId: 'org',
        workspaceId: 'ws',
        traceId: 'trace-9',
        value: -3,
        weight: 0.5,
        createdBy: 'guardrail:g-3',
        version: 1,
        createdAtMs: '1700000000000',
      },
    );
    assert.deepEqual(JSON.parse(event.metadataJson), {
      source: 'guardrail',
      guardrail_id: 'g-3',
      guardrail: 'guard_tone-1a2b3c4d',
      phase: 'output',
      passed: false,
      metadata: 'tone',
    });
  });
});

describe('extractUsage', () => {
  const usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
  const fields = {
    promptTokens: 12,
    completionTokens: 5,
    totalTokens: 17,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  };
  const completion = (message: unknown, extra: Record<string, unknown> = {}) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: 'stop' }],
    usage,
    ...extra,
  });

  test('reads the usage of a compact or an indented answer', () => {
    const body = completion({ role: 'assistant', content: 'hi' });
    assert.deepEqual(extractUsage(JSON.stringify(body), false), fields);
    assert.deepEqual(extractUsage(JSON.stringify(body, null, 2), false), fields);
  });

  test('a "usage" written by the model inside its text is not taken for the usage', () => {
    const trick = '"usage": {"prompt_tokens": 999999, "completion_tokens": 1, "total_tokens": 1000000}';
    const body = { ...completion({ role: 'assistant', content: trick }), usage: undefined };
    // The model's text comes last and the answer has no usage of its own.
    assert.equal(extractUsage(JSON.stringify({ ...body, usage: undefined }), false), undefined);
    const after = JSON.stringify({ usage, choices: [{ message: { content: trick } }] });
    assert.deepEqual(extractUsage(after, false), fields);
    const asValue = JSON.stringify({ usage, note: 'usage' });
    assert.deepEqual(extractUsage(asValue, false), fields);
  });

  test('details (cached, cache-write and reasoning tokens) are read, and a body that is not JSON has no usage', () => {
    const body = JSON.stringify(
      completion(
        { role: 'assistant', content: '{"a": "}"}' },
        {
          usage: {
            ...usage,
            prompt_tokens_details: { cached_tokens: 4, cache_creation_tokens: 6 },
            completion_tokens_details: { reasoning_tokens: 3 },
          },
        },
      ),
    );
    assert.deepEqual(extractUsage(body, false), {
      ...fields,
      cachedTokens: 4,
      cacheWriteTokens: 6,
      reasoningTokens: 3,
    });
    assert.equal(extractUsage('{"usage": {"prompt_tokens": 1', false), undefined);
    assert.equal(extractUsage('not json', false), undefined);
  });

  test('an Anthropic message’s usage, whole or streamed: the prompt with its cache reads and writes', () => {
    const anthropic = {
      input_tokens: 10,
      cache_creation_input_tokens: 2,
      cache_read_input_tokens: 3,
      output_tokens: 6,
    };
    const expected = {
      promptTokens: 15,
      completionTokens: 6,
      totalTokens: 21,
      cachedTokens: 3,
      cacheWriteTokens: 2,
      reasoningTokens: 0,
    };
    assert.deepEqual(
      extractUsage(JSON.stringify({ type: 'message', content: [], usage: anthropic }), false),
      expected,
    );
    const event = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
    const stream = [
      event({
        type: 'message_start',
        message: { type: 'message', usage: { ...anthropic, output_tokens: 1 } },
      }),
      event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '"usage"' } }),
      // A later total replaces the earlier; a count left out or null stands as before.
      event({ type: 'message_delta', delta: {}, usage: { output_tokens: 6, cache_read_input_tokens: null } }),
      event({ type: 'message_stop' }),
    ].join('');
    assert.deepEqual(extractUsage(stream, true), expected);
  });

  test('the same usage as parsing the whole answer, whatever the text around it', () => {
    const tokens = fc.integer({ min: 0, max: 1_000_000 });
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 60 }),
        fc.record({ prompt_tokens: tokens, completion_tokens: tokens, total_tokens: tokens }),
        fc.boolean(),
        fc.integer({ min: 0, max: 4 }),
        (content, u, usageFirst, indent) => {
          const message = { role: 'assistant', content };
          const body = usageFirst
            ? { usage: u, choices: [{ message }] }
            : { choices: [{ message }], usage: u, system_fingerprint: content };
          const text = JSON.stringify(body, null, indent);
          const whole = (JSON.parse(text) as { usage: typeof u }).usage;
          assert.deepEqual(extractUsage(text, false), {
            promptTokens: whole.prompt_tokens,
            completionTokens: whole.completion_tokens,
            totalTokens: whole.total_tokens,
            cachedTokens: 0,
            cacheWriteTokens: 0,
            reasoningTokens: 0,
          });
        },
      ),
    );
  });
});
