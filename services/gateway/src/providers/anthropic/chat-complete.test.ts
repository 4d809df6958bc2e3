import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import type { UpstreamError } from '@switchyard/core';
import {
  eventually,
  FAKE_ANTHROPIC_USAGE,
  startFakeAnthropic,
  type FakeAnthropic,
} from '@switchyard/testing';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../openai-format.ts';
import type { ProviderResponse, ProviderTarget } from '../types.ts';
import { messagesUrl } from './api.ts';
import { anthropicProvider } from './chat-complete.ts';
import { chunksFromEvents } from './chat-stream.ts';

const apiKey = 'sk-ant-test-key';
let fake: FakeAnthropic;
const dispatcher = new Agent();
const provider = anthropicProvider(dispatcher);

before(async () => {
  fake = await startFakeAnthropic({ apiKey });
});
after(async () => {
  await fake.close();
  await dispatcher.close();
});

function target(overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return { provider: 'anthropic', apiKey, baseUrl: fake.baseUrl, headers: {}, settings: {}, ...overrides };
}

function complete(
  fields: Record<string, unknown>,
  overrides: Partial<ProviderTarget> = {},
  signal = new AbortController().signal,
) {
  return provider.chatCompletions({
    body: chatCompletionRequest.parse({ messages: [{ role: 'user', content: 'Hi there' }], ...fields }),
    rawBody: undefined,
    target: target(overrides),
    signal,
    timeoutMs: 5_000,
  });
}

async function json(response: ProviderResponse): Promise<ChatCompletion> {
  assert.equal(response.kind, 'json');
  return JSON.parse(response.body.toString('utf8'));
}

/** The data of each server-sent event the client would receive. */
async function events(response: ProviderResponse): Promise<string[]> {
  assert.equal(response.kind, 'stream');
  assert.equal(response.contentType, 'text/event-stream');
  let text = '';
  for await (const chunk of response.body) text += Buffer.from(chunk).toString('utf8');
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      assert.match(event, /^data: /);
      return event.slice('data: '.length);
    });
}

const chunksOf = (data: string[]) =>
  data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as ChatCompletionChunk);

async function stream(model: string, fields: Record<string, unknown> = {}) {
  const data = await events(await complete({ model, stream: true, ...fields }));
  assert.equal(data.at(-1), '[DONE]', 'the stream ends with [DONE]');
  return chunksOf(data);
}

describe('the request Anthropic receives', () => {
  test('goes to POST {base}/messages with x-api-key, anthropic-version and a JSON body', async () => {
    await complete({ model: 'claude-x', max_tokens: 100 });
    const request = fake.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1/messages');
    assert.equal(request.headers['x-api-key'], apiKey);
    assert.equal(request.headers['anthropic-version'], '2023-06-01');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(request.body), {
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi there' }],
    });
  });

  test('the integration’s headers add beta flags and may pin another version', async () => {
    await complete(
      { model: 'claude-x' },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07', 'anthropic-version': '2024-01-01' } },
    );
    const request = fake.requests.at(-1)!;
    assert.equal(request.headers['anthropic-beta'], 'context-1m-2025-08-07');
    assert.equal(request.headers['anthropic-version'], '2024-01-01');
  });

  test('the base URL defaults to api.anthropic.com/v1 and may be overridden', () => {
    assert.equal(messagesUrl(target({ baseUrl: undefined })), 'https://api.anthropic.com/v1/messages');
    assert.equal(
      messagesUrl(target({ baseUrl: 'https://proxy.example/anthropic/v1/' })),
      'https://proxy.example/anthropic/v1/messages',
    );
  });
});

describe('a non-streamed answer', () => {
  test('is a chat completion with the text, finish reason and usage', async () => {
    const completion = await json(await complete({ model: 'claude-x' }));
    assert.equal(completion.object, 'chat.completion');
    assert.match(completion.id, /^msg_fake_/);
    assert.equal(completion.model, 'claude-x');
    assert.deepEqual(completion.choices, [
      {
        index: 0,
        message: { role: 'assistant', content: 'Echo: Hi there' },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    assert.deepEqual(completion.usage, {
      prompt_tokens: 15,
      completion_tokens: 6,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 3, cache_creation_tokens: 2 },
    });
  });

  test('tool use comes back as tool calls, finish reason tool_calls', async () => {
    const completion = await json(await complete({ model: 'tool-use' }));
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, 'Let me check.');
    assert.deepEqual(choice.message.tool_calls, [
      { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      {
        id: 'toolu_01B',
        type: 'function',
        function: { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      },
    ]);
  });

  test('thinking and redacted thinking come back in content_blocks', async () => {
    const completion = await json(await complete({ model: 'thinking' }));
    assert.deepEqual(completion.choices[0]!.message.content_blocks, [
      { type: 'thinking', thinking: 'Simple arithmetic: 2+2=4.', signature: 'EqQBCgIYAhIM1gbcDa9G' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'The answer is 4.' },
    ]);
    assert.equal(completion.choices[0]!.message.content, 'The answer is 4.');
  });

  for (const [model, reason] of [
    ['max-tokens', 'length'],
    ['refusal', 'content_filter'],
    ['stop-sequence', 'stop'],
  ] as const) {
    test(`stop reason of ${model} is finish reason ${reason}`, async () => {
      const completion = await json(await complete({ model, stop: ['two'] }));
      assert.equal(completion.choices[0]!.finish_reason, reason);
    });
  }
});

describe('a streamed answer', () => {
  test('opens with the role, then content deltas, the finish reason, and [DONE]', async () => {
    const chunks = await stream('claude-x');
    assert.deepEqual(chunks[0]!.choices, [
      { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
    ]);
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'claude-x'));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'every chunk has the message id');
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(content, 'Echo: Hi there');
    assert.ok(chunks.filter((c) => c.choices[0]?.delta.content).length > 1, 'text arrives in several deltas');
    assert.deepEqual(chunks.at(-1)!.choices, [{ index: 0, delta: {}, finish_reason: 'stop' }]);
    assert.ok(
      chunks.every((c) => c.usage === undefined),
      'no usage chunk unless asked for',
    );
  });

  test('with include_usage, a usage chunk with no choices comes last', async () => {
    const chunks = await stream('claude-x', { stream_options: { include_usage: true } });
    assert.deepEqual(chunks.at(-1), {
      id: chunks[0]!.id,
      object: 'chat.completion.chunk',
      created: chunks[0]!.created,
      model: 'claude-x',
      choices: [],
      usage: {
        prompt_tokens: 15,
        completion_tokens: FAKE_ANTHROPIC_USAGE.output_tokens,
        total_tokens: 21,
        prompt_tokens_details: { cached_tokens: 3, cache_creation_tokens: 2 },
      },
    });
    assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
  });

  test('tool use arrives as tool-call deltas: stable indexes, id and name first, then argument pieces', async () => {
    const chunks = await stream('tool-use');
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(deltas[0], {
      index: 0,
      id: 'toolu_01A',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    const second = deltas.findIndex((d) => d.index === 1);
    assert.deepEqual(deltas[second], {
      index: 1,
      id: 'toolu_01B',
      type: 'function',
      function: { name: 'get_time', arguments: '' },
    });
    assert.ok(
      deltas
        .filter((d) => d.id === undefined)
        .every((d) => d.function?.name === undefined && d.function?.arguments),
      'later deltas carry only argument pieces',
    );
    const argumentsOf = (index: number) =>
      deltas
        .filter((d) => d.index === index)
        .map((d) => d.function?.arguments ?? '')
        .join('');
    assert.deepEqual(JSON.parse(argumentsOf(0)), { city: 'Paris' });
    assert.deepEqual(JSON.parse(argumentsOf(1)), { zone: 'Europe/Paris' });
    assert.ok(deltas.filter((d) => d.index === 0).length > 2, 'arguments arrive in pieces');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Let me check.');
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'tool_calls');
  });

  test('thinking arrives as content_blocks deltas: text pieces, the signature, redacted thinking whole', async () => {
    const chunks = await stream('thinking');
    const blocks = chunks.flatMap((c) => c.choices[0]?.delta.content_blocks ?? []);
    const thinking = blocks.filter((b) => b.index === 0);
    assert.ok(thinking.every((b) => b.type === 'thinking'));
    assert.equal(
      thinking.map((b) => (b.type === 'thinking' ? b.thinking : '')).join(''),
      'Simple arithmetic: 2+2=4.',
    );
    assert.deepEqual(thinking.at(-1), {
      index: 0,
      type: 'thinking',
      thinking: '',
      signature: 'EqQBCgIYAhIM1gbcDa9G',
    });
    assert.deepEqual(
      blocks.filter((b) => b.index === 1),
      [{ index: 1, type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' }],
    );
    const firstText = chunks.findIndex((c) => c.choices[0]?.delta.content);
    const lastThinking = chunks.findLastIndex((c) => c.choices[0]?.delta.content_blocks);
    assert.ok(lastThinking < firstText, 'thinking comes before the answer');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'The answer is 4.');
  });

  test('a client that goes away closes the upstream stream', async () => {
    const client = new AbortController();
    const response = await complete({ model: 'slow-stream', stream: true }, {}, client.signal);
    assert.equal(response.kind, 'stream');
    const chunks = response.body[Symbol.asyncIterator]();
    await chunks.next();
    const before = fake.aborted;
    client.abort();
    await chunks.next().catch(() => undefined);
    await eventually(() => (fake.aborted > before ? true : undefined), {
      what: 'the upstream request to close',
    });
  });

  test('an error event mid-stream becomes an error event, then [DONE]', async () => {
    const data = await events(await complete({ model: 'stream-error', stream: true }));
    assert.equal(data.at(-1), '[DONE]');
    const error = JSON.parse(data.at(-2)!);
    assert.deepEqual(error, {
      error: {
        message: 'anthropic error: Overloaded',
        type: 'upstream_error',
        param: null,
        code: 'overloaded_error',
      },
    });
    assert.equal(
      chunksOf(data.slice(0, -2))
        .map((c) => c.choices[0]?.delta.content ?? '')
        .join(''),
      'Echo: Hi there',
      'what came before the error was delivered',
    );
  });

  test('a stream that ends before message_stop is reported as incomplete', async () => {
    const upstream = [
      { type: 'message_start', message: { id: 'msg_1', model: 'm', content: [], usage: {} } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hal' } },
    ];
    async function* source() {
      for (const event of upstream) yield { event: event.type, data: JSON.stringify(event) };
    }
    const received: string[] = [];
    await assert.rejects(
      async () => {
        for await (const chunk of chunksFromEvents(source(), { created: 0, includeUsage: true })) {
          received.push(Buffer.from(chunk).toString('utf8'));
        }
      },
      (err: UpstreamError) => err.status === 502 && err.code === 'upstream_stream_incomplete',
    );
    assert.equal(received.length, 2, 'the role and the text were passed on before');
  });
});

describe('upstream errors', () => {
  const failure = async (model: string, overrides: Partial<ProviderTarget> = {}) => {
    try {
      await complete({ model }, overrides);
    } catch (err) {
      return err as UpstreamError;
    }
    assert.fail('expected the call to fail');
  };

  test('keep the upstream status, say "anthropic error: ..." and carry the error type as the code', async () => {
    const err = await failure('error-400');
    assert.equal(err.status, 400);
    assert.equal(err.message, 'anthropic error: Simulated error 400.');
    assert.equal(err.code, 'invalid_request_error');
  });

  test('a wrong key is the upstream 401', async () => {
    const err = await failure('claude-x', { apiKey: 'wrong' });
    assert.equal(err.status, 401);
    assert.equal(err.message, 'anthropic error: invalid x-api-key');
    assert.equal(err.code, 'authentication_error');
  });

  for (const status of [429, 529]) {
    test(`${status} keeps its retry-after`, async () => {
      const err = await failure(`error-${status}`);
      assert.equal(err.status, status);
      assert.deepEqual(err.headers, { 'retry-after': '7' });
    });
  }

  test('a streamed request that fails before the stream starts is an error response, not a stream', async () => {
    await assert.rejects(
      complete({ model: 'error-503', stream: true }),
      (err: UpstreamError) => err.status === 503,
    );
  });
});
