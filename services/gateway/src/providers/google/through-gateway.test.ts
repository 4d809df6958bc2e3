import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import {
  startFakeGemini,
  startServiceHarness,
  type FakeGemini,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../../service.ts';

const upstreamKey = 'gemini-upstream-secret-0123456789';
let h: ServiceHarness;
let fake: FakeGemini;
let client: OpenAI;

before(async () => {
  fake = await startFakeGemini({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
  });
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'gemini',
      slug: 'gemini',
      ai_provider_id: 'google',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(res.status, 200, res.text);
  client = new OpenAI({ apiKey: h.workspaceKey, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await h.close();
  await fake.close();
});

const hello = [{ role: 'user' as const, content: 'Hello there' }];
const weatherTools = [
  { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } },
  { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object' } } },
];
const upstreamBody = () => JSON.parse(fake.requests.at(-1)!.body);

describe('Gemini through the gateway, as an OpenAI client sees it', () => {
  test('a completion from @slug/model: the answer, usage and the provider header', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: '@gemini/gemini-2.5-flash', messages: hello, temperature: 0.5 })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'google');
    assert.equal(data.choices[0]!.message.content, 'Echo: Hello there');
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(data.usage, {
      prompt_tokens: 9,
      completion_tokens: 5,
      total_tokens: 14,
      prompt_tokens_details: { cached_tokens: 4 },
    });

    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(upstream.headers['x-goog-api-key'], upstreamKey);
    assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey), 'the gateway key went upstream');
    assert.deepEqual(upstreamBody(), {
      contents: [{ role: 'user', parts: [{ text: 'Hello there' }] }],
      generationConfig: { temperature: 0.5 },
    });
  });

  test('streamed function calls assemble in the SDK, and the round trip returns the thought signature', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather and time in Paris?' },
    ];
    const stream = client.chat.completions.stream({
      model: '@gemini/function-call',
      messages,
      tools: weatherTools,
      stream_options: { include_usage: true },
    });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    const calls = choice.message.tool_calls!;
    assert.deepEqual(
      calls.map((c) => c.type === 'function' && [c.function.name, JSON.parse(c.function.arguments)]),
      [
        ['get_weather', { city: 'Paris' }],
        ['get_time', { zone: 'Europe/Paris' }],
      ],
    );
    assert.equal(completion.usage?.completion_tokens_details?.reasoning_tokens, 12);

    messages.push(
      { role: 'assistant', content: null, tool_calls: calls },
      { role: 'tool', tool_call_id: calls[0]!.id, content: '{"temp_c":18}' },
      { role: 'tool', tool_call_id: calls[1]!.id, content: '14:05' },
    );
    await client.chat.completions.create({
      model: '@gemini/gemini-2.5-flash',
      messages,
      tools: weatherTools,
    });
    const [, model, results] = upstreamBody().contents;
    assert.deepEqual(model, {
      role: 'model',
      parts: [
        {
          functionCall: { name: 'get_weather', args: { city: 'Paris' } },
          thoughtSignature: 'CiQB0e2Kb7x1yH0f',
        },
        { functionCall: { name: 'get_time', args: { zone: 'Europe/Paris' } } },
      ],
    });
    assert.deepEqual(results, {
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { temp_c: 18 } } },
        { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
      ],
    });
  });

  test('a streamed answer arrives as text deltas ending in [DONE]', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.workspaceKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: '@gemini/gemini-2.5-flash', messages: hello, stream: true }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const data = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.slice('data: '.length));
    assert.equal(data.at(-1), '[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Echo: Hello there');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
  });

  test('a blocked prompt is a 200 with no content and finish reason content_filter', async () => {
    const completion = await client.chat.completions.create({ model: '@gemini/blocked', messages: hello });
    assert.equal(completion.choices[0]!.message.content, null);
    assert.equal(completion.choices[0]!.finish_reason, 'content_filter');
  });

  test('a 429 reaches the client as a 429 with a retry-after from Gemini’s RetryInfo', async () => {
    const err = await client.chat.completions
      .create({ model: '@gemini/error-429', messages: hello })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.headers.get('retry-after'), '37');
    assert.match(err.message, /google error: Simulated error 429\./);
  });

  test('a wrong upstream key is Gemini’s 400 with its message', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: 'bad-key',
        slug: 'bad-key',
        ai_provider_id: 'google',
        key: 'not-the-key',
        configurations: { custom_host: fake.baseUrl },
      },
    });
    assert.equal(res.status, 200, res.text);
    const err = await client.chat.completions
      .create({ model: '@bad-key/gemini-2.5-flash', messages: hello })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.match(err.message, /google error: API key not valid/);
  });
});
