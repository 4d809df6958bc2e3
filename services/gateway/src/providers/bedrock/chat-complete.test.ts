import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { UpstreamError } from '@switchyard/core';
import { fakeAwsCredentials, startFakeBedrock, type FakeBedrock } from '@switchyard/testing';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import type { ProviderResponse, ProviderTarget } from '../types.ts';
import { bedrockProvider } from './chat-complete.ts';

const dispatcher = new Agent();
const provider = bedrockProvider(dispatcher);
let fake: FakeBedrock;
let withToken: FakeBedrock;

before(async () => {
  fake = await startFakeBedrock({ apiKey: 'bedrock-api-key-1' });
  withToken = await startFakeBedrock({ sessionToken: 'session-token-1' });
});
after(async () => {
  await fake.close();
  await withToken.close();
  await dispatcher.close();
});

function target(
  overrides: Partial<ProviderTarget> = {},
  settings: Record<string, string> = {},
): ProviderTarget {
  return {
    provider: 'bedrock',
    apiKey: '',
    baseUrl: fake.url,
    headers: {},
    ...overrides,
    settings: {
      aws_region: fakeAwsCredentials.region,
      aws_access_key_id: fakeAwsCredentials.accessKeyId,
      aws_secret_access_key: fakeAwsCredentials.secretAccessKey,
      ...settings,
    },
  };
}

function complete(body: Record<string, unknown>, to: ProviderTarget = target()): Promise<ProviderResponse> {
  return provider.chatCompletions({
    body: chatCompletionRequest.parse({ messages: [{ role: 'user', content: 'Hello there' }], ...body }),
    rawBody: undefined,
    target: to,
    signal: new AbortController().signal,
    timeoutMs: 5_000,
  });
}

async function json(response: ProviderResponse) {
  assert.equal(response.kind, 'json');
  return JSON.parse(response.body.toString('utf8'));
}

/** The `data:` payloads of a translated stream, in order. */
async function streamed(response: ProviderResponse): Promise<string[]> {
  assert.equal(response.kind, 'stream');
  assert.equal(response.contentType, 'text/event-stream');
  const parts: Buffer[] = [];
  for await (const chunk of response.body) parts.push(Buffer.from(chunk));
  const text = Buffer.concat(parts).toString('utf8');
  assert.ok(text.endsWith('\n\n'), 'every event is terminated');
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      assert.ok(event.startsWith('data: '), event);
      return event.slice('data: '.length);
    });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const parsed = (data: string[]): any[] => data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d));

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, String(err));
    return err;
  }
  assert.fail('the call succeeded');
}

describe('signing', () => {
  test('requests carry a SigV4 Authorization for service bedrock, scoped to the region and the access key', async () => {
    const res = await complete({ model: 'anthropic.claude-3-haiku-20240307-v1:0' });
    assert.equal((await json(res)).choices[0].message.content, 'Echo: Hello there');
    const request = fake.requests.at(-1)!;
    assert.equal(request.path, '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
    assert.match(
      String(request.headers.authorization),
      new RegExp(
        `^AWS4-HMAC-SHA256 Credential=${fakeAwsCredentials.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, ` +
          'SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$',
      ),
    );
    assert.match(String(request.headers['x-amz-date']), /^\d{8}T\d{6}Z$/);
  });

  test('temporary credentials send and sign the session token', async () => {
    const res = await complete(
      { model: 'm' },
      target({ baseUrl: withToken.url }, { aws_session_token: 'session-token-1' }),
    );
    assert.equal(res.status, 200);
    const request = withToken.requests.at(-1)!;
    assert.equal(request.headers['x-amz-security-token'], 'session-token-1');
    assert.match(
      String(request.headers.authorization),
      /SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,/,
    );
  });

  test('a wrong secret is rejected by the upstream with 403, which reaches the caller as a 403', async () => {
    const err = await rejection(
      complete({ model: 'm' }, target({}, { aws_secret_access_key: 'not-the-secret' })),
    );
    assert.equal(err.status, 403);
    assert.equal(err.code, 'InvalidSignatureException');
    assert.match(err.message, /^bedrock error: The request signature we calculated does not match/);
  });

  test('an unknown access key is a 403 UnrecognizedClientException', async () => {
    const err = await rejection(
      complete({ model: 'm' }, target({}, { aws_access_key_id: 'AKIAUNKNOWN000000000' })),
    );
    assert.equal(err.status, 403);
    assert.equal(err.code, 'UnrecognizedClientException');
  });

  test('credentials scoped to another region are rejected', async () => {
    const err = await rejection(complete({ model: 'm' }, target({}, { aws_region: 'eu-west-1' })));
    assert.equal(err.status, 403);
    assert.match(err.message, /scoped to a valid region/);
  });

  test('without AWS credentials a Bedrock API key is sent as a bearer token', async () => {
    const res = await complete(
      { model: 'm' },
      target({ apiKey: 'bedrock-api-key-1' }, { aws_access_key_id: '', aws_secret_access_key: '' }),
    );
    assert.equal(res.status, 200);
    assert.equal(fake.requests.at(-1)!.headers.authorization, 'Bearer bedrock-api-key-1');
  });

  test('missing credentials or region are a 400 naming the setting, and nothing is sent', async () => {
    const before = fake.requests.length;
    const cases: Array<[Partial<ProviderTarget>, Record<string, string>, string]> = [
      [{}, { aws_access_key_id: '' }, 'aws_access_key_id'],
      [{}, { aws_secret_access_key: '' }, 'aws_secret_access_key'],
      [{}, { aws_region: '' }, 'aws_region'],
      [{ baseUrl: undefined }, { aws_region: '' }, 'aws_region'],
    ];
    for (const [overrides, settings, param] of cases) {
      await assert.rejects(complete({ model: 'm' }, target(overrides, settings)), { status: 400, param });
    }
    assert.equal(fake.requests.length, before);
  });
});

describe('a completion', () => {
  test('sends a Converse body and answers in the OpenAI shape with the client’s model', async () => {
    const res = await complete({ model: 'amazon.nova-pro-v1:0', max_tokens: 100, temperature: 0.2 });
    const body = await json(res);
    assert.match(body.id, /^chatcmpl-[0-9a-f-]{36}$/);
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.model, 'amazon.nova-pro-v1:0');
    assert.deepEqual(body.choices, [
      {
        index: 0,
        finish_reason: 'stop',
        message: { role: 'assistant', content: 'Echo: Hello there' },
        logprobs: null,
      },
    ]);
    assert.deepEqual(body.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
    assert.deepEqual(JSON.parse(fake.requests.at(-1)!.body), {
      messages: [{ role: 'user', content: [{ text: 'Hello there' }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2 },
    });
  });

  test('tool use comes back as tool_calls', async () => {
    const body = await json(await complete({ model: 'tool-use' }));
    assert.equal(body.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(
      body.choices[0].message.tool_calls.map((c: { id: string; function: unknown }) => [c.id, c.function]),
      [
        ['tooluse_fake_1', { name: 'get_weather', arguments: '{"city":"Paris"}' }],
        ['tooluse_fake_2', { name: 'get_weather', arguments: '{"city":"Tokyo"}' }],
      ],
    );
  });

  test('cache reads are reported as cached_tokens', async () => {
    const body = await json(await complete({ model: 'cached' }));
    assert.deepEqual(body.usage, {
      prompt_tokens: 13,
      completion_tokens: 3,
      total_tokens: 16,
      prompt_tokens_details: { cached_tokens: 4 },
    });
  });
});

describe('a stream', () => {
  test('is a role chunk, content deltas, a finish chunk and [DONE], in that order', async () => {
    const data = await streamed(
      await complete({ model: 'anthropic.claude-3-haiku-20240307-v1:0', stream: true }),
    );
    assert.equal(
      fake.requests.at(-1)!.path,
      '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream',
    );
    assert.equal(data.at(-1), '[DONE]');
    const chunks = parsed(data);
    assert.deepEqual(chunks[0].choices, [
      { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
    ]);
    assert.deepEqual(chunks.at(-1).choices, [{ index: 0, delta: {}, finish_reason: 'stop' }]);
    const text = chunks
      .slice(1, -1)
      .map((c) => c.choices[0].delta.content)
      .join('');
    assert.equal(text, 'Echo: Hello there');
    for (const chunk of chunks) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.id, chunks[0].id);
      assert.equal(chunk.model, 'anthropic.claude-3-haiku-20240307-v1:0');
      assert.equal(chunk.usage, undefined);
    }
  });

  test('with stream_options.include_usage ends with a usage chunk with no choices before [DONE]', async () => {
    const data = await streamed(
      await complete({ model: 'cached', stream: true, stream_options: { include_usage: true } }),
    );
    assert.equal(data.at(-1), '[DONE]');
    const chunks = parsed(data);
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1).choices, []);
    assert.deepEqual(chunks.at(-1).usage, {
      prompt_tokens: 13,
      completion_tokens: 3,
      total_tokens: 16,
      prompt_tokens_details: { cached_tokens: 4 },
    });
  });

  test('tool use arrives as tool_call deltas numbered per tool call, then finish_reason tool_calls', async () => {
    const chunks = parsed(await streamed(await complete({ model: 'tool-use', stream: true })));
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.deepEqual(toolDeltas[0], {
      index: 0,
      id: 'tooluse_fake_1',
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    const starts = toolDeltas.filter((d) => d.id);
    assert.deepEqual(
      starts.map((d) => [d.index, d.id]),
      [
        [0, 'tooluse_fake_1'],
        [1, 'tooluse_fake_2'],
      ],
    );
    const args = (index: number) =>
      toolDeltas
        .filter((d) => d.index === index)
        .map((d) => d.function.arguments)
        .join('');
    assert.equal(args(0), '{"city":"Paris"}');
    assert.equal(args(1), '{"city":"Tokyo"}');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Let me check.');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls');
  });

  test('reasoning arrives as content_blocks deltas with the block index, before the text', async () => {
    const chunks = parsed(await streamed(await complete({ model: 'reasoning', stream: true })));
    const blocks = chunks.flatMap((c) => c.choices[0]?.delta.content_blocks ?? []);
    assert.deepEqual(blocks, [
      { index: 0, type: 'thinking', thinking: 'The user greets me.' },
      { index: 0, type: 'thinking', thinking: '', signature: 'sig-fake-1' },
      { index: 1, type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
    ]);
    const firstText = chunks.findIndex((c) => c.choices[0]?.delta.content);
    const lastBlock = chunks.findLastIndex((c) => c.choices[0]?.delta.content_blocks);
    assert.ok(lastBlock < firstText);
  });

  test('a guardrail intervention finishes with content_filter', async () => {
    const chunks = parsed(await streamed(await complete({ model: 'guardrail', stream: true })));
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'content_filter');
  });

  for (const [model, code, message] of [
    [
      'stream-throttled',
      'throttlingException',
      'bedrock error: Too many requests, please wait before trying again.',
    ],
    ['stream-model-error', 'modelStreamErrorException', 'bedrock error: The model stream failed.'],
  ] as const) {
    test(`an exception frame mid-stream (${code}) becomes an error event, then [DONE]`, async () => {
      const data = await streamed(await complete({ model, stream: true }));
      assert.equal(data.at(-1), '[DONE]');
      const events = parsed(data);
      assert.equal(events[1].choices[0].delta.content, 'Partial ');
      assert.deepEqual(events.at(-1), { error: { message, type: 'upstream_error', param: null, code } });
      assert.ok(!events.some((e) => e.choices?.[0]?.finish_reason), 'no finish chunk after a failure');
    });
  }
});

describe('upstream errors', () => {
  for (const [status, type] of [
    [400, 'ValidationException'],
    [403, 'AccessDeniedException'],
    [404, 'ResourceNotFoundException'],
    [429, 'ThrottlingException'],
    [500, 'InternalServerException'],
    [503, 'ServiceUnavailableException'],
  ] as const) {
    test(`an HTTP ${status} ${type} keeps its status, names bedrock and carries the type as code`, async () => {
      for (const stream of [false, true]) {
        const err = await rejection(complete({ model: `error-${status}`, stream }));
        assert.deepEqual(err.toBody(), {
          error: {
            message: `bedrock error: Simulated error ${status}.`,
            type: 'upstream_error',
            param: null,
            code: type,
          },
        });
        assert.equal(err.status, status);
      }
    });
  }

  test('a 429 passes the upstream retry-after on', async () => {
    const err = await rejection(complete({ model: 'error-429' }));
    assert.deepEqual(err.headers, { 'retry-after': '3' });
  });

  test('a request Bedrock finds invalid is its 400 with the reason', async () => {
    const err = await rejection(
      complete({ model: 'm', messages: [{ role: 'assistant', content: 'I speak first' }] }),
    );
    assert.equal(err.status, 400);
    assert.match(err.message, /^bedrock error: A conversation must start with a user message/);
  });
});
