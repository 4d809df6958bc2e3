import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { finishReason, fromMessage } from './chat-response.ts';
import type { Message } from './wire.ts';

const usage = {
  input_tokens: 412,
  output_tokens: 96,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};
const message = (fields: Partial<Message>): Message => ({
  id: 'msg_01X',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [{ type: 'text', text: 'Hello!' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage,
  ...fields,
});

describe('Anthropic Messages response → chat completion', () => {
  test('a text answer: content, finish reason stop, usage, the message id and model', () => {
    assert.deepEqual(fromMessage(message({}), 1_700_000_000), {
      id: 'msg_01X',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello!' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 412,
        completion_tokens: 96,
        total_tokens: 508,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    });
  });

  test('thinking and tool use: tool calls with JSON-string arguments, every block in content_blocks', () => {
    const completion = fromMessage(
      message({
        content: [
          { type: 'thinking', thinking: 'User wants Paris weather; call the tool.', signature: 'EqQBCg' },
          { type: 'redacted_thinking', data: 'EmwKAhgB' },
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
      }),
      0,
    );
    assert.deepEqual(completion.choices[0], {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          {
            id: 'toolu_01A',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
        content_blocks: [
          { type: 'thinking', thinking: 'User wants Paris weather; call the tool.', signature: 'EqQBCg' },
          { type: 'redacted_thinking', data: 'EmwKAhgB' },
          { type: 'text', text: 'Let me check.' },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  test('only tool use: content is null', () => {
    const completion = fromMessage(
      message({ content: [{ type: 'tool_use', id: 't', name: 'now', input: {} }], stop_reason: 'tool_use' }),
      0,
    );
    assert.equal(completion.choices[0]!.message.content, null);
    assert.equal(completion.choices[0]!.message.tool_calls![0]!.function.arguments, '{}');
    assert.equal('content_blocks' in completion.choices[0]!.message, false);
  });

  test('several text blocks are joined; block kinds it does not know are passed over', () => {
    const content = [
      { type: 'text', text: 'Part one. ' },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
      { type: 'text', text: 'Part two.' },
    ] as unknown as Message['content'];
    assert.equal(fromMessage(message({ content }), 0).choices[0]!.message.content, 'Part one. Part two.');
  });

  test('usage: prompt tokens include cache writes and reads; cached tokens are the reads, cache_creation_tokens the writes', () => {
    const completion = fromMessage(
      message({
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 20,
          cache_read_input_tokens: 30,
          output_tokens: 5,
          output_tokens_details: { thinking_tokens: 3 },
        },
      }),
      0,
    );
    assert.deepEqual(completion.usage, {
      prompt_tokens: 60,
      completion_tokens: 5,
      total_tokens: 65,
      prompt_tokens_details: { cached_tokens: 30, cache_creation_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 3 },
    });
  });
});

describe('stop_reason → finish_reason', () => {
  const table: Array<[string | null, string]> = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['something_new', 'stop'],
    [null, 'stop'],
  ];
  for (const [stopReason, expected] of table) {
    test(`${stopReason} is ${expected}`, () => assert.equal(finishReason(stopReason), expected));
  }
});
