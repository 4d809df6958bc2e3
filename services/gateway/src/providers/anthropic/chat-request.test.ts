import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import { toMessagesRequest } from './chat-request.ts';

const body = (fields: Record<string, unknown>) =>
  chatCompletionRequest.parse({
    model: 'claude-sonnet-4-5',
    messages: [{ role: 'user', content: 'Hi' }],
    ...fields,
  });

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

const cases: Array<{ name: string; request: Record<string, unknown>; expected: Record<string, unknown> }> = [
  {
    name: 'a bare request gets the default max_tokens, which Anthropic requires',
    request: {},
    expected: { model: 'claude-sonnet-4-5', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] },
  },
  {
    name: 'max_completion_tokens wins over max_tokens',
    request: { max_completion_tokens: 300, max_tokens: 200 },
    expected: { max_tokens: 300 },
  },
  {
    name: 'max_tokens is used when max_completion_tokens is absent',
    request: { max_tokens: 200 },
    expected: { max_tokens: 200 },
  },
  {
    name: 'system and developer messages become the top-level system prompt',
    request: {
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
      ],
    },
    expected: { system: 'You are terse.', messages: [{ role: 'user', content: 'Hi' }] },
  },
  {
    name: 'several system messages keep their separation as text blocks',
    request: {
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: 'Hi' },
      ],
    },
    expected: {
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Answer in French.' },
      ],
    },
  },
  {
    name: 'text and image parts: a data: URL as a base64 source, an https URL as a url source',
    request: {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
          ],
        },
      ],
    },
    expected: {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    },
  },
  {
    name: 'a percent-encoded data: URL is sent base64-encoded',
    request: {
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'data:image/svg+xml,%3Csvg%2F%3E' } }],
        },
      ],
    },
    expected: {
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'image',
              source: {
                type: 'base64',
                media_type: 'image/svg+xml',
                data: Buffer.from('<svg/>').toString('base64'),
              },
            },
          ],
        },
      ],
    },
  },
  {
    name: 'assistant tool calls become tool_use blocks; tool results answer in one user turn',
    request: {
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18°C, cloudy' },
        { role: 'tool', tool_call_id: 'toolu_2', content: '14:05' },
        { role: 'user', content: 'Thanks' },
      ],
    },
    expected: {
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C, cloudy' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: '14:05' },
          ],
        },
        { role: 'user', content: 'Thanks' },
      ],
    },
  },
  {
    name: 'thinking blocks sent back in content_blocks precede the tool use, unchanged',
    request: {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          content_blocks: [
            { type: 'thinking', thinking: 'Call the tool.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Let me check.' },
          ],
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      ],
    },
    expected: {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Call the tool.', signature: 'sig-1' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] },
      ],
    },
  },
  {
    name: 'an assistant message with no content and no calls is left out',
    request: {
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: null },
        { role: 'user', content: 'Still there?' },
      ],
    },
    expected: {
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'user', content: 'Still there?' },
      ],
    },
  },
  {
    name: 'tools carry their JSON schema as input_schema; tool_choice auto',
    request: { tools: [weatherTool], tool_choice: 'auto' },
    expected: {
      tools: [
        {
          name: 'get_weather',
          description: 'Get weather for a city',
          input_schema: weatherTool.function.parameters,
        },
      ],
      tool_choice: { type: 'auto' },
    },
  },
  {
    name: 'a tool without parameters gets an empty object schema',
    request: { tools: [{ type: 'function', function: { name: 'now' } }] },
    expected: { tools: [{ name: 'now', input_schema: { type: 'object', properties: {} } }] },
  },
  {
    name: 'tool_choice none',
    request: { tools: [weatherTool], tool_choice: 'none' },
    expected: { tool_choice: { type: 'none' } },
  },
  {
    name: 'tool_choice required is any',
    request: { tools: [weatherTool], tool_choice: 'required' },
    expected: { tool_choice: { type: 'any' } },
  },
  {
    name: 'a named tool_choice is type tool',
    request: { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } },
    expected: { tool_choice: { type: 'tool', name: 'get_weather' } },
  },
  {
    name: 'parallel_tool_calls false disables parallel tool use',
    request: { tools: [weatherTool], parallel_tool_calls: false },
    expected: { tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
  },
  {
    name: 'sampling settings, stop sequences, user and streaming',
    request: { temperature: 0.2, top_p: 0.9, stop: 'END', user: 'user-42', stream: true },
    expected: {
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      stream: true,
    },
  },
  {
    name: 'a stop array is kept as it is',
    request: { stop: ['a', 'b'] },
    expected: { stop_sequences: ['a', 'b'] },
  },
  {
    name: 'thinking is passed through',
    request: { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048 },
    expected: { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2048 },
  },
  {
    name: 'a thinking budget above the default raises the default max_tokens',
    request: { thinking: { type: 'enabled', budget_tokens: 8000 } },
    expected: { thinking: { type: 'enabled', budget_tokens: 8000 }, max_tokens: 12096 },
  },
  {
    name: 'a json_schema response format becomes output_config.format',
    request: {
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'number' } } } },
      },
    },
    expected: {
      output_config: {
        format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'number' } } } },
      },
    },
  },
  {
    name: 'fields Anthropic has no use for are not sent',
    request: { seed: 7, presence_penalty: 1, logit_bias: { '1': 2 }, n: 1, reasoning_effort: 'low' },
    expected: { model: 'claude-sonnet-4-5', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] },
  },
];

describe('OpenAI request → Anthropic Messages request', () => {
  for (const { name, request, expected } of cases) {
    test(name, () => {
      const translated = toMessagesRequest(body(request));
      const exact = 'model' in expected;
      if (exact) assert.deepEqual(translated, expected);
      else assert.deepEqual(pick(translated, Object.keys(expected)), expected);
    });
  }
});

describe('requests the Anthropic provider refuses with a 400 naming the field', () => {
  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['more than one choice', { n: 2 }, 'n'],
    ['the deprecated functions', { functions: [{ name: 'f' }] }, 'functions'],
    ['response_format json_object', { response_format: { type: 'json_object' } }, 'response_format'],
    [
      'tool call arguments that are not a JSON object',
      {
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '[1]' } }],
          },
        ],
      },
      'messages[0].tool_calls[0].function.arguments',
    ],
    [
      'an image URL that is neither data: nor http(s)',
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] },
      'messages[0].content[0].image_url.url',
    ],
  ];
  for (const [name, request, param] of refused) {
    test(name, () => {
      assert.throws(
        () => toMessagesRequest(body(request)),
        (err: { status: number; param: string }) => err.status === 400 && err.param === param,
      );
    });
  }
});

function pick(value: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (value as Record<string, unknown>)[k]]));
}
