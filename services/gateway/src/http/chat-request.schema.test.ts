import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { BadRequest, parseInput } from '@switchyard/core';
import { chatCompletionRequest } from './chat-request.schema.ts';

const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function rejection(body: unknown): BadRequest {
  try {
    parseInput(chatCompletionRequest, body);
  } catch (err) {
    assert.ok(err instanceof BadRequest, `expected BadRequest, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(body)} to be rejected`);
}

describe('chat completion request', () => {
  test('accepts a minimal request and keeps unknown fields for the provider', () => {
    const parsed = parseInput(chatCompletionRequest, { ...base, vendor_extension: { a: 1 } });
    assert.deepEqual(parsed.vendor_extension, { a: 1 });
  });

  test('accepts every message role with its required fields', () => {
    parseInput(chatCompletionRequest, {
      model: 'm',
      messages: [
        { role: 'system', content: 's', name: 'n' },
        { role: 'developer', content: 'd' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 't' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', content: 'r', tool_call_id: 'c1' },
        { role: 'function', content: null, name: 'f' },
      ],
    });
  });

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an empty messages array', { messages: [] }, 'messages'],
    ['a missing model', { model: undefined }, 'model'],
    ['an unknown role', { messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['a user message without content', { messages: [{ role: 'user' }] }, 'messages[0].content'],
    [
      'an empty user content-part array',
      { messages: [{ role: 'user', content: [] }] },
      'messages[0].content',
    ],
    [
      'an unknown content-part type',
      { messages: [{ role: 'user', content: [{ type: 'video', video: {} }] }] },
      'messages[0].content[0].type',
    ],
    [
      'a tool message without tool_call_id',
      { messages: [{ role: 'tool', content: 'x' }] },
      'messages[0].tool_call_id',
    ],
    [
      'a function message without name',
      { messages: [{ role: 'function', content: 'x' }] },
      'messages[0].name',
    ],
    [
      'a system message with non-string content',
      { messages: [{ role: 'system', content: 5 }] },
      'messages[0].content',
    ],
    [
      'an image part whose url is not a URI',
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'not a uri' } }] }] },
      'messages[0].content[0].image_url.url',
    ],
    [
      'an image detail outside the enum',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'https://a/b', detail: 'max' } }],
          },
        ],
      },
      'messages[0].content[0].image_url.detail',
    ],
    ['n of 0', { n: 0 }, 'n'],
    ['n of 129', { n: 129 }, 'n'],
    ['a stop array of five items', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['an empty stop array', { stop: [] }, 'stop'],
    ['top_logprobs of 21', { top_logprobs: 21 }, 'top_logprobs'],
    ['frequency_penalty of 2.5', { frequency_penalty: 2.5 }, 'frequency_penalty'],
    ['presence_penalty of -3', { presence_penalty: -3 }, 'presence_penalty'],
    ['temperature of 2.1', { temperature: 2.1 }, 'temperature'],
    ['top_p of 1.5', { top_p: 1.5 }, 'top_p'],
    ['a fractional seed', { seed: 1.5 }, 'seed'],
    ['thinking without type', { thinking: { budget_tokens: 10 } }, 'thinking.type'],
    [
      'thinking with budget_tokens 0',
      { thinking: { type: 'enabled', budget_tokens: 0 } },
      'thinking.budget_tokens',
    ],
    [
      'a json_schema response format without name',
      { response_format: { type: 'json_schema', json_schema: {} } },
      'response_format.json_schema.name',
    ],
    ['an unknown response format', { response_format: { type: 'yaml' } }, 'response_format.type'],
    ['a tool without function', { tools: [{ type: 'function' }] }, 'tools[0].function'],
    [
      'a tool_choice object without a name',
      { tool_choice: { type: 'function', function: {} } },
      'tool_choice.function.name',
    ],
    ['an unknown tool_choice string', { tool_choice: 'always' }, 'tool_choice'],
    ['an empty functions array', { functions: [] }, 'functions'],
    ['129 functions', { functions: Array.from({ length: 129 }, (_, i) => ({ name: `f${i}` })) }, 'functions'],
    ['a function_call object without name', { function_call: {} }, 'function_call.name'],
    ['a logit_bias with a fractional value', { logit_bias: { '50256': 0.5 } }, 'logit_bias.50256'],
    ['a non-boolean stream', { stream: 'yes' }, 'stream'],
  ];
  for (const [what, patch, param] of cases) {
    test(`rejects ${what} naming '${param}'`, () => {
      const err = rejection({ ...base, ...patch });
      assert.equal(err.status, 400);
      assert.equal(err.param, param);
      assert.match(err.message, new RegExp(param.replace(/[[\].]/g, '\\$&')));
    });
  }

  test('accepts any temperature in [0, 2] and rejects any outside', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (t) => {
        const ok = chatCompletionRequest.safeParse({ ...base, temperature: t }).success;
        return ok === (t >= 0 && t <= 2);
      }),
    );
  });

  test('accepts stop as a string, null, or 1 to 4 strings', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 8 }), (stop) => {
        const ok = chatCompletionRequest.safeParse({ ...base, stop }).success;
        return ok === (stop.length >= 1 && stop.length <= 4);
      }),
    );
    assert.ok(chatCompletionRequest.safeParse({ ...base, stop: 'END' }).success);
    assert.ok(chatCompletionRequest.safeParse({ ...base, stop: null }).success);
  });
});
