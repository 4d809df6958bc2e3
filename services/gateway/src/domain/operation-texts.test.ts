import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  answerUnits,
  requestTexts,
  textOperation,
  type AnswerUnit,
  type TextOperation,
  type TextPart,
} from './operation-texts.ts';

const texts = (parts: readonly TextPart[]) => parts.map((part) => part.text);
const unitTexts = (units: readonly AnswerUnit[]) => units.map((unit) => texts(unit.parts));

/** Puts `[n]` in place of the n-th part, so that where each one went can be seen. */
function mark(parts: readonly TextPart[]): void {
  parts.forEach((part, n) => part.put(`[${n}]`));
}

/** Odd values where a text is expected. */
const ODD: unknown[] = [42, null, true, [1, 2, 3], [[1, 2]], { value: 'nested' }];

describe('textOperation', () => {
  test('POST to each model operation that carries text', () => {
    assert.equal(textOperation('POST', '/chat/completions'), 'chat');
    assert.equal(textOperation('POST', '/completions'), 'completions');
    assert.equal(textOperation('POST', '/embeddings'), 'embeddings');
    assert.equal(textOperation('POST', '/messages'), 'messages');
    assert.equal(textOperation('POST', '/responses'), 'responses');
  });

  test('any other method or path is none', () => {
    for (const [method, pathname] of [
      ['GET', '/chat/completions'],
      ['post', '/chat/completions'],
      ['DELETE', '/responses'],
      ['POST', '/chat/completions/'],
      ['POST', '/v1/chat/completions'],
      ['POST', '/responses/resp_1'],
      ['POST', '/responses/resp_1/cancel'],
      ['POST', '/embeddings?x=1'],
      ['POST', '/images/generations'],
      ['POST', '/moderations'],
      ['POST', ''],
      ['POST', '/'],
      ['POST', 'constructor'],
      ['POST', '__proto__'],
    ] as const) {
      assert.equal(textOperation(method, pathname), undefined, `${method} ${pathname}`);
    }
  });
});

describe('chat completions', () => {
  const request = () => ({
    model: 'gpt-4o-mini',
    temperature: 0.2,
    messages: [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'this picture?' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ],
  });

  test('reads every message content, text parts included, in order', () => {
    assert.deepEqual(texts(requestTexts('chat', request())), [
      'Be brief.',
      'What is on',
      'this picture?',
      'sunny',
    ]);
  });

  test('put writes each text where it was read, and nothing else', () => {
    const body = request();
    mark(requestTexts('chat', body));
    const expected = request();
    expected.messages[0]!.content = '[0]';
    expected.messages[3]!.content = '[3]';
    const parts = expected.messages[1]!.content as Array<{ text?: string }>;
    parts[0]!.text = '[1]';
    parts[2]!.text = '[2]';
    assert.deepEqual(body, expected);
  });

  const answer = () => ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'first' }, finish_reason: 'stop' },
      {
        index: 1,
        message: { role: 'assistant', content: null, tool_calls: [{ id: 't' }] },
        finish_reason: 'tool_calls',
      },
      { index: 2, message: { role: 'assistant', content: 'third' }, finish_reason: 'stop' },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });

  test('one unit per choice with a text; a tool-calling choice has none', () => {
    assert.deepEqual(unitTexts(answerUnits('chat', answer())), [['first'], ['third']]);
  });

  test('put and withhold change only their own choice', () => {
    const body = answer();
    const [first, third] = answerUnits('chat', body);
    first!.parts[0]!.put('FIRST');
    third!.withhold();
    const expected = answer();
    expected.choices[0]!.message.content = 'FIRST';
    expected.choices[2] = {
      index: 2,
      message: { role: 'assistant', content: '' },
      finish_reason: 'content_filter',
    };
    assert.deepEqual(body, expected);
  });

  test('odd input gives no texts', () => {
    for (const odd of ODD) {
      assert.deepEqual(
        requestTexts('chat', { messages: odd } as never),
        [],
        `messages ${JSON.stringify(odd)}`,
      );
      assert.deepEqual(requestTexts('chat', { messages: [odd] } as never), []);
      assert.deepEqual(requestTexts('chat', { messages: [{ role: 'user', content: odd }] } as never), []);
      assert.deepEqual(
        requestTexts('chat', { messages: [{ role: 'user', content: [odd, { type: 'text', text: odd }] }] }),
        [],
      );
      assert.deepEqual(answerUnits('chat', { choices: odd } as never), []);
      assert.deepEqual(
        answerUnits('chat', { choices: [odd, { message: odd }, { message: { content: odd } }] }),
        [],
      );
    }
    assert.deepEqual(requestTexts('chat', {}), []);
    assert.deepEqual(answerUnits('chat', {}), []);
  });
});

describe('completions', () => {
  test('reads a prompt string, or each string of a prompt array', () => {
    assert.deepEqual(texts(requestTexts('completions', { model: 'm', prompt: 'Say hi' })), ['Say hi']);
    assert.deepEqual(texts(requestTexts('completions', { prompt: ['one', 'two'] })), ['one', 'two']);
  });

  test('token ids are no text', () => {
    assert.deepEqual(requestTexts('completions', { prompt: [1, 2, 3] }), []);
    assert.deepEqual(
      requestTexts('completions', {
        prompt: [
          [1, 2],
          [3, 4],
        ],
      }),
      [],
    );
  });

  test('put writes into the prompt where it was read', () => {
    const single = { model: 'm', prompt: 'Say hi', max_tokens: 5 };
    mark(requestTexts('completions', single));
    assert.deepEqual(single, { model: 'm', prompt: '[0]', max_tokens: 5 });
    const several = { model: 'm', prompt: ['one', 'two'] };
    mark(requestTexts('completions', several));
    assert.deepEqual(several, { model: 'm', prompt: ['[0]', '[1]'] });
  });

  const answer = () => ({
    id: 'cmpl-1',
    object: 'text_completion',
    choices: [
      { index: 0, text: 'one', finish_reason: 'stop', logprobs: null },
      { index: 1, text: 'two', finish_reason: 'length', logprobs: null },
    ],
  });

  test('one unit per choice; withhold empties its text with finish_reason content_filter', () => {
    const body = answer();
    const units = answerUnits('completions', body);
    assert.deepEqual(unitTexts(units), [['one'], ['two']]);
    units[0]!.parts[0]!.put('ONE');
    units[1]!.withhold();
    const expected = answer();
    expected.choices[0]!.text = 'ONE';
    expected.choices[1] = { index: 1, text: '', finish_reason: 'content_filter', logprobs: null };
    assert.deepEqual(body, expected);
  });

  test('odd input gives no texts', () => {
    for (const odd of ODD) {
      assert.deepEqual(requestTexts('completions', { prompt: odd } as never), []);
      assert.deepEqual(answerUnits('completions', { choices: [odd, { text: odd }] }), []);
    }
    assert.deepEqual(requestTexts('completions', {}), []);
  });
});

describe('embeddings', () => {
  test('reads an input string, or each string of an input array', () => {
    assert.deepEqual(texts(requestTexts('embeddings', { model: 'e', input: 'embed me' })), ['embed me']);
    const body = { model: 'e', input: ['a', 'b'], dimensions: 8 };
    const parts = requestTexts('embeddings', body);
    assert.deepEqual(texts(parts), ['a', 'b']);
    mark(parts);
    assert.deepEqual(body, { model: 'e', input: ['[0]', '[1]'], dimensions: 8 });
  });

  test('token arrays and odd input give no texts', () => {
    assert.deepEqual(requestTexts('embeddings', { input: [1, 2] }), []);
    assert.deepEqual(requestTexts('embeddings', { input: [[1, 2], [3]] }), []);
    for (const odd of ODD) assert.deepEqual(requestTexts('embeddings', { input: odd } as never), []);
  });

  test('an embedding answer has no units', () => {
    assert.deepEqual(
      answerUnits('embeddings', {
        object: 'list',
        data: [{ object: 'embedding', embedding: [0.1], index: 0 }],
      }),
      [],
    );
  });
});

describe('messages (Anthropic)', () => {
  const request = () => ({
    model: 'claude-sonnet-4',
    max_tokens: 100,
    system: [
      { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer in English.' },
    ],
    messages: [
      { role: 'user', content: 'Hello' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'tu1', name: 'lookup', input: { q: 'x' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'tu1', content: 'found' },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ],
  });

  test('reads the system prompt first, then each message content, text blocks only', () => {
    assert.deepEqual(texts(requestTexts('messages', request())), [
      'You are terse.',
      'Answer in English.',
      'Hello',
      'Let me look.',
      'Thanks',
    ]);
    assert.deepEqual(
      texts(requestTexts('messages', { system: 'Be kind.', messages: [{ role: 'user', content: 'Hi' }] })),
      ['Be kind.', 'Hi'],
    );
  });

  test('put writes each text where it was read, and nothing else', () => {
    const body = request();
    mark(requestTexts('messages', body));
    const expected = request();
    expected.system[0]!.text = '[0]';
    expected.system[1]!.text = '[1]';
    expected.messages[0]!.content = '[2]';
    (expected.messages[1]!.content as Array<{ text?: string }>)[0]!.text = '[3]';
    (expected.messages[2]!.content as Array<{ text?: string }>)[1]!.text = '[4]';
    assert.deepEqual(body, expected);

    const plain = { system: 'Be kind.', messages: [] };
    mark(requestTexts('messages', plain));
    assert.deepEqual(plain, { system: '[0]', messages: [] });
  });

  const answer = () => ({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    content: [
      { type: 'text', text: 'Part one.' },
      { type: 'tool_use', id: 'tu2', name: 'lookup', input: {} },
      { type: 'text', text: 'Part two.' },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 5, output_tokens: 7 },
  });

  test('the answer is one unit of its text blocks', () => {
    const body = answer();
    const units = answerUnits('messages', body);
    assert.deepEqual(unitTexts(units), [['Part one.', 'Part two.']]);
    units[0]!.parts[1]!.put('PART TWO');
    const expected = answer();
    expected.content[2] = { type: 'text', text: 'PART TWO' };
    assert.deepEqual(body, expected);
  });

  test('withhold leaves no content and stop_reason refusal', () => {
    const body = answer();
    answerUnits('messages', body)[0]!.withhold();
    assert.deepEqual(body, { ...answer(), content: [], stop_reason: 'refusal' });
  });

  test('an answer without text blocks has no unit; odd input gives no texts', () => {
    assert.deepEqual(
      answerUnits('messages', { content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }),
      [],
    );
    for (const odd of ODD) {
      assert.deepEqual(requestTexts('messages', { system: odd, messages: odd } as never), []);
      assert.deepEqual(
        requestTexts('messages', {
          system: [odd, { type: 'text', text: odd }],
          messages: [odd, { role: 'user', content: odd }],
        }),
        [],
      );
      assert.deepEqual(answerUnits('messages', { content: odd } as never), []);
      assert.deepEqual(answerUnits('messages', { content: [odd, { type: 'text', text: odd }] }), []);
    }
    assert.deepEqual(answerUnits('messages', { content: 'a string is not an answer' }), []);
  });
});

describe('responses', () => {
  const request = () => ({
    model: 'gpt-4.1',
    instructions: 'Be helpful.',
    input: [
      { role: 'user', content: 'First question' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look at' },
          { type: 'input_image', image_url: 'https://example.com/a.png' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Earlier answer' }] },
      { type: 'function_call_output', call_id: 'c1', output: '{"ok":true}' },
      { role: 'developer', content: [{ type: 'text', text: 'Plain text part' }] },
    ],
  });

  test('reads the instructions first, then each input item content, in order', () => {
    assert.deepEqual(texts(requestTexts('responses', request())), [
      'Be helpful.',
      'First question',
      'Look at',
      'Earlier answer',
      'Plain text part',
    ]);
    assert.deepEqual(texts(requestTexts('responses', { instructions: 'I', input: 'Just this' })), [
      'I',
      'Just this',
    ]);
  });

  test('put writes each text where it was read, and nothing else', () => {
    const body = request();
    mark(requestTexts('responses', body));
    const expected = request();
    expected.instructions = '[0]';
    expected.input[0]!.content = '[1]';
    (expected.input[1]!.content as Array<{ text?: string }>)[0]!.text = '[2]';
    (expected.input[2]!.content as Array<{ text?: string }>)[0]!.text = '[3]';
    (expected.input[4]!.content as Array<{ text?: string }>)[0]!.text = '[4]';
    assert.deepEqual(body, expected);

    const plain = { model: 'm', input: 'Just this' };
    mark(requestTexts('responses', plain));
    assert.deepEqual(plain, { model: 'm', input: '[0]' });
  });

  const answer = () => ({
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    incomplete_details: null as null | { reason: string },
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'thinking' }] },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'Hello ', annotations: [] },
          { type: 'refusal', refusal: 'no' },
          { type: 'output_text', text: 'world.', annotations: [] },
        ] as unknown[],
      },
      { type: 'function_call', id: 'fc_1', call_id: 'c', name: 'f', arguments: '{}' },
      {
        type: 'message',
        id: 'msg_2',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Bye.', annotations: [] }] as unknown[],
      },
    ],
    output_text: 'Hello world.Bye.',
  });

  test('one unit per message item of the output, its output_text parts', () => {
    assert.deepEqual(unitTexts(answerUnits('responses', answer())), [['Hello ', 'world.'], ['Bye.']]);
  });

  test('put writes into its part and keeps output_text the whole output text', () => {
    const body = answer();
    answerUnits('responses', body)[0]!.parts[1]!.put('[redacted]');
    const expected = answer();
    (expected.output[1]!.content as Array<{ text?: string }>)[2]!.text = '[redacted]';
    expected.output_text = 'Hello [redacted]Bye.';
    assert.deepEqual(body, expected);
  });

  test('withhold empties its item, marks the response incomplete for content_filter, and output_text follows', () => {
    const body = answer();
    answerUnits('responses', body)[0]!.withhold();
    const expected = answer();
    expected.output[1]!.content = [];
    expected.status = 'incomplete';
    expected.incomplete_details = { reason: 'content_filter' };
    expected.output_text = 'Bye.';
    assert.deepEqual(body, expected);
  });

  test('an answer without output_text does not gain one', () => {
    const { output_text: _, ...body } = answer();
    const units = answerUnits('responses', body);
    units[0]!.parts[0]!.put('Hi ');
    units[1]!.withhold();
    assert.equal('output_text' in body, false);
    assert.equal(body.status, 'incomplete');
  });

  test('odd input gives no texts', () => {
    for (const odd of ODD) {
      assert.deepEqual(requestTexts('responses', { instructions: odd, input: odd } as never), []);
      assert.deepEqual(
        requestTexts('responses', {
          input: [
            odd,
            { role: 'user', content: odd },
            { role: 'user', content: [odd, { type: 'input_text', text: odd }] },
          ],
        }),
        [],
      );
      assert.deepEqual(answerUnits('responses', { output: odd } as never), []);
      assert.deepEqual(
        answerUnits('responses', {
          output: [
            odd,
            { type: 'message', content: odd },
            { type: 'message', content: [odd, { type: 'output_text', text: odd }] },
          ],
        }),
        [],
      );
    }
  });
});

// Generated bodies: the shapes each operation carries, with odd values mixed in where texts are expected.
const text = fc.string({ maxLength: 10 });
const odd = fc.oneof(
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.record({ text }),
);
const orOdd = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: value }, { weight: 1, arbitrary: odd });
const part = (types: readonly string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ type: fc.constantFrom(...types), text: orOdd(text) }) },
    {
      weight: 1,
      arbitrary: fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: text }) }),
    },
    { weight: 1, arbitrary: odd },
  );
const content = (types: readonly string[]) =>
  orOdd(fc.oneof(text, fc.array(part(types), { minLength: 1, maxLength: 3 })));
const messages = (types: readonly string[]) =>
  orOdd(
    fc.array(
      orOdd(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: content(types) })),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
  );
const prompt = orOdd(
  fc.oneof(
    text,
    fc.array(orOdd(text), { minLength: 1, maxLength: 4 }),
    fc.array(fc.array(fc.integer(), { maxLength: 3 }), { maxLength: 3 }),
  ),
);
const partial = { requiredKeys: [] as [] };
const requests: Record<TextOperation, fc.Arbitrary<Record<string, unknown>>> = {
  chat: fc.record({ model: text, messages: messages(['text']) }, partial),
  completions: fc.record({ model: text, prompt }, partial),
  embeddings: fc.record({ model: text, input: prompt }, partial),
  messages: fc.record(
    { system: content(['text']), messages: messages(['text']), max_tokens: fc.nat() },
    partial,
  ),
  responses: fc.record(
    {
      instructions: orOdd(text),
      input: fc.oneof(
        text,
        messages(['input_text', 'output_text', 'text']),
        fc.array(fc.record({ type: fc.constant('function_call_output'), call_id: text, output: text }), {
          maxLength: 2,
        }),
      ),
    },
    partial,
  ),
};

/** The SDKs' `output_text` of a generated output, worked out here independently of the module. */
function outputText(output: unknown[]): string {
  let joined = '';
  for (const item of output) {
    const { type, content: parts } = (item ?? {}) as { type?: unknown; content?: unknown };
    if (type !== 'message' || !Array.isArray(parts)) continue;
    for (const p of parts) {
      const { type: partType, text: t } = (p ?? {}) as { type?: unknown; text?: unknown };
      if (partType === 'output_text' && typeof t === 'string') joined += t;
    }
  }
  return joined;
}
const answers: Record<TextOperation, fc.Arbitrary<Record<string, unknown>>> = {
  chat: fc.record({
    choices: orOdd(
      fc.array(
        fc.record({
          index: fc.nat(),
          message: orOdd(fc.record({ role: fc.constant('assistant'), content: orOdd(text) })),
          finish_reason: fc.constant('stop'),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    ),
  }),
  completions: fc.record({
    choices: orOdd(
      fc.array(fc.record({ index: fc.nat(), text: orOdd(text), finish_reason: fc.constant('stop') })),
    ),
  }),
  embeddings: fc.record({
    data: fc.array(fc.record({ embedding: fc.array(fc.double()) }), { maxLength: 2 }),
  }),
  messages: fc.record({ content: content(['text']), stop_reason: fc.constant('end_turn') }),
  responses: fc
    .record({
      status: fc.constant('completed'),
      output: orOdd(
        fc.array(
          fc.oneof(
            {
              weight: 4,
              arbitrary: fc.record({
                type: fc.constant('message'),
                content: content(['output_text', 'refusal']),
              }),
            },
            { weight: 1, arbitrary: fc.record({ type: fc.constant('function_call'), arguments: text }) },
            { weight: 1, arbitrary: odd },
          ),
          { minLength: 1, maxLength: 3 },
        ),
      ),
      withText: fc.boolean(),
    })
    .map(({ withText, ...answer }) =>
      withText && Array.isArray(answer.output)
        ? { ...answer, output_text: outputText(answer.output) }
        : answer,
    ),
};

const operations = Object.keys(requests) as TextOperation[];

describe('any body (properties)', () => {
  test('the generated bodies do hold texts', () => {
    for (const operation of operations) {
      const read = fc
        .sample(requests[operation], { numRuns: 100, seed: 7 })
        .filter((body) => requestTexts(operation, body).length > 0);
      assert.ok(read.length > 30, `${operation}: ${read.length} of 100 requests with texts`);
      if (operation === 'embeddings') continue;
      const answered = fc
        .sample(answers[operation], { numRuns: 100, seed: 7 })
        .filter((answer) => answerUnits(operation, answer).length > 0);
      assert.ok(answered.length > 15, `${operation}: ${answered.length} of 100 answers with units`);
    }
  });

  for (const operation of operations) {
    test(`${operation}: putting back each text as read leaves the body as it was`, () => {
      fc.assert(
        fc.property(requests[operation], answers[operation], (request, answer) => {
          const body = structuredClone(request);
          for (const p of requestTexts(operation, body)) p.put(p.text);
          assert.deepEqual(body, structuredClone(request));
          const answered = structuredClone(answer);
          for (const unit of answerUnits(operation, answered)) for (const p of unit.parts) p.put(p.text);
          assert.deepEqual(answered, structuredClone(answer));
        }),
        { numRuns: 200, seed: 11 },
      );
    });

    test(`${operation}: each put lands where its text was read`, () => {
      fc.assert(
        fc.property(requests[operation], answers[operation], (request, answer) => {
          const parts = requestTexts(operation, request);
          mark(parts);
          assert.deepEqual(
            texts(requestTexts(operation, request)),
            parts.map((_, n) => `[${n}]`),
          );
          const units = answerUnits(operation, answer);
          units.forEach((unit) => mark(unit.parts));
          assert.deepEqual(
            unitTexts(answerUnits(operation, answer)),
            units.map((unit) => unit.parts.map((_, n) => `[${n}]`)),
          );
        }),
        { numRuns: 200, seed: 12 },
      );
    });
  }

  test('anything at all: every text read is a string, and reading, putting and withholding never throw', () => {
    fc.assert(
      fc.property(fc.constantFrom(...operations), fc.anything(), (operation, value) => {
        const body = value as Record<string, unknown>;
        for (const p of requestTexts(operation, body)) {
          assert.equal(typeof p.text, 'string');
          p.put('x');
        }
        for (const unit of answerUnits(operation, body)) {
          for (const p of unit.parts) {
            assert.equal(typeof p.text, 'string');
            p.put('x');
          }
          unit.withhold();
        }
      }),
      { numRuns: 300, seed: 13 },
    );
  });
});
