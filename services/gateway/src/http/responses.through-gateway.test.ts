import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { fromBinary } from '@bufbuild/protobuf';
import { Topics } from '@switchyard/adapters';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import { events as protoEvents } from '@switchyard/proto';
import {
  eventually,
  fakeAwsCredentials,
  startFakeAnthropic,
  startFakeBedrock,
  startFakeGemini,
  startFakeOpenAi,
  startServiceHarness,
  type FakeAnthropic,
  type FakeBedrock,
  type FakeGemini,
  type FakeOpenAi,
  type RecordedRequest,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

let h: ServiceHarness;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let bedrock: FakeBedrock;
let openai: FakeOpenAi;

before(async () => {
  [anthropic, gemini, bedrock, openai] = await Promise.all([
    startFakeAnthropic({ apiKey: 'sk-ant-fake' }),
    startFakeGemini({ apiKey: 'gemini-fake' }),
    startFakeBedrock(),
    startFakeOpenAi({ apiKey: 'sk-openai-fake' }),
  ]);
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  const integrations = [
    {
      slug: 'claude',
      ai_provider_id: 'anthropic',
      key: 'sk-ant-fake',
      configurations: { custom_host: anthropic.baseUrl },
    },
    {
      slug: 'gem',
      ai_provider_id: 'google',
      key: 'gemini-fake',
      configurations: { custom_host: gemini.baseUrl },
    },
    {
      slug: 'aws',
      ai_provider_id: 'bedrock',
      configurations: {
        custom_host: bedrock.url,
        aws_region: fakeAwsCredentials.region,
        aws_access_key_id: fakeAwsCredentials.accessKeyId,
        aws_secret_access_key: fakeAwsCredentials.secretAccessKey,
      },
    },
    {
      slug: 'oai',
      ai_provider_id: 'openai',
      key: 'sk-openai-fake',
      configurations: { custom_host: openai.baseUrl },
    },
  ];
  for (const integration of integrations) {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: integration.slug, ...integration },
    });
    assert.equal(res.status, 200, res.text);
  }
});
after(async () => {
  await h.close();
  await Promise.all([anthropic.close(), gemini.close(), bedrock.close(), openai.close()]);
});

/** A provider family without a Responses API, as the tests reach it. */
interface Family {
  name: string;
  model: string;
  /** A model of the fake that answers with tool calls; none for the mock. */
  toolModel?: string;
  headers: Record<string, string>;
  /** The requests its fake saw; none for the mock. */
  requests?: () => RecordedRequest[];
  /** The path the translated request reaches at the fake. */
  upstreamPath?: RegExp;
  /** The answer to the input 'Hello there'. */
  echo: string;
}

const families: Family[] = [
  {
    name: 'Anthropic',
    model: '@claude/claude-sonnet-4-5',
    toolModel: '@claude/tool-use',
    headers: {},
    requests: () => anthropic.requests,
    upstreamPath: /^\/v1\/messages$/,
    echo: 'Echo: Hello there',
  },
  {
    name: 'Gemini',
    model: '@gem/gemini-2.5-flash',
    toolModel: '@gem/function-call',
    headers: {},
    requests: () => gemini.requests,
    upstreamPath: /:(stream)?[gG]enerateContent/,
    echo: 'Echo: Hello there',
  },
  {
    name: 'Bedrock',
    model: '@aws/anthropic.claude-3-haiku-20240307-v1:0',
    toolModel: '@aws/tool-use',
    headers: {},
    requests: () => bedrock.requests,
    upstreamPath: /\/converse(-stream)?$/,
    echo: 'Echo: Hello there',
  },
  {
    name: 'the mock provider',
    model: 'mock-model',
    headers: { 'x-vendor-provider': 'mock' },
    echo: 'Mock response to: Hello there',
  },
];

function sdkClient(headers: Record<string, string>, key = h.workspaceKey) {
  return new OpenAI({ apiKey: key, baseURL: `${h.url}/v1`, maxRetries: 0, defaultHeaders: headers });
}

/** The Vercel AI SDK's OpenAI provider, recording the paths it calls and the bodies it sends. */
function aiProvider(headers: Record<string, string>) {
  const paths: string[] = [];
  const bodies: string[] = [];
  const provider = createOpenAI({
    apiKey: h.workspaceKey,
    baseURL: `${h.url}/v1`,
    headers,
    fetch: (input, init) => {
      paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      bodies.push(typeof init?.body === 'string' ? init.body : '');
      return fetch(input, init);
    },
  });
  return { provider, paths, bodies };
}

for (const family of families) {
  describe(`the Responses API on ${family.name}, translated`, () => {
    const lastUpstream = () => {
      const request = family.requests?.().at(-1);
      if (request) assert.match(request.path, family.upstreamPath!);
      return request;
    };

    test('openai.responses.create: a response object with the text, usage and the provider header', async () => {
      const { data, response } = await sdkClient(family.headers)
        .responses.create({ model: family.model, input: 'Hello there', instructions: 'Be brief.' })
        .withResponse();
      assert.equal(response.status, 200);
      assert.match(data.id, /^resp_[0-9a-f]{32}$/);
      assert.equal(data.object, 'response');
      assert.equal(data.status, 'completed');
      assert.equal(data.output_text, family.echo);
      assert.equal(data.output[0]!.type, 'message');
      assert.equal(data.instructions, 'Be brief.');
      assert.ok(data.usage!.input_tokens > 0);
      assert.ok(data.usage!.output_tokens > 0);
      assert.equal(data.usage!.total_tokens, data.usage!.input_tokens + data.usage!.output_tokens);
      assert.equal(typeof data.usage!.input_tokens_details.cached_tokens, 'number');
      assert.equal(typeof data.usage!.output_tokens_details.reasoning_tokens, 'number');
      assert.ok(response.headers.get('x-vendor-provider'));
      const upstream = lastUpstream();
      if (upstream) assert.ok(upstream.body.includes('Be brief.'), 'the instructions went upstream');
    });

    test('openai.responses.create with stream: true: the events in order, and the whole response last', async () => {
      const stream = await sdkClient(family.headers).responses.create({
        model: family.model,
        input: 'Hello there',
        stream: true,
      });
      const events = [];
      for await (const event of stream) events.push(event);
      const types = events.map((e) => e.type);
      assert.deepEqual(types.slice(0, 4), [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
      ]);
      assert.deepEqual(types.slice(-4), [
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      assert.deepEqual(
        events.map((e) => e.sequence_number),
        events.map((_, i) => i),
      );
      const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
      assert.ok(deltas.length >= 1);
      assert.equal(deltas.join(''), family.echo);
      const completed = events.at(-1)!;
      assert.equal(completed.type, 'response.completed');
      if (completed.type === 'response.completed') {
        assert.equal(completed.response.status, 'completed');
        assert.ok(completed.response.usage!.output_tokens > 0);
        assert.deepEqual(completed.response.output, [
          {
            id: completed.response.output[0]!.id,
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: family.echo, annotations: [], logprobs: [] }],
          },
        ]);
      }
      // The SDK's stream helper assembles the same response from the events.
      const final = await sdkClient(family.headers)
        .responses.stream({ model: family.model, input: 'Hello there' })
        .finalResponse();
      assert.equal(final.output_text, family.echo);
      assert.equal(final.status, 'completed');
      const upstream = lastUpstream();
      if (upstream && family.name !== 'Gemini' && family.name !== 'Bedrock') {
        assert.equal(JSON.parse(upstream.body).stream, true);
      }
    });

    test('the AI SDK: generateText and streamText call /v1/responses and get the answer', async () => {
      const { provider, paths } = aiProvider(family.headers);
      const generated = await generateText({ model: provider(family.model), prompt: 'Hello there' });
      assert.deepEqual(paths, ['/v1/responses']);
      assert.match(generated.text, /^(Echo|Mock response to): /);
      assert.equal(generated.finishReason, 'stop');
      assert.ok(generated.usage.outputTokens! > 0);
      assert.match(generated.response.id, /^resp_/);

      const streamed = streamText({ model: provider(family.model), prompt: 'Hello there' });
      assert.equal(await streamed.text, generated.text);
      assert.equal(await streamed.finishReason, 'stop');
      assert.ok((await streamed.usage).outputTokens! > 0);
      assert.deepEqual(paths, ['/v1/responses', '/v1/responses']);
      lastUpstream();
    });

    if (family.toolModel) {
      const toolModel = family.toolModel;
      test('the AI SDK: a tool call round trip, streamed and not', async () => {
        const { provider, bodies } = aiProvider(family.headers);
        const calls: unknown[] = [];
        const tools = {
          get_weather: tool({
            description: 'The weather in a city',
            inputSchema: jsonSchema<{ city: string }>({
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
            }),
            execute: async (input) => {
              calls.push(input);
              return { forecast: 'sunny' };
            },
          }),
          get_time: tool({
            description: 'The time in a zone',
            inputSchema: jsonSchema<{ zone: string }>({
              type: 'object',
              properties: { zone: { type: 'string' } },
            }),
            execute: async () => ({ time: '12:00' }),
          }),
        };
        const generated = await generateText({
          model: provider(toolModel),
          prompt: 'What is the weather in Paris?',
          tools,
          stopWhen: stepCountIs(2),
        });
        assert.equal(generated.steps.length, 2);
        const first = generated.steps[0]!;
        assert.equal(first.finishReason, 'tool-calls');
        assert.ok(first.toolCalls.some((c) => c.toolName === 'get_weather'));
        assert.deepEqual(calls[0], { city: 'Paris' });
        // The SDK sent the calls back by reference to the kept response's items, with their results.
        const second = JSON.parse(bodies[1]!) as { input: Array<{ type?: string }> };
        assert.ok(second.input.some((item) => item.type === 'item_reference'));
        assert.ok(second.input.some((item) => item.type === 'function_call_output'));
        const upstream = lastUpstream()!;
        assert.ok(upstream.body.includes('sunny'), 'the tool result went upstream');
        assert.ok(upstream.body.includes('get_weather'), 'the tool call went upstream');

        calls.length = 0;
        const streamed = streamText({
          model: provider(toolModel),
          prompt: 'What is the weather in Paris?',
          tools,
          stopWhen: stepCountIs(2),
        });
        const steps = await streamed.steps;
        assert.equal(steps.length, 2);
        assert.equal(steps[0]!.finishReason, 'tool-calls');
        assert.deepEqual(calls[0], { city: 'Paris' });
        assert.ok(lastUpstream()!.body.includes('sunny'));
      });
    }
  });
}

describe('the Responses API on an OpenAI target', () => {
  test('is forwarded as it came: the provider answers /v1/responses itself', async () => {
    const before = openai.requests.length;
    const data = await sdkClient({}).responses.create({ model: '@oai/gpt-4o-mini', input: 'Hello there' });
    assert.equal(data.id, 'resp_fake');
    assert.equal(data.output_text, 'Echo: Hello there');
    const upstream = openai.requests.slice(before);
    assert.deepEqual(
      upstream.map((r) => `${r.method} ${r.path}`),
      ['POST /v1/responses'],
    );
    assert.equal(JSON.parse(upstream[0]!.body).model, 'gpt-4o-mini');

    const stream = await sdkClient({}).responses.create({
      model: '@oai/gpt-4o-mini',
      input: 'Hello there',
      stream: true,
    });
    const types = [];
    for await (const event of stream) types.push(event.type);
    assert.equal(types.at(-1), 'response.completed');
    assert.equal(openai.requests.at(-1)!.path, '/v1/responses');
  });
});

describe('the request log of a translated response', () => {
  test('names /v1/responses and the provider, with the usage the provider reported', async () => {
    for (const stream of [false, true]) {
      const res = await h.request('POST', '/v1/responses', {
        key: h.workspaceKey,
        json: { model: '@claude/claude-x', input: 'Log me', stream },
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
      assert.equal(log.path, '/v1/responses');
      assert.equal(log.provider, 'anthropic');
      assert.equal(log.status, 200);
      assert.equal(log.stream, stream);
      assert.equal(log.usage?.promptTokens, 15);
      assert.equal(log.usage?.completionTokens, 6);
    }
  });
});

describe('a translated stream that fails upstream', () => {
  test('ends with an error event, which the OpenAI SDK throws, after the text sent so far', async () => {
    const stream = await sdkClient({}).responses.create({
      model: '@claude/stream-error',
      input: 'Hello there',
      stream: true,
    });
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const event of stream)
          if (event.type === 'response.output_text.delta') text += event.delta;
      })(),
      (err: InstanceType<typeof OpenAI.APIError>) => /overloaded/i.test(err.message),
    );
    assert.equal(text, 'Echo: Hello there');
  });
});

describe('translate or forward: decided by every target the request may route to', () => {
  const config = (targets: string[]) => ({
    'x-vendor-config': JSON.stringify({
      strategy: { mode: 'fallback' },
      targets: targets.map((provider) => ({ provider })),
    }),
  });

  test('a config whose targets all have the Responses API forwards', async () => {
    const data = await sdkClient(config(['@oai'])).responses.create({
      model: 'gpt-4o-mini',
      input: 'Hello there',
    });
    assert.equal(data.id, 'resp_fake');
    assert.equal(openai.requests.at(-1)!.path, '/v1/responses');
  });

  test('a config with a target without it translates, for every target: an OpenAI one answers a chat completion', async () => {
    const data = await sdkClient(config(['@oai', '@claude'])).responses.create({
      model: 'gpt-4o-mini',
      input: 'Hello there',
    });
    assert.match(data.id, /^resp_[0-9a-f]{32}$/);
    assert.equal(data.output_text, 'Echo: Hello there');
    assert.equal(openai.requests.at(-1)!.path, '/v1/chat/completions');
  });

  test('the response cache applies as to a chat completion: a hit is answered as a new response', async () => {
    const headers = { 'x-vendor-provider': 'mock', 'x-vendor-cache': 'simple' };
    const input = `Cache me ${Date.now()}`;
    for (const stream of [false, true]) {
      const first = await h.request('POST', '/v1/responses', {
        key: h.workspaceKey,
        headers,
        json: { model: 'mock-model', input, stream },
      });
      const second = await h.request('POST', '/v1/responses', {
        key: h.workspaceKey,
        headers,
        json: { model: 'mock-model', input, stream },
      });
      assert.equal(first.headers.get('x-vendor-cache-status'), 'MISS');
      assert.equal(second.headers.get('x-vendor-cache-status'), 'HIT');
      const text = (res: { text: string; body: { output: Array<{ content: Array<{ text: string }> }> } }) =>
        stream
          ? res.text
              .split('\n')
              .filter((line) => line.startsWith('data: '))
              .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string })
              .flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []))
              .join('')
          : res.body.output[0]!.content[0]!.text;
      assert.equal(text(first), `Mock response to: ${input}`);
      assert.equal(text(second), `Mock response to: ${input}`);
      if (stream) assert.match(second.text, /event: response\.completed/);
      else assert.notEqual(second.body.id, first.body.id);
    }
  });
});

describe('guardrails on translated responses, as on chat completions', () => {
  async function guardrail(checks: unknown[], actions: Record<string, boolean>): Promise<string> {
    const created = await h.request('POST', '/v1/guardrails', {
      key: h.adminKey,
      json: { name: `g ${Math.random().toString(16).slice(2, 8)}`, checks, actions },
    });
    assert.equal(created.status, 200, created.text);
    return created.body.slug as string;
  }
  const config = (guardrails: { input?: string[]; output?: string[] }) => ({
    'x-vendor-config': JSON.stringify({
      provider: 'mock',
      input_guardrails: guardrails.input ?? [],
      output_guardrails: guardrails.output ?? [],
    }),
  });

  test('an input deny refuses the request; an output redact reaches the text, whole and streamed', async () => {
    const deny = await guardrail(
      [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
      { deny: true },
    );
    const denied = await h.request('POST', '/v1/responses', {
      key: h.workspaceKey,
      headers: config({ input: [deny] }),
      json: {
        model: 'mock-model',
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'this is classified' }] }],
      },
    });
    assert.equal(denied.status, 446, denied.text);

    const redact = await guardrail([{ id: 'default.pii', parameters: { categories: ['email'] } }], {
      redact: true,
    });
    const client = sdkClient(config({ output: [redact] }));
    const whole = await client.responses.create({ model: 'mock-model', input: 'mail ann@example.org' });
    assert.ok(!whole.output_text.includes('ann@example.org'), whole.output_text);
    assert.match(whole.output_text, /^Mock response to: mail /);
    const stream = await client.responses.create({
      model: 'mock-model',
      input: 'mail bob@example.org',
      stream: true,
    });
    let streamed = '';
    for await (const event of stream)
      if (event.type === 'response.output_text.delta') streamed += event.delta;
    assert.ok(!streamed.includes('bob@example.org'), streamed);
    assert.match(streamed, /^Mock response to: mail /);
  });
});

describe('previous_response_id, kept responses and refusals', () => {
  const mock = { 'x-vendor-provider': 'mock' };

  test('a later request goes on from a kept response: the provider sees the whole conversation', async () => {
    const client = sdkClient({});
    const first = await client.responses.create({ model: '@claude/claude-x', input: 'My name is Ada.' });
    const second = await client.responses.create({
      model: '@claude/claude-x',
      input: 'What is my name?',
      previous_response_id: first.id,
    });
    assert.equal(second.previous_response_id, first.id);
    const messages = JSON.parse(anthropic.requests.at(-1)!.body).messages;
    assert.deepEqual(messages, [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Echo: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    // A streamed answer is kept too.
    const stream = await client.responses.create({
      model: '@claude/claude-x',
      input: 'And now?',
      previous_response_id: second.id,
      stream: true,
    });
    let third = '';
    for await (const event of stream) if (event.type === 'response.completed') third = event.response.id;
    await client.responses.create({ model: '@claude/claude-x', input: 'Last.', previous_response_id: third });
    assert.equal(JSON.parse(anthropic.requests.at(-1)!.body).messages.length, 7);
  });

  test('GET and DELETE of a kept response', async () => {
    const client = sdkClient(mock);
    const created = await client.responses.create({ model: 'mock-model', input: 'Keep me' });
    const fetched = await client.responses.retrieve(created.id);
    assert.equal(fetched.id, created.id);
    assert.equal(fetched.output_text, 'Mock response to: Keep me');
    const deleted = await h.request('DELETE', `/v1/responses/${created.id}`, { key: h.workspaceKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body, { id: created.id, object: 'response', deleted: true });
    const next = await h.request('POST', '/v1/responses', {
      key: h.workspaceKey,
      headers: mock,
      json: { model: 'mock-model', input: 'Again', previous_response_id: created.id },
    });
    assert.equal(next.status, 404);
  });

  test('an unknown id, one not kept (store: false) and one of another workspace are not found', async () => {
    const unknown = await h.request('POST', '/v1/responses', {
      key: h.workspaceKey,
      headers: mock,
      json: { model: 'mock-model', input: 'Hi', previous_response_id: 'resp_unknown' },
    });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal(unknown.body.error.param, 'previous_response_id');
    assert.equal(unknown.body.error.code, 'previous_response_not_found');
    assert.match(unknown.body.error.message, /resp_unknown/);

    const client = sdkClient(mock);
    const notKept = await client.responses.create({ model: 'mock-model', input: 'Forget me', store: false });
    assert.equal((notKept as unknown as { store: boolean }).store, false);
    await assert.rejects(
      client.responses.create({ model: 'mock-model', input: 'Hi', previous_response_id: notKept.id }),
      (err: InstanceType<typeof OpenAI.APIError>) => err.status === 404,
    );

    const kept = await client.responses.create({ model: 'mock-model', input: 'Mine only' });
    const workspace = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name: 'Other team' },
    });
    const key = await h.request('POST', '/v2/api-keys/workspace/service', {
      key: h.adminKey,
      json: { name: 'other', workspace_id: workspace.body.id },
    });
    assert.equal(key.status, 200, key.text);
    const other = sdkClient(mock, key.body.key);
    await assert.rejects(
      other.responses.create({ model: 'mock-model', input: 'Hi', previous_response_id: kept.id }),
      (err: InstanceType<typeof OpenAI.APIError>) => err.status === 404,
    );
    const peek = await h.request('GET', `/v1/responses/${kept.id}`, { key: key.body.key, headers: mock });
    assert.notEqual(peek.status, 200);
    assert.ok(!peek.text.includes('Mine only'));
  });

  test('a built-in tool is refused on a translated provider, naming it', async () => {
    const res = await h.request('POST', '/v1/responses', {
      key: h.workspaceKey,
      headers: mock,
      json: { model: 'mock-model', input: 'Search', tools: [{ type: 'web_search' }] },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'tools[0].type');
    assert.match(res.body.error.message, /web_search/);
  });

  test('without a provider the request is refused as a chat completion is', async () => {
    const res = await h.request('POST', '/v1/responses', {
      key: h.workspaceKey,
      json: { model: 'gpt-4o', input: 'Hi' },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'provider_required');
  });
});

/** An upstream request body as a test reads it: any field, any depth. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- provider bodies are read field by field
type UpstreamBody = Record<string, any>;

/** A thinking model of a fake upstream, and what it thinks and answers to 'What is 2+2?'. */
interface Thinker {
  name: string;
  model: string;
  requests: () => RecordedRequest[];
  summary: string;
  answer: string;
  /** Reasoning tokens the provider reports. */
  reasoningTokens: number;
  /** What the provider is sent to think at effort `low`; none when the fake's model takes no budget. */
  thinkingSent?: (body: UpstreamBody) => unknown;
  expectedThinking?: unknown;
  /** The assistant turn the provider is sent back, signed thinking first; none when it needs nothing back. */
  turnSentBack?: (body: UpstreamBody) => unknown;
  expectedTurn?: unknown;
}

const thinkers: Thinker[] = [
  {
    name: 'Anthropic (thinking)',
    model: '@claude/thinking',
    requests: () => anthropic.requests,
    summary: 'Simple arithmetic: 2+2=4.',
    answer: 'The answer is 4.',
    reasoningTokens: 0,
    thinkingSent: (body) => body.thinking,
    expectedThinking: { type: 'enabled', budget_tokens: 2048 },
    turnSentBack: (body) => body.messages[1],
    expectedTurn: {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Simple arithmetic: 2+2=4.', signature: 'EqQBCgIYAhIM1gbcDa9G' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
        { type: 'text', text: 'The answer is 4.' },
      ],
    },
  },
  {
    name: 'Gemini (thinking)',
    model: '@gem/thinking',
    requests: () => gemini.requests,
    summary: '**Greeting** Simple hello.',
    answer: 'Hello there!',
    reasoningTokens: 12,
    thinkingSent: (body) => body.generationConfig?.thinkingConfig,
    expectedThinking: { includeThoughts: true, thinkingBudget: 2048 },
  },
  {
    name: 'Bedrock (reasoning)',
    model: '@aws/reasoning',
    requests: () => bedrock.requests,
    summary: 'The user greets me.',
    answer: 'Echo: What is 2+2?',
    reasoningTokens: 0,
    turnSentBack: (body) => body.messages[1],
    expectedTurn: {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'The user greets me.', signature: 'sig-fake-1' } } },
        { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } },
        { text: 'Echo: What is 2+2?' },
      ],
    },
  },
];

for (const thinker of thinkers) {
  describe(`reasoning on translated responses: ${thinker.name}`, () => {
    const upstreamBody = () => JSON.parse(thinker.requests().at(-1)!.body) as UpstreamBody;

    test('openai.responses.create: a reasoning item with the summary before the message; the effort reaches the provider', async () => {
      const client = sdkClient({});
      const response = await client.responses.create({
        model: thinker.model,
        input: 'What is 2+2?',
        reasoning: { effort: 'low' },
      });
      assert.equal(response.output_text, thinker.answer);
      assert.deepEqual(
        response.output.map((item) => item.type),
        ['reasoning', 'message'],
      );
      const reasoning = response.output[0]!;
      assert.equal(reasoning.type, 'reasoning');
      if (reasoning.type === 'reasoning') {
        assert.match(reasoning.id, /^rs_/);
        assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: thinker.summary }]);
        assert.equal(reasoning.encrypted_content, undefined, 'not asked for');
      }
      assert.equal(response.usage!.output_tokens_details.reasoning_tokens, thinker.reasoningTokens);
      assert.deepEqual(response.reasoning, { effort: 'low', summary: null });
      if (thinker.thinkingSent)
        assert.deepEqual(thinker.thinkingSent(upstreamBody()), thinker.expectedThinking);
      assert.equal(upstreamBody().reasoning_effort, undefined);
    });

    test('streamed: the reasoning item’s events in order before the message’s, numbered; the SDK assembles it', async () => {
      const client = sdkClient({});
      const stream = await client.responses.create({
        model: thinker.model,
        input: 'What is 2+2?',
        stream: true,
        include: ['reasoning.encrypted_content'],
      });
      const events = [];
      for await (const event of stream) events.push(event);
      const reasoningEvents = events.filter((e) => 'output_index' in e && e.output_index === 0);
      assert.deepEqual(
        reasoningEvents.map((e) => e.type),
        [
          'response.output_item.added',
          'response.reasoning_summary_part.added',
          ...reasoningEvents
            .filter((e) => e.type === 'response.reasoning_summary_text.delta')
            .map(() => 'response.reasoning_summary_text.delta'),
          'response.reasoning_summary_text.done',
          'response.reasoning_summary_part.done',
          'response.output_item.done',
        ],
      );
      const lastOfReasoning = events.indexOf(reasoningEvents.at(-1)!);
      const firstOfMessage = events.findIndex((e) => 'output_index' in e && e.output_index === 1);
      assert.equal(firstOfMessage, lastOfReasoning + 1);
      assert.deepEqual(
        events.map((e) => e.sequence_number),
        events.map((_, i) => i),
      );
      const deltas = events.flatMap((e) =>
        e.type === 'response.reasoning_summary_text.delta' ? [e.delta] : [],
      );
      assert.equal(deltas.join(''), thinker.summary);
      const completed = events.at(-1)!;
      assert.equal(completed.type, 'response.completed');
      if (completed.type === 'response.completed') {
        const [reasoning, message] = completed.response.output;
        assert.equal(reasoning!.type, 'reasoning');
        assert.equal(message!.type, 'message');
        if (reasoning!.type === 'reasoning') {
          assert.deepEqual(reasoning!.summary, [{ type: 'summary_text', text: thinker.summary }]);
          // Asked for: what the provider needs back, where it needs anything.
          assert.equal(typeof reasoning!.encrypted_content, thinker.turnSentBack ? 'string' : 'undefined');
        }
        assert.equal(
          completed.response.usage!.output_tokens_details.reasoning_tokens,
          thinker.reasoningTokens,
        );
      }
      const final = await client.responses
        .stream({ model: thinker.model, input: 'What is 2+2?' })
        .finalResponse();
      assert.equal(final.output_text, thinker.answer);
      const assembled = final.output[0]!;
      assert.equal(assembled.type, 'reasoning');
      if (assembled.type === 'reasoning') {
        assert.deepEqual(assembled.summary, [{ type: 'summary_text', text: thinker.summary }]);
      }
    });

    if (thinker.turnSentBack) {
      const sentBack = thinker.turnSentBack;
      test('the thinking goes back signed: by previous_response_id (streamed or not), and as input items with encrypted_content', async () => {
        const client = sdkClient({});
        for (const stream of [false, true]) {
          let firstId: string;
          if (stream) {
            const events = await client.responses.create({
              model: thinker.model,
              input: 'What is 2+2?',
              stream,
            });
            let id = '';
            for await (const event of events) if (event.type === 'response.completed') id = event.response.id;
            firstId = id;
          } else {
            firstId = (await client.responses.create({ model: thinker.model, input: 'What is 2+2?' })).id;
          }
          await client.responses.create({
            model: thinker.model,
            input: 'And 3+3?',
            previous_response_id: firstId,
          });
          assert.deepEqual(sentBack(upstreamBody()), thinker.expectedTurn, `stream: ${stream}`);
        }

        // Kept without encrypted content shown: GET answers as the create did.
        const kept = await client.responses.create({ model: thinker.model, input: 'What is 2+2?' });
        const fetched = await client.responses.retrieve(kept.id);
        assert.deepEqual(fetched.output, kept.output);

        // Stateless: the output, with its encrypted content, sent back as input.
        const first = await client.responses.create({
          model: thinker.model,
          input: 'What is 2+2?',
          store: false,
          include: ['reasoning.encrypted_content'],
        });
        await client.responses.create({
          model: thinker.model,
          store: false,
          input: [
            { role: 'user', content: 'What is 2+2?' },
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { role: 'user', content: 'And 3+3?' },
          ],
        });
        assert.deepEqual(sentBack(upstreamBody()), thinker.expectedTurn);
      });

      test('the AI SDK: the reasoning text, and the thinking sent back on the next turn, kept or encrypted', async () => {
        const { provider } = aiProvider({});
        const options = [
          // Kept (the SDK's default): the next turn names the items by item_reference.
          { openai: { store: true, include: [] } },
          { openai: { store: false, include: ['reasoning.encrypted_content'] } },
        ];
        for (const providerOptions of options) {
          const first = await generateText({
            model: provider(thinker.model),
            prompt: 'What is 2+2?',
            providerOptions,
          });
          assert.equal(first.reasoningText, thinker.summary);
          assert.equal(first.text, thinker.answer);
          await generateText({
            model: provider(thinker.model),
            messages: [
              { role: 'user', content: 'What is 2+2?' },
              ...first.response.messages,
              { role: 'user', content: 'And 3+3?' },
            ],
            providerOptions,
          });
          assert.deepEqual(sentBack(upstreamBody()), thinker.expectedTurn, JSON.stringify(providerOptions));
        }
      });
    }
  });
}

describe('reasoning on translated responses: Gemini’s signed tool calls', () => {
  const tools: OpenAI.Responses.Tool[] = ['get_weather', 'get_time'].map((name) => ({
    type: 'function',
    name,
    parameters: { type: 'object', properties: {} },
    strict: false,
  }));
  /** The model turn Gemini is sent back: the first call with its thought signature. */
  const sentBack = () => {
    const contents = JSON.parse(gemini.requests.at(-1)!.body).contents as Array<{
      role: string;
      parts: Array<Record<string, unknown>>;
    }>;
    return contents.find((c) => c.role === 'model')!.parts.filter((p) => p.functionCall);
  };
  const expected = [
    { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQB0e2Kb7x1yH0f' },
    { functionCall: { name: 'get_time', args: { zone: 'Europe/Paris' } } },
  ];

  test('the call’s thought signature goes back with it: by previous_response_id, and as input items', async () => {
    const client = sdkClient({});
    const first = await client.responses.create({ model: '@gem/function-call', input: 'Weather?', tools });
    assert.deepEqual(
      first.output.map((item) => item.type),
      ['reasoning', 'function_call', 'function_call'],
    );
    const outputs = first.output.flatMap((item) =>
      item.type === 'function_call'
        ? [{ type: 'function_call_output' as const, call_id: item.call_id, output: 'ok' }]
        : [],
    );
    await client.responses.create({
      model: '@gem/function-call',
      previous_response_id: first.id,
      input: outputs,
      tools,
    });
    assert.deepEqual(sentBack(), expected);

    const stateless = await client.responses.create({
      model: '@gem/function-call',
      input: 'Weather?',
      tools,
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
    });
    let output: OpenAI.Responses.ResponseOutputItem[] = [];
    for await (const event of stateless)
      if (event.type === 'response.completed') output = event.response.output;
    await client.responses.create({
      model: '@gem/function-call',
      store: false,
      tools,
      input: [
        { role: 'user', content: 'Weather?' },
        ...(output as OpenAI.Responses.ResponseInputItem[]),
        ...outputs.map((o, i) => ({ ...o, call_id: (output[i + 1] as { call_id: string }).call_id })),
      ],
    });
    assert.deepEqual(sentBack(), expected);
  });
});
