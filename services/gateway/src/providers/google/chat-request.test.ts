import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import { generateUrl } from './api.ts';
import { toGenerateContentRequest } from './chat-request.ts';

const body = (fields: Record<string, unknown>) =>
  chatCompletionRequest.parse({
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: 'Hi' }],
    ...fields,
  });

const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string', description: 'City name' } },
  required: ['city'],
};
const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Get weather for a city', parameters: weatherParameters },
};
const weatherCall = (fields: Record<string, unknown> = {}) => ({
  id: 'call_1',
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
  ...fields,
});

const cases: Array<{ name: string; request: Record<string, unknown>; expected: Record<string, unknown> }> = [
  {
    name: 'a bare request is one user turn',
    request: {},
    expected: { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
  },
  {
    name: 'system and developer messages become the systemInstruction',
    request: {
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: 'Hi' },
      ],
    },
    expected: {
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    },
  },
  {
    name: 'assistant turns are the model role',
    request: {
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'How are you?' },
      ],
    },
    expected: {
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello!' }] },
        { role: 'user', parts: [{ text: 'How are you?' }] },
      ],
    },
  },
  {
    name: 'images: a data: URL as inlineData, an https URL as fileData with the type its name gives',
    request: {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these.' },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.PNG?size=large' } },
            { type: 'image_url', image_url: { url: 'https://example.com/image' } },
          ],
        },
      ],
    },
    expected: {
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Compare these.' },
            { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } },
            { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.PNG?size=large' } },
            { fileData: { fileUri: 'https://example.com/image' } },
          ],
        },
      ],
    },
  },
  {
    name: 'tool calls become functionCall parts; tool results functionResponse parts in one user turn',
    request: {
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            weatherCall(),
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":18}' },
        { role: 'tool', tool_call_id: 'call_2', content: '14:05' },
      ],
    },
    expected: {
      contents: [
        { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { temp_c: 18 } } },
            { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
          ],
        },
      ],
    },
  },
  {
    name: 'a tool call’s thought signature goes back on its functionCall part',
    request: {
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [weatherCall({ extra_content: { google: { thought_signature: 'CiQB0e2K' } } })],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    },
    expected: {
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'CiQB0e2K' },
          ],
        },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }],
        },
      ],
    },
  },
  {
    name: 'tools become functionDeclarations with their OpenAPI-style parameters',
    request: { tools: [weatherTool, { type: 'function', function: { name: 'now' } }] },
    expected: {
      tools: [
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'Get weather for a city', parameters: weatherParameters },
            { name: 'now' },
          ],
        },
      ],
    },
  },
  {
    name: 'parameters beyond the OpenAPI subset go as parametersJsonSchema',
    request: {
      tools: [
        {
          type: 'function',
          function: {
            name: 'strict_fn',
            parameters: { ...weatherParameters, additionalProperties: false },
            strict: true,
          },
        },
      ],
    },
    expected: {
      tools: [
        {
          functionDeclarations: [
            {
              name: 'strict_fn',
              parametersJsonSchema: { ...weatherParameters, additionalProperties: false },
            },
          ],
        },
      ],
    },
  },
  {
    name: 'tool_choice auto',
    request: { tool_choice: 'auto' },
    expected: { toolConfig: { functionCallingConfig: { mode: 'AUTO' } } },
  },
  {
    name: 'tool_choice none',
    request: { tool_choice: 'none' },
    expected: { toolConfig: { functionCallingConfig: { mode: 'NONE' } } },
  },
  {
    name: 'tool_choice required is ANY',
    request: { tool_choice: 'required' },
    expected: { toolConfig: { functionCallingConfig: { mode: 'ANY' } } },
  },
  {
    name: 'a named tool_choice is ANY limited to that function',
    request: { tool_choice: { type: 'function', function: { name: 'get_weather' } } },
    expected: {
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    },
  },
  {
    name: 'generation settings',
    request: {
      temperature: 0.7,
      top_p: 0.9,
      max_completion_tokens: 500,
      max_tokens: 100,
      stop: 'END',
      n: 2,
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
    },
    expected: {
      generationConfig: {
        temperature: 0.7,
        topP: 0.9,
        maxOutputTokens: 500,
        stopSequences: ['END'],
        candidateCount: 2,
        seed: 42,
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
      },
    },
  },
  {
    name: 'max_tokens is the output limit when max_completion_tokens is absent',
    request: { max_tokens: 100, stop: ['a', 'b'] },
    expected: { generationConfig: { maxOutputTokens: 100, stopSequences: ['a', 'b'] } },
  },
  {
    name: 'json_object asks for JSON',
    request: { response_format: { type: 'json_object' } },
    expected: { generationConfig: { responseMimeType: 'application/json' } },
  },
  {
    name: 'json_schema asks for JSON with the schema',
    request: {
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: weatherParameters } },
    },
    expected: {
      generationConfig: { responseMimeType: 'application/json', responseSchema: weatherParameters },
    },
  },
  {
    name: 'a json_schema beyond the OpenAPI subset goes as responseJsonSchema',
    request: {
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'w', schema: { type: ['object', 'null'], $defs: {} } },
      },
    },
    expected: {
      generationConfig: {
        responseMimeType: 'application/json',
        responseJsonSchema: { type: ['object', 'null'], $defs: {} },
      },
    },
  },
  {
    name: 'a text response_format changes nothing',
    request: { response_format: { type: 'text' } },
    expected: { generationConfig: undefined },
  },
  {
    name: 'logprobs ask for responseLogprobs with the number of alternatives',
    request: { logprobs: true, top_logprobs: 3 },
    expected: { generationConfig: { responseLogprobs: true, logprobs: 3 } },
  },
  {
    name: 'thinking with a budget includes thought summaries',
    request: { thinking: { type: 'enabled', budget_tokens: 1024 } },
    expected: { generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } },
  },
  {
    name: 'thinking disabled is a zero budget',
    request: { thinking: { type: 'disabled' } },
    expected: { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } },
  },
  {
    name: 'fields Gemini has no use for are not sent',
    request: {
      user: 'u-1',
      logit_bias: { '1': 2 },
      parallel_tool_calls: false,
      stream: true,
      reasoning_effort: 'low',
    },
    expected: { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] },
  },
];

describe('OpenAI request → Gemini generateContent request', () => {
  for (const { name, request, expected } of cases) {
    test(name, () => {
      const translated = toGenerateContentRequest(body(request));
      if ('contents' in expected && Object.keys(expected).length === 1)
        assert.deepEqual(translated, expected);
      else assert.deepEqual(pick(translated, Object.keys(expected)), expected);
    });
  }
});

describe('requests the Google provider refuses with a 400 naming the field', () => {
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['the deprecated functions', { functions: [{ name: 'f' }] }, 'functions'],
    [
      'a tool message that answers no earlier call',
      { messages: [{ role: 'tool', tool_call_id: 'call_9', content: 'x' }] },
      'messages[0].tool_call_id',
    ],
    [
      'tool call arguments that are not JSON',
      {
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{' } }],
          },
        ],
      },
      'messages[0].tool_calls[0].function.arguments',
    ],
    [
      'an image URL Gemini cannot fetch',
      {
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/x.png' } }] },
        ],
      },
      'messages[0].content[0].image_url.url',
    ],
  ];
  for (const [name, request, param] of refused) {
    test(name, () => {
      assert.throws(
        () => toGenerateContentRequest(body(request)),
        (err: { status: number; param: string }) => err.status === 400 && err.param === param,
      );
    });
  }
});

describe('the Gemini endpoint', () => {
  const target = { provider: 'google', apiKey: 'k', headers: {}, settings: {} };
  test('is generateContent under the default base URL', () => {
    assert.equal(
      generateUrl(target, 'gemini-2.5-flash', false),
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
  });
  test('is streamGenerateContent as SSE when streaming, under an overriding base URL', () => {
    assert.equal(
      generateUrl({ ...target, baseUrl: 'http://127.0.0.1:9/v1beta/' }, 'models/gemini-2.5-pro', true),
      'http://127.0.0.1:9/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
  });
});

function pick(value: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (value as Record<string, unknown>)[k]]));
}
