import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromBinary } from '@bufbuild/protobuf';
import { DEFAULT_MAX_MESSAGE_BYTES, Topics, type EventBus, type OutgoingMessage } from '@switchyard/platform';
import { events } from '@switchyard/proto';
import { MAX_LOGGED_BODY_BYTES, publishRequestEvents, truncateUtf8 } from './request-events.ts';

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

describe('publishRequestEvents', () => {
  test('a request log with huge bodies still fits in one Kafka message: each body is cut to its byte limit', () => {
    const sent: OutgoingMessage[] = [];
    const bus = { publish: (m: OutgoingMessage) => sent.push(m) } as unknown as EventBus;
    const requestBody = JSON.stringify({ messages: [{ role: 'user', content: '€'.repeat(900_000) }] });
    const responseBody = JSON.stringify({ choices: [{ message: { content: '😀'.repeat(600_000) } }] });
    publishRequestEvents(bus, {
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
      requestBody,
      responseBody,
      errorMessage: undefined,
    });
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
});
