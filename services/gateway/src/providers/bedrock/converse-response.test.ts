import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { finishReasonOf, fromConverseResponse, usageOf } from './converse-response.ts';
import type { ConverseContentBlock, ConverseResponse } from './converse-types.ts';

const meta = {
  id: 'chatcmpl-req-1',
  created: 1_700_000_000,
  model: 'anthropic.claude-3-haiku-20240307-v1:0',
};
const usage = { inputTokens: 412, outputTokens: 96, totalTokens: 508 };

function response(content: ConverseContentBlock[], stopReason = 'end_turn'): ConverseResponse {
  return {
    output: { message: { role: 'assistant', content } },
    stopReason,
    usage,
    metrics: { latencyMs: 1 },
  };
}

describe('Converse stopReason → finish_reason', () => {
  const table: Array<[string | undefined, string]> = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['guardrail_intervened', 'content_filter'],
    ['content_filtered', 'content_filter'],
    ['malformed_model_output', 'stop'],
    ['malformed_tool_use', 'stop'],
    [undefined, 'stop'],
  ];
  for (const [stopReason, finishReason] of table) {
    test(`${stopReason} is ${finishReason}`, () => assert.equal(finishReasonOf(stopReason), finishReason));
  }
});

describe('Converse usage → usage', () => {
  test('input, output and total tokens become prompt, completion and total tokens', () => {
    assert.deepEqual(usageOf(usage), { prompt_tokens: 412, completion_tokens: 96, total_tokens: 508 });
  });

  test('cache reads are cached_tokens and cache writes cache_creation_tokens, both part of the prompt', () => {
    assert.deepEqual(
      usageOf({
        inputTokens: 10,
        outputTokens: 5,
        totalTokens: 15,
        cacheReadInputTokens: 100,
        cacheWriteInputTokens: 20,
      }),
      {
        prompt_tokens: 130,
        completion_tokens: 5,
        total_tokens: 135,
        prompt_tokens_details: { cached_tokens: 100, cache_creation_tokens: 20 },
      },
    );
  });
});

describe('Converse response → chat completion', () => {
  test('text blocks become the message content, with the id, model and usage', () => {
    assert.deepEqual(fromConverseResponse(response([{ text: 'Hello ' }, { text: 'there.' }]), meta), {
      id: 'chatcmpl-req-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: meta.model,
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: { role: 'assistant', content: 'Hello there.' },
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 412, completion_tokens: 96, total_tokens: 508 },
    });
  });

  test('toolUse blocks become tool_calls with JSON arguments, and finish_reason tool_calls', () => {
    const completion = fromConverseResponse(
      response(
        [
          { text: 'Let me check.' },
          { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'tooluse_2', name: 'now', input: {} } },
        ],
        'tool_use',
      ),
      meta,
    );
    const [choice] = completion.choices;
    assert.equal(choice?.finish_reason, 'tool_calls');
    assert.deepEqual(choice?.message, {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        {
          id: 'tooluse_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
        { id: 'tooluse_2', type: 'function', function: { name: 'now', arguments: '{}' } },
      ],
    });
  });

  test('a tool call with no text has null content', () => {
    const completion = fromConverseResponse(
      response([{ toolUse: { toolUseId: 't', name: 'f', input: {} } }], 'tool_use'),
      meta,
    );
    assert.equal(completion.choices[0]?.message.content, null);
  });

  test('reasoning becomes thinking and redacted_thinking content_blocks, in order with the text', () => {
    const completion = fromConverseResponse(
      response([
        { reasoningContent: { reasoningText: { text: 'Need the tool.', signature: 'ErcBCkgI' } } },
        { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } },
        { text: 'Hello.' },
      ]),
      meta,
    );
    assert.deepEqual(completion.choices[0]?.message, {
      role: 'assistant',
      content: 'Hello.',
      content_blocks: [
        { type: 'thinking', thinking: 'Need the tool.', signature: 'ErcBCkgI' },
        { type: 'redacted_thinking', data: 'cmVkYWN0ZWQ=' },
        { type: 'text', text: 'Hello.' },
      ],
    });
  });

  test('a guardrail intervention is finish_reason content_filter', () => {
    const completion = fromConverseResponse(response([{ text: 'Sorry.' }], 'guardrail_intervened'), meta);
    assert.equal(completion.choices[0]?.finish_reason, 'content_filter');
  });

  test('an empty answer has empty content', () => {
    const completion = fromConverseResponse(response([], 'max_tokens'), meta);
    assert.equal(completion.choices[0]?.message.content, '');
    assert.equal(completion.choices[0]?.finish_reason, 'length');
  });
});
