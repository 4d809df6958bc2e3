import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { events as protoEvents } from '@switchyard/proto';
import {
  eventually,
  fakeAwsCredentials,
  startFakeAnthropic,
  startFakeAzureOpenAi,
  startFakeBedrock,
  startFakeGemini,
  startFakeOpenAi,
  startServiceHarness,
  type FakeAnthropic,
  type FakeAzureOpenAi,
  type FakeBedrock,
  type FakeGemini,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// POST /v1/messages as the official Anthropic SDK sees it, in front of every provider family:
// the gateway key in x-api-key, answers and streams in Anthropic's format, errors as its SDK
// classes. To Anthropic the request is passed through and its answer returned as it is; for any
// other provider both are translated.

const upstreamKey = 'sk-messages-upstream-0123456789';
let h: ServiceHarness;
let anthropicFake: FakeAnthropic;
let openaiFake: FakeOpenAi;
let geminiFake: FakeGemini;
let bedrockFake: FakeBedrock;
let azureFake: FakeAzureOpenAi;
let client: Anthropic;

async function integration(slug: string, provider: string, configurations: Record<string, string>) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: slug, slug, ai_provider_id: provider, key: upstreamKey, configurations },
  });
  assert.equal(res.status, 200, res.text);
}

before(async () => {
  anthropicFake = await startFakeAnthropic({ apiKey: upstreamKey });
  openaiFake = await startFakeOpenAi({ apiKey: upstreamKey });
  geminiFake = await startFakeGemini({ apiKey: upstreamKey });
  bedrockFake = await startFakeBedrock();
  azureFake = await startFakeAzureOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  await integration('claude', 'anthropic', { custom_host: anthropicFake.baseUrl });
  await integration('oai', 'openai', { custom_host: openaiFake.baseUrl });
  await integration('gemini', 'google', { custom_host: geminiFake.baseUrl });
  await integration('aws', 'bedrock', {
    custom_host: bedrockFake.url,
    aws_region: fakeAwsCredentials.region,
    aws_access_key_id: fakeAwsCredentials.accessKeyId,
    aws_secret_access_key: fakeAwsCredentials.secretAccessKey,
  });
  await integration('azure', 'azure-openai', {
    custom_host: azureFake.url,
    deployment: 'gpt4o-prod',
    api_version: '2024-10-21',
  });
  client = new Anthropic({ apiKey: h.workspaceKey, baseURL: h.url, maxRetries: 0 });
});
after(async () => {
  await h?.close();
  await anthropicFake?.close();
  await openaiFake?.close();
  await geminiFake?.close();
  await bedrockFake?.close();
  await azureFake?.close();
});

const hello = [{ role: 'user' as const, content: 'Hello there' }];
const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
};
const lastBody = (fake: { requests: Array<{ body: string }> }) => JSON.parse(fake.requests.at(-1)!.body);

function texts(message: Anthropic.Message): string {
  return message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

describe('the Anthropic SDK in front of an anthropic integration', () => {
  test('a message: text, stop reason, usage with cache tokens, and the gateway headers', async () => {
    const { data, response } = await client.messages
      .create({ model: '@claude/claude-sonnet-4-5', max_tokens: 100, messages: hello, system: 'Be brief.' })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'anthropic');
    assert.match(response.headers.get('x-vendor-trace-id') ?? '', /.+/);
    assert.equal(response.headers.get('x-vendor-provider-request-id'), 'req_fake');
    assert.equal(data.type, 'message');
    assert.match(data.id, /^msg_/);
    assert.equal(data.model, 'claude-sonnet-4-5');
    assert.deepEqual(data.content, [{ type: 'text', text: 'Echo: Hello there' }]);
    assert.equal(data.stop_reason, 'end_turn');
    assert.equal(data.stop_sequence, null);
    // Anthropic's usage as it is, its service tier included.
    assert.deepEqual(data.usage, {
      input_tokens: 10,
      output_tokens: 6,
      cache_creation_input_tokens: 2,
      cache_read_input_tokens: 3,
      service_tier: 'standard',
    });
    assert.deepEqual(lastBody(anthropicFake), {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'Be brief.',
      messages: hello,
    });
    const upstream = anthropicFake.requests.at(-1)!;
    assert.equal(upstream.headers['x-api-key'], upstreamKey);
  });

  test('a stream: finalMessage has the text, the stop reason and the usage', async () => {
    const stream = client.messages.stream({ model: '@claude/claude-x', max_tokens: 100, messages: hello });
    const deltas: string[] = [];
    stream.on('text', (text) => deltas.push(text));
    const message = await stream.finalMessage();
    assert.equal(texts(message), 'Echo: Hello there');
    assert.ok(deltas.length > 1, 'text arrives in several deltas');
    assert.equal(message.stop_reason, 'end_turn');
    assert.deepEqual(message.usage, {
      input_tokens: 10,
      output_tokens: 6,
      cache_creation_input_tokens: 2,
      cache_read_input_tokens: 3,
      service_tier: 'standard',
    });
    assert.equal(lastBody(anthropicFake).stream, true);
  });

  test('thinking blocks come back, streamed or not, and go back upstream with their signature', async () => {
    const params = {
      model: '@claude/thinking',
      max_tokens: 2048,
      messages: [{ role: 'user' as const, content: 'What is 2+2?' }],
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
    };
    const expected = [
      { type: 'thinking', thinking: 'Simple arithmetic: 2+2=4.', signature: 'EqQBCgIYAhIM1gbcDa9G' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
      { type: 'text', text: 'The answer is 4.' },
    ];
    const message = await client.messages.create(params);
    assert.deepEqual(message.content, expected);
    assert.deepEqual(lastBody(anthropicFake).thinking, { type: 'enabled', budget_tokens: 1024 });
    const streamed = await client.messages.stream(params).finalMessage();
    assert.deepEqual(
      streamed.content.map((b) => ({ ...b, ...(b.type === 'text' ? { citations: undefined } : {}) })),
      expected.map((b) => ({ ...b, ...(b.type === 'text' ? { citations: undefined } : {}) })),
    );

    await client.messages.create({
      ...params,
      model: '@claude/claude-x',
      messages: [
        ...params.messages,
        { role: 'assistant', content: message.content },
        { role: 'user', content: 'Sure?' },
      ],
    });
    const assistant = lastBody(anthropicFake).messages[1];
    assert.deepEqual(assistant.content, expected);
  });

  test('tool use, then a tool result turn', async () => {
    const first = await client.messages.create({
      model: '@claude/tool-use',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Weather and time in Paris?' }],
      tools: [weather],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content, [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_01B', name: 'get_time', input: { zone: 'Europe/Paris' } },
    ]);
    const sent = lastBody(anthropicFake);
    assert.deepEqual(sent.tools, [weather]);
    assert.deepEqual(sent.tool_choice, { type: 'auto', disable_parallel_tool_use: true });

    await client.messages.create({
      model: '@claude/claude-x',
      max_tokens: 200,
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: 'Sunny' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01B',
              content: [{ type: 'text', text: 'unknown zone' }],
              is_error: true,
            },
          ],
        },
      ],
    });
    // Passed through: the turns go as the client wrote them.
    assert.deepEqual(lastBody(anthropicFake).messages.slice(1), [
      { role: 'assistant', content: first.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: 'Sunny' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01B',
            content: [{ type: 'text', text: 'unknown zone' }],
            is_error: true,
          },
        ],
      },
    ]);
  });

  test('a streamed tool use: the SDK assembles the inputs', async () => {
    const message = await client.messages
      .stream({
        model: '@claude/tool-use',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Weather and time in Paris?' }],
        tools: [weather],
      })
      .finalMessage();
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(
      message.content.map((b) => (b.type === 'tool_use' ? [b.id, b.name, b.input] : b.type)),
      [
        'text',
        ['toolu_01A', 'get_weather', { city: 'Paris' }],
        ['toolu_01B', 'get_time', { zone: 'Europe/Paris' }],
      ],
    );
  });

  test('stop reasons: max_tokens, stop_sequence with the sequence, refusal', async () => {
    const cut = await client.messages.create({ model: '@claude/max-tokens', max_tokens: 5, messages: hello });
    assert.equal(cut.stop_reason, 'max_tokens');
    const stopped = await client.messages.create({
      model: '@claude/stop-sequence',
      max_tokens: 50,
      messages: hello,
      stop_sequences: ['three'],
    });
    assert.equal(stopped.stop_reason, 'stop_sequence');
    assert.equal(stopped.stop_sequence, 'three');
    const streamed = await client.messages
      .stream({ model: '@claude/stop-sequence', max_tokens: 50, messages: hello, stop_sequences: ['three'] })
      .finalMessage();
    assert.equal(streamed.stop_reason, 'stop_sequence');
    assert.equal(streamed.stop_sequence, 'three');
    const refused = await client.messages.create({
      model: '@claude/refusal',
      max_tokens: 50,
      messages: hello,
    });
    assert.equal(refused.stop_reason, 'refusal');
  });

  test("an upstream 429 is the SDK's RateLimitError, in Anthropic's error shape", async () => {
    const err = await client.messages
      .create({ model: '@claude/error-429', max_tokens: 10, messages: hello })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.RateLimitError, String(err));
    assert.equal(err.status, 429);
    assert.equal(err.headers?.get('retry-after'), '7');
    assert.equal(err.headers?.get('x-vendor-provider-request-id'), 'req_fake');
    // Anthropic's error body, as it is.
    assert.deepEqual(err.error, {
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Simulated error 429.' },
      request_id: 'req_fake',
    });
  });

  test('an error mid-stream ends the stream with an error event the SDK throws', async () => {
    const stream = client.messages.stream({ model: '@claude/stream-error', max_tokens: 10, messages: hello });
    let text = '';
    stream.on('text', (t) => (text += t));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.match(err.message, /Overloaded/);
    assert.equal(text, 'Echo: Hello there');
  });
});

describe('the Anthropic SDK in front of OpenAI-format providers', () => {
  test('openai: a message, the upstream chat request, and usage', async () => {
    // The sampling parameters the Messages API takes, which this SDK version does not type.
    const sampling = { temperature: 0.5, top_k: 5 };
    const { data, response } = await client.messages
      .create({
        model: '@oai/gpt-4o-mini',
        max_tokens: 64,
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: hello,
        ...sampling,
        stop_sequences: ['END'],
        metadata: { user_id: 'user-7' },
        thinking: { type: 'enabled', budget_tokens: 1024 },
      } as Anthropic.MessageCreateParamsNonStreaming)
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'openai');
    assert.equal(texts(data), 'Echo: Hello there');
    assert.equal(data.stop_reason, 'end_turn');
    assert.deepEqual(data.usage, {
      input_tokens: 9,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    // OpenAI is sent what it reads: no thinking, no top_k.
    assert.deepEqual(lastBody(openaiFake), {
      model: 'gpt-4o-mini',
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello there' },
      ],
      temperature: 0.5,
      stop: ['END'],
      user: 'user-7',
    });
  });

  test('openai: a stream asks for usage and reports it in message_delta', async () => {
    const message = await client.messages
      .stream({ model: '@oai/gpt-4o-mini', max_tokens: 64, messages: hello })
      .finalMessage();
    assert.equal(texts(message), 'Echo: Hello there');
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.input_tokens, 9);
    assert.equal(message.usage.output_tokens, 3);
    assert.deepEqual(lastBody(openaiFake).stream_options, { include_usage: true });
  });

  test('openai: a tool call is a tool_use block, and a tool result turn a tool message', async () => {
    const first = await client.messages.create({
      model: '@oai/tool-call',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weather],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(first.content, [
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    const sent = lastBody(openaiFake);
    assert.deepEqual(sent.tools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: weather.description, parameters: weather.input_schema },
      },
    ]);
    assert.deepEqual(sent.tool_choice, { type: 'function', function: { name: 'get_weather' } });

    const second = await client.messages.create({
      model: '@oai/gpt-4o-mini',
      max_tokens: 64,
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny' }] },
      ],
    });
    assert.equal(texts(second), 'Echo: Weather in Paris?');
    assert.deepEqual(lastBody(openaiFake).messages.slice(1), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
    ]);
  });

  test('openai: an image goes as an image part with a data: URL', async () => {
    await client.messages.create({
      model: '@oai/gpt-4o-mini',
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    });
    assert.deepEqual(lastBody(openaiFake).messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      },
    ]);
  });

  test('azure-openai: a message and a stream', async () => {
    const { data, response } = await client.messages
      .create({ model: '@azure/gpt-4o', max_tokens: 64, messages: hello })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'azure-openai');
    assert.equal(texts(data), 'Echo: Hello there');
    assert.equal(data.stop_reason, 'end_turn');
    const streamed = await client.messages
      .stream({ model: '@azure/gpt-4o', max_tokens: 64, messages: hello })
      .finalMessage();
    assert.equal(texts(streamed), 'Echo: Hello there');
    assert.equal(streamed.stop_reason, 'end_turn');
    assert.ok(azureFake.requests.at(-1)!.path.startsWith('/openai/deployments/gpt4o-prod/chat/completions'));
  });

  test('the mock provider, chosen by header: a message and a stream', async () => {
    const mock = new Anthropic({
      apiKey: h.workspaceKey,
      baseURL: h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-provider': 'mock' },
    });
    const { data, response } = await mock.messages
      .create({ model: 'mock-model', max_tokens: 64, messages: hello })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'mock');
    assert.equal(texts(data), 'Mock response to: Hello there');
    assert.equal(data.usage.input_tokens, 2);
    const streamed = await mock.messages
      .stream({ model: 'mock-model', max_tokens: 64, messages: hello })
      .finalMessage();
    assert.equal(texts(streamed), 'Mock response to: Hello there');
    assert.equal(streamed.stop_reason, 'end_turn');
    assert.equal(streamed.usage.output_tokens, data.usage.output_tokens);
  });
});

describe('the Anthropic SDK in front of Gemini and Bedrock', () => {
  test('gemini: a message, a stream, and thinking passed on as a thinking budget', async () => {
    const { data, response } = await client.messages
      .create({
        model: '@gemini/gemini-2.5-flash',
        max_tokens: 64,
        messages: hello,
        thinking: { type: 'enabled', budget_tokens: 1024 },
      })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'google');
    assert.equal(texts(data), 'Echo: Hello there');
    assert.equal(data.stop_reason, 'end_turn');
    assert.equal(lastBody(geminiFake).generationConfig.thinkingConfig.thinkingBudget, 1024);
    const streamed = await client.messages
      .stream({ model: '@gemini/gemini-2.5-flash', max_tokens: 64, messages: hello })
      .finalMessage();
    assert.equal(texts(streamed), 'Echo: Hello there');
    assert.equal(streamed.stop_reason, 'end_turn');
  });

  test('gemini: thought summaries are thinking blocks, streamed or not', async () => {
    const params = { model: '@gemini/thinking', max_tokens: 64, messages: hello };
    const expected = [
      { type: 'thinking', thinking: '**Greeting** Simple hello.', signature: '' },
      { type: 'text', text: 'Hello there!' },
    ];
    const message = await client.messages.create(params);
    assert.deepEqual(message.content, expected);
    const streamed = await client.messages.stream(params).finalMessage();
    assert.deepEqual(
      streamed.content.map((b) => (b.type === 'text' ? { type: b.type, text: b.text } : b)),
      expected,
    );
  });

  test('gemini: function calls are tool_use blocks', async () => {
    const message = await client.messages.create({
      model: '@gemini/function-call',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weather],
    });
    assert.equal(message.stop_reason, 'tool_use');
    const uses = message.content.filter((b) => b.type === 'tool_use');
    assert.deepEqual(
      uses.map((b) => [b.name, b.input]),
      [
        ['get_weather', { city: 'Paris' }],
        ['get_time', { zone: 'Europe/Paris' }],
      ],
    );
  });

  test('bedrock: a message, a stream, and tool use', async () => {
    const model = '@aws/anthropic.claude-3-haiku-20240307-v1:0';
    const { data, response } = await client.messages
      .create({ model, max_tokens: 64, messages: hello })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'bedrock');
    assert.equal(texts(data), 'Echo: Hello there');
    assert.deepEqual(data.usage, {
      input_tokens: 9,
      output_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const streamed = await client.messages.stream({ model, max_tokens: 64, messages: hello }).finalMessage();
    assert.equal(texts(streamed), 'Echo: Hello there');
    assert.equal(streamed.stop_reason, 'end_turn');

    const tools = await client.messages
      .stream({ model: '@aws/tool-use', max_tokens: 64, messages: hello, tools: [weather] })
      .finalMessage();
    assert.equal(tools.stop_reason, 'tool_use');
    assert.deepEqual(
      tools.content.filter((b) => b.type === 'tool_use').map((b) => b.input),
      [{ city: 'Paris' }, { city: 'Tokyo' }],
    );
  });

  test('bedrock: cache reads are cache_read_input_tokens', async () => {
    const message = await client.messages.create({ model: '@aws/cached', max_tokens: 64, messages: hello });
    assert.equal(message.usage.cache_read_input_tokens, 4);
  });
});

describe('the gateway around /v1/messages', () => {
  test('a bad request is the SDK’s BadRequestError, never sent upstream', async () => {
    const before = anthropicFake.requests.length;
    const err = await client.messages
      .create({
        model: '@claude/claude-x',
        messages: hello,
      } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.equal(err.status, 400);
    assert.equal((err.error as { error: { type: string } }).error.type, 'invalid_request_error');
    assert.match(err.message, /max_tokens/);
    assert.equal(anthropicFake.requests.length, before);
  });

  test('a document block is refused with a 400 naming it where the request is translated', async () => {
    const res = await h.request('POST', '/v1/messages', {
      key: h.workspaceKey,
      json: {
        model: '@oai/gpt-4o-mini',
        max_tokens: 10,
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }],
          },
        ],
      },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.type, 'error');
    assert.equal(res.body.error.type, 'invalid_request_error');
    assert.equal(res.body.error.param, 'messages[0].content[0]');
    assert.match(res.body.error.message, /Document blocks are not supported/);
  });

  test('an unknown integration is the SDK’s NotFoundError', async () => {
    const err = await client.messages
      .create({ model: '@nowhere/claude-x', max_tokens: 10, messages: hello })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.NotFoundError, String(err));
    assert.equal((err.error as { error: { type: string } }).error.type, 'not_found_error');
  });

  test('a wrong key is the SDK’s AuthenticationError; a Bearer key works too', async () => {
    const wrong = new Anthropic({ apiKey: 'sy-not-a-key', baseURL: h.url, maxRetries: 0 });
    const err = await wrong.messages
      .create({ model: '@claude/claude-x', max_tokens: 10, messages: hello })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.AuthenticationError, String(err));
    assert.equal((err.error as { error: { type: string } }).error.type, 'authentication_error');

    const bearer = new Anthropic({ authToken: h.workspaceKey, baseURL: h.url, maxRetries: 0 });
    const message = await bearer.messages.create({
      model: '@claude/claude-x',
      max_tokens: 10,
      messages: hello,
    });
    assert.equal(texts(message), 'Echo: Hello there');
  });

  test('x-api-key is read as the gateway key on /v1/messages only', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'x-api-key': h.workspaceKey, 'content-type': 'application/json' },
      body: JSON.stringify({ model: '@oai/gpt-4o-mini', messages: hello }),
    });
    assert.equal(res.status, 401);
    // Chat keeps the gateway's own error shape.
    const body = (await res.json()) as { error: { message: string } };
    assert.match(body.error.message, /API key/);
  });

  test('the cache replays an answer in the Messages format, streamed or not, apart from chat', async () => {
    const cached = new Anthropic({
      apiKey: h.workspaceKey,
      baseURL: h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-cache': 'simple' },
    });
    const params = {
      model: '@oai/gpt-4o-mini',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: `cache me ${Date.now()}` }],
    };
    const calls = openaiFake.requests.length;
    const first = await cached.messages.create(params).withResponse();
    const second = await cached.messages.create(params).withResponse();
    assert.equal(first.response.headers.get('x-vendor-cache-status'), 'MISS');
    assert.equal(second.response.headers.get('x-vendor-cache-status'), 'HIT');
    assert.deepEqual(second.data, first.data);
    assert.equal(second.data.type, 'message');
    assert.equal(openaiFake.requests.length, calls + 1);

    const streamFirst = await cached.messages.create({ ...params, stream: true }).withResponse();
    for await (const _ of streamFirst.data) void _;
    const { data: replay, response } = await cached.messages
      .create({ ...params, stream: true })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-cache-status'), 'HIT');
    let text = '';
    let stop: string | null = null;
    for await (const event of replay) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'message_delta') stop = event.delta.stop_reason;
    }
    assert.equal(text, texts(first.data));
    assert.equal(stop, 'end_turn');
    assert.equal(openaiFake.requests.length, calls + 2);

    // A chat request with the same chat body is not answered from the Messages entry.
    const chat = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      headers: { 'x-vendor-cache': 'simple' },
      json: { model: params.model, max_tokens: 64, messages: params.messages },
    });
    assert.equal(chat.status, 200, chat.text);
    assert.equal(chat.headers.get('x-vendor-cache-status'), 'MISS');
    assert.equal(chat.body.object, 'chat.completion');
  });
});

describe('passed through to Anthropic: the request as it came, the answer as it is', () => {
  const withConfig = (config: unknown, extra: Record<string, string> = {}) =>
    new Anthropic({
      apiKey: h.workspaceKey,
      baseURL: h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': JSON.stringify(config), ...extra },
    });
  const fallback = (...providers: string[]) => ({
    strategy: { mode: 'fallback' },
    targets: providers.map((provider) => ({ provider })),
  });
  const withCacheControl: Anthropic.MessageParam[] = [
    {
      role: 'user',
      content: [{ type: 'text', text: 'Hello there', cache_control: { type: 'ephemeral' } }],
    },
  ];

  test('a document block, cache_control and a server tool reach Anthropic unchanged', async () => {
    const document: Anthropic.DocumentBlockParam = {
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' },
      title: 'Facts',
      citations: { enabled: true },
      cache_control: { type: 'ephemeral' },
    };
    const params = {
      model: '@claude/claude-sonnet-4-5',
      max_tokens: 100,
      system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
      messages: [
        { role: 'user' as const, content: [document, { type: 'text' as const, text: 'What colour?' }] },
      ],
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 }],
    };
    const message = await client.messages.create(params);
    assert.equal(texts(message), 'Echo: [document: The grass is green.] What colour?');
    assert.match(message.id, /^msg_fake_/);
    assert.deepEqual(lastBody(anthropicFake), { ...params, model: 'claude-sonnet-4-5' });
  });

  test('anthropic-version and anthropic-beta go on; the integration’s key is sent, never the gateway’s', async () => {
    await client.messages.create(
      { model: '@claude/claude-x', max_tokens: 10, messages: hello },
      {
        headers: {
          'anthropic-version': '2023-01-01',
          'anthropic-beta': 'files-api-2025-04-14,context-1m-2025-08-07',
        },
      },
    );
    const upstream = anthropicFake.requests.at(-1)!;
    assert.equal(upstream.headers['anthropic-beta'], 'files-api-2025-04-14,context-1m-2025-08-07');
    assert.equal(upstream.headers['anthropic-version'], '2023-01-01');
    assert.equal(upstream.headers['x-api-key'], upstreamKey);
    assert.equal(upstream.headers.authorization, undefined);

    // Without anthropic-version, the gateway sends the one it speaks.
    const res = await h.request('POST', '/v1/messages', {
      key: h.workspaceKey,
      json: { model: '@claude/claude-x', max_tokens: 10, messages: hello },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(anthropicFake.requests.at(-1)!.headers['anthropic-version'], '2023-06-01');
    assert.equal(anthropicFake.requests.at(-1)!.headers['anthropic-beta'], undefined);
  });

  test('a stream is Anthropic’s own events, ping included, piped as they come', async () => {
    const res = await h.request('POST', '/v1/messages', {
      key: h.workspaceKey,
      json: { model: '@claude/claude-x', max_tokens: 10, messages: hello, stream: true },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(res.headers.get('x-vendor-provider'), 'anthropic');
    const names = [...res.text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    assert.deepEqual(names.slice(0, 3), ['message_start', 'content_block_start', 'content_block_delta']);
    assert.ok(names.includes('ping'), names.join());
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    assert.match(res.text, /"id":"msg_fake_\d+"/);
  });

  test('an upstream 400 comes back as Anthropic gave it, status and body', async () => {
    const res = await h.request('POST', '/v1/messages', {
      key: h.workspaceKey,
      json: { model: '@claude/error-400', max_tokens: 10, messages: hello },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Simulated error 400.' },
      request_id: 'req_fake',
    });
  });

  test('a config whose targets are all Anthropic passes through, falling back on a failure', async () => {
    const calls = anthropicFake.requests.length;
    const viaFallback = withConfig({
      strategy: { mode: 'fallback' },
      targets: [{ provider: '@claude', override_params: { model: 'error-529' } }, { provider: '@claude' }],
    });
    const { data, response } = await viaFallback.messages
      .create({ model: 'claude-x', max_tokens: 10, messages: withCacheControl })
      .withResponse();
    assert.match(data.id, /^msg_fake_/);
    assert.equal(response.headers.get('x-vendor-last-used-option-index'), 'config.targets[1]');
    const [failed, answered] = anthropicFake.requests.slice(calls).map((r) => JSON.parse(r.body));
    assert.equal(failed.model, 'error-529');
    assert.deepEqual(answered, { model: 'claude-x', max_tokens: 10, messages: withCacheControl });
  });

  test('a config with an OpenAI target translates, for every target: Anthropic gets a translated request', async () => {
    const before = openaiFake.requests.length;
    const mixed = withConfig(fallback('@claude', '@oai'));
    const message = await mixed.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: withCacheControl,
    });
    assert.equal(texts(message), 'Echo: Hello there');
    // Translated: cache_control is not carried.
    assert.deepEqual(lastBody(anthropicFake).messages, [
      { role: 'user', content: [{ type: 'text', text: 'Hello there' }] },
    ]);
    assert.equal(openaiFake.requests.length, before);

    // Translated, a document block is refused, on the Anthropic target too.
    const err = await mixed.messages
      .create({
        model: 'claude-x',
        max_tokens: 10,
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }],
          },
        ],
      })
      .catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.BadRequestError, String(err));
    assert.match(err.message, /Document blocks are not supported/);
  });

  test('the request log names the provider, with the usage and cost Anthropic reported, whole or streamed', async () => {
    for (const stream of [false, true]) {
      const res = await h.request('POST', '/v1/messages', {
        key: h.workspaceKey,
        json: { model: '@claude/claude-sonnet-4', max_tokens: 10, messages: hello, stream },
      });
      assert.equal(res.status, 200, res.text);
      const traceId = res.headers.get('x-vendor-trace-id')!;
      const log = await eventually(
        () =>
          h.bus
            .log(Topics.requestLogs)
            .map((m) => fromBinary(protoEvents.RequestLogEventSchema, m.value))
            .find((event) => event.traceId === traceId),
        { what: `the request log of trace ${traceId}` },
      );
      assert.equal(log.path, '/v1/messages');
      assert.equal(log.provider, 'anthropic');
      assert.equal(log.model, 'claude-sonnet-4');
      assert.equal(log.stream, stream);
      // 10 input tokens, 2 written to the cache and 3 read from it; 6 output tokens.
      assert.equal(log.usage?.promptTokens, 15);
      assert.equal(log.usage?.completionTokens, 6);
      assert.equal(log.usage?.cachedTokens, 3);
      const cost = (10 * 3 + 3 * 0.3 + 2 * 3.75 + 6 * 15) / 1_000_000;
      assert.ok(Math.abs(log.cost - cost) < 1e-12, `cost ${log.cost}, expected ${cost}`);
    }
  });

  test('the cache replays Anthropic’s answer, streamed or not', async () => {
    const cached = new Anthropic({
      apiKey: h.workspaceKey,
      baseURL: h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-cache': 'simple' },
    });
    const params = {
      model: '@claude/claude-x',
      max_tokens: 10,
      messages: [{ role: 'user' as const, content: `cache me ${Date.now()}` }],
    };
    const calls = anthropicFake.requests.length;
    const first = await cached.messages.create(params).withResponse();
    const second = await cached.messages.create(params).withResponse();
    assert.equal(first.response.headers.get('x-vendor-cache-status'), 'MISS');
    assert.equal(second.response.headers.get('x-vendor-cache-status'), 'HIT');
    assert.deepEqual(second.data, first.data);
    assert.equal(anthropicFake.requests.length, calls + 1);

    const streamed = await cached.messages.stream(params).finalMessage();
    const replay = cached.messages.stream(params);
    const replayed = await replay.finalMessage();
    assert.equal((await replay.withResponse()).response.headers.get('x-vendor-cache-status'), 'HIT');
    assert.deepEqual(replayed, streamed);
    assert.equal(anthropicFake.requests.length, calls + 2);
  });

  test('a rate limit refuses the request in Anthropic’s shape, before Anthropic sees it', async () => {
    const team = `messages-${Date.now()}`;
    const policy = await h.request('POST', '/v2/policies/rate-limits', {
      key: h.workspaceKey,
      json: {
        name: 'one a minute',
        conditions: [{ key: 'metadata.team', value: team }],
        group_by: [{ key: 'api_key' }],
        type: 'requests',
        unit: 'rpm',
        value: 1,
      },
    });
    assert.equal(policy.status, 200, policy.text);
    const limited = new Anthropic({
      apiKey: h.workspaceKey,
      baseURL: h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-metadata': JSON.stringify({ team }) },
    });
    const err = await eventually(
      async () => {
        const before = anthropicFake.requests.length;
        const failed = await limited.messages
          .create({ model: '@claude/claude-x', max_tokens: 10, messages: hello })
          .then(() => undefined)
          .catch((e: unknown) => e);
        return failed ? { failed, sent: anthropicFake.requests.length - before } : undefined;
      },
      { what: 'a 429 from the rate limit', intervalMs: 50 },
    );
    assert.ok(err.failed instanceof Anthropic.RateLimitError, String(err.failed));
    assert.equal((err.failed.error as { type: string }).type, 'error');
    assert.equal((err.failed.error as { error: { type: string } }).error.type, 'rate_limit_error');
    assert.equal(err.sent, 0);
  });
});
