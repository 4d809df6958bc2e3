import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import {
  startFakeAnthropic,
  startServiceHarness,
  type FakeAnthropic,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../../service.ts';

const upstreamKey = 'sk-ant-upstream-secret-0123456789';
let h: ServiceHarness;
let fake: FakeAnthropic;
let client: OpenAI;

before(async () => {
  fake = await startFakeAnthropic({ apiKey: upstreamKey });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
  });
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'claude',
      slug: 'claude',
      ai_provider_id: 'anthropic',
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
const upstreamBody = () => JSON.parse(fake.requests.at(-1)!.body);

describe('Anthropic through the gateway, as an OpenAI client sees it', () => {
  test('a completion from @slug/model: the answer, usage and the provider header', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: '@claude/claude-sonnet-4-5', messages: hello })
      .withResponse();
    assert.equal(response.headers.get('x-vendor-provider'), 'anthropic');
    assert.equal(data.choices[0]!.message.content, 'Echo: Hello there');
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    assert.deepEqual(data.usage, {
      prompt_tokens: 15,
      completion_tokens: 6,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 3, cache_creation_tokens: 2 },
    });

    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/v1/messages');
    assert.equal(upstream.headers['x-api-key'], upstreamKey);
    assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey), 'the gateway key went upstream');
    assert.deepEqual(upstreamBody(), { model: 'claude-sonnet-4-5', max_tokens: 4096, messages: hello });
  });

  test('reasoning_effort becomes a thinking budget under max_tokens; none turns thinking off', async () => {
    await client.chat.completions.create({
      model: '@claude/claude-sonnet-4-5',
      messages: hello,
      reasoning_effort: 'low',
      max_completion_tokens: 8000,
    });
    const sent = upstreamBody();
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.equal(sent.max_tokens, 8000);
    assert.equal('reasoning_effort' in sent, false);

    await client.chat.completions.create({
      model: '@claude/claude-sonnet-4-5',
      messages: hello,
      reasoning_effort: 'none' as 'low',
    });
    assert.deepEqual(upstreamBody().thinking, { type: 'disabled' });
  });

  test('a streamed tool call assembles in the SDK into whole calls with parsed arguments', async () => {
    const stream = client.chat.completions.stream({
      model: '@claude/tool-use',
      messages: [{ role: 'user', content: 'Weather and time in Paris?' }],
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
      ],
      stream_options: { include_usage: true },
    });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, 'Let me check.');
    assert.deepEqual(
      choice.message.tool_calls!.map(
        (c) => c.type === 'function' && [c.id, c.function.name, JSON.parse(c.function.arguments)],
      ),
      [
        ['toolu_01A', 'get_weather', { city: 'Paris' }],
        ['toolu_01B', 'get_time', { zone: 'Europe/Paris' }],
      ],
    );
    assert.equal(completion.usage?.total_tokens, 21);
    assert.equal(upstreamBody().stream, true);
  });

  test('thinking comes back in content_blocks, and sent back it precedes the tool use upstream', async () => {
    const res = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: {
        model: '@claude/thinking',
        messages: hello,
        thinking: { type: 'enabled', budget_tokens: 1024 },
      },
    });
    assert.equal(res.status, 200, res.text);
    const message = res.body.choices[0].message;
    assert.deepEqual(
      message.content_blocks.map((b: { type: string }) => b.type),
      ['thinking', 'redacted_thinking', 'text'],
    );

    const next = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: {
        model: '@claude/claude-x',
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          ...hello,
          {
            ...message,
            tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_9', content: 'done' },
        ],
      },
    });
    assert.equal(next.status, 200, next.text);
    const assistant = upstreamBody().messages[1];
    assert.deepEqual(
      assistant.content.map((b: { type: string }) => b.type),
      ['thinking', 'redacted_thinking', 'text', 'tool_use'],
    );
    assert.equal(assistant.content[0].signature, 'EqQBCgIYAhIM1gbcDa9G');
  });

  test('a 429 reaches the client as a 429 with Anthropic’s retry-after and message', async () => {
    const err = await client.chat.completions
      .create({ model: '@claude/error-429', messages: hello })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.status, 429);
    assert.equal(err.headers.get('retry-after'), '7');
    assert.match(err.message, /anthropic error: Simulated error 429\./);
  });

  test('an overloaded 529 keeps its status', async () => {
    const res = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { model: '@claude/error-529', messages: hello },
    });
    assert.equal(res.status, 529);
    assert.equal(res.headers.get('retry-after'), '7');
    assert.equal(res.body.error.message, 'anthropic error: Simulated error 529.');
    assert.equal(res.body.error.code, 'overloaded_error');
  });

  test('an error mid-stream surfaces in the SDK as an API error after the text so far', async () => {
    const stream = await client.chat.completions.create({
      model: '@claude/stream-error',
      messages: hello,
      stream: true,
    });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.match(err.message, /anthropic error: Overloaded/);
    assert.equal(text, 'Echo: Hello there');
  });

  test('a request Anthropic cannot serve is a 400 that never reaches it', async () => {
    const before = fake.requests.length;
    const err = await client.chat.completions
      .create({ model: '@claude/claude-x', messages: hello, n: 2 })
      .catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.BadRequestError);
    assert.equal(err.param, 'n');
    assert.equal(fake.requests.length, before);
  });
});
