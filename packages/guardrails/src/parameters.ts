import { headerNameProblem, httpUrl } from '@switchyard/core';
import { Ajv, type ValidateFunction } from 'ajv';
import safeRegex from 'safe-regex2';
import { z } from 'zod';
import { PII_CATEGORIES } from './pii.ts';

/**
 * The parameters of each check, one strict schema per check id: names follow the public
 * reference description where it has the check (`rule`, `not`, `words`, `operator`,
 * `minWords`, `schema`, `metadataKeys`, `webhookURL`, …). Whatever must compile (a regex, a
 * JSON schema) is compiled here, so a guardrail that saves is one the gateway can run.
 */

/** The longest regex `rule`, and the most a stream may hold back for one (`maxMatchLength`). */
export const MAX_RULE_LENGTH = 1_000;
export const MAX_MATCH_LENGTH = 16_384;

/** Regex flags a rule may carry; matching is always global. */
const RULE_FLAGS = /^(?!.*(.).*\1)[imsu]*$/;

/**
 * Compiles a regex rule (global, with `flags`), refusing one that could take exponential time
 * on some text: nested quantifiers (star height above 1), too many quantifiers, or syntax the
 * safety check cannot read (lookbehind among it). Throws an Error saying why.
 */
export function compileRule(rule: string, flags: string): RegExp {
  let pattern: RegExp;
  try {
    pattern = new RegExp(rule, `g${flags}`);
  } catch (error) {
    throw new Error(`the pattern does not compile: ${(error as Error).message}`);
  }
  if (!safeRegex(rule)) {
    throw new Error(
      'the pattern may take exponential time on some text (a quantifier inside a quantified group, more than 25 quantifiers, or syntax that cannot be checked such as lookbehind)',
    );
  }
  return pattern;
}

const MAX_SCHEMA_LENGTH = 100_000;
const MAX_SCHEMA_DEPTH = 32;

/**
 * The regexes a JSON schema carries (`pattern` values, `patternProperties` keys), which the
 * validator runs on the checked text: each must be safe as a rule is. Throws an Error naming
 * the first that is not.
 */
function assertSafeSchemaPatterns(node: unknown, path: string, depth: number): void {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error(`the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  if (Array.isArray(node)) {
    node.forEach((item, i) => assertSafeSchemaPatterns(item, `${path}/${i}`, depth + 1));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'pattern' && typeof value === 'string' && !safeRegex(value)) {
      throw new Error(`the pattern at ${path}/pattern may take exponential time on some text`);
    }
    if (key === 'patternProperties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const name of Object.keys(value)) {
        if (!safeRegex(name))
          throw new Error(
            `the pattern property ${JSON.stringify(name)} at ${path} may take exponential time on some text`,
          );
      }
    }
    assertSafeSchemaPatterns(value, `${path}/${key}`, depth + 1);
  }
}

/**
 * Compiles a JSON schema (draft-07) to a validator. Each schema gets its own compiler, so one
 * guardrail's `$id`s are never seen by another's. Unknown keywords and formats do not compile
 * (formats are not checked: a schema naming one is refused rather than half-applied); remote
 * `$ref`s are never fetched. Throws an Error saying why a schema does not compile.
 */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction {
  if (JSON.stringify(schema).length > MAX_SCHEMA_LENGTH) {
    throw new Error(`the schema is longer than ${MAX_SCHEMA_LENGTH} characters`);
  }
  assertSafeSchemaPatterns(schema, '#', 0);
  const ajv = new Ajv({
    strictSchema: true,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    allowUnionTypes: true,
    logger: false,
  });
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new Error(`the schema does not compile: ${(error as Error).message}`);
  }
}

/** Header values: visible characters, spaces and tabs (no CR, LF or NUL). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

const not = z.boolean().default(false);
const operator = z.enum(['any', 'all', 'none']);
const names = (max: number) => z.array(z.string().trim().min(1).max(200)).min(1).max(max);

const count = z.int().min(0).max(100_000_000);

/** A count check's minimum is at most its maximum. */
function minAtMostMax(minKey: string, maxKey: string) {
  return (value: Record<string, unknown>, ctx: z.core.$RefinementCtx) => {
    if ((value[minKey] as number) > (value[maxKey] as number)) {
      ctx.addIssue({
        code: 'custom',
        path: [maxKey],
        message: `must be at least ${minKey} (${String(value[minKey])})`,
      });
    }
  };
}

export const regexMatchParameters = z
  .strictObject({
    rule: z.string().min(1).max(MAX_RULE_LENGTH),
    not,
    /** Regex flags among `i`, `m`, `s`, `u`. */
    flags: z.string().regex(RULE_FLAGS, 'flags are among i, m, s and u, each at most once').default(''),
    /**
     * The longest text a match can span, lookarounds included: it lets a stream release text
     * while checking it (the stream holds back that many characters). Without it, a stream
     * checked with this rule is held until it ends.
     */
    maxMatchLength: z.int().min(1).max(MAX_MATCH_LENGTH).optional(),
  })
  .superRefine((value, ctx) => {
    try {
      compileRule(value.rule, value.flags);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['rule'], message: (error as Error).message });
    }
  });

export const containsParameters = z.strictObject({
  words: names(500),
  operator: operator.default('any'),
});

export const wordCountParameters = z
  .strictObject({ minWords: count.default(0), maxWords: count.default(99_999), not })
  .superRefine(minAtMostMax('minWords', 'maxWords'));
export const sentenceCountParameters = z
  .strictObject({ minSentences: count.default(0), maxSentences: count.default(99_999), not })
  .superRefine(minAtMostMax('minSentences', 'maxSentences'));
export const characterCountParameters = z
  .strictObject({ minCharacters: count.default(0), maxCharacters: count.default(9_999_999), not })
  .superRefine(minAtMostMax('minCharacters', 'maxCharacters'));

export const validJsonParameters = z.strictObject({ not });

export const jsonSchemaParameters = z
  .strictObject({ schema: z.record(z.string(), z.unknown()), not })
  .superRefine((value, ctx) => {
    try {
      compileJsonSchema(value.schema);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['schema'], message: (error as Error).message });
    }
  });

export const jsonKeysParameters = z.strictObject({ keys: names(100), operator: operator.default('any') });

export const modelWhitelistParameters = z.strictObject({ models: names(1_000), not });

export const requiredMetadataKeysParameters = z.strictObject({
  metadataKeys: names(100),
  operator: operator.default('all'),
});

export const piiParameters = z.strictObject({
  /** The kinds of personal data the check looks for; all of them by default. */
  categories: z
    .array(z.enum(PII_CATEGORIES))
    .min(1)
    .default([...PII_CATEGORIES])
    .transform((categories) => [...new Set(categories)]),
});

export const promptInjectionParameters = z.strictObject({
  /** The score (0 to 1) from which the text counts as an injection attempt. */
  threshold: z.number().gt(0).max(1).default(0.5),
});

/** A webhook check's parameters; `headerPrefix` is the gateway's own header prefix, also refused. */
export function webhookParameters(headerPrefix?: string) {
  const headerName = z.string().superRefine((name, ctx) => {
    const problem = headerNameProblem(name, headerPrefix);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `'${name}' ${problem}` });
  });
  return z
    .strictObject({
      webhookURL: httpUrl(),
      headers: z
        .record(
          z.string(),
          z.string().max(4_096).regex(HEADER_VALUE, 'header values hold no CR, LF or control characters'),
        )
        .default({}),
      /** How long the call may take (ms); the check's `timeout_ms` bounds it too. */
      timeout: z.int().min(1).max(30_000).optional(),
      /** Headers of the request passed on to the webhook. */
      forwardHeaders: z.array(headerName).max(50).default([]),
      /**
       * The webhook also runs on pass-through `/v1/*` requests (those the gateway forwards
       * without reading their text), where it receives their method, path and content type.
       */
      executeOnProxy: z.boolean().default(false),
      /**
       * Whether a webhook that cannot answer counts as failed (true) or passed (false): the
       * check's `failure_mode`, for clients that set it here; `failure_mode` wins when both are given.
       */
      failOnError: z.boolean().optional(),
    })
    .superRefine((value, ctx) => {
      const keys = Object.keys(value.headers);
      if (keys.length > 50)
        ctx.addIssue({ code: 'custom', path: ['headers'], message: 'at most 50 headers' });
      for (const key of keys) {
        const problem = headerNameProblem(key, headerPrefix, true);
        if (problem !== undefined)
          ctx.addIssue({ code: 'custom', path: ['headers', key], message: `'${key}' ${problem}` });
      }
    });
}

export const PARAMETER_SCHEMAS = {
  'default.regexMatch': regexMatchParameters,
  'default.contains': containsParameters,
  'default.wordCount': wordCountParameters,
  'default.sentenceCount': sentenceCountParameters,
  'default.characterCount': characterCountParameters,
  'default.validJson': validJsonParameters,
  'default.jsonSchema': jsonSchemaParameters,
  'default.jsonKeys': jsonKeysParameters,
  'default.modelWhitelist': modelWhitelistParameters,
  'default.requiredMetadataKeys': requiredMetadataKeysParameters,
  'default.pii': piiParameters,
  'default.promptInjection': promptInjectionParameters,
  'default.webhook': webhookParameters(),
} as const;

export type WordCountParameters = z.output<typeof wordCountParameters>;
export type SentenceCountParameters = z.output<typeof sentenceCountParameters>;
export type CharacterCountParameters = z.output<typeof characterCountParameters>;
export type ValidJsonParameters = z.output<typeof validJsonParameters>;
export type RegexMatchParameters = z.output<typeof regexMatchParameters>;
export type ContainsParameters = z.output<typeof containsParameters>;
export type JsonSchemaParameters = z.output<typeof jsonSchemaParameters>;
export type JsonKeysParameters = z.output<typeof jsonKeysParameters>;
export type ModelWhitelistParameters = z.output<typeof modelWhitelistParameters>;
export type RequiredMetadataKeysParameters = z.output<typeof requiredMetadataKeysParameters>;
export type PiiParameters = z.output<typeof piiParameters>;
export type PromptInjectionParameters = z.output<typeof promptInjectionParameters>;
export type WebhookParameters = z.output<ReturnType<typeof webhookParameters>>;
