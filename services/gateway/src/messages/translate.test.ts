import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError, parseInput } from '@switchyard/core';
import { messagesRequest } from '../http/messages-request.schema.ts';
import { toMessagesRequest } from '../providers/anthropic/chat-request.ts';
import { fromMessage } from '../providers/anthropic/chat-response.ts';
import { chunksFromEvents } from '../providers/anthropic/chat-stream.ts';
import type { ChatCompletion } from '../providers/openai-format.ts';
import { fromChatCompletion, messagesError, messageUsage } from './from-chat.ts';
import { MessagesStreamTranslator } from './stream.ts';
import { forProvider, toChatBody } from './to-chat.ts';

const request = (body: Record<string, unknown>) =>
  parseInput(messagesRequest, { model: 'claude-x', max_tokens: 100, ...body });

function badRequest(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.status, 400);
    return err;
  }
  assert.fail('no error was thrown');
}

describe('a Messages request as a chat body', () => {
  test('system text blocks, sampling, stop sequences, user id, thinking and a stream with usage', () => {
    const body = toChatBody(
      request({
        system: [
          { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'Be kind.' },
        ],
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END'],
        metadata: { user_id: 'u-1' },
        thinking: { type: 'enabled', budget_tokens: 2048 },
        stream: true,
      }),
    );
    assert.deepEqual(body, {
      model: 'claude-x',
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
      user: 'u-1',
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
  });

  test('images: base64 as a data: URL, url as it is', () => {
    const body = toChatBody(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              { type: 'text', text: 'Which is bigger?' },
            ],
          },
        ],
      }),
    );
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'Which is bigger?' },
        ],
      },
    ]);
  });

  test('tools, tool choices and a tool use round trip', () => {
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }];
    const base = {
      tools,
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }] },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    };
    const body = toChatBody(
      request({ ...base, tool_choice: { type: 'any', disable_parallel_tool_use: true } }),
    );
    assert.deepEqual(body.tools, [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } },
      },
    ]);
    assert.equal(body.tool_choice, 'required');
    assert.equal(body.parallel_tool_calls, false);
    assert.deepEqual(body.messages.slice(1), [
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'toolu_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    assert.equal(toChatBody(request({ ...base, tool_choice: { type: 'auto' } })).tool_choice, 'auto');
    assert.equal(toChatBody(request({ ...base, tool_choice: { type: 'none' } })).tool_choice, 'none');
    assert.deepEqual(
      toChatBody(request({ ...base, tool_choice: { type: 'tool', name: 'get_weather' } })).tool_choice,
      {
        type: 'function',
        function: { name: 'get_weather' },
      },
    );

    // Through the anthropic adapter, the turns come back as they were sent.
    const upstream = toMessagesRequest(body);
    assert.deepEqual(upstream.messages.slice(1), [
      base.messages[1],
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }],
      },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ]);
    assert.deepEqual(upstream.tool_choice, { type: 'any', disable_parallel_tool_use: true });
  });

  test('a JSON schema output format is the response format, and Anthropic gets it back', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const body = toChatBody(
      request({
        messages: [{ role: 'user', content: 'x' }],
        output_config: { format: { type: 'json_schema', schema } },
      }),
    );
    assert.deepEqual(body.response_format, { type: 'json_schema', json_schema: { name: 'output', schema } });
    assert.deepEqual(toMessagesRequest(body).output_config, { format: { type: 'json_schema', schema } });
  });

  test('a failed tool result keeps is_error to Anthropic', () => {
    const body = toChatBody(
      request({
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true }],
          },
        ],
      }),
    );
    assert.deepEqual(body.messages, [{ role: 'tool', tool_call_id: 't1', content: 'boom', is_error: true }]);
    assert.deepEqual(toMessagesRequest(body).messages, [
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true }],
      },
    ]);
  });

  test('thinking blocks sent back ride in content_blocks and reach Anthropic first and unchanged', () => {
    const thinking = [
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Four.' },
      { type: 'tool_use', id: 'toolu_2', name: 'calc', input: {} },
    ];
    const body = toChatBody(
      request({
        messages: [
          { role: 'user', content: '2+2?' },
          { role: 'assistant', content: thinking },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2' }] },
        ],
      }),
    );
    assert.deepEqual(body.messages[1], {
      role: 'assistant',
      content: 'Four.',
      tool_calls: [{ id: 'toolu_2', type: 'function', function: { name: 'calc', arguments: '{}' } }],
      content_blocks: thinking.slice(0, 3),
    });
    assert.deepEqual(toMessagesRequest(body).messages[1], { role: 'assistant', content: thinking });
  });

  test('documents, images in tool results and other block kinds are a 400 naming the block', () => {
    const doc = badRequest(() =>
      toChatBody(request({ messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] })),
    );
    assert.equal(doc.param, 'messages[0].content[0]');
    assert.match(doc.message, /Document blocks are not supported/);
    const image = badRequest(() =>
      toChatBody(
        request({
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 't',
                  content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/x.png' } }],
                },
              ],
            },
          ],
        }),
      ),
    );
    assert.equal(image.param, 'messages[0].content[0].content[0]');
    const misplaced = badRequest(() =>
      toChatBody(
        request({ messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }] }),
      ),
    );
    assert.match(misplaced.message, /tool_result block in an assistant turn/);
    const thinkingInUserTurn = badRequest(() =>
      toChatBody(
        request({
          messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }],
        }),
      ),
    );
    assert.equal(thinkingInUserTurn.param, 'messages[0].content[0]');
  });

  test('the schema: max_tokens is required; unknown fields are accepted; a server tool is refused', () => {
    const missing = badRequest(() =>
      parseInput(messagesRequest, { model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    );
    assert.match(missing.message, /max_tokens/);
    const loose = request({ messages: [{ role: 'user', content: 'x' }], service_tier: 'auto' });
    assert.equal(loose.service_tier, 'auto');
    assert.ok(!('service_tier' in toChatBody(loose)), 'unknown fields are not sent on');
    badRequest(() =>
      request({
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      }),
    );
    badRequest(() => request({ messages: [{ role: 'system', content: 'x' }] }));
  });

  test('OpenAI-format providers get the body without thinking and top_k; the others as it is', () => {
    const body = toChatBody(
      request({ messages: [{ role: 'user', content: 'x' }], top_k: 3, thinking: { type: 'disabled' } }),
    );
    for (const provider of ['anthropic', 'google', 'bedrock'])
      assert.equal(forProvider(body, provider), body);
    for (const provider of ['openai', 'azure-openai', 'mock']) {
      const sent = forProvider(body, provider);
      assert.ok(!('thinking' in sent) && !('top_k' in sent), provider);
      assert.deepEqual(sent.messages, body.messages);
    }
    const plain = toChatBody(request({ messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(forProvider(plain, 'openai'), plain);
  });
});

const completion = (
  message: Record<string, unknown>,
  finish: string,
  extra: Record<string, unknown> = {},
): ChatCompletion =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-x',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', ...message },
        finish_reason: finish,
        logprobs: null,
        ...extra,
      },
    ],
    usage: {
      prompt_tokens: 20,
      completion_tokens: 7,
      total_tokens: 27,
      prompt_tokens_details: { cached_tokens: 5, cache_creation_tokens: 3 },
    },
  }) as unknown as ChatCompletion;

describe('a chat completion as a message', () => {
  test('text, usage with the cache tokens apart from input_tokens, and an msg_ id', () => {
    assert.deepEqual(fromChatCompletion(completion({ content: 'Hello' }, 'stop')), {
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      model: 'gpt-x',
      content: [{ type: 'text', text: 'Hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 7,
        cache_creation_input_tokens: 3,
        cache_read_input_tokens: 5,
      },
    });
    assert.deepEqual(messageUsage(undefined), {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  test('stop reasons', () => {
    const reason = (finish: string, extra = {}) =>
      fromChatCompletion(completion({ content: 'x' }, finish, extra));
    assert.equal(reason('length').stop_reason, 'max_tokens');
    assert.equal(reason('tool_calls').stop_reason, 'tool_use');
    assert.equal(reason('content_filter').stop_reason, 'refusal');
    assert.equal(reason('stop').stop_reason, 'end_turn');
    const stopped = reason('stop', { stop_reason: 'END' });
    assert.equal(stopped.stop_reason, 'stop_sequence');
    assert.equal(stopped.stop_sequence, 'END');
  });

  test('tool calls are tool_use blocks with parsed input; thinking comes from content_blocks or reasoning_content', () => {
    const tools = fromChatCompletion(
      completion(
        {
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'call_2', type: 'function', function: { name: 'g', arguments: '' } },
          ],
        },
        'tool_calls',
      ),
    );
    assert.deepEqual(tools.content, [
      { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
      { type: 'tool_use', id: 'call_2', name: 'g', input: {} },
    ]);
    const thinking = fromChatCompletion(
      completion(
        {
          content: 'Four.',
          content_blocks: [
            { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Four.' },
          ],
        },
        'stop',
      ),
    );
    assert.deepEqual(thinking.content, [
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Four.' },
    ]);
    const reasoning = fromChatCompletion(
      completion({ content: 'Yes.', reasoning_content: 'Because.' }, 'stop'),
    );
    assert.deepEqual(reasoning.content, [
      { type: 'thinking', thinking: 'Because.', signature: '' },
      { type: 'text', text: 'Yes.' },
    ]);
  });

  test('an Anthropic answer through the adapter and back keeps its blocks, stop sequence and usage', () => {
    const original = {
      id: 'msg_01',
      type: 'message' as const,
      role: 'assistant' as const,
      model: 'claude-x',
      content: [
        { type: 'thinking' as const, thinking: 'Hmm.', signature: 'sig' },
        { type: 'text' as const, text: 'one two' },
      ],
      stop_reason: 'stop_sequence',
      stop_sequence: 'three',
      usage: {
        input_tokens: 10,
        output_tokens: 4,
        cache_read_input_tokens: 2,
        cache_creation_input_tokens: 1,
      },
    };
    const back = fromChatCompletion(fromMessage(original, 1));
    assert.deepEqual(back, original);
  });

  test('errors: the gateway error body in Anthropic’s shape, by status', () => {
    const body = {
      error: { message: 'No such integration.', type: 'not_found', code: 'unknown_integration' },
    };
    assert.deepEqual(messagesError(404, body, 'req-1'), {
      type: 'error',
      error: {
        type: 'not_found_error',
        message: 'No such integration.',
        param: null,
        code: 'unknown_integration',
      },
      request_id: 'req-1',
    });
    const hooks = { before_request_hooks: [{ slug: 'g', verdict: false }] };
    const denied = messagesError(446, {
      error: { message: 'Denied.', code: 'guardrail_denied' },
      hook_results: hooks,
    });
    assert.deepEqual(denied, {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Denied.', param: null, code: 'guardrail_denied' },
      hook_results: hooks,
    });
    const types = [400, 401, 403, 404, 413, 422, 429, 500, 502, 529].map(
      (s) => messagesError(s, {}).error.type,
    );
    assert.deepEqual(types, [
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'invalid_request_error',
      'rate_limit_error',
      'api_error',
      'api_error',
      'overloaded_error',
    ]);
  });
});

const decoder = new TextDecoder();
const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) =>
  sse({
    id: 'chatcmpl-9',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-x',
    choices: [{ index: 0, delta, finish_reason: finish, ...extra }],
  });

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events as a client reads them, field by field
type Event = Record<string, any>;

/** Anthropic's events as parsed objects, fed the chat stream in pieces of `size` bytes. */
function translate(chat: string, size = 7): { events: Event[]; pieces: number } {
  const translator = new MessagesStreamTranslator();
  const bytes = new TextEncoder().encode(chat);
  let text = '';
  let pieces = 0;
  for (let i = 0; i < bytes.length; i += size) {
    const out = decoder.decode(translator.push(bytes.slice(i, i + size)));
    if (out) pieces++;
    text += out;
  }
  text += decoder.decode(translator.end());
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length)) as Event;
      assert.equal(eventLine, `event: ${data.type}`);
      return data;
    });
  return { events, pieces };
}

describe('a chat stream as Anthropic events', () => {
  test('text: message_start, a text block, message_delta with stop reason and usage, message_stop', () => {
    const { events, pieces } = translate(
      chunk({ role: 'assistant', content: '' }) +
        chunk({ content: 'Hel' }) +
        chunk({ content: 'lo' }) +
        chunk({}, 'stop') +
        sse({
          id: 'chatcmpl-9',
          choices: [],
          usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
        }) +
        'data: [DONE]\n\n',
    );
    assert.ok(pieces > 3, 'events go out as the chunks arrive');
    assert.deepEqual(
      events.map((e) => e.type),
      [
        'message_start',
        'ping',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    assert.equal(events[0]!.message.id, 'msg_chatcmpl-9');
    assert.equal(events[0]!.message.model, 'gpt-x');
    assert.deepEqual(events[2], {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    assert.deepEqual(events[3]!.delta, { type: 'text_delta', text: 'Hel' });
    assert.deepEqual(events[6], {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: {
        input_tokens: 9,
        output_tokens: 2,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  test('tool calls: one tool_use block per call with input_json_delta; stop reason tool_use', () => {
    const { events } = translate(
      chunk({ role: 'assistant', content: 'Let me see.' }) +
        chunk({
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }],
        }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }) +
        chunk({
          tool_calls: [
            { index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        }) +
        chunk({}, 'tool_calls') +
        'data: [DONE]\n\n',
      13,
    );
    const starts = events.filter((e) => e.type === 'content_block_start');
    assert.deepEqual(
      starts.map((e) => [e.index, e.content_block]),
      [
        [0, { type: 'text', text: '' }],
        [1, { type: 'tool_use', id: 'call_a', name: 'f', input: {} }],
        [2, { type: 'tool_use', id: 'call_b', name: 'g', input: {} }],
      ],
    );
    const json = events
      .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
      .map((e) => [e.index, e.delta.partial_json]);
    assert.deepEqual(json, [
      [1, '{"a":'],
      [1, '1}'],
      [2, '{}'],
    ]);
    assert.equal(events.filter((e) => e.type === 'content_block_stop').length, 3);
    assert.equal(events.at(-2)!.delta.stop_reason, 'tool_use');
  });

  test('thinking from the anthropic adapter: thinking_delta, signature_delta, redacted thinking whole', async () => {
    const anthropicEvents = [
      {
        type: 'message_start',
        message: { id: 'msg_7', model: 'claude-x', usage: { input_tokens: 5, output_tokens: 1 } },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'one two' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'stop_sequence', stop_sequence: 'three' },
        usage: { output_tokens: 4 },
      },
      { type: 'message_stop' },
    ];
    async function* upstream() {
      for (const e of anthropicEvents) yield { event: e.type, data: JSON.stringify(e) };
    }
    let chat = '';
    for await (const piece of chunksFromEvents(upstream(), { created: 1, includeUsage: true })) {
      chat += decoder.decode(piece);
    }
    const { events } = translate(`${chat}data: [DONE]\n\n`, 64);
    const blocks = events.filter((e) => e.type.startsWith('content_block'));
    assert.deepEqual(
      blocks.map((e) => [e.type, e.index, e.content_block ?? e.delta ?? null]),
      [
        ['content_block_start', 0, { type: 'thinking', thinking: '', signature: '' }],
        ['content_block_delta', 0, { type: 'thinking_delta', thinking: 'Hmm.' }],
        ['content_block_delta', 0, { type: 'signature_delta', signature: 'sig' }],
        ['content_block_stop', 0, null],
        ['content_block_start', 1, { type: 'redacted_thinking', data: 'opaque' }],
        ['content_block_stop', 1, null],
        ['content_block_start', 2, { type: 'text', text: '' }],
        ['content_block_delta', 2, { type: 'text_delta', text: 'one two' }],
        ['content_block_stop', 2, null],
      ],
    );
    assert.equal(events[0]!.message.id, 'msg_7');
    assert.deepEqual(events.at(-2), {
      type: 'message_delta',
      delta: { stop_reason: 'stop_sequence', stop_sequence: 'three' },
      usage: {
        input_tokens: 5,
        output_tokens: 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  test('reasoning_content deltas are a thinking block', () => {
    const { events } = translate(
      chunk({ role: 'assistant', reasoning_content: 'Think' }) +
        chunk({ reasoning_content: 'ing.' }) +
        chunk({ content: 'Done.' }) +
        chunk({}, 'stop') +
        'data: [DONE]\n\n',
    );
    const deltas = events.filter((e) => e.type === 'content_block_delta').map((e) => [e.index, e.delta]);
    assert.deepEqual(deltas, [
      [0, { type: 'thinking_delta', thinking: 'Think' }],
      [0, { type: 'thinking_delta', thinking: 'ing.' }],
      [1, { type: 'text_delta', text: 'Done.' }],
    ]);
  });

  test('an error event ends the stream as an error event; so does a stream cut before its end', () => {
    const failed = translate(
      chunk({ content: 'Hi' }) +
        sse({
          error: { message: 'anthropic error: Overloaded', type: 'upstream_error', code: 'overloaded_error' },
        }) +
        'data: [DONE]\n\n',
    ).events;
    assert.deepEqual(
      failed.map((e) => e.type),
      ['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'error'],
    );
    assert.deepEqual(failed.at(-1), {
      type: 'error',
      error: { type: 'overloaded_error', message: 'anthropic error: Overloaded' },
    });
    const cut = translate(chunk({ content: 'Hi' })).events;
    assert.equal(cut.at(-1)!.type, 'error');
    assert.equal(cut.at(-1)!.error.type, 'api_error');
  });

  test('fail() after a thrown upstream error sends one error event, nothing after the end', () => {
    const translator = new MessagesStreamTranslator();
    translator.push(new TextEncoder().encode(chunk({ content: 'Hi' })));
    const failed = decoder.decode(translator.fail('api_error', 'The upstream stream failed.'));
    assert.match(failed, /event: content_block_stop\n/);
    assert.match(failed, /event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    assert.equal(decoder.decode(translator.end()), '');
    assert.equal(decoder.decode(translator.fail('api_error', 'again')), '');
  });
});
