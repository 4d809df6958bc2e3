import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventStreamCodec, type MessageHeaders } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { converseStreamToSse } from './converse-stream.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const meta = { id: 'chatcmpl-1', created: 1_700_000_000, model: 'm', includeUsage: false };

function frame(headers: Record<string, string>, payload: unknown = {}): Uint8Array {
  const typed: MessageHeaders = Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, { type: 'string', value }]),
  );
  return codec.encode({ headers: typed, body: fromUtf8(JSON.stringify(payload)) });
}

const event = (type: string, payload: unknown) =>
  frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);

async function* bytes(...frames: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* frames;
}

async function translated(source: AsyncIterable<Uint8Array>, options = meta) {
  const events: string[] = [];
  for await (const chunk of converseStreamToSse(source, options)) {
    const text = Buffer.from(chunk).toString('utf8');
    assert.match(text, /^data: .*\n\n$/s);
    events.push(text.slice('data: '.length, -2));
  }
  return events;
}

describe('ConverseStream frames → OpenAI chunks', () => {
  test('the example sequence from the wire reference: text, then a tool call at index 0, then usage', async () => {
    const events = await translated(
      bytes(
        event('messageStart', { role: 'assistant' }),
        event('contentBlockDelta', {
          contentBlockIndex: 0,
          delta: { text: 'Let me ' },
          p: 'abcdefghijklmnopqr',
        }),
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'check.' }, p: 'abcdefgh' }),
        event('contentBlockStop', { contentBlockIndex: 0 }),
        event('contentBlockStart', {
          contentBlockIndex: 1,
          start: { toolUse: { toolUseId: 'tooluse_abc123', name: 'get_weather' } },
        }),
        event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
        event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } }),
        event('contentBlockStop', { contentBlockIndex: 1 }),
        event('messageStop', { stopReason: 'tool_use' }),
        event('metadata', {
          usage: { inputTokens: 412, outputTokens: 40, totalTokens: 452 },
          metrics: { latencyMs: 1020 },
        }),
      ),
      { ...meta, includeUsage: true },
    );
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm' };
    const choice = (delta: object, finish_reason: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason }],
    });
    assert.deepEqual(
      events.map((e) => (e === '[DONE]' ? e : JSON.parse(e))),
      [
        choice({ role: 'assistant', content: '' }),
        choice({ content: 'Let me ' }),
        choice({ content: 'check.' }),
        choice({
          tool_calls: [
            {
              index: 0,
              id: 'tooluse_abc123',
              type: 'function',
              function: { name: 'get_weather', arguments: '' },
            },
          ],
        }),
        choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        choice({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        choice({}, 'tool_calls'),
        { ...base, choices: [], usage: { prompt_tokens: 412, completion_tokens: 40, total_tokens: 452 } },
        '[DONE]',
      ],
    );
  });

  test('an error frame becomes an error event with its code, then [DONE]', async () => {
    const events = await translated(
      bytes(
        event('messageStart', { role: 'assistant' }),
        frame({
          ':message-type': 'error',
          ':error-code': 'InternalFailure',
          ':error-message': 'Something broke.',
        }),
        event('messageStop', { stopReason: 'end_turn' }),
      ),
    );
    assert.deepEqual(events.slice(1), [
      JSON.stringify({
        error: {
          message: 'bedrock error: Something broke.',
          type: 'upstream_error',
          param: null,
          code: 'InternalFailure',
        },
      }),
      '[DONE]',
    ]);
  });

  test('a frame whose checksum does not match ends the stream with an error event and [DONE]', async () => {
    const corrupt = Uint8Array.from(
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } }),
    );
    corrupt[corrupt.length - 1]! ^= 0xff;
    const events = await translated(bytes(event('messageStart', { role: 'assistant' }), corrupt));
    assert.equal(events.length, 3);
    assert.equal(JSON.parse(events[1]!).error.code, 'upstream_stream_error');
    assert.equal(events[2], '[DONE]');
  });

  test('a stream that ends mid-frame ends with an error event and [DONE]', async () => {
    const start = event('messageStart', { role: 'assistant' });
    const events = await translated(bytes(start, start.subarray(0, 20)));
    assert.deepEqual(JSON.parse(events[1]!).error, {
      message: 'bedrock error: the event stream broke off (Truncated event message received.).',
      type: 'upstream_error',
      param: null,
      code: 'upstream_stream_error',
    });
    assert.equal(events[2], '[DONE]');
  });

  test('a frame split across reads at any byte is decoded whole', async () => {
    const all = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
      event('messageStop', { stopReason: 'end_turn' }),
    ]);
    async function* oneByteAtATime() {
      for (const byte of all) yield Uint8Array.of(byte);
    }
    const events = await translated(oneByteAtATime());
    assert.deepEqual(
      events.slice(0, -1).map((e) => JSON.parse(e).choices[0]),
      [
        { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
        { index: 0, delta: { content: 'Hi' }, finish_reason: null },
        { index: 0, delta: {}, finish_reason: 'stop' },
      ],
    );
  });
});
