import type { ValidateFunction } from 'ajv';
import type { GuardrailCheck, GuardrailCheckId } from './definitions.ts';
import { scorePromptInjection } from './injection.ts';
import {
  type CharacterCountParameters,
  compileJsonSchema,
  compileRule,
  type ContainsParameters,
  type JsonKeysParameters,
  type JsonSchemaParameters,
  type ModelWhitelistParameters,
  PARAMETER_SCHEMAS,
  type PiiParameters,
  type PromptInjectionParameters,
  type RegexMatchParameters,
  type RequiredMetadataKeysParameters,
  type SentenceCountParameters,
  type ValidJsonParameters,
  type WordCountParameters,
} from './parameters.ts';
import { PII_LABELS, piiCategoryOf, piiScanners } from './pii.ts';
import { type Scanner, scanAll, type Span } from './scan.ts';

/** What a check reads: the text of a request's input or a model's output, and the request. */
export interface GuardrailInput {
  text: string;
  /** The model the request names. */
  model?: string | undefined;
  /** The request's metadata. */
  metadata?: Readonly<Record<string, unknown>> | undefined;
  phase: 'input' | 'output';
}

/** A check's answer on one text. */
export interface CheckOutcome {
  passed: boolean;
  /** Why, in plain words. */
  explanation: string;
  /** The spans that made the check fail, where it can say (regex, contains, pii): they can be redacted. */
  matches?: Span[];
}

/**
 * How a check runs on a stream of output text:
 * - `request`: decided by the request alone (model, metadata), before any text;
 * - `window`: it fails on spans of bounded length, so text is released once no span can
 *   still cover it;
 * - `count`: decided on the whole text, but a maximum fails as soon as it is passed;
 * - `end`: decided on the whole text only.
 */
export type StreamPlan =
  | { mode: 'request' }
  | { mode: 'window'; scanners: Scanner[]; explain: (spans: Span[]) => CheckOutcome }
  | { mode: 'count'; counter: () => Counter; max: number; unit: string }
  | { mode: 'end' };

/** A check ready to run: parameters parsed, patterns and schemas compiled. */
export interface PreparedCheck {
  check: GuardrailCheck;
  /** The check's name in explanations: its own name with its id, or its id. */
  label: string;
  evaluate(input: GuardrailInput): CheckOutcome;
  stream: StreamPlan;
}

/** The name a verdict and an explanation give a check. */
export function checkLabel(check: Pick<GuardrailCheck, 'id' | 'name'>): string {
  return check.name ? `${check.name} (${check.id})` : check.id;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const quoted = (items: readonly string[]) => items.map((item) => `'${item}'`).join(', ');

/** A check failing on the spans `scanners` find: the same scanners run on whole texts and streams. */
function spanCheck(
  scanners: Scanner[],
  explain: (spans: Span[]) => CheckOutcome,
): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  return {
    evaluate: (input) => explain(scanAll(scanners, input.text)),
    stream: { mode: 'window', scanners, explain },
  };
}

// Counting, incrementally: a counter reads text as it grows and knows a lower bound of the
// final count at any time (so a maximum fails as soon as it is passed), and the count once
// the text is final.

export interface Counter {
  /**
   * Reads the text grown since the last call (`text` holds it from position `offset` on, and
   * the character before); answers the count so far, at most the final one.
   */
  advance(text: string, final: boolean, offset?: number): number;
}

const SPACE = /\s/;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** Words: runs of non-whitespace (as splitting on whitespace counts them). */
export function wordCounter(): Counter {
  let at = 0;
  let words = 0;
  let inWord = false;
  return {
    advance(text, _final, offset = 0) {
      for (; at < offset + text.length; at++) {
        if (SPACE.test(text[at - offset]!)) inWord = false;
        else if (!inWord) {
          inWord = true;
          words++;
        }
      }
      return words;
    },
  };
}

/** Characters: Unicode code points (an emoji is one). */
export function characterCounter(): Counter {
  let at = 0;
  let characters = 0;
  return {
    advance(text, _final, offset = 0) {
      for (; at < offset + text.length; at++) {
        const code = text.charCodeAt(at - offset);
        const trails = code >= 0xdc00 && code <= 0xdfff && at > 0;
        const lead = trails ? text.charCodeAt(at - 1 - offset) : 0;
        if (!(trails && lead >= 0xd800 && lead <= 0xdbff)) characters++;
      }
      return characters;
    },
  };
}

/**
 * Sentences: stretches of text holding a letter or digit, ended by `.`, `!` or `?` followed
 * by whitespace (closing quotes and brackets may come between), by `。！？`, or by the end of
 * the text. `3.14` and `e.g.x` do not end a sentence.
 */
export function sentenceCounter(): Counter {
  let at = 0;
  let sentences = 0;
  let hasContent = false;
  let ending = false;
  return {
    advance(text, final, offset = 0) {
      for (; at < offset + text.length; at++) {
        const char = text[at - offset]!;
        const code = text.charCodeAt(at - offset);
        // The second half of a character outside the BMP has not come yet.
        if (code >= 0xd800 && code <= 0xdbff && at + 1 === offset + text.length && !final) break;
        if (char === '.' || char === '!' || char === '?') {
          if (hasContent) ending = true;
        } else if (char === '。' || char === '！' || char === '？') {
          if (hasContent) sentences++;
          hasContent = false;
          ending = false;
        } else if (SPACE.test(char)) {
          if (ending) {
            sentences++;
            hasContent = false;
            ending = false;
          }
        } else if (ending && `"'”’)]»`.includes(char)) {
          // Closing punctuation after the end of a sentence belongs to it.
        } else {
          ending = false;
          const point = text.codePointAt(at - offset)!;
          if (LETTER_OR_DIGIT.test(String.fromCodePoint(point))) hasContent = true;
          if (point > 0xffff) at++;
        }
      }
      return sentences + (hasContent ? 1 : 0);
    },
  };
}

function countCheck(
  counter: () => Counter,
  unit: string,
  min: number,
  max: number,
  not: boolean,
): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  return {
    evaluate: ({ text }) => {
      const n = counter().advance(text, true);
      const within = n >= min && n <= max;
      const passed = within !== not;
      const has = `the text has ${plural(n, unit)}`;
      const range = `${min} to ${max} ${unit}s`;
      if (not) {
        return {
          passed,
          explanation: `${has}, ${within ? 'within' : 'outside'} ${range}${passed ? '' : ', which is not allowed (not)'}`,
        };
      }
      return { passed, explanation: passed ? `${has}, within ${range}` : `${has}; it must have ${range}` };
    },
    // With `not`, passing the maximum makes the check pass: only the whole text decides.
    stream: not ? { mode: 'end' } : { mode: 'count', counter, max, unit },
  };
}

/**
 * The JSON a text holds: the text itself, or the body of the one fenced code block
 * (```json … ```) it consists of. Undefined if neither parses.
 */
export function extractJson(text: string): { value: unknown } | undefined {
  const trimmed = text.trim();
  const fenced = /^```[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(trimmed);
  for (const candidate of fenced ? [fenced[1]!, trimmed] : [trimmed]) {
    try {
      return { value: JSON.parse(candidate) as unknown };
    } catch {
      // Not JSON: try the next reading.
    }
  }
  return undefined;
}

/** Which of `wanted` the predicate finds, and whether `operator` is satisfied by that. */
/** A keys check's verdict on what `subject` (the JSON, the metadata) holds, with why. */
function keysVerdict(
  subject: string,
  operator: 'any' | 'all' | 'none',
  keys: readonly string[],
  present: (key: string) => boolean,
): CheckOutcome {
  const { found, missing, passed } = byOperator(operator, keys, present);
  const explanation =
    operator === 'none'
      ? passed
        ? `${subject} has none of the keys ${quoted(keys)}`
        : `${subject} has the forbidden keys ${quoted(found)}`
      : passed
        ? `${subject} has the keys ${quoted(found)}`
        : `${subject} lacks the keys ${quoted(operator === 'all' ? missing : keys)}`;
  return { passed, explanation };
}

function byOperator(
  operator: 'any' | 'all' | 'none',
  wanted: readonly string[],
  present: (item: string) => boolean,
) {
  const found = wanted.filter(present);
  const missing = wanted.filter((item) => !found.includes(item));
  const passed =
    operator === 'any' ? found.length > 0 : operator === 'all' ? missing.length === 0 : found.length === 0;
  return { found, missing, passed };
}

const escapeRegex = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

function prepareRegexMatch(p: RegexMatchParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  const scanner: Scanner = {
    label: 'REDACTED',
    pattern: compileRule(p.rule, p.flags),
    span: p.maxMatchLength ?? Infinity,
  };
  const shown = `/${p.rule}/${p.flags}`;
  if (p.not) {
    return spanCheck([scanner], (spans) =>
      spans.length === 0
        ? { passed: true, explanation: `the text does not match the forbidden pattern ${shown}` }
        : {
            passed: false,
            explanation: `the text matches the forbidden pattern ${shown} (${plural(spans.length, 'match')})`,
            matches: spans,
          },
    );
  }
  return {
    evaluate: ({ text }) =>
      scanAll([scanner], text).length > 0
        ? { passed: true, explanation: `the text matches the pattern ${shown}` }
        : { passed: false, explanation: `the text does not match the required pattern ${shown}` },
    stream: { mode: 'end' },
  };
}

function prepareContains(p: ContainsParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  // Whole words or phrases, any case: not preceded or followed by a letter, digit or `_`.
  const words = [...new Map(p.words.map((word) => [word.toLowerCase(), word])).values()].sort(
    (a, b) => b.length - a.length,
  );
  const wordPattern = (alternatives: string[]) =>
    new RegExp(
      `(?<![\\p{L}\\p{N}_])(?:${alternatives.map(escapeRegex).join('|')})(?![\\p{L}\\p{N}_])`,
      'giu',
    );
  const each = new Map(words.map((word) => [word, wordPattern([word])]));
  const present = (text: string) => (word: string) => {
    const pattern = each.get(word)!;
    pattern.lastIndex = 0;
    return pattern.test(text);
  };
  if (p.operator === 'none') {
    // A match is one of the words and the character after it (two UTF-16 units at most).
    const scanner: Scanner = { label: 'REDACTED', pattern: wordPattern(words), span: words[0]!.length + 2 };
    return spanCheck([scanner], (spans) => {
      if (spans.length === 0)
        return { passed: true, explanation: 'the text holds none of the forbidden words' };
      return {
        passed: false,
        explanation: `the text holds forbidden words (${plural(spans.length, 'occurrence')})`,
        matches: spans,
      };
    });
  }
  return {
    evaluate: ({ text }) => {
      const { found, missing, passed } = byOperator(p.operator, words, present(text));
      if (p.operator === 'any') {
        return passed
          ? { passed, explanation: `the text holds ${quoted(found)}` }
          : { passed, explanation: `the text holds none of ${quoted(words)}` };
      }
      return passed
        ? { passed, explanation: `the text holds all of ${quoted(words)}` }
        : { passed, explanation: `the text lacks ${quoted(missing)}` };
    },
    stream: { mode: 'end' },
  };
}

function preparePii(p: PiiParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  return spanCheck(piiScanners(p.categories), (spans) => {
    if (spans.length === 0) return { passed: true, explanation: 'no personal data or secrets found' };
    const counts = new Map<string, number>();
    for (const span of spans) counts.set(span.label, (counts.get(span.label) ?? 0) + 1);
    const found = [...counts].map(([label, n]) => plural(n, PII_LABELS[piiCategoryOf(label)!].noun));
    return {
      passed: false,
      explanation: `found personal data or secrets: ${found.join(', ')}`,
      matches: spans,
    };
  });
}

function prepareJsonSchema(p: JsonSchemaParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  const validate: ValidateFunction = compileJsonSchema(p.schema);
  return {
    evaluate: ({ text }) => {
      const json = extractJson(text);
      const valid = json !== undefined && validate(json.value);
      const why =
        json === undefined
          ? 'the text is not valid JSON'
          : valid
            ? 'the JSON matches the schema'
            : `the JSON does not match the schema: ${(validate.errors ?? [])
                .slice(0, 3)
                .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`)
                .join('; ')}`;
      const passed = valid !== p.not;
      return { passed, explanation: p.not && !passed ? `${why}, which is not allowed (not)` : why };
    },
    stream: { mode: 'end' },
  };
}

function prepareJsonKeys(p: JsonKeysParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  return {
    evaluate: ({ text }) => {
      const json = extractJson(text);
      const value = json?.value;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        return { passed: false, explanation: 'the text is not a JSON object' };
      }
      return keysVerdict('the JSON', p.operator, p.keys, (key) => Object.hasOwn(value, key));
    },
    stream: { mode: 'end' },
  };
}

function prepareModelWhitelist(p: ModelWhitelistParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  const models = new Set(p.models);
  return {
    evaluate: ({ model }) => {
      const listed = model !== undefined && models.has(model);
      const passed = listed !== p.not;
      if (model === undefined) return { passed, explanation: 'the request names no model' };
      const list = p.not ? 'the models not allowed' : 'the allowed models';
      return { passed, explanation: `the model '${model}' is ${listed ? '' : 'not '}among ${list}` };
    },
    stream: { mode: 'request' },
  };
}

function prepareRequiredMetadataKeys(
  p: RequiredMetadataKeysParameters,
): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  return {
    evaluate: ({ metadata }) => {
      const has = (key: string) =>
        metadata !== undefined && Object.hasOwn(metadata, key) && metadata[key] !== undefined;
      return keysVerdict('the metadata', p.operator, p.metadataKeys, has);
    },
    stream: { mode: 'request' },
  };
}

function preparePromptInjection(p: PromptInjectionParameters): Pick<PreparedCheck, 'evaluate' | 'stream'> {
  return {
    evaluate: ({ text }) => {
      const { score, reasons } = scorePromptInjection(text);
      const passed = score < p.threshold;
      return {
        passed,
        explanation: passed
          ? `no prompt injection found (score ${score}, threshold ${p.threshold})`
          : `the text looks like a prompt injection (score ${score}, threshold ${p.threshold}): it ${reasons.join('; ')}`,
      };
    },
    stream: { mode: 'end' },
  };
}

type Prepare = (parameters: never) => Pick<PreparedCheck, 'evaluate' | 'stream'>;

const PREPARE: Record<GuardrailCheckId, Prepare> = {
  'default.regexMatch': prepareRegexMatch,
  'default.contains': prepareContains,
  'default.wordCount': (p: WordCountParameters) =>
    countCheck(wordCounter, 'word', p.minWords, p.maxWords, p.not),
  'default.sentenceCount': (p: SentenceCountParameters) =>
    countCheck(sentenceCounter, 'sentence', p.minSentences, p.maxSentences, p.not),
  'default.characterCount': (p: CharacterCountParameters) =>
    countCheck(characterCounter, 'character', p.minCharacters, p.maxCharacters, p.not),
  'default.validJson': (p: ValidJsonParameters) => ({
    evaluate: ({ text }) => {
      const valid = extractJson(text) !== undefined;
      const passed = valid !== p.not;
      return { passed, explanation: valid ? 'the text is valid JSON' : 'the text is not valid JSON' };
    },
    stream: { mode: 'end' },
  }),
  'default.jsonSchema': prepareJsonSchema,
  'default.jsonKeys': prepareJsonKeys,
  'default.modelWhitelist': prepareModelWhitelist,
  'default.requiredMetadataKeys': prepareRequiredMetadataKeys,
  'default.pii': preparePii,
  'default.promptInjection': preparePromptInjection,
  // The gateway calls the webhook itself and passes its verdict in (see runGuardrail).
  'default.webhook': () => ({
    evaluate: () => {
      throw new Error('a webhook check is called by the gateway; no verdict was given for it');
    },
    stream: { mode: 'end' },
  }),
};

/**
 * Prepares a check: parses its parameters (a stored check is checked again: one saved before
 * a rule tightened errors rather than running half-understood) and compiles what it uses.
 * Throws an Error saying why a check cannot run.
 */
export function prepareCheck(check: GuardrailCheck): PreparedCheck {
  const schema = PARAMETER_SCHEMAS[check.id];
  if (schema === undefined) throw new Error(`unknown check '${String(check.id)}'`);
  const parsed = schema.safeParse(check.parameters ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid parameter '${issue.path.join('.')}': ${issue.message}`);
  }
  return { check, label: checkLabel(check), ...PREPARE[check.id](parsed.data as never) };
}
