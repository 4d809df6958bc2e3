import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppError } from '@switchyard/core';
import {
  type GuardrailCheckId,
  parseGuardrailActions,
  parseGuardrailChecks,
  type ParseChecksOptions,
} from './definitions.ts';

function rejects(checks: unknown, param: string, options?: ParseChecksOptions) {
  assert.throws(
    () => parseGuardrailChecks(checks, 'checks', options),
    (err: AppError) => {
      assert.equal(err.status, 400);
      assert.equal(err.param, param, err.message);
      return true;
    },
  );
}

const one = (id: GuardrailCheckId, parameters: Record<string, unknown>) => [{ id, parameters }];
const parameters = (id: GuardrailCheckId, given: Record<string, unknown>) =>
  parseGuardrailChecks(one(id, given))[0]!.parameters;

/** A valid parameter set for each check. */
const VALID: Record<GuardrailCheckId, Record<string, unknown>> = {
  'default.regexMatch': { rule: '\\border-\\d{4}\\b' },
  'default.contains': { words: ['apple'], operator: 'none' },
  'default.wordCount': { minWords: 1, maxWords: 10 },
  'default.sentenceCount': { maxSentences: 3 },
  'default.characterCount': { minCharacters: 2 },
  'default.validJson': {},
  'default.jsonSchema': { schema: { type: 'object', required: ['a'] } },
  'default.jsonKeys': { keys: ['a'], operator: 'all' },
  'default.modelWhitelist': { models: ['gpt-4o'] },
  'default.requiredMetadataKeys': { metadataKeys: ['user'] },
  'default.pii': { categories: ['email'] },
  'default.promptInjection': { threshold: 0.7 },
  'default.webhook': { webhookURL: 'https://guard.example.com/check' },
};

describe('guardrail check parameters', () => {
  test('every check accepts its parameters and fills in the defaults', () => {
    assert.deepEqual(parameters('default.regexMatch', VALID['default.regexMatch']), {
      rule: '\\border-\\d{4}\\b',
      not: false,
      flags: '',
    });
    assert.deepEqual(parameters('default.contains', { words: [' apple '] }), {
      words: ['apple'],
      operator: 'any',
    });
    assert.deepEqual(parameters('default.wordCount', {}), { minWords: 0, maxWords: 99_999, not: false });
    assert.deepEqual(parameters('default.sentenceCount', { maxSentences: 3 }), {
      minSentences: 0,
      maxSentences: 3,
      not: false,
    });
    assert.deepEqual(parameters('default.characterCount', { not: true }), {
      minCharacters: 0,
      maxCharacters: 9_999_999,
      not: true,
    });
    assert.deepEqual(parameters('default.validJson', {}), { not: false });
    assert.deepEqual(parameters('default.jsonKeys', { keys: ['a'] }), { keys: ['a'], operator: 'any' });
    assert.deepEqual(parameters('default.modelWhitelist', { models: ['gpt-4o'] }), {
      models: ['gpt-4o'],
      not: false,
    });
    assert.deepEqual(parameters('default.requiredMetadataKeys', { metadataKeys: ['user'] }), {
      metadataKeys: ['user'],
      operator: 'all',
    });
    assert.deepEqual(parameters('default.pii', {}), {
      categories: ['email', 'phone', 'credit_card', 'iban', 'national_id', 'ip_address', 'secret'],
    });
    assert.deepEqual(parameters('default.pii', { categories: ['email', 'email', 'iban'] }), {
      categories: ['email', 'iban'],
    });
    assert.deepEqual(parameters('default.promptInjection', {}), { threshold: 0.5 });
    assert.deepEqual(
      parameters('default.webhook', {
        webhookURL: 'https://guard.example.com/check',
        headers: { 'X-Api-Token': 'abc' },
        forwardHeaders: ['x-user-id'],
        timeout: 2_000,
      }),
      {
        webhookURL: 'https://guard.example.com/check',
        headers: { 'X-Api-Token': 'abc' },
        forwardHeaders: ['x-user-id'],
        timeout: 2_000,
        executeOnProxy: false,
      },
    );
  });

  test('an unknown parameter is a 400 naming it, for every check', () => {
    for (const [id, given] of Object.entries(VALID)) {
      rejects(one(id as GuardrailCheckId, { ...given, bogus: 1 }), 'checks[0].parameters.bogus');
    }
    // The reference's own PII switch is an action here, not a parameter.
    rejects(one('default.pii', { redact: true }), 'checks[0].parameters.redact');
  });

  test('the check level keeps its rules: known ids, time budget, failure mode', () => {
    rejects([{ id: 'default.nope', parameters: {} }], 'checks[0].id');
    rejects([{ id: 'default.validJson', timeout_ms: 0 }], 'checks[0].timeout_ms');
    rejects([{ id: 'default.validJson', failure_mode: 'maybe' }], 'checks[0].failure_mode');
    rejects([], 'checks');
    const [regex, webhook] = parseGuardrailChecks([
      { id: 'default.regexMatch', parameters: { rule: 'a' } },
      { id: 'default.webhook', name: 'policy', parameters: { webhookURL: 'http://guard.internal/x' } },
    ]);
    assert.equal(regex!.timeout_ms, 100);
    assert.equal(regex!.failure_mode, 'closed');
    assert.equal(webhook!.timeout_ms, 3_000);
    assert.equal(webhook!.name, 'policy');
    assert.equal(webhook!.failure_mode, 'closed');
  });

  test("a webhook's failOnError sets its failure mode, unless failure_mode is given", () => {
    const hook = (parameters: Record<string, unknown>, check: Record<string, unknown> = {}) =>
      parseGuardrailChecks([
        {
          id: 'default.webhook',
          parameters: { webhookURL: 'https://guard.example.com/x', ...parameters },
          ...check,
        },
      ])[0]!.failure_mode;
    assert.equal(hook({ failOnError: false }), 'open');
    assert.equal(hook({ failOnError: true }), 'closed');
    assert.equal(hook({ failOnError: false }, { failure_mode: 'closed' }), 'closed');
    assert.equal(hook({}, { failure_mode: 'open' }), 'open');
  });

  test('paths are under the given root and the check index', () => {
    assert.throws(
      () => parseGuardrailChecks([{ id: 'default.regexMatch', parameters: {} }], 'guardrail.checks'),
      (err: AppError) => err.param === 'guardrail.checks[0].parameters.rule',
    );
    rejects(
      [
        { id: 'default.validJson', parameters: {} },
        { id: 'default.contains', parameters: { words: ['a', ''] } },
      ],
      'checks[1].parameters.words[1]',
    );
  });

  test('regexMatch: the rule must compile, be safe and be bounded', () => {
    rejects(one('default.regexMatch', {}), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: '' }), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: 'a(b' }), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: '(a+)+$' }), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: '(x+x+)+y' }), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: '(.*a){12}' }), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: 'a'.repeat(1_001) }), 'checks[0].parameters.rule');
    rejects(one('default.regexMatch', { rule: 'a', flags: 'g' }), 'checks[0].parameters.flags');
    rejects(one('default.regexMatch', { rule: 'a', flags: 'ii' }), 'checks[0].parameters.flags');
    rejects(one('default.regexMatch', { rule: 'a', not: 'yes' }), 'checks[0].parameters.not');
    rejects(
      one('default.regexMatch', { rule: 'a', maxMatchLength: 0 }),
      'checks[0].parameters.maxMatchLength',
    );
    rejects(
      one('default.regexMatch', { rule: 'a', maxMatchLength: 100_000 }),
      'checks[0].parameters.maxMatchLength',
    );
    assert.deepEqual(
      parameters('default.regexMatch', {
        rule: 'sk-[a-z0-9]{20}',
        flags: 'i',
        maxMatchLength: 23,
        not: true,
      }),
      {
        rule: 'sk-[a-z0-9]{20}',
        flags: 'i',
        maxMatchLength: 23,
        not: true,
      },
    );
  });

  test('contains, jsonKeys, modelWhitelist, requiredMetadataKeys: non-empty lists and known operators', () => {
    rejects(one('default.contains', { words: [] }), 'checks[0].parameters.words');
    rejects(one('default.contains', { words: ['  '] }), 'checks[0].parameters.words[0]');
    rejects(one('default.contains', { words: ['a'], operator: 'some' }), 'checks[0].parameters.operator');
    rejects(one('default.contains', {}), 'checks[0].parameters.words');
    rejects(one('default.jsonKeys', {}), 'checks[0].parameters.keys');
    rejects(one('default.jsonKeys', { keys: [1] }), 'checks[0].parameters.keys[0]');
    rejects(one('default.modelWhitelist', { models: [] }), 'checks[0].parameters.models');
    rejects(
      one('default.requiredMetadataKeys', { metadataKeys: ['a'], operator: 'most' }),
      'checks[0].parameters.operator',
    );
  });

  test('counts: whole numbers from 0, the minimum at most the maximum', () => {
    rejects(one('default.wordCount', { minWords: -1 }), 'checks[0].parameters.minWords');
    rejects(one('default.wordCount', { maxWords: 1.5 }), 'checks[0].parameters.maxWords');
    rejects(one('default.wordCount', { minWords: 5, maxWords: 2 }), 'checks[0].parameters.maxWords');
    rejects(one('default.sentenceCount', { minSentences: 'two' }), 'checks[0].parameters.minSentences');
    rejects(
      one('default.characterCount', { minCharacters: 10, maxCharacters: 9 }),
      'checks[0].parameters.maxCharacters',
    );
  });

  test('jsonSchema: the schema must compile, with safe patterns', () => {
    rejects(one('default.jsonSchema', {}), 'checks[0].parameters.schema');
    rejects(one('default.jsonSchema', { schema: [] }), 'checks[0].parameters.schema');
    rejects(one('default.jsonSchema', { schema: { type: 'nope' } }), 'checks[0].parameters.schema');
    rejects(
      one('default.jsonSchema', { schema: { type: 'object', requird: ['a'] } }),
      'checks[0].parameters.schema',
    );
    rejects(
      one('default.jsonSchema', { schema: { type: 'string', format: 'email' } }),
      'checks[0].parameters.schema',
    );
    rejects(
      one('default.jsonSchema', { schema: { $ref: 'https://schemas.example.com/x.json' } }),
      'checks[0].parameters.schema',
    );
    rejects(
      one('default.jsonSchema', { schema: { properties: { a: { type: 'string', pattern: '^(a+)+$' } } } }),
      'checks[0].parameters.schema',
    );
    rejects(
      one('default.jsonSchema', { schema: { patternProperties: { '(a|a)*(b+)+': {} } } }),
      'checks[0].parameters.schema',
    );
    const schema = { type: 'object', properties: { a: { type: ['string', 'null'], pattern: '^[a-z]+$' } } };
    assert.deepEqual(parameters('default.jsonSchema', { schema }), { schema, not: false });
  });

  test('pii and promptInjection: known categories, a threshold in (0, 1]', () => {
    rejects(one('default.pii', { categories: ['email', 'address'] }), 'checks[0].parameters.categories[1]');
    rejects(one('default.pii', { categories: [] }), 'checks[0].parameters.categories');
    rejects(one('default.promptInjection', { threshold: 0 }), 'checks[0].parameters.threshold');
    rejects(one('default.promptInjection', { threshold: 1.5 }), 'checks[0].parameters.threshold');
  });

  test('webhook: an http(s) URL, safe headers to send, unrestricted headers to forward', () => {
    const url = 'https://guard.example.com/check';
    rejects(one('default.webhook', {}), 'checks[0].parameters.webhookURL');
    rejects(
      one('default.webhook', { webhookURL: 'ftp://guard.example.com' }),
      'checks[0].parameters.webhookURL',
    );
    rejects(one('default.webhook', { webhookURL: 'not a url' }), 'checks[0].parameters.webhookURL');
    rejects(one('default.webhook', { webhookURL: url, timeout: 0 }), 'checks[0].parameters.timeout');
    // The webhook's own credential may be sent; the caller's is never forwarded (below).
    assert.deepEqual(
      parameters('default.webhook', { webhookURL: url, headers: { Authorization: 'Bearer x' } }).headers,
      { Authorization: 'Bearer x' },
    );
    rejects(
      one('default.webhook', { webhookURL: url, headers: { Cookie: 'a=b' } }),
      'checks[0].parameters.headers.Cookie',
    );
    rejects(
      one('default.webhook', { webhookURL: url, headers: { 'Proxy-Authorization': 'x' } }),
      'checks[0].parameters.headers.Proxy-Authorization',
    );
    rejects(
      one('default.webhook', { webhookURL: url, headers: { 'bad name': 'x' } }),
      'checks[0].parameters.headers.bad name',
    );
    rejects(
      one('default.webhook', { webhookURL: url, headers: { 'X-Vendor-Api-Key': 'x' } }),
      'checks[0].parameters.headers.X-Vendor-Api-Key',
    );
    rejects(
      one('default.webhook', { webhookURL: url, headers: { 'X-Token': 'a\r\nHost: evil' } }),
      'checks[0].parameters.headers.X-Token',
    );
    rejects(
      one('default.webhook', { webhookURL: url, headers: { 'X-Token': 1 } }),
      'checks[0].parameters.headers.X-Token',
    );
    for (const restricted of [
      'authorization',
      'Proxy-Authorization',
      'cookie',
      'Set-Cookie',
      'host',
      'content-length',
      'connection',
      'Transfer-Encoding',
      'te',
      'upgrade',
      'keep-alive',
      'x-vendor-virtual-key',
      'x-switchyard-caller',
      'bad header',
      'x-ok\n',
      '',
    ]) {
      rejects(
        one('default.webhook', { webhookURL: url, forwardHeaders: ['x-user-id', restricted] }),
        'checks[0].parameters.forwardHeaders[1]',
      );
    }
    rejects(
      one('default.webhook', { webhookURL: url, forwardHeaders: 'x-user-id' }),
      'checks[0].parameters.forwardHeaders',
    );
    // The gateway's own header prefix, when it is not the default.
    const options = { headerPrefix: 'x-acme-' };
    rejects(
      one('default.webhook', { webhookURL: url, forwardHeaders: ['X-Acme-Trace'] }),
      'checks[0].parameters.forwardHeaders[0]',
      options,
    );
    assert.deepEqual(
      parseGuardrailChecks(one('default.webhook', { webhookURL: url, forwardHeaders: ['X-Acme-Trace'] }))[0]!
        .parameters.forwardHeaders,
      ['X-Acme-Trace'],
    );
  });
});

describe('guardrail actions', () => {
  test('defaults, and a 400 naming the field', () => {
    assert.deepEqual(parseGuardrailActions(undefined), { deny: false, async: false, redact: false });
    assert.throws(
      () => parseGuardrailActions({ deny: 'yes' }),
      (err: AppError) => err.status === 400 && err.param === 'actions.deny',
    );
  });
});
