import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import type { UpstreamError } from '@switchyard/core';
import {
  eventually,
  FAKE_GEMINI_THOUGHTS_TOKENS,
  FAKE_GEMINI_USAGE,
  startFakeGemini,
  type FakeGemini,
} from '@switchyard/testing';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../openai-format.ts';
import type { ProviderResponse, ProviderTarget } from '../types.ts';
import { googleProvider } from './chat-complete.ts';
import { chunksFromEvents } from './chat-stream.ts';

const apiKey = 'gemini-test-key';
let fake: FakeGemini;
const dispatcher = new Agent();
const provider = googleProvider(dispatcher);

before(async () => {
  fake = await startFakeGemini({ apiKey });
});
after(async () => {
  await fake.close();
  await dispatcher.close();
});

function complete(
  fields: Record<string, unknown>,
  overrides: Partial<ProviderTarget> = {},
  signal = new AbortController().signal,
) {
  return provider.chatCompletions({
    body: chatCompletionRequest.parse({ messages: [{ role: 'user', content: 'Hi there' }], ...fields }),
    rawBody: undefined,
    target: { provider: 'google', apiKey, baseUrl: fake.baseUrl, headers: {}, settings: {}, ...overrides },
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

const contentOf = (chunks: ChatCompletionChunk[], index = 0) =>
  chunks
    .flatMap((c) => c.choices.filter((choice) => choice.index === index))
    .map((choice) => choice.delta.content ?? '')
    .join('');

const expectedUsage = {
  prompt_tokens: FAKE_GEMINI_USAGE.promptTokenCount,
  completion_tokens: FAKE_GEMINI_USAGE.candidatesTokenCount,
  total_tokens: FAKE_GEMINI_USAGE.totalTokenCount,
  prompt_tokens_details: { cached_tokens: FAKE_GEMINI_USAGE.cachedContentTokenCount },
};

describe('the request Gemini receives', () => {
  test('goes to models/{model}:generateContent with x-goog-api-key and a translated body', async () => {
    await complete({ model: 'gemini-x', max_tokens: 100 });
    const request = fake.requests.at(-1)!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/v1beta/models/gemini-x:generateContent');
    assert.equal(request.headers['x-goog-api-key'], apiKey);
    assert.equal(request.headers.authorization, undefined);
    assert.deepEqual(JSON.parse(request.body), {
      contents: [{ role: 'user', parts: [{ text: 'Hi there' }] }],
      generationConfig: { maxOutputTokens: 100 },
    });
  });

  test('a streamed request goes to streamGenerateContent?alt=sse', async () => {
    await stream('gemini-x');
    assert.equal(fake.requests.at(-1)!.path, '/v1beta/models/gemini-x:streamGenerateContent?alt=sse');
  });
});

describe('a non-streamed answer', () => {
  test('is a chat completion with the text, finish reason and usage', async () => {
    const completion = await json(await complete({ model: 'gemini-x' }));
    assert.equal(completion.object, 'chat.completion');
    assert.match(completion.id, /^fake-response-/);
    assert.equal(completion.model, 'gemini-x-001');
    assert.deepEqual(completion.choices, [
      {
        index: 0,
        message: { role: 'assistant', content: 'Echo: Hi there' },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    assert.deepEqual(completion.usage, expectedUsage);
  });

  test('n > 1 gives one choice per candidate', async () => {
    const completion = await json(await complete({ model: 'gemini-x', n: 3 }));
    assert.deepEqual(
      completion.choices.map((c) => [c.index, c.message.content]),
      [
        [0, 'Echo: Hi there'],
        [1, 'Echo: Hi there (2)'],
        [2, 'Echo: Hi there (3)'],
      ],
    );
  });

  test('function calls come back as tool calls with ids and the thought signature', async () => {
    const completion = await json(await complete({ model: 'function-call' }));
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const calls = choice.message.tool_calls!;
    assert.deepEqual(
      calls.map((c) => c.function),
      [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
    );
    assert.ok(calls.every((c) => /^call_[0-9a-f]{24}$/.test(c.id)));
    assert.notEqual(calls[0]!.id, calls[1]!.id);
    assert.deepEqual((calls[0] as { extra_content?: unknown }).extra_content, {
      google: { thought_signature: 'CiQB0e2Kb7x1yH0f' },
    });
    assert.equal(completion.usage!.completion_tokens_details!.reasoning_tokens, FAKE_GEMINI_THOUGHTS_TOKENS);
  });

  test('a candidate stopped for safety: null content, content_filter', async () => {
    const completion = await json(await complete({ model: 'safety' }));
    assert.deepEqual(completion.choices[0]!.message, { role: 'assistant', content: null });
    assert.equal(completion.choices[0]!.finish_reason, 'content_filter');
  });

  test('a blocked prompt: HTTP 200, null content, content_filter', async () => {
    const response = await complete({ model: 'blocked' });
    assert.equal(response.status, 200);
    const completion = await json(response);
    assert.deepEqual(completion.choices, [
      {
        index: 0,
        message: { role: 'assistant', content: null },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
  });

  test('MAX_TOKENS is finish reason length', async () => {
    assert.equal((await json(await complete({ model: 'max-tokens' }))).choices[0]!.finish_reason, 'length');
  });

  test('logprobs asked for come back per token', async () => {
    const completion = await json(await complete({ model: 'gemini-x', logprobs: true, top_logprobs: 2 }));
    const tokens = completion.choices[0]!.logprobs!.content!;
    assert.equal(tokens.map((t) => t.token).join(''), 'Echo: Hi there');
    assert.equal(tokens[0]!.top_logprobs.length, 2);
  });
});

describe('a streamed answer', () => {
  test('opens with the role, then content deltas, the finish reason, and [DONE]', async () => {
    const chunks = await stream('gemini-x');
    assert.deepEqual(chunks[0]!.choices, [
      { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
    ]);
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gemini-x-001'));
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1, 'every chunk has the response id');
    assert.equal(contentOf(chunks), 'Echo: Hi there');
    assert.ok(chunks.filter((c) => c.choices[0]?.delta.content).length > 1, 'text arrives in several deltas');
    assert.deepEqual(chunks.at(-1)!.choices, [{ index: 0, delta: {}, finish_reason: 'stop' }]);
    assert.ok(
      chunks.every((c) => c.usage === undefined),
      'no usage chunk unless asked for',
    );
  });

  test('with include_usage, the final counts come last in a chunk with no choices', async () => {
    const chunks = await stream('gemini-x', { stream_options: { include_usage: true } });
    assert.deepEqual(chunks.at(-1)!.choices, []);
    assert.deepEqual(chunks.at(-1)!.usage, expectedUsage);
  });

  test('n > 1 streams each candidate under its own index, each with role first and a finish reason', async () => {
    const chunks = await stream('gemini-x', { n: 2 });
    for (const index of [0, 1]) {
      const own = chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index));
      assert.deepEqual(own[0]!.delta, { role: 'assistant', content: '' });
      assert.equal(own.at(-1)!.finish_reason, 'stop');
    }
    assert.equal(contentOf(chunks, 0), 'Echo: Hi there');
    assert.equal(contentOf(chunks, 1), 'Echo: Hi there (2)');
  });

  test('thought summaries arrive as content_blocks deltas, function calls as whole tool-call deltas', async () => {
    const chunks = await stream('function-call', { stream_options: { include_usage: true } });
    assert.equal(chunks[0]!.choices[0]!.delta.role, 'assistant');
    const blocks = chunks.flatMap((c) => c.choices[0]?.delta.content_blocks ?? []);
    assert.deepEqual(blocks, [
      { index: 0, type: 'thinking', thinking: '**Planning** The user wants the weather; use the tool.' },
    ]);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(
      calls.map((c) => [c.index, c.type, c.function]),
      [
        [0, 'function', { name: 'get_weather', arguments: '{"city":"Paris"}' }],
        [1, 'function', { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' }],
      ],
    );
    assert.ok(calls.every((c) => c.id?.startsWith('call_')));
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    assert.equal(finish!.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(
      chunks.at(-1)!.usage!.completion_tokens_details!.reasoning_tokens,
      FAKE_GEMINI_THOUGHTS_TOKENS,
    );
  });

  test('a blocked prompt streams the role, then finish reason content_filter', async () => {
    const chunks = await stream('blocked');
    assert.deepEqual(
      chunks.map((c) => c.choices[0]),
      [
        { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
        { index: 0, delta: {}, finish_reason: 'content_filter' },
      ],
    );
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
    assert.deepEqual(JSON.parse(data.at(-2)!), {
      error: {
        message: 'google error: The model is overloaded. Please try again later.',
        type: 'upstream_error',
        param: null,
        code: 'unavailable',
      },
    });
    assert.equal(
      contentOf(chunksOf(data.slice(0, -2))),
      'Echo: ',
      'what came before the error was delivered',
    );
  });

  test('a stream that closes before a finish reason is reported as incomplete', async () => {
    async function* source() {
      yield {
        event: undefined,
        data: JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hal' }] } }] }),
      };
    }
    const context = { created: 0, model: 'm', newToolCallId: () => 'call_1', includeUsage: false };
    await assert.rejects(
      async () => {
        for await (const _ of chunksFromEvents(source(), context));
      },
      (err: UpstreamError) => err.status === 502 && err.code === 'upstream_stream_incomplete',
    );
  });

  test('logprobs in a chunk ride on that chunk’s content delta', async () => {
    const logprobsResult = { chosenCandidates: [{ token: 'Hi', logProbability: -0.5 }] };
    async function* source() {
      const candidate = { content: { parts: [{ text: 'Hi' }] }, finishReason: 'STOP', logprobsResult };
      yield { event: undefined, data: JSON.stringify({ candidates: [candidate], responseId: 'r' }) };
    }
    const context = { created: 0, model: 'm', newToolCallId: () => 'call_1', includeUsage: false };
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of chunksFromEvents(source(), context)) {
      chunks.push(JSON.parse(Buffer.from(chunk).toString('utf8').slice('data: '.length)));
    }
    assert.deepEqual(chunks[1]!.choices[0], {
      index: 0,
      delta: { content: 'Hi' },
      finish_reason: null,
      logprobs: { content: [{ token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [] }] },
    });
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

  test('keep the upstream status and say "google error: ..."', async () => {
    const err = await failure('error-500');
    assert.equal(err.status, 500);
    assert.equal(err.message, 'google error: Simulated error 500.');
    assert.equal(err.code, 'internal');
  });

  test('a wrong key is Gemini’s 400', async () => {
    const err = await failure('gemini-x', { apiKey: 'wrong' });
    assert.equal(err.status, 400);
    assert.equal(err.message, 'google error: API key not valid. Please pass a valid API key.');
  });

  test('a 429 gets retry-after from the RetryInfo delay', async () => {
    const err = await failure('error-429');
    assert.equal(err.status, 429);
    assert.equal(err.code, 'resource_exhausted');
    assert.deepEqual(err.headers, { 'retry-after': '37' });
  });
});
