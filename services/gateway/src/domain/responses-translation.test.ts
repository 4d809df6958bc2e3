import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UpstreamError, type AppError } from '@switchyard/core';
import {
  responseIdOfItem,
  responseOfChat,
  responsesEvents,
  type ResponseObject,
  type ResponseShell,
} from './responses-answer.ts';
import { chatRequestOf, type ResponsesBody } from './responses-request.ts';
import { chatChunk as chunk, sse, usageChunk as usageOf } from '../testing/chat-chunks.ts';

const ID = 'resp_0123456789abcdef0123456789abcdef';
const shell = (body: Partial<ResponsesBody> = {}): ResponseShell => ({
  id: ID,
  body: { model: 'claude-x', ...body },
  stored: true,
});

function refused(body: Partial<ResponsesBody>, param: string): void {
  assert.throws(
    () => chatRequestOf({ model: 'm', input: 'Hi', ...body }),
    (err: AppError) => err.status === 400 && err.param === param,
  );
}

describe('a Responses request as a chat completion request', () => {
  test('every field that translates', () => {
    const chat = chatRequestOf({
      model: '@claude/claude-x',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'https://example.org/cat.png', detail: 'low' },
          ],
        },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.' }], id: 'msg_1' },
        { type: 'function_call', call_id: 'call_1', name: 'look', arguments: '{"at":"cat"}' },
        { type: 'function_call', call_id: 'call_2', name: 'look', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a cat' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [{ type: 'input_text', text: 'still a cat' }],
        },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          name: 'look',
          description: 'Looks',
          parameters: { type: 'object' },
          strict: true,
        },
      ],
      tool_choice: { type: 'function', name: 'look' },
      temperature: 0.5,
      top_p: 0.9,
      max_output_tokens: 100,
      parallel_tool_calls: false,
      user: 'user-1',
      reasoning: { effort: 'low' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      metadata: { team: 'a' },
      store: true,
      stream: true,
    });
    assert.deepEqual(chat, {
      model: '@claude/claude-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Answer in French.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.org/cat.png', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"at":"cat"}' } },
            { id: 'call_2', type: 'function', function: { name: 'look', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
        { role: 'tool', tool_call_id: 'call_2', content: 'still a cat' },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'look', description: 'Looks', parameters: { type: 'object' }, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'look' } },
      temperature: 0.5,
      top_p: 0.9,
      max_completion_tokens: 100,
      parallel_tool_calls: false,
      user: 'user-1',
      reasoning_effort: 'low',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test('a string input is one user message, after the earlier turns; json_object and text formats', () => {
    const history = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ];
    assert.deepEqual(
      chatRequestOf({ model: 'm', input: 'Again', text: { format: { type: 'json_object' } } }, history),
      {
        model: 'm',
        messages: [...history, { role: 'user', content: 'Again' }],
        response_format: { type: 'json_object' },
      },
    );
    assert.deepEqual(chatRequestOf({ model: 'm', input: 'Hi', text: { format: { type: 'text' } } }), {
      model: 'm',
      messages: [{ role: 'user', content: 'Hi' }],
    });
  });

  test('what a chat completion cannot do is refused, naming the field', () => {
    refused({ tools: [{ type: 'web_search' }] }, 'tools[0].type');
    refused({ tools: [{ type: 'function', name: 'f' }, { type: 'file_search' }] }, 'tools[1].type');
    refused({ tool_choice: { type: 'web_search_preview' } }, 'tool_choice');
    refused({ background: true }, 'background');
    refused({ conversation: 'conv_1' }, 'conversation');
    refused({ input: [{ type: 'computer_call_output', call_id: 'c' }] }, 'input[0].type');
    refused(
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] },
      'input[0].content[0].type',
    );
    refused(
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] },
      'input[0].content[0].image_url',
    );
    refused({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id');
    refused({ input: [] }, 'input');
  });
});

const chatCompletion = (message: Record<string, unknown>, finish = 'stop') => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'claude-x-2025',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: {
    prompt_tokens: 10,
    completion_tokens: 5,
    total_tokens: 15,
    prompt_tokens_details: { cached_tokens: 4 },
    completion_tokens_details: { reasoning_tokens: 2 },
  },
});

describe('a chat completion as a response object', () => {
  test('text and tool calls become output items; usage in the Responses terms', () => {
    const response = responseOfChat(
      shell({ instructions: 'Be brief.', metadata: { team: 'a' }, tools: [{ type: 'function', name: 'f' }] }),
      chatCompletion(
        {
          content: 'Checking.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        'tool_calls',
      ),
    );
    assert.deepEqual(
      { ...response },
      {
        id: ID,
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        error: null,
        incomplete_details: null,
        instructions: 'Be brief.',
        max_output_tokens: null,
        model: 'claude-x-2025',
        output: [
          {
            id: 'msg_0123456789abcdef0123456789abcdef_0',
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
          },
          {
            id: 'fc_0123456789abcdef0123456789abcdef_1',
            type: 'function_call',
            status: 'completed',
            call_id: 'call_1',
            name: 'f',
            arguments: '{"a":1}',
          },
        ],
        parallel_tool_calls: true,
        previous_response_id: null,
        reasoning: { effort: null, summary: null },
        store: true,
        temperature: 1,
        text: { format: { type: 'text' } },
        tool_choice: 'auto',
        tools: [{ type: 'function', name: 'f' }],
        top_p: 1,
        truncation: 'disabled',
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 5,
          output_tokens_details: { reasoning_tokens: 2 },
          total_tokens: 15,
        },
        user: null,
        metadata: { team: 'a' },
      },
    );
    assert.equal(responseIdOfItem(response.output[1]!.id), ID);
    assert.equal(responseIdOfItem('msg_other'), undefined);
  });

  test('an answer cut by its token limit is incomplete, saying why', () => {
    const response = responseOfChat(shell(), chatCompletion({ content: 'Once upon' }, 'length'));
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  });
});

const encoder = new TextEncoder();
const usageChunk = usageOf({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });

async function* bytes(pieces: string[], failure?: Error): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield encoder.encode(piece);
  if (failure) throw failure;
}

/** A translated event as a test reads it: any field, any depth. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events are read field by field
type Event = Record<string, any>;

async function events(
  pieces: string[],
  options: { failure?: Error; completed?: (r: ResponseObject) => void } = {},
): Promise<Event[]> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const piece of responsesEvents(bytes(pieces, options.failure), shell(), {
    completed: options.completed,
  })) {
    text += decoder.decode(piece);
  }
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      const [name, data] = event.split('\n');
      const parsed = JSON.parse(data!.slice('data: '.length)) as Event;
      assert.equal(name, `event: ${parsed.type}`);
      return parsed;
    });
}

describe('a chat completion stream as Responses events', () => {
  test('text, then tool calls, then the whole response with its usage; the pieces may split anywhere', async () => {
    const stream = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Let me ' }),
      chunk({ content: 'check.' }),
      chunk({
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
      chunk({
        tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk,
      'data: [DONE]\n\n',
    ].join('');
    // Cut into pieces of 7 bytes: events arrive in parts.
    const pieces = stream.match(/[\s\S]{1,7}/g)!;
    let kept: ResponseObject | undefined;
    const got = await events(pieces, { completed: (r) => (kept = r) });
    assert.deepEqual(
      got.map((e) => e.type),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.deepEqual(
      got.map((e) => e.sequence_number),
      got.map((_, i) => i),
    );
    assert.equal(got[0]!.response.status, 'in_progress');
    assert.equal(got[0]!.response.model, 'claude-x-2025');
    assert.deepEqual(got[2], {
      type: 'response.output_item.added',
      output_index: 0,
      item: {
        id: `msg_${ID.slice(5)}_0`,
        type: 'message',
        status: 'in_progress',
        role: 'assistant',
        content: [],
      },
      sequence_number: 2,
    });
    assert.deepEqual(got[4], {
      type: 'response.output_text.delta',
      item_id: `msg_${ID.slice(5)}_0`,
      output_index: 0,
      content_index: 0,
      delta: 'Let me ',
      logprobs: [],
      sequence_number: 4,
    });
    assert.deepEqual(got[9]!.item, {
      id: `fc_${ID.slice(5)}_1`,
      type: 'function_call',
      status: 'in_progress',
      call_id: 'call_1',
      name: 'f',
      arguments: '',
    });
    assert.deepEqual(got[14], {
      type: 'response.function_call_arguments.done',
      item_id: `fc_${ID.slice(5)}_1`,
      output_index: 1,
      name: 'f',
      arguments: '{"a":1}',
      sequence_number: 14,
    });
    const completed = got.at(-1)!.response as ResponseObject;
    assert.equal(completed.status, 'completed');
    assert.deepEqual(completed.usage, {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    });
    assert.deepEqual(
      completed.output.map((item) =>
        item.type === 'message' ? item.content[0]!.text : 'arguments' in item ? item.arguments : '',
      ),
      ['Let me check.', '{"a":1}', '{}'],
    );
    assert.deepEqual(kept, completed);
  });

  test('a stream cut by its token limit ends with response.incomplete', async () => {
    const got = await events([chunk({ content: 'Once' }), chunk({}, 'length'), usageChunk]);
    const last = got.at(-1)!;
    assert.equal(last.type, 'response.incomplete');
    assert.equal(last.response.status, 'incomplete');
    assert.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
  });

  test('an error event in the stream, or the stream failing, ends it with an error event', async () => {
    const inBand = await events([
      chunk({ content: 'Hi' }),
      sse({
        error: { message: 'denied by a guardrail', type: 'invalid_request_error', code: 'guardrail_denied' },
      }),
      chunk({ content: 'never' }),
    ]);
    assert.deepEqual(inBand.at(-1), {
      type: 'error',
      code: 'guardrail_denied',
      message: 'denied by a guardrail',
      param: null,
      error: {
        type: 'invalid_request_error',
        code: 'guardrail_denied',
        message: 'denied by a guardrail',
        param: null,
      },
      sequence_number: inBand.length - 1,
    });
    assert.ok(!inBand.some((e) => e.type === 'response.completed'));

    const provider = await events([chunk({ content: 'Hi' })], {
      failure: new UpstreamError(502, 'anthropic: the stream ended early.', {
        code: 'upstream_stream_incomplete',
      }),
    });
    assert.equal(provider.at(-1)!.type, 'error');
    assert.equal(provider.at(-1)!.error.message, 'anthropic: the stream ended early.');
    assert.equal(provider.at(-1)!.error.code, 'upstream_stream_incomplete');

    const other = await events([], { failure: new Error('socket hang up') });
    assert.deepEqual(
      other.map((e) => e.type),
      ['response.created', 'response.in_progress', 'error'],
    );
    assert.equal(other.at(-1)!.message, 'The upstream stream failed.');
  });
});
