import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '@switchyard/core';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import { toConverseRequest } from './converse-request.ts';

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** The request as the gateway's edge validates it, so the tables use the real input type. */
function translate(body: Record<string, unknown>) {
  return toConverseRequest(
    chatCompletionRequest.parse({ model: 'anthropic.claude-3-haiku-20240307-v1:0', ...body }),
  );
}

const user = (content: unknown) => ({ role: 'user', content });

describe('OpenAI request → Converse request', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      'a user string becomes one text block',
      { messages: [user('Hi')] },
      { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] },
    ],
    [
      'system and developer messages become system blocks, in order',
      {
        messages: [
          { role: 'system', content: 'Be terse.' },
          { role: 'developer', content: 'Answer in French.' },
          user('Hi'),
        ],
      },
      {
        system: [{ text: 'Be terse.' }, { text: 'Answer in French.' }],
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      },
    ],
    [
      'text parts and a data: URI image become text and image-bytes blocks',
      {
        messages: [
          user([
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ]),
        ],
      },
      {
        messages: [
          {
            role: 'user',
            content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: PNG } } }],
          },
        ],
      },
    ],
    [
      'image/jpg is sent as the jpeg format',
      { messages: [user([{ type: 'image_url', image_url: { url: 'data:image/jpg;base64,AAAA' } }])] },
      { messages: [{ role: 'user', content: [{ image: { format: 'jpeg', source: { bytes: 'AAAA' } } }] }] },
    ],
    [
      'assistant tool calls become toolUse blocks with parsed input, after the text',
      {
        messages: [
          user('Weather in Paris and Tokyo?'),
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
              { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } },
            ],
          },
        ],
      },
      {
        messages: [
          { role: 'user', content: [{ text: 'Weather in Paris and Tokyo?' }] },
          {
            role: 'assistant',
            content: [
              { text: 'Checking.' },
              { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
              { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: {} } },
            ],
          },
        ],
      },
    ],
    [
      'consecutive tool results become one user turn, and a following user message joins it',
      {
        messages: [
          user('Weather?'),
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } },
              { id: 'call_2', type: 'function', function: { name: 'w', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
          { role: 'tool', tool_call_id: 'call_2', content: '25C' },
          user('Thanks, and?'),
        ],
      },
      {
        messages: [
          { role: 'user', content: [{ text: 'Weather?' }] },
          {
            role: 'assistant',
            content: [
              { toolUse: { toolUseId: 'call_1', name: 'w', input: {} } },
              { toolUse: { toolUseId: 'call_2', name: 'w', input: {} } },
            ],
          },
          {
            role: 'user',
            content: [
              { toolResult: { toolUseId: 'call_1', content: [{ text: '18C' }] } },
              { toolResult: { toolUseId: 'call_2', content: [{ text: '25C' }] } },
              { text: 'Thanks, and?' },
            ],
          },
        ],
      },
    ],
    [
      'an assistant message with no content and no tool calls is left out',
      { messages: [user('a'), { role: 'assistant', content: null }, user('b')] },
      { messages: [{ role: 'user', content: [{ text: 'a' }, { text: 'b' }] }] },
    ],
    [
      'reasoning handed back in content_blocks precedes the assistant text',
      {
        messages: [
          user('Hi'),
          {
            role: 'assistant',
            content: 'Hello',
            content_blocks: [
              { type: 'thinking', thinking: 'Greet back.', signature: 'sig-1' },
              { type: 'redacted_thinking', data: 'cmVk' },
              { type: 'text', text: 'Hello' },
            ],
          },
          user('Again'),
        ],
      },
      {
        messages: [
          { role: 'user', content: [{ text: 'Hi' }] },
          {
            role: 'assistant',
            content: [
              { reasoningContent: { reasoningText: { text: 'Greet back.', signature: 'sig-1' } } },
              { reasoningContent: { redactedContent: 'cmVk' } },
              { text: 'Hello' },
            ],
          },
          { role: 'user', content: [{ text: 'Again' }] },
        ],
      },
    ],
    [
      'max_completion_tokens, temperature, top_p and a stop string go to inferenceConfig',
      { messages: [user('Hi')], max_completion_tokens: 512, temperature: 0.5, top_p: 0.9, stop: 'END' },
      {
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        inferenceConfig: { maxTokens: 512, temperature: 0.5, topP: 0.9, stopSequences: ['END'] },
      },
    ],
    [
      'the deprecated max_tokens is used when max_completion_tokens is absent; nulls are left out',
      { messages: [user('Hi')], max_tokens: 64, temperature: null, stop: ['a', 'b'] },
      {
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        inferenceConfig: { maxTokens: 64, stopSequences: ['a', 'b'] },
      },
    ],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => assert.deepEqual(translate(input), expected));
  }
});

describe('tools and tool_choice', () => {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
    { type: 'function', function: { name: 'now' } },
  ];
  const toolSpecs = [
    {
      toolSpec: {
        name: 'get_weather',
        description: 'Get weather for a city',
        inputSchema: {
          json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    },
    { toolSpec: { name: 'now', inputSchema: { json: { type: 'object', properties: {} } } } },
  ];
  const cases: Array<[string, unknown, unknown]> = [
    ['no tool_choice leaves the choice to the model', undefined, { tools: toolSpecs }],
    ['auto becomes {auto: {}}', 'auto', { tools: toolSpecs, toolChoice: { auto: {} } }],
    ['required becomes {any: {}}', 'required', { tools: toolSpecs, toolChoice: { any: {} } }],
    [
      'a named function becomes {tool: {name}}',
      { type: 'function', function: { name: 'now' } },
      { tools: toolSpecs, toolChoice: { tool: { name: 'now' } } },
    ],
    ['none leaves the tools out', 'none', undefined],
  ];
  for (const [name, toolChoice, expected] of cases) {
    test(name, () => {
      const request = translate({ messages: [user('Hi')], tools, tool_choice: toolChoice });
      assert.deepEqual(request.toolConfig, expected);
    });
  }
});

describe('thinking', () => {
  test('goes to additionalModelRequestFields.thinking for an Anthropic model, by id, profile or ARN', () => {
    for (const model of [
      'anthropic.claude-3-7-sonnet-20250219-v1:0',
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0',
    ]) {
      const request = translate({
        model,
        messages: [user('Hi')],
        thinking: { type: 'enabled', budget_tokens: 1024 },
      });
      assert.deepEqual(
        request.additionalModelRequestFields,
        { thinking: { type: 'enabled', budget_tokens: 1024 } },
        model,
      );
    }
  });

  test('is not sent to a model of another family', () => {
    const request = translate({
      model: 'amazon.nova-pro-v1:0',
      messages: [user('Hi')],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    assert.equal(request.additionalModelRequestFields, undefined);
  });
});

describe('structured output', () => {
  test('response_format json_schema becomes outputConfig.textFormat, the schema as a JSON string', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const request = translate({
      messages: [user('Weather?')],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather', description: 'The weather', schema, strict: true },
      },
    });
    assert.deepEqual(request.outputConfig, {
      textFormat: {
        type: 'json_schema',
        structure: {
          jsonSchema: { schema: JSON.stringify(schema), name: 'weather', description: 'The weather' },
        },
      },
    });
  });

  test('response_format text asks for nothing', () => {
    const request = translate({ messages: [user('Hi')], response_format: { type: 'text' } });
    assert.equal(request.outputConfig, undefined);
  });
});

describe('requests Converse cannot express are a 400 naming the parameter', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'an image given by URL',
      {
        messages: [
          user([
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ]),
        ],
      },
      'messages[0].content[1].image_url.url',
    ],
    [
      'an image type Converse does not take',
      {
        messages: [
          user('a'),
          { role: 'assistant', content: 'b' },
          user([{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,AAAA' } }]),
        ],
      },
      'messages[2].content[0].image_url.url',
    ],
    [
      'tool call arguments that are not JSON',
      {
        messages: [
          user('a'),
          {
            role: 'assistant',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }],
          },
        ],
      },
      'messages[1].tool_calls[0].function.arguments',
    ],
    ['more than one choice', { messages: [user('a')], n: 2 }, 'n'],
    [
      'JSON mode without a schema',
      { messages: [user('a')], response_format: { type: 'json_object' } },
      'response_format',
    ],
    [
      'a json_schema format without its schema',
      { messages: [user('a')], response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
      'response_format.json_schema.schema',
    ],
    ['the deprecated functions', { messages: [user('a')], functions: [{ name: 'f' }] }, 'functions'],
    [
      'a deprecated function message',
      { messages: [user('a'), { role: 'function', name: 'f', content: 'x' }] },
      'messages[1].role',
    ],
  ];
  for (const [name, input, param] of cases) {
    test(name, () => {
      assert.throws(
        () => translate(input),
        (err: unknown) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.status, 400);
          assert.equal(err.param, param);
          assert.match(err.message, /^bedrock: /);
          return true;
        },
      );
    });
  }
});
