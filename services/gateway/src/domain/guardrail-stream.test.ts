import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { redact, runGuardrail } from '@switchyard/guardrails';
import {
  answers,
  cuts,
  guardrail,
  pii,
  refusedSpans,
  upstream,
  words,
} from '../testing/guardrail-streams.ts';
import { guardStream } from './guardrail-stream.ts';
import type { GuardrailRun, LoadedGuardrail } from './guardrails.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- chunks as a client reads them, field by field
type Json = Record<string, any>;

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x' };
const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const DONE = 'data: [DONE]\n\n';

/** An upstream stream of one choice: a role chunk, the pieces, finish_reason stop, usage, [DONE]. */
function upstreamEvents(pieces: string[], options: { usage?: boolean } = {}): string {
  return [
    sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    ...pieces.map((piece) =>
      sse({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }),
    ),
    sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    ...(options.usage === false
      ? []
      : [sse({ ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })]),
    DONE,
  ].join('');
}

/** `bytes` cut at the given positions. */
function cutBytes(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const reads: Uint8Array[] = [];
  let from = 0;
  for (const point of points) {
    reads.push(bytes.subarray(from, point));
    from = point;
  }
  reads.push(bytes.subarray(from));
  return reads;
}

interface Received {
  /** Every event's data, in order. */
  events: string[];
  chunks: Json[];
  /** The choice's content deltas put together. */
  text: string;
  finishReasons: unknown[];
  runs: GuardrailRun[];
  raw: string;
}

async function run(
  guardrails: LoadedGuardrail[],
  reads: Array<string | Uint8Array>,
  index = 0,
): Promise<Received & { seen: { reads: number; returned: boolean } }> {
  const { body, seen } = upstream(reads.map((read) => (typeof read === 'string' ? Buffer.from(read) : read)));
  const runs: GuardrailRun[] = [];
  const parts: Buffer[] = [];
  for await (const part of guardStream(body, { guardrails, request: { model: 'gpt-x' }, runs })) {
    parts.push(Buffer.from(part));
  }
  const raw = Buffer.concat(parts).toString('utf8');
  assert.ok(raw === '' || /(\r?\n){2}$/.test(raw), `the output ends inside an event: ${JSON.stringify(raw)}`);
  const events = raw
    .split(/(?:\r?\n){2}/)
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
  const chunks = events
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as Json)
    .filter((chunk) => Array.isArray(chunk.choices));
  const choices = chunks.flatMap((chunk) => (chunk.choices as Json[]).filter((c) => c.index === index));
  return {
    events,
    chunks,
    text: choices.map((choice) => choice.delta?.content ?? '').join(''),
    finishReasons: choices.map((choice) => choice.finish_reason).filter((reason) => reason != null),
    runs,
    raw,
    seen,
  };
}

describe('output guardrails on a stream', () => {
  test('a clean answer passes unchanged, every field with it', async () => {
    const input = upstreamEvents(['Hello ', 'there, ', 'friend.']);
    const got = await run([guardrail([pii, words], { deny: true })], [input]);
    assert.equal(got.text, 'Hello there, friend.');
    assert.deepEqual(got.finishReasons, ['stop']);
    assert.equal(got.chunks[0]!.choices[0].delta.role, 'assistant');
    assert.ok(got.chunks.every((chunk) => chunk.id === 'chatcmpl-1' && chunk.model === 'gpt-x'));
    assert.deepEqual(got.chunks.at(-1)!.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    assert.equal(got.events.at(-1), '[DONE]');
    assert.equal(got.runs.length, 1);
    assert.equal(got.runs[0]!.action, 'allow');
    assert.equal(got.runs[0]!.phase, 'output');
  });

  test('deny: the choice ends with content_filter and [DONE], nothing of the match is sent, and the upstream is stopped', async () => {
    const input = upstreamEvents(['Write ', 'to ', 'jane.', 'doe@exam', 'ple.com ', 'soon, ', 'ok?']);
    const reads = input.split(/(?<=\n\n)/);
    const got = await run([guardrail([pii], { deny: true })], reads);
    assert.deepEqual(got.finishReasons, ['content_filter']);
    assert.equal(got.events.at(-1), '[DONE]');
    assert.ok(!got.raw.includes('jane'), got.raw);
    assert.ok(!got.raw.includes('example.com'), got.raw);
    assert.ok('Write to '.startsWith(got.text), got.text);
    const filtered = got.chunks.at(-1)!;
    assert.deepEqual(filtered.choices, [{ index: 0, delta: {}, finish_reason: 'content_filter' }]);
    assert.equal(filtered.id, 'chatcmpl-1');
    assert.equal(got.seen.returned, true, 'the upstream read was stopped');
    assert.ok(got.seen.reads < reads.length, 'the rest of the upstream was never read');
    assert.equal(got.runs.length, 1);
    assert.equal(got.runs[0]!.action, 'deny');
    assert.equal(got.runs[0]!.checks[0]!.passed, false);
  });

  test('redact: the text goes on with the match replaced; what was held comes before the finishing chunk', async () => {
    const input = upstreamEvents(['Mail ', 'ann@', 'example.org']);
    const got = await run([guardrail([pii], { redact: true })], [input]);
    assert.match(got.text, /^Mail \[[A-Z_]+\]$/);
    assert.deepEqual(got.finishReasons, ['stop']);
    const finishing = got.chunks.findIndex((chunk) => chunk.choices[0]?.finish_reason === 'stop');
    assert.deepEqual(got.chunks[finishing]!.choices[0].delta, {});
    assert.match(got.chunks[finishing - 1]!.choices[0].delta.content as string, /\]$/);
    assert.equal(got.runs[0]!.action, 'redact');
    assert.equal(got.runs[0]!.redactions, 1);
  });

  test('warn: the text passes as it is, and the verdict is recorded', async () => {
    const input = upstreamEvents(['this is ', 'classified']);
    const got = await run([guardrail([words], {})], [input]);
    assert.equal(got.text, 'this is classified');
    assert.deepEqual(got.finishReasons, ['stop']);
    assert.equal(got.runs[0]!.action, 'warn');
  });

  test('a chunk left with nothing to say is dropped; role, tool calls and usage pass as they are', async () => {
    const toolCall = { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const input = [
      sse({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      }),
      sse({ ...base, choices: [{ index: 0, delta: { content: 'x@' }, finish_reason: null }] }),
      sse({ ...base, choices: [{ index: 0, delta: { tool_calls: [toolCall] }, finish_reason: null }] }),
      sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
      sse({ ...base, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
      DONE,
    ].join('');
    const got = await run([guardrail([pii], { deny: true })], [input]);
    assert.deepEqual(
      got.chunks.map((chunk) => chunk.choices[0]?.delta ?? null),
      [{ role: 'assistant', content: '' }, { tool_calls: [toolCall] }, { content: 'x@' }, {}, null],
    );
    assert.deepEqual(got.finishReasons, ['tool_calls']);
    assert.equal(got.chunks.at(-1)!.usage.total_tokens, 2);
  });

  test('events split across reads, several in one read, CRLF line ends and characters split between reads', async () => {
    const input = upstreamEvents(['Grüße ', '— ', 'mail ', 'zoë@exämple.com ', 'bye']).replaceAll(
      '\n',
      '\r\n',
    );
    const bytes = Buffer.from(input);
    // One byte at a time: every event and every multi-byte character arrives in pieces.
    const reads = [...bytes].map((byte) => Uint8Array.of(byte));
    const got = await run([guardrail([pii], { redact: true })], reads);
    const whole = 'Grüße — mail zoë@exämple.com bye';
    const verdict = runGuardrail(guardrail([pii], { redact: true }), { text: whole, phase: 'output' });
    assert.equal(got.text, redact(whole, verdict.redactions));
    assert.deepEqual(got.finishReasons, ['stop']);
    assert.equal(got.events.at(-1), '[DONE]');
  });

  test('each choice is checked on its own', async () => {
    const chunk = (index: number, content: string) =>
      sse({ ...base, choices: [{ index, delta: { content }, finish_reason: null }] });
    const input = [
      chunk(0, 'one: a@b.com '),
      chunk(1, 'two: clean '),
      sse({
        ...base,
        choices: [
          { index: 0, delta: {}, finish_reason: 'stop' },
          { index: 1, delta: {}, finish_reason: 'stop' },
        ],
      }),
      DONE,
    ].join('');
    const guard = guardrail([pii], { redact: true });
    const first = await run([guard], [input], 0);
    const second = await run([guard], [input], 1);
    assert.match(first.text, /^one: \[[A-Z_]+\] $/);
    assert.equal(second.text, 'two: clean ');
    assert.equal(first.runs.length, 2, 'a run for each choice');
    assert.deepEqual(
      first.runs.map((r) => r.action),
      ['redact', 'allow'],
    );
  });

  test('guardrails are chained: a later one reads what the earlier one releases', async () => {
    const redacting = guardrail([pii], { redact: true });
    const denying = guardrail([words], { deny: true });
    const clean = await run([redacting, denying], [upstreamEvents(['mail ', 'a@b.com ', 'now'])]);
    assert.match(clean.text, /^mail \[[A-Z_]+\] now$/);
    assert.deepEqual(clean.finishReasons, ['stop']);
    const denied = await run(
      [redacting, denying],
      [upstreamEvents(['mail a@b.com, ', 'it is top ', 'secret!'])],
    );
    assert.deepEqual(denied.finishReasons, ['content_filter']);
    assert.ok(!denied.raw.includes('a@b.com'), denied.raw);
    assert.ok(!denied.raw.includes('top'), denied.raw);
    assert.deepEqual(
      denied.runs.map((r) => r.action),
      ['redact', 'deny'],
    );
  });

  test('a guardrail that denies on the whole text holds its choice until the choice finishes', async () => {
    const json = guardrail([['default.validJson', {}]], { deny: true });
    const valid = await run([json], [upstreamEvents(['{"a": ', '1}'], { usage: false })]);
    assert.equal(valid.text, '{"a": 1}');
    assert.equal(valid.chunks.length, 3, 'role, the held text, the finishing chunk');
    assert.equal(valid.chunks[1]!.choices[0].delta.content, '{"a": 1}');
    assert.deepEqual(valid.finishReasons, ['stop']);
    const broken = await run([json], [upstreamEvents(['{"a": ', '1'])]);
    assert.equal(broken.text, '');
    assert.deepEqual(broken.finishReasons, ['content_filter']);
    assert.ok(!broken.raw.includes(JSON.stringify('{"a"').slice(1, -1)), broken.raw);
  });

  test('logprobs are dropped where text is held back', async () => {
    const logprobs = { content: [{ token: 'a@b.com', logprob: -1, bytes: null, top_logprobs: [] }] };
    const input = [
      sse({ ...base, choices: [{ index: 0, delta: { content: 'hi ' }, logprobs, finish_reason: null }] }),
      sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      DONE,
    ].join('');
    const got = await run([guardrail([pii], { redact: true })], [input]);
    assert.ok(!got.raw.includes('a@b.com'), got.raw);
    assert.equal(got.text, 'hi ');
  });

  test('an error event passes; text still held when the stream ends unfinished is not sent', async () => {
    const error = {
      error: { message: 'limit', type: 'rate_limit_error', param: null, code: 'usage_limit_exceeded' },
    };
    const input = [
      sse({ ...base, choices: [{ index: 0, delta: { content: 'reach me at jane@' }, finish_reason: null }] }),
      sse(error),
      DONE,
    ].join('');
    const got = await run([guardrail([pii], { deny: true })], [input]);
    assert.ok(!got.raw.includes('jane@'), got.raw);
    assert.equal(got.text, 'reach me at ');
    assert.deepEqual(JSON.parse(got.events.at(-2)!), error);
    assert.equal(got.events.at(-1), '[DONE]');
    assert.equal(got.runs.length, 1);
  });

  test('an event that cannot be read as a chunk is dropped, comments pass', async () => {
    const input = `: keep-alive\n\ndata: {"choices": [{"delta": {"content": "a@b.com"\n\n${upstreamEvents(['ok'])}`;
    const got = await run([guardrail([pii], { deny: true })], [input]);
    assert.ok(got.raw.startsWith(': keep-alive\n\n'), got.raw);
    assert.ok(!got.raw.includes('a@b.com'), got.raw);
    assert.equal(got.text, 'ok');
  });

  test('a client that goes away stops the upstream read and the runs are still recorded', async () => {
    const input = upstreamEvents(['one ', 'two ', 'three']).split(/(?<=\n\n)/);
    const { body, seen } = upstream(input.map((read) => Buffer.from(read)));
    const runs: GuardrailRun[] = [];
    const stream = guardStream(body, { guardrails: [guardrail([pii], { deny: true })], request: {}, runs });
    for await (const _part of stream) break;
    assert.equal(seen.returned, true);
    assert.equal(runs.length, 1);
  });
});

// Answers mixing emails and forbidden words with filler and near misses.
const answer = answers(
  fc.constantFrom('classified', 'top secret', 'Classified'),
  fc.constantFrom('@', '.', 'x@y', 'top', 'class', 'é', '"quoted"', '\\'),
);

/** `text` as content deltas cut at the given positions. */
function deltas(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const point of points) {
    out.push(text.slice(from, point));
    from = point;
  }
  out.push(text.slice(from));
  return out.filter((delta) => delta !== '');
}

/** Every way of cutting the bytes in two, and a random multi-split. */
function byteSplits(bytes: Uint8Array, at: number[]): Uint8Array[][] {
  const out: Uint8Array[][] = [cutBytes(bytes, at)];
  for (let i = 0; i <= bytes.length; i++) out.push([bytes.subarray(0, i), bytes.subarray(i)]);
  return out;
}

describe('streams without leaks (properties)', () => {
  const denying = guardrail([pii, words], { deny: true });
  const redacting = guardrail([pii, words], { deny: true, redact: true });

  test('deny: no part of a match reaches the client, however the bytes are split', async () => {
    await fc.assert(
      fc.asyncProperty(answer, cuts, cuts, async (text, deltaCuts, byteCuts) => {
        const spans = refusedSpans(denying, text);
        const firstMatch = Math.min(...spans.map((span) => span.start));
        const bytes = Buffer.from(upstreamEvents(deltas(text, deltaCuts)));
        for (const reads of byteSplits(bytes, byteCuts)) {
          const got = await run([denying], reads);
          assert.ok(text.startsWith(got.text), 'what is sent is the answer as it came');
          assert.ok(
            got.text.length <= firstMatch,
            `${JSON.stringify(got.text)} reaches a match at ${firstMatch}`,
          );
          assert.deepEqual(got.finishReasons, [spans.length === 0 ? 'stop' : 'content_filter']);
          if (spans.length === 0) assert.equal(got.text, text);
          assert.equal(got.events.at(-1), '[DONE]');
        }
      }),
      { numRuns: 15, seed: 11 },
    );
  });

  test('redact: the text sent is the redacted whole answer, however the bytes are split', async () => {
    await fc.assert(
      fc.asyncProperty(answer, cuts, cuts, async (text, deltaCuts, byteCuts) => {
        const expected = redact(text, refusedSpans(redacting, text));
        const bytes = Buffer.from(upstreamEvents(deltas(text, deltaCuts)));
        for (const reads of byteSplits(bytes, byteCuts)) {
          const got = await run([redacting], reads);
          assert.equal(got.text, expected);
          assert.deepEqual(got.finishReasons, ['stop']);
        }
      }),
      { numRuns: 15, seed: 12 },
    );
  });

  test('random multi-splits, more runs', async () => {
    await fc.assert(
      fc.asyncProperty(answer, cuts, cuts, async (text, deltaCuts, byteCuts) => {
        const spans = refusedSpans(denying, text);
        const bytes = Buffer.from(upstreamEvents(deltas(text, deltaCuts)));
        const reads = cutBytes(bytes, byteCuts);
        const denied = await run([denying], reads);
        assert.ok(denied.text.length <= Math.min(...spans.map((span) => span.start)));
        assert.ok(text.startsWith(denied.text));
        const redacted = await run([redacting], reads);
        assert.equal(redacted.text, redact(text, refusedSpans(redacting, text)));
      }),
      { numRuns: 300, seed: 13 },
    );
  });
});
