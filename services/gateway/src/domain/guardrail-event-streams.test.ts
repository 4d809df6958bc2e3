import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { redact } from '@switchyard/guardrails';
import {
  answers,
  cuts,
  guardrail,
  pii,
  refusedSpans,
  upstream,
  words,
  type CheckSpec,
} from '../testing/guardrail-streams.ts';
import { guardMessagesStream, guardResponsesStream } from './guardrail-event-streams.ts';
import type { GuardStreamOptions } from './guardrail-stream.ts';
import type { GuardrailRun, LoadedGuardrail } from './guardrails.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- events as a client reads them, field by field
type Json = Record<string, any>;

const code: CheckSpec = ['default.regexMatch', { rule: 'code-[0-9]{4}', not: true, maxMatchLength: 9 }];

const sse = (type: string, value: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

/** An Anthropic Messages stream: one text block of the pieces, then what `after` adds. */
function messagesEvents(pieces: string[], after = ''): string {
  return [
    sse('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    }),
    sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    sse('ping', {}),
    ...pieces.map((text) => sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text } })),
    sse('content_block_stop', { index: 0 }),
    after,
    sse('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 9 },
    }),
    sse('message_stop', {}),
  ].join('');
}

/** A tool call block, at `index`. */
const toolBlock = (index: number) =>
  [
    sse('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
    }),
    sse('content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: '{"to": "a@b.com"}' },
    }),
    sse('content_block_stop', { index }),
  ].join('');

const responseBase = {
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  model: 'gpt-x',
  error: null,
  incomplete_details: null,
  tools: [],
  metadata: {},
};

/** An OpenAI Responses stream: one message item with one output text part of the pieces, numbered events. */
function responsesEvents(pieces: string[], options: { deltas?: boolean } = {}): string {
  const whole = pieces.join('');
  let n = 0;
  const event = (type: string, value: Json) => sse(type, { sequence_number: n++, ...value });
  const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
  const part = (text: string) => ({ type: 'output_text', text, annotations: [] });
  const item = (text: string, status: string) => ({
    type: 'message',
    id: 'msg_1',
    status,
    role: 'assistant',
    content: text === '' && status === 'in_progress' ? [] : [part(text)],
  });
  return [
    event('response.created', { response: { ...responseBase, status: 'in_progress', output: [] } }),
    event('response.in_progress', { response: { ...responseBase, status: 'in_progress', output: [] } }),
    event('response.output_item.added', { output_index: 0, item: item('', 'in_progress') }),
    event('response.content_part.added', { ...at, part: part('') }),
    ...(options.deltas === false
      ? []
      : pieces.map((delta) => event('response.output_text.delta', { ...at, delta, logprobs: [] }))),
    event('response.output_text.done', { ...at, text: whole, logprobs: [] }),
    event('response.content_part.done', { ...at, part: part(whole) }),
    event('response.output_item.done', { output_index: 0, item: item(whole, 'completed') }),
    event('response.completed', {
      response: {
        ...responseBase,
        status: 'completed',
        output: [item(whole, 'completed')],
        output_text: whole,
        usage: { input_tokens: 5, output_tokens: 9, total_tokens: 14 },
      },
    }),
  ].join('');
}

interface Received {
  raw: string;
  /** Each event's name and data, in order. */
  events: Array<{ name: string; data: Json }>;
  runs: GuardrailRun[];
  seen: { reads: number; returned: boolean };
}

type Guard = (body: AsyncIterable<Uint8Array>, options: GuardStreamOptions) => AsyncIterable<Uint8Array>;

async function run(
  guard: Guard,
  guardrails: LoadedGuardrail[],
  reads: Array<string | Uint8Array>,
): Promise<Received> {
  const { body, seen } = upstream(reads.map((read) => (typeof read === 'string' ? Buffer.from(read) : read)));
  const runs: GuardrailRun[] = [];
  const parts: Buffer[] = [];
  for await (const part of guard(body, { guardrails, request: { model: 'x' }, runs }))
    parts.push(Buffer.from(part));
  const raw = Buffer.concat(parts).toString('utf8');
  assert.ok(raw === '' || raw.endsWith('\n\n'), `the output ends inside an event: ${JSON.stringify(raw)}`);
  const events = raw
    .split('\n\n')
    .filter((event) => event.startsWith('event: '))
    .map((event) => {
      const [name, data] = event.split('\n');
      return { name: name!.slice('event: '.length), data: JSON.parse(data!.slice('data: '.length)) as Json };
    });
  for (const event of events) assert.equal(event.name, event.data.type, 'each event is named by its type');
  return { raw, events, runs, seen };
}

/** The text of a message's text blocks, by block index, as a client puts it together. */
function blockTexts(got: Received): string[] {
  const texts: string[] = [];
  for (const { data } of got.events) {
    if (data.type === 'content_block_start' && data.content_block.type === 'text') texts[data.index] = '';
    if (data.type === 'content_block_delta' && data.delta.type === 'text_delta')
      texts[data.index] += data.delta.text;
  }
  return texts;
}

/** The Responses deltas of the first part put together, and each whole text the later events repeat. */
function responseTexts(got: Received) {
  const find = (type: string) => got.events.find((event) => event.data.type === type)?.data;
  return {
    deltas: got.events
      .filter((event) => event.data.type === 'response.output_text.delta')
      .map((event) => event.data.delta as string)
      .join(''),
    wholes: [
      find('response.output_text.done')?.text,
      find('response.content_part.done')?.part.text,
      find('response.output_item.done')?.item.content[0].text,
      find('response.completed')?.response.output[0].content[0].text,
      find('response.completed')?.response.output_text,
    ],
  };
}

const types = (got: Received) => got.events.map((event) => event.data.type as string);

describe('output guardrails on an Anthropic Messages stream', () => {
  test('warn: the stream passes byte for byte, and the verdict is recorded', async () => {
    const input = messagesEvents(['this is ', 'classified'], toolBlock(1));
    const got = await run(guardMessagesStream, [guardrail([words], {})], [input]);
    assert.equal(got.raw, input);
    assert.equal(got.runs.length, 1);
    assert.equal(got.runs[0]!.action, 'warn');
  });

  test('redact: the email leaves as a placeholder, held text in a delta of its block before the block stops', async () => {
    const input = messagesEvents(['Mail ', 'ann@', 'example.org'], toolBlock(1));
    const got = await run(guardMessagesStream, [guardrail([pii], { redact: true })], [input]);
    const [text] = blockTexts(got);
    assert.equal(
      text,
      redact(
        'Mail ann@example.org',
        refusedSpans(guardrail([pii], { redact: true }), 'Mail ann@example.org'),
      ),
    );
    assert.match(text!, /^Mail \[[A-Z_]+\]$/);
    assert.ok(!got.raw.includes('ann@'), got.raw);
    const stop = got.events.findIndex(
      (event) => event.data.type === 'content_block_stop' && event.data.index === 0,
    );
    assert.deepEqual(got.events[stop - 1]!.data, {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: text!.slice('Mail '.length) },
    });
    assert.ok(
      got.events.slice(stop + 1).every((event) => event.data.index !== 0),
      'nothing of block 0 after its stop',
    );
    // The tool call's input is not text of the answer: it passes as it is.
    assert.ok(got.raw.includes(JSON.stringify('{"to": "a@b.com"}')), got.raw);
    assert.deepEqual(types(got).slice(-2), ['message_delta', 'message_stop']);
    assert.equal(got.runs[0]!.action, 'redact');
    assert.equal(got.runs[0]!.redactions, 1);
  });

  test('deny: the block stops, then a refusal ends the message; nothing of the match is sent and the upstream is stopped', async () => {
    const input = messagesEvents(['Your ', 'number is co', 'de-', '1234 ', 'keep it'], toolBlock(1));
    const reads = input.split(/(?<=\n\n)/);
    const got = await run(guardMessagesStream, [guardrail([code], { deny: true })], reads);
    const [text] = blockTexts(got);
    assert.ok('Your number is '.startsWith(text!), text);
    assert.ok(!got.raw.includes('code') && !got.raw.includes('1234'), got.raw);
    assert.deepEqual(
      got.events.slice(-3).map((event) => event.data),
      [
        { type: 'content_block_stop', index: 0 },
        {
          type: 'message_delta',
          delta: { stop_reason: 'refusal', stop_sequence: null },
          usage: { output_tokens: 1 },
        },
        { type: 'message_stop' },
      ],
    );
    assert.equal(got.events.filter((event) => event.data.type === 'content_block_stop').length, 1);
    assert.equal(got.seen.returned, true, 'the upstream read was stopped');
    assert.ok(got.seen.reads < reads.length, 'the rest of the upstream was never read');
    assert.equal(got.runs.length, 1);
    assert.equal(got.runs[0]!.action, 'deny');
  });

  test('deny at the end of a block decided by the whole text: the block held nothing back it could not recall', async () => {
    const json = guardrail([['default.validJson', {}]], { deny: true });
    const valid = await run(guardMessagesStream, [json], [messagesEvents(['{"a": ', '1}'])]);
    assert.deepEqual(blockTexts(valid), ['{"a": 1}']);
    const broken = await run(guardMessagesStream, [json], [messagesEvents(['{"a": ', '1'])]);
    assert.deepEqual(blockTexts(broken), ['']);
    assert.deepEqual(types(broken).slice(-3), ['content_block_stop', 'message_delta', 'message_stop']);
    assert.equal(broken.events.at(-2)!.data.delta.stop_reason, 'refusal');
  });

  test('each text block is checked on its own; thinking passes; text of an unfinished block is not sent', async () => {
    const input = [
      sse('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      sse('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'mail x@y.com?' } }),
      sse('content_block_stop', { index: 0 }),
      sse('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      sse('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'one: a@b.com' } }),
      sse('content_block_stop', { index: 1 }),
      sse('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
      sse('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'two: c@d.' } }),
      sse('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ].join('');
    const got = await run(guardMessagesStream, [guardrail([pii], { redact: true })], [input]);
    assert.ok(got.raw.includes('mail x@y.com?'), 'thinking passes as it is');
    const texts = blockTexts(got);
    assert.match(texts[1]!, /^one: \[[A-Z_]+\]$/);
    assert.equal(texts[2], 'two: ', 'what block 2 held is not sent: the block never finished');
    assert.equal(got.events.at(-1)!.data.type, 'error');
    assert.deepEqual(
      got.runs.map((r) => r.action),
      ['redact', 'allow'],
      'a run for each text block',
    );
  });

  test('an event that cannot be read is dropped; comments pass', async () => {
    const input = `: keep-alive\n\nevent: content_block_delta\ndata: {"type": "content_block_delta", "delta": {"text": "a@b.com"\n\n${messagesEvents(['ok'])}`;
    const got = await run(guardMessagesStream, [guardrail([pii], { deny: true })], [input]);
    assert.ok(got.raw.startsWith(': keep-alive\n\n'), got.raw);
    assert.ok(!got.raw.includes('a@b.com'), got.raw);
    assert.deepEqual(blockTexts(got), ['ok']);
  });

  test('a client that goes away stops the upstream read and the runs are still recorded', async () => {
    const { body, seen } = upstream(
      messagesEvents(['one ', 'two'])
        .split(/(?<=\n\n)/)
        .map((read) => Buffer.from(read)),
    );
    const runs: GuardrailRun[] = [];
    const stream = guardMessagesStream(body, {
      guardrails: [guardrail([pii], { deny: true })],
      request: {},
      runs,
    });
    // Gone once the text block has started.
    for await (const part of stream) if (Buffer.from(part).toString().includes('ping')) break;
    assert.equal(seen.returned, true);
    assert.equal(runs.length, 1);
  });
});

describe('output guardrails on an OpenAI Responses stream', () => {
  test('warn: the stream passes byte for byte, and the verdict is recorded', async () => {
    const input = responsesEvents(['this is ', 'classified']);
    const got = await run(guardResponsesStream, [guardrail([words], {})], [input]);
    assert.equal(got.raw, input);
    assert.equal(got.runs.length, 1);
    assert.equal(got.runs[0]!.action, 'warn');
  });

  test('redact: the deltas and every whole text carry the placeholder, never the email', async () => {
    const guard = guardrail([pii], { redact: true });
    const whole = 'Mail ann@example.org';
    const got = await run(guardResponsesStream, [guard], [responsesEvents(['Mail ', 'ann@', 'example.org'])]);
    const expected = redact(whole, refusedSpans(guard, whole));
    assert.match(expected, /^Mail \[[A-Z_]+\]$/);
    const { deltas, wholes } = responseTexts(got);
    assert.equal(deltas, expected);
    assert.deepEqual(wholes, [expected, expected, expected, expected, expected]);
    assert.ok(!got.raw.includes('ann@') && !got.raw.includes('example.org'), got.raw);
    // What the part held leaves in a delta just before the done event.
    const done = types(got).indexOf('response.output_text.done');
    assert.equal(got.events[done - 1]!.data.type, 'response.output_text.delta');
    assert.deepEqual(
      got.events.map((event) => event.data.sequence_number),
      got.events.map((_, i) => i),
      'the events are numbered in order, without gaps',
    );
    assert.equal(got.events.at(-1)!.data.response.usage.total_tokens, 14);
    assert.equal(got.runs[0]!.action, 'redact');
  });

  test('a part whose text comes only in the done events is checked there', async () => {
    const guard = guardrail([pii], { redact: true });
    const got = await run(
      guardResponsesStream,
      [guard],
      [responsesEvents(['write to a@b.com'], { deltas: false })],
    );
    const { deltas, wholes } = responseTexts(got);
    assert.match(deltas, /^write to \[[A-Z_]+\]$/);
    assert.deepEqual(wholes, [deltas, deltas, deltas, deltas, deltas]);
    assert.ok(!got.raw.includes('a@b.com'), got.raw);
  });

  test('deny: the stream ends with response.incomplete for content_filter; nothing of the match is sent and the upstream is stopped', async () => {
    const input = responsesEvents(['Your ', 'number is co', 'de-', '1234 ', 'keep it']);
    const reads = input.split(/(?<=\n\n)/);
    const got = await run(guardResponsesStream, [guardrail([code], { deny: true })], reads);
    const { deltas } = responseTexts(got);
    assert.ok('Your number is '.startsWith(deltas), deltas);
    assert.ok(!got.raw.includes('code') && !got.raw.includes('1234'), got.raw);
    const last = got.events.at(-1)!.data;
    assert.equal(last.type, 'response.incomplete');
    assert.equal(last.sequence_number, got.events.length - 1);
    assert.deepEqual(last.response, {
      ...responseBase,
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [],
    });
    assert.ok(!types(got).some((type) => type.endsWith('.done') || type === 'response.completed'));
    assert.equal(got.seen.returned, true, 'the upstream read was stopped');
    assert.ok(got.seen.reads < reads.length, 'the rest of the upstream was never read');
    assert.equal(got.runs.length, 1);
    assert.equal(got.runs[0]!.action, 'deny');
  });

  test('deny on a later item: the incomplete response keeps the items finished before, redacted as sent', async () => {
    const item = (id: string, text: string) => ({
      type: 'message',
      id,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    });
    const input = [
      sse('response.created', { response: { ...responseBase, status: 'in_progress', output: [] } }),
      sse('response.output_item.added', { output_index: 0, item: { ...item('m0', ''), content: [] } }),
      sse('response.output_text.delta', {
        item_id: 'm0',
        output_index: 0,
        content_index: 0,
        delta: 'hi a@b.com',
      }),
      sse('response.output_item.done', { output_index: 0, item: item('m0', 'hi a@b.com') }),
      sse('response.output_item.added', { output_index: 1, item: { ...item('m1', ''), content: [] } }),
      sse('response.output_text.delta', {
        item_id: 'm1',
        output_index: 1,
        content_index: 0,
        delta: 'it is top ',
      }),
      sse('response.output_text.delta', {
        item_id: 'm1',
        output_index: 1,
        content_index: 0,
        delta: 'secret',
      }),
      sse('response.output_item.done', { output_index: 1, item: item('m1', 'it is top secret') }),
    ].join('');
    const guardrails = [guardrail([pii], { redact: true }), guardrail([words], { deny: true })];
    const got = await run(guardResponsesStream, guardrails, [input]);
    assert.ok(!got.raw.includes('a@b.com') && !got.raw.includes('top'), got.raw);
    const last = got.events.at(-1)!.data;
    assert.equal(last.type, 'response.incomplete');
    assert.equal(last.response.output.length, 1);
    assert.match(last.response.output[0].content[0].text, /^hi \[[A-Z_]+\]$/);
    assert.deepEqual(
      got.runs.map((r) => r.action),
      ['redact', 'allow', 'allow', 'deny'],
      'each guardrail on each part',
    );
  });

  test('tool calls and refusals pass; an event that cannot be read is dropped', async () => {
    const call = sse('response.function_call_arguments.delta', {
      item_id: 'fc_1',
      output_index: 1,
      delta: '{"to": "a@b.com"}',
    });
    const input = `${call}event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": "c@d.com"\n\n`;
    const got = await run(guardResponsesStream, [guardrail([pii], { deny: true })], [input]);
    assert.equal(got.raw, call);
  });
});

// Answers mixing emails, forbidden words and codes with filler and near misses.
const answer = answers(
  fc.oneof(fc.constantFrom('classified', 'top secret'), fc.stringMatching(/^code-[0-9]{4}$/)),
  fc.constantFrom('@', '.', 'x@y', 'top', 'code-12', 'é', '"quoted"', '\\'),
);

/** `values` cut at the given positions. */
function cut<T extends string | Uint8Array>(value: T, at: number[]): T[] {
  const points = [...new Set(at.map((p) => p % (value.length + 1)))].sort((a, b) => a - b);
  const out: T[] = [];
  let from = 0;
  for (const point of points) {
    out.push(value.slice(from, point) as T);
    from = point;
  }
  out.push(value.slice(from) as T);
  return out;
}

const formats = [
  {
    name: 'Anthropic Messages',
    guard: guardMessagesStream,
    events: (pieces: string[]) => messagesEvents(pieces),
    text: (got: Received) => blockTexts(got)[0] ?? '',
    wholes: (_got: Received): unknown[] => [],
    denied: (got: Received) => got.events.at(-2)?.data.delta?.stop_reason === 'refusal',
  },
  {
    name: 'OpenAI Responses',
    guard: guardResponsesStream,
    events: (pieces: string[]) => responsesEvents(pieces),
    text: (got: Received) => responseTexts(got).deltas,
    wholes: (got: Received): unknown[] => responseTexts(got).wholes,
    denied: (got: Received) =>
      got.events.at(-1)?.data.response?.incomplete_details?.reason === 'content_filter',
  },
];

describe('event streams without leaks (properties)', () => {
  const denying = guardrail([pii, words, code], { deny: true });
  const redacting = guardrail([pii, words, code], { deny: true, redact: true });

  for (const format of formats) {
    test(`${format.name}, deny: no part of a match reaches the client, the bytes cut anywhere`, async () => {
      await fc.assert(
        fc.asyncProperty(answer, cuts, async (text, deltaCuts) => {
          const spans = refusedSpans(denying, text);
          const firstMatch = Math.min(...spans.map((span) => span.start));
          const bytes = Buffer.from(format.events(cut(text, deltaCuts).filter((delta) => delta !== '')));
          // Every way of cutting the bytes in two.
          for (let i = 0; i <= bytes.length; i += 1) {
            const got = await run(format.guard, [denying], [bytes.subarray(0, i), bytes.subarray(i)]);
            const sent = format.text(got);
            assert.ok(text.startsWith(sent), 'what is sent is the answer as it came');
            assert.ok(sent.length <= firstMatch, `${JSON.stringify(sent)} reaches a match at ${firstMatch}`);
            assert.equal(format.denied(got), spans.length > 0);
            if (spans.length === 0) {
              assert.equal(sent, text);
              for (const whole of format.wholes(got)) assert.equal(whole, text);
            }
          }
        }),
        { numRuns: 5, seed: 21 },
      );
    });

    test(`${format.name}: random cuts of deltas and bytes, deny and redact`, async () => {
      await fc.assert(
        fc.asyncProperty(answer, cuts, cuts, async (text, deltaCuts, byteCuts) => {
          const spans = refusedSpans(denying, text);
          const bytes = Buffer.from(format.events(cut(text, deltaCuts).filter((delta) => delta !== '')));
          const reads = cut(new Uint8Array(bytes), byteCuts);
          const denied = await run(format.guard, [denying], reads);
          const sent = format.text(denied);
          assert.ok(text.startsWith(sent));
          assert.ok(sent.length <= Math.min(...spans.map((span) => span.start)));
          assert.equal(format.denied(denied), spans.length > 0);
          const redacted = await run(format.guard, [redacting], reads);
          const expected = redact(text, refusedSpans(redacting, text));
          assert.equal(format.text(redacted), expected);
          for (const whole of format.wholes(redacted)) assert.equal(whole, expected);
        }),
        { numRuns: 200, seed: 22 },
      );
    });
  }
});
