import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '@switchyard/core';
import type { ChatBody } from '../providers/types.ts';
import {
  responseOfChat,
  responsesEvents,
  shownResponse,
  type ResponseObject,
  type ResponseShell,
} from './responses-answer.ts';
import { reasoningForProvider } from './reasoning-effort.ts';
import { encryptedContentOf, reasoningOfEncryptedContent } from './responses-reasoning.ts';
import { chatRequestOf, type ResponsesBody } from './responses-request.ts';
import { chatChunk as chunk, usageChunk as usageOf } from '../testing/chat-chunks.ts';

const ID = 'resp_0123456789abcdef0123456789abcdef';
const RS = 'rs_0123456789abcdef0123456789abcdef';
const shell = (body: Partial<ResponsesBody> = {}): ResponseShell => ({
  id: ID,
  body: { model: 'claude-x', ...body },
  stored: true,
});

const THINKING = [
  { type: 'thinking' as const, thinking: 'Simple arithmetic: 2+2=4.', signature: 'EqQBCgIYAhIM' },
  { type: 'redacted_thinking' as const, data: 'EmwKAhgBEgy3' },
];
const encrypted = encryptedContentOf({ blocks: THINKING, calls: {} })!;

describe('reasoning in a Responses request', () => {
  test('a reasoning item the gateway gave goes back as the assistant turn’s signed thinking, before its text and calls', () => {
    const chat = chatRequestOf({
      model: 'm',
      input: [
        { role: 'user', content: 'What is 2+2? Use the tool.' },
        { type: 'reasoning', id: `${RS}_0`, summary: [], encrypted_content: encrypted },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'add', arguments: '{"a":2,"b":2}' },
        { type: 'function_call_output', call_id: 'call_1', output: '4' },
        { type: 'reasoning', id: `${RS}_5`, summary: [], encrypted_content: encrypted },
        { type: 'function_call', call_id: 'call_2', name: 'check', arguments: '{}' },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: 'user', content: 'What is 2+2? Use the tool.' },
      {
        role: 'assistant',
        content: 'Checking.',
        content_blocks: [...THINKING, { type: 'text', text: 'Checking.' }],
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":2}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '4' },
      {
        role: 'assistant',
        content: null,
        content_blocks: THINKING,
        tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'check', arguments: '{}' } }],
      },
    ]);
  });

  test('a call’s thought signature the reasoning before it carries goes back with the call', () => {
    const signed = encryptedContentOf({ blocks: [], calls: { call_1: 'CiQB0e2K' } })!;
    const chat = chatRequestOf({
      model: 'm',
      input: [
        { role: 'user', content: 'Weather?' },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: signed },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_time', arguments: '{}' },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{}' },
            extra_content: { google: { thought_signature: 'CiQB0e2K' } },
          },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
      },
    ]);
  });

  test('reasoning with nothing for the provider (a summary alone, another provider’s encrypted content) is left out', () => {
    const chat = chatRequestOf({
      model: 'm',
      input: [
        { role: 'user', content: 'Hi' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Greeting.' }] },
        { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAAABo-not-ours' },
        { type: 'reasoning', id: 'rs_3', summary: [], encrypted_content: null },
        { role: 'assistant', content: 'Hello' },
      ],
    });
    assert.deepEqual(chat.messages, [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
  });

  test('encrypted content the gateway made, altered, and an unknown effort are refused, naming the field', () => {
    const altered = Buffer.from(
      JSON.stringify({ type: 'switchyard.reasoning.v1', blocks: [{ type: 'thinking', thinking: 1 }] }),
    ).toString('base64url');
    assert.throws(
      () =>
        chatRequestOf({
          model: 'm',
          input: [
            { role: 'user', content: 'Hi' },
            { type: 'reasoning', summary: [], encrypted_content: altered },
          ],
        }),
      (err: AppError) => err.status === 400 && err.param === 'input[1].encrypted_content',
    );
    assert.throws(
      () => chatRequestOf({ model: 'm', input: 'Hi', reasoning: { effort: 'extreme' } }),
      (err: AppError) => err.status === 400 && err.param === 'reasoning.effort',
    );
  });

  test('the encrypted content carries the blocks unchanged', () => {
    assert.deepEqual(reasoningOfEncryptedContent(encrypted, 'p'), { blocks: THINKING, calls: {} });
    assert.equal(
      encryptedContentOf({ blocks: [{ type: 'thinking', thinking: 'unsigned' }], calls: {} }),
      undefined,
    );
  });
});

describe('reasoning.effort for each provider', () => {
  const body = (fields: Record<string, unknown>): ChatBody =>
    ({ model: 'm', messages: [{ role: 'user', content: 'Hi' }], ...fields }) as ChatBody;

  test('providers that think by a budget get thinking; the OpenAI format keeps reasoning_effort', () => {
    for (const provider of ['anthropic', 'google', 'bedrock']) {
      const sent = reasoningForProvider(body({ reasoning_effort: 'medium' }), provider);
      assert.deepEqual(sent, body({ thinking: { type: 'enabled', budget_tokens: 8192 } }), provider);
    }
    assert.deepEqual(reasoningForProvider(body({ reasoning_effort: 'none' }), 'anthropic'), {
      ...body({}),
      thinking: { type: 'disabled' },
    });
    const openai = body({ reasoning_effort: 'high' });
    assert.equal(reasoningForProvider(openai, 'openai'), openai);
    const plain = body({});
    assert.equal(reasoningForProvider(plain, 'anthropic'), plain);
  });

  test('the budget stays under the output limit; a thinking the request has wins', () => {
    assert.deepEqual(
      reasoningForProvider(body({ reasoning_effort: 'high', max_completion_tokens: 4000 }), 'anthropic')
        .thinking,
      { type: 'enabled', budget_tokens: 3999 },
    );
    assert.deepEqual(
      reasoningForProvider(
        body({ reasoning_effort: 'high', thinking: { type: 'enabled', budget_tokens: 1500 } }),
        'google',
      ),
      body({ thinking: { type: 'enabled', budget_tokens: 1500 } }),
    );
  });
});

const USAGE = {
  prompt_tokens: 10,
  completion_tokens: 30,
  total_tokens: 40,
  completion_tokens_details: { reasoning_tokens: 21 },
};

const chatCompletion = (message: Record<string, unknown>) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'claude-x-2025',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
  usage: USAGE,
});

describe('reasoning in a response object', () => {
  test('thinking blocks are a reasoning item before the message; encrypted content only when included', () => {
    const chat = chatCompletion({
      content: 'The answer is 4.',
      content_blocks: [...THINKING, { type: 'text', text: 'The answer is 4.' }],
    });
    const kept = responseOfChat(shell(), chat);
    assert.deepEqual(kept.output.slice(0, 1), [
      {
        id: `${RS}_0`,
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Simple arithmetic: 2+2=4.' }],
        encrypted_content: encrypted,
      },
    ]);
    assert.equal(kept.output[1]!.type, 'message');
    assert.equal(kept.output[1]!.id, `msg_${ID.slice(5)}_1`);
    assert.equal(kept.usage?.output_tokens_details.reasoning_tokens, 21);
    const shown = shownResponse(kept, false);
    assert.deepEqual(shown.output[0], {
      id: `${RS}_0`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Simple arithmetic: 2+2=4.' }],
    });
    assert.equal(shownResponse(kept, true), kept);
  });

  test('a signed tool call (Gemini’s) has its signature kept in the reasoning before it, or in one of its own', () => {
    const signedCall = {
      id: 'call_1',
      type: 'function',
      function: { name: 'get_weather', arguments: '{}' },
      extra_content: { google: { thought_signature: 'CiQB0e2K' } },
    };
    const thought = responseOfChat(
      shell(),
      chatCompletion({
        content: null,
        content_blocks: [{ type: 'thinking', thinking: '**Planning** use the tool.' }],
        tool_calls: [signedCall],
      }),
    );
    assert.deepEqual(
      thought.output.map((item) => item.type),
      ['reasoning', 'function_call'],
    );
    const reasoning = thought.output[0]!;
    assert.ok(reasoning.type === 'reasoning');
    assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: '**Planning** use the tool.' }]);
    assert.deepEqual(reasoningOfEncryptedContent(reasoning.encrypted_content, 'p'), {
      blocks: [],
      calls: { call_1: 'CiQB0e2K' },
    });

    const bare = responseOfChat(shell(), chatCompletion({ content: null, tool_calls: [signedCall] }));
    assert.deepEqual(bare.output[0], {
      id: `${RS}_0`,
      type: 'reasoning',
      summary: [],
      encrypted_content: encryptedContentOf({ blocks: [], calls: { call_1: 'CiQB0e2K' } }),
    });
    assert.equal(bare.output[1]!.id, `fc_${ID.slice(5)}_1`);
  });

  test('reasoning_content (OpenAI-compatible reasoning models) is a reasoning item with nothing to send back', () => {
    const response = responseOfChat(
      shell(),
      chatCompletion({ content: 'Hi', reasoning_content: 'A greeting.' }),
    );
    assert.deepEqual(response.output[0], {
      id: `${RS}_0`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'A greeting.' }],
    });
  });
});

const encoder = new TextEncoder();
const usageChunk = usageOf(USAGE);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are read field by field
type Event = Record<string, any>;

async function events(
  stream: string,
  body: Partial<ResponsesBody> = {},
  completed?: (r: ResponseObject) => void,
): Promise<Event[]> {
  async function* bytes(): AsyncGenerator<Uint8Array> {
    // Pieces of 5 bytes: events arrive in parts.
    for (const piece of stream.match(/[\s\S]{1,5}/g)!) yield encoder.encode(piece);
  }
  let text = '';
  const decoder = new TextDecoder();
  for await (const piece of responsesEvents(bytes(), shell(body), { completed }))
    text += decoder.decode(piece);
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => JSON.parse(event.split('\n')[1]!.slice('data: '.length)) as Event);
}

/** Anthropic's thinking as the anthropic adapter streams it: thinking deltas, its signature, redacted thinking, then text. */
const thinkingStream = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: 'Simple arithmetic:' }] }),
  chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: ' 2+2=4.' }] }),
  chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: '', signature: 'EqQBCgIYAhIM' }] }),
  chunk({ content_blocks: [{ index: 1, type: 'redacted_thinking', data: 'EmwKAhgBEgy3' }] }),
  chunk({ content: 'The answer ' }),
  chunk({ content: 'is 4.' }),
  chunk({}, 'stop'),
  usageChunk,
  'data: [DONE]\n\n',
].join('');

describe('reasoning in a Responses stream', () => {
  test('the reasoning item streams its summary before the message, in order, numbered', async () => {
    let kept: ResponseObject | undefined;
    const got = await events(thinkingStream, {}, (r) => (kept = r));
    assert.deepEqual(
      got.map((e) => [e.type, e.output_index ?? null, e.summary_index ?? null]),
      [
        ['response.created', null, null],
        ['response.in_progress', null, null],
        ['response.output_item.added', 0, null],
        ['response.reasoning_summary_part.added', 0, 0],
        ['response.reasoning_summary_text.delta', 0, 0],
        ['response.reasoning_summary_text.delta', 0, 0],
        ['response.reasoning_summary_text.done', 0, 0],
        ['response.reasoning_summary_part.done', 0, 0],
        ['response.output_item.done', 0, null],
        ['response.output_item.added', 1, null],
        ['response.content_part.added', 1, null],
        ['response.output_text.delta', 1, null],
        ['response.output_text.delta', 1, null],
        ['response.output_text.done', 1, null],
        ['response.content_part.done', 1, null],
        ['response.output_item.done', 1, null],
        ['response.completed', null, null],
      ],
    );
    assert.deepEqual(
      got.map((e) => e.sequence_number),
      got.map((_, i) => i),
    );
    assert.deepEqual(got[2]!.item, { id: `${RS}_0`, type: 'reasoning', summary: [] });
    assert.deepEqual(got[3]!.part, { type: 'summary_text', text: '' });
    assert.deepEqual(
      got.slice(4, 6).map((e) => e.delta),
      ['Simple arithmetic:', ' 2+2=4.'],
    );
    assert.equal(got[6]!.text, 'Simple arithmetic: 2+2=4.');
    assert.deepEqual(got[7]!.part, { type: 'summary_text', text: 'Simple arithmetic: 2+2=4.' });
    const reasoning = {
      id: `${RS}_0`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Simple arithmetic: 2+2=4.' }],
    };
    assert.deepEqual(got[8]!.item, reasoning);
    const completed = got.at(-1)!.response as ResponseObject;
    assert.deepEqual(completed.output[0], reasoning);
    assert.equal(completed.usage?.output_tokens_details.reasoning_tokens, 21);
    // The gateway keeps what the provider needs back, shown or not.
    assert.deepEqual(kept!.output[0], { ...reasoning, encrypted_content: encrypted });
  });

  test('with include reasoning.encrypted_content, the done item and the response carry it', async () => {
    const got = await events(thinkingStream, { include: ['reasoning.encrypted_content'] });
    const done = got.find((e) => e.type === 'response.output_item.done')!;
    assert.equal(done.item.encrypted_content, encrypted);
    assert.deepEqual(reasoningOfEncryptedContent(done.item.encrypted_content, 'p').blocks, THINKING);
    assert.equal(got.at(-1)!.response.output[0].encrypted_content, encrypted);
  });

  test('reasoning before a tool call (Gemini’s thought summary) is closed before the call’s item', async () => {
    const got = await events(
      [
        chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: '**Planning** use the tool.' }] }),
        chunk({
          tool_calls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } },
          ],
        }),
        chunk({}, 'tool_calls'),
        usageChunk,
      ].join(''),
    );
    assert.deepEqual(
      got.slice(2).map((e) => `${e.type}@${e.output_index ?? ''}`),
      [
        'response.output_item.added@0',
        'response.reasoning_summary_part.added@0',
        'response.reasoning_summary_text.delta@0',
        'response.reasoning_summary_text.done@0',
        'response.reasoning_summary_part.done@0',
        'response.output_item.done@0',
        'response.output_item.added@1',
        'response.function_call_arguments.delta@1',
        'response.function_call_arguments.done@1',
        'response.output_item.done@1',
        'response.completed@',
      ],
    );
    assert.equal(got.at(-1)!.response.output[0].encrypted_content, undefined);
  });

  test('a signed call’s signature is kept in the reasoning item streamed before it', async () => {
    const got = await events(
      [
        chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: '**Planning**' }] }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_1',
              type: 'function',
              function: { name: 'f', arguments: '{}' },
              extra_content: { google: { thought_signature: 'CiQB0e2K' } },
            },
          ],
        }),
        chunk({}, 'tool_calls'),
      ].join(''),
      { include: ['reasoning.encrypted_content'] },
    );
    const done = got.find((e) => e.type === 'response.output_item.done')!;
    assert.equal(done.output_index, 0);
    assert.deepEqual(reasoningOfEncryptedContent(done.item.encrypted_content, 'p'), {
      blocks: [],
      calls: { call_1: 'CiQB0e2K' },
    });
  });
});
