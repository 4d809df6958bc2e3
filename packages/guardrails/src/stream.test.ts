import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type GuardrailActions,
  type GuardrailCheck,
  type GuardrailCheckId,
  parseGuardrailChecks,
} from './definitions.ts';
import { type Guardrail, runGuardrail } from './evaluate.ts';
import { luhn } from './pii.ts';
import { redact, type Span } from './scan.ts';
import { type StreamEnd, StreamGuard, streamMode } from './stream.ts';

function check(id: GuardrailCheckId, parameters: Record<string, unknown> = {}) {
  return parseGuardrailChecks([{ id, parameters }])[0]!;
}

const actions = (given: Partial<GuardrailActions>): GuardrailActions => ({
  deny: false,
  async: false,
  redact: false,
  ...given,
});

interface Streamed {
  /** Everything released, put together. */
  text: string;
  /** What each call released, in order (the chunks' steps, then finish). */
  steps: string[];
  end: StreamEnd;
}

function stream(guardrail: Guardrail, chunks: string[], request = {}): Streamed {
  const guard = new StreamGuard(guardrail, request);
  const steps = chunks.map((chunk) => guard.feed(chunk).text);
  const end = guard.finish();
  steps.push(end.text);
  return { text: steps.join(''), steps, end };
}

/** `text` cut at the given positions. */
function cut(text: string, at: number[]): string[] {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(text.slice(from, point));
    from = point;
  }
  chunks.push(text.slice(from));
  return chunks;
}

/** Every way of cutting `text` in two, and one character at a time. */
function splits(text: string): string[][] {
  const out: string[][] = [[...text]];
  for (let i = 0; i <= text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

/** The spans a whole-text run refuses: what failed span checks matched. */
function refusedSpans(guardrail: Guardrail, text: string): Span[] {
  const verdict = runGuardrail(guardrail, { text, phase: 'output' });
  return verdict.verdicts.filter((v) => !v.passed).flatMap((v) => v.matches ?? []);
}

describe('stream modes', () => {
  test('each check says how it runs on a stream', () => {
    assert.deepEqual(streamMode(check('default.pii', { categories: ['credit_card'] })), {
      mode: 'window',
      window: 39,
    });
    assert.deepEqual(streamMode(check('default.pii', { categories: ['email'] })), {
      mode: 'window',
      window: 641,
    });
    assert.deepEqual(streamMode(check('default.pii')), { mode: 'window', window: 8382 });
    assert.deepEqual(
      streamMode(check('default.contains', { words: ['secret', 'top secret'], operator: 'none' })),
      {
        mode: 'window',
        window: 12,
      },
    );
    assert.deepEqual(streamMode(check('default.contains', { words: ['hello'] })), { mode: 'end' });
    assert.deepEqual(streamMode(check('default.regexMatch', { rule: 'x', not: true, maxMatchLength: 5 })), {
      mode: 'window',
      window: 5,
    });
    assert.deepEqual(streamMode(check('default.regexMatch', { rule: 'x', not: true })), { mode: 'end' });
    assert.deepEqual(streamMode(check('default.wordCount', { maxWords: 5 })), {
      mode: 'end',
      failsEarly: true,
    });
    assert.deepEqual(streamMode(check('default.wordCount', { maxWords: 5, not: true })), { mode: 'end' });
    assert.deepEqual(streamMode(check('default.jsonSchema', { schema: { type: 'object' } })), {
      mode: 'end',
    });
    assert.deepEqual(streamMode(check('default.modelWhitelist', { models: ['m'] })), { mode: 'request' });
    assert.deepEqual(streamMode(check('default.requiredMetadataKeys', { metadataKeys: ['k'] })), {
      mode: 'request',
    });
  });
});

describe('StreamGuard', () => {
  const pii = check('default.pii', { categories: ['email', 'credit_card'] });

  test('deny: text is held while a match may still cover it, and nothing is released after one', () => {
    const guardrail = { checks: [pii], actions: actions({ deny: true }) };
    const { steps, end } = stream(guardrail, ['Hello, write to ', 'ada@exam', 'ple.com today']);
    assert.equal(steps.join(''), 'Hello, write to ');
    assert.equal(steps[1], '', 'nothing of the address, nor what precedes it by less than its window');
    assert.equal(end.verdict.action, 'deny');
    assert.match(end.denied!.explanation, /1 email address/);
  });

  test('deny: text no match can begin in is released as it comes', () => {
    const guardrail = { checks: [pii], actions: actions({ deny: true }) };
    const long = 'word '.repeat(40);
    const guard = new StreamGuard(guardrail);
    const first = guard.feed(long).text;
    assert.ok(first.length >= long.length - 40, `released ${first.length} of ${long.length}`);
    assert.equal(long.startsWith(first), true);
    const end = guard.finish();
    assert.equal(first + end.text, long);
    assert.equal(end.verdict.action, 'allow');
  });

  test('redact: spans are replaced as they are released', () => {
    const guardrail = { checks: [pii], actions: actions({ redact: true }) };
    const text = 'Card 4111 1111 1111 1111, mail ada@example.com, done.';
    const { text: released, end } = stream(guardrail, [...text]);
    assert.equal(released, 'Card [CREDIT_CARD], mail [EMAIL], done.');
    assert.equal(end.verdict.action, 'redact');
    assert.equal(end.verdict.text, released);
  });

  test('a maximum count fails as soon as it is passed', () => {
    const guardrail = {
      checks: [check('default.wordCount', { maxWords: 3 })],
      actions: actions({ deny: true }),
    };
    const guard = new StreamGuard(guardrail);
    assert.equal(guard.feed('one two ').text, 'one two ');
    assert.equal(guard.feed('three ').text, 'three ');
    const step = guard.feed('four');
    assert.equal(step.text, '');
    assert.match(step.denied!.explanation, /default\.wordCount: the text has more than 3 words/);
    assert.equal(guard.feed(' five').text, '');
    assert.equal(guard.finish().verdict.action, 'deny');
  });

  test('checks decided on the whole text decide at the end; a deny then withholds the rest', () => {
    const json = { checks: [check('default.validJson'), pii], actions: actions({ deny: true }) };
    const ok = stream(json, ['{"a": ', '1}']);
    assert.equal(ok.text, '{"a": 1}');
    assert.equal(ok.end.verdict.passed, true);
    const broken = stream(json, ['{"a": ', '1']);
    assert.equal(broken.end.verdict.action, 'deny');
    assert.equal(broken.end.text, '');
  });

  test('a forbidding regex without maxMatchLength holds the whole answer to the end', () => {
    const guardrail = {
      checks: [check('default.regexMatch', { rule: 'tok-\\d+', not: true })],
      actions: actions({ redact: true }),
    };
    const { steps, text } = stream(guardrail, ['a tok-12', '34 b', ' c']);
    assert.deepEqual(steps, ['', '', '', 'a [REDACTED] b c']);
    assert.equal(text, 'a [REDACTED] b c');
  });

  test('a regex matching more than its maxMatchLength said is reported at the end', () => {
    const guardrail = {
      checks: [check('default.regexMatch', { rule: 'tok-\\d+x', not: true, maxMatchLength: 6 })],
      actions: actions({ redact: true }),
    };
    // The match is 12 characters long: its start was released before its end came.
    const { text, end } = stream(guardrail, ['a tok-1', '23456', '789x b']);
    assert.equal(text, 'a tok-123456789x b');
    assert.equal(end.verdict.passed, false);
    assert.match(end.verdict.verdicts[0]!.error!, /longer than the check’s window/);
    assert.equal(end.verdict.action, 'warn');
  });

  test('a check on the request decides before any text', () => {
    const guardrail = {
      checks: [check('default.modelWhitelist', { models: ['gpt-4o'] })],
      actions: actions({ deny: true }),
    };
    const denied = new StreamGuard(guardrail, { model: 'gpt-3.5-turbo' });
    assert.match(denied.denied!.explanation, /'gpt-3.5-turbo' is not among the allowed models/);
    assert.equal(denied.feed('hello').text, '');
    assert.equal(stream(guardrail, ['hello'], { model: 'gpt-4o' }).text, 'hello');
  });

  test('warn: text is released as it comes and the verdict is recorded at the end', () => {
    const guardrail = { checks: [pii], actions: actions({}) };
    const { steps, end } = stream(guardrail, ['mail ada@', 'example.com']);
    assert.deepEqual(steps, ['mail ada@', 'example.com', '']);
    assert.equal(end.verdict.action, 'warn');
  });

  test('a check that cannot run fails closed from the start', () => {
    const broken: GuardrailCheck = {
      id: 'default.contains',
      is_enabled: true,
      parameters: { words: [] },
      timeout_ms: 100,
      failure_mode: 'closed',
    };
    const { text, end } = stream({ checks: [broken], actions: actions({ deny: true }) }, ['hello']);
    assert.equal(text, '');
    assert.equal(end.verdict.action, 'deny');
    assert.match(end.verdict.verdicts[0]!.error!, /invalid parameter 'words'/);
  });
});

// Texts mixing what the checks look for (emails, card numbers, forbidden words, regex
// matches, API keys, IP addresses) with filler and near misses (digit runs, stray `@`, `-`).
const filler = fc.stringMatching(/^[a-z ,.\n]{0,12}$/);
const email = fc
  .tuple(
    fc.stringMatching(/^[a-z][a-z0-9.]{0,8}$/),
    fc.stringMatching(/^[a-z]{1,8}$/),
    fc.constantFrom('com', 'org', 'co.uk'),
  )
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`);
const card = fc
  .tuple(
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 14, maxLength: 14 }),
    fc.constantFrom('', ' ', '-'),
  )
  .map(([digits, separator]) => {
    const body = `4${digits.join('')}`;
    const check = [...'0123456789'].find((d) => luhn(body + d))!;
    const number = body + check;
    return separator === '' ? number : number.match(/.{4}/g)!.join(separator);
  });
const word = fc.constantFrom('secret', 'top secret', 'Classified');
const token = fc.stringMatching(/^[0-9]{3,6}$/).map((digits) => `tok-${digits}`);
const apiKey = fc.stringMatching(/^[A-Za-z0-9]{19,25}$/).map((rest) => `sk-1${rest}`);
const ip = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));
const noise = fc.oneof(
  fc.stringMatching(/^[0-9 -]{1,22}$/),
  fc.constantFrom('@', '-', '.', 'x@y', 'tok-', 'sk-'),
);
const piece = fc.oneof(
  { arbitrary: filler, weight: 4 },
  { arbitrary: email, weight: 1 },
  { arbitrary: card, weight: 1 },
  { arbitrary: word, weight: 1 },
  { arbitrary: token, weight: 1 },
  { arbitrary: apiKey, weight: 1 },
  { arbitrary: ip, weight: 1 },
  { arbitrary: noise, weight: 2 },
);
const text = fc.array(piece, { maxLength: 10 }).map((pieces) => pieces.join(' '));
const cuts = fc.array(fc.nat(), { maxLength: 12 });

const spanChecks = [
  check('default.pii', { categories: ['email', 'credit_card', 'ip_address', 'secret'] }),
  check('default.contains', { words: ['secret', 'top secret', 'classified'], operator: 'none' }),
  check('default.regexMatch', { rule: 'tok-[0-9]{3,6}', not: true, maxMatchLength: 10 }),
];

describe('streams without leaks (properties)', () => {
  const deny = { checks: spanChecks, actions: actions({ deny: true }) };
  const redacting = { checks: spanChecks, actions: actions({ redact: true, deny: true }) };

  test('the generated texts do hold matches', () => {
    const samples = fc.sample(text, { numRuns: 200, seed: 7 });
    assert.ok(samples.filter((sample) => refusedSpans(deny, sample).length > 0).length > 100);
  });

  test('deny: no character of a match is released, whatever the chunks', () => {
    fc.assert(
      fc.property(text, cuts, (sample, at) => {
        const spans = refusedSpans(deny, sample);
        const firstMatch = Math.min(...spans.map((span) => span.start));
        for (const chunks of [...splits(sample), cut(sample, at)]) {
          const { text: released, end } = stream(deny, chunks);
          assert.ok(sample.startsWith(released), 'released text is the text as it came');
          assert.ok(
            released.length <= firstMatch,
            `released ${JSON.stringify(released)} reaches into a match at ${firstMatch}`,
          );
          if (spans.length === 0) {
            assert.equal(released, sample);
            assert.equal(end.verdict.action, 'allow');
          } else {
            assert.equal(end.verdict.action, 'deny');
          }
        }
      }),
      { numRuns: 60, seed: 1 },
    );
  });

  test('redact: the released text is the redacted whole text, whatever the chunks', () => {
    fc.assert(
      fc.property(text, cuts, (sample, at) => {
        const expected = redact(sample, refusedSpans(redacting, sample));
        for (const chunks of [...splits(sample), cut(sample, at)]) {
          const { text: released, end } = stream(redacting, chunks);
          assert.equal(released, expected);
          assert.equal(end.verdict.text, expected);
          assert.equal(
            end.verdict.verdicts.every((verdict) => verdict.error === undefined),
            true,
          );
        }
      }),
      { numRuns: 60, seed: 2 },
    );
  });

  test('random multi-splits, more runs', () => {
    fc.assert(
      fc.property(text, cuts, (sample, at) => {
        const chunks = cut(sample, at);
        const spans = refusedSpans(deny, sample);
        const released = stream(deny, chunks).text;
        assert.ok(released.length <= Math.min(...spans.map((span) => span.start)));
        assert.equal(stream(redacting, chunks).text, redact(sample, refusedSpans(redacting, sample)));
      }),
      { numRuns: 500, seed: 3 },
    );
  });
});
