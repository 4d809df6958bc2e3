import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { finishReason, fromGenerateContent, geminiError, type TranslationContext } from './chat-response.ts';
import type { GenerateContentResponse } from './wire.ts';

function context(): TranslationContext {
  let n = 0;
  return { created: 1_700_000_000, model: 'gemini-2.5-flash', newToolCallId: () => `call_${++n}` };
}

const usageMetadata = { promptTokenCount: 21, candidatesTokenCount: 48, totalTokenCount: 69 };

describe('Gemini generateContent response → chat completion', () => {
  test('a text answer: content, finish reason stop, usage, the response id and model version', () => {
    const completion = fromGenerateContent(
      {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: 'Hello' }, { text: ' there!' }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata,
        modelVersion: 'gemini-2.5-flash-001',
        responseId: 'OmuSafud',
      },
      context(),
    );
    assert.deepEqual(completion, {
      id: 'OmuSafud',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-2.5-flash-001',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there!' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 21,
        completion_tokens: 48,
        total_tokens: 69,
        prompt_tokens_details: { cached_tokens: 0 },
      },
    });
  });

  test('function calls become tool calls with generated ids, finish reason tool_calls though Gemini says STOP', () => {
    const completion = fromGenerateContent(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: '**Planning** use the tool.', thought: true },
                {
                  functionCall: { name: 'get_weather', args: { city: 'Paris' } },
                  thoughtSignature: 'CiQB0e2K',
                },
                { functionCall: { name: 'get_time', id: 'fc-given' } },
              ],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { ...usageMetadata, thoughtsTokenCount: 213, totalTokenCount: 282 },
      },
      context(),
    );
    assert.deepEqual(completion.choices[0], {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            extra_content: { google: { thought_signature: 'CiQB0e2K' } },
          },
          { id: 'fc-given', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
        content_blocks: [{ type: 'thinking', thinking: '**Planning** use the tool.' }],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    assert.deepEqual(completion.usage, {
      prompt_tokens: 21,
      completion_tokens: 261,
      total_tokens: 282,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 213 },
    });
  });

  test('thought summaries stay out of the content and go to content_blocks with the answer', () => {
    const completion = fromGenerateContent(
      {
        candidates: [
          {
            content: {
              parts: [
                { text: 'Think one. ', thought: true },
                { text: 'Think two.', thought: true },
                { text: 'Answer.' },
              ],
            },
            finishReason: 'STOP',
          },
        ],
      },
      context(),
    );
    const message = completion.choices[0]!.message;
    assert.equal(message.content, 'Answer.');
    assert.deepEqual(message.content_blocks, [
      { type: 'thinking', thinking: 'Think one. Think two.' },
      { type: 'text', text: 'Answer.' },
    ]);
  });

  test('several candidates are several choices, with their own index and finish reason', () => {
    const completion = fromGenerateContent(
      {
        candidates: [
          { content: { parts: [{ text: 'A' }] }, finishReason: 'STOP' },
          { content: { parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS', index: 1 },
        ],
      },
      context(),
    );
    assert.deepEqual(
      completion.choices.map((c) => [c.index, c.message.content, c.finish_reason]),
      [
        [0, 'A', 'stop'],
        [1, 'B', 'length'],
      ],
    );
  });

  test('a candidate stopped for safety has no content and finish reason content_filter', () => {
    const completion = fromGenerateContent({ candidates: [{ finishReason: 'SAFETY' }] }, context());
    assert.deepEqual(completion.choices, [
      {
        index: 0,
        message: { role: 'assistant', content: null },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
  });

  test('a blocked prompt (no candidates) is one choice with null content and finish reason content_filter', () => {
    const completion = fromGenerateContent(
      {
        promptFeedback: { blockReason: 'SAFETY' },
        usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
        responseId: 'x1y2z3',
      },
      context(),
    );
    assert.deepEqual(completion.choices, [
      {
        index: 0,
        message: { role: 'assistant', content: null },
        logprobs: null,
        finish_reason: 'content_filter',
      },
    ]);
    assert.deepEqual(completion.usage, {
      prompt_tokens: 8,
      completion_tokens: 0,
      total_tokens: 8,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  test('usage: cached content is cached_tokens, tool-use prompt tokens count as prompt', () => {
    const response: GenerateContentResponse = {
      candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: 100,
        cachedContentTokenCount: 60,
        toolUsePromptTokenCount: 10,
        candidatesTokenCount: 5,
        totalTokenCount: 115,
      },
    };
    assert.deepEqual(fromGenerateContent(response, context()).usage, {
      prompt_tokens: 110,
      completion_tokens: 5,
      total_tokens: 115,
      prompt_tokens_details: { cached_tokens: 60 },
    });
  });

  test('logprobs: each chosen token with its bytes and the top alternatives', () => {
    const completion = fromGenerateContent(
      {
        candidates: [
          {
            content: { parts: [{ text: 'Hé' }] },
            finishReason: 'STOP',
            logprobsResult: {
              chosenCandidates: [{ token: 'Hé', logProbability: -0.25 }],
              topCandidates: [
                {
                  candidates: [
                    { token: 'Hé', logProbability: -0.25 },
                    { token: 'Hi', logProbability: -1.5 },
                  ],
                },
              ],
            },
          },
        ],
      },
      context(),
    );
    assert.deepEqual(completion.choices[0]!.logprobs, {
      content: [
        {
          token: 'Hé',
          logprob: -0.25,
          bytes: [72, 195, 169],
          top_logprobs: [
            { token: 'Hé', logprob: -0.25, bytes: [72, 195, 169] },
            { token: 'Hi', logprob: -1.5, bytes: [72, 105] },
          ],
        },
      ],
    });
  });

  test('a response with no id or model version gets a generated id and the requested model', () => {
    const completion = fromGenerateContent({ candidates: [{ finishReason: 'STOP' }] }, context());
    assert.match(completion.id, /^chatcmpl-[0-9a-f]{24}$/);
    assert.equal(completion.model, 'gemini-2.5-flash');
    assert.equal('usage' in completion, false);
  });
});

describe('finishReason → finish_reason', () => {
  const table: Array<[string | undefined, boolean, string]> = [
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    [undefined, true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['LANGUAGE', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ['OTHER', false, 'stop'],
    ['FINISH_REASON_UNSPECIFIED', false, 'stop'],
  ];
  for (const [reason, calledTools, expected] of table) {
    test(`${reason}${calledTools ? ' with function calls' : ''} is ${expected}`, () =>
      assert.equal(finishReason(reason, calledTools), expected));
  }
});

describe('Gemini error bodies', () => {
  test('keep the status and say "google error: ..." with the status name as the code', () => {
    const err = geminiError(400, {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
      },
    });
    assert.equal(err.status, 400);
    assert.equal(err.message, 'google error: API key not valid. Please pass a valid API key.');
    assert.equal(err.code, 'invalid_argument');
    assert.deepEqual(err.headers, {});
  });

  test('a 429’s RetryInfo delay becomes retry-after, rounded up to whole seconds', () => {
    const err = geminiError(429, {
      error: {
        code: 429,
        message: 'You exceeded your current quota.',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '36.4s' }],
      },
    });
    assert.deepEqual(err.headers, { 'retry-after': '37' });
  });

  test('a body that is not Google’s envelope is quoted', () => {
    const err = geminiError(502, 'Bad Gateway');
    assert.equal(err.message, 'google error: Bad Gateway');
    assert.equal(err.code, 'upstream_error');
  });
});
