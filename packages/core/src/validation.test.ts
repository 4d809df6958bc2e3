import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { BadRequest } from './errors.ts';
import {
  MAX_INPUT_DEPTH,
  assertStorableInput,
  httpUrl,
  listBody,
  paramPath,
  parseInput,
  parsePage,
} from './validation.ts';

function badRequest(fn: () => unknown): BadRequest {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof BadRequest, `expected a BadRequest, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a BadRequest');
}

describe('paramPath', () => {
  test('joins names with dots and array indexes with brackets', () => {
    assert.equal(paramPath(['messages', 2, 'content']), 'messages[2].content');
    assert.equal(
      paramPath(['tools', 0, 'function', 'parameters', 'properties']),
      'tools[0].function.parameters.properties',
    );
    assert.equal(paramPath(['matrix', 1, 3]), 'matrix[1][3]');
  });

  test('handles a leading index and the empty path', () => {
    assert.equal(paramPath([0, 'name']), '[0].name');
    assert.equal(paramPath([]), '');
    assert.equal(paramPath(['model']), 'model');
  });
});

describe('parseInput', () => {
  const schema = z.object({
    model: z.string(),
    temperature: z.number().min(0).max(2).default(1),
    messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })).min(1),
  });

  test('returns the parsed value, defaults applied', () => {
    assert.deepEqual(parseInput(schema, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }), {
      model: 'm',
      temperature: 1,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  test('turns the first problem into a 400 naming the parameter path', () => {
    const err = badRequest(() =>
      parseInput(schema, {
        model: 'm',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
          { role: 'user', content: 3 },
        ],
      }),
    );
    assert.equal(err.status, 400);
    assert.equal(err.type, 'invalid_request_error');
    assert.equal(err.param, 'messages[2].content');
    assert.equal(err.code, 'invalid_parameter');
    assert.match(err.message, /^Invalid body parameter 'messages\[2\]\.content': /);
  });

  test('names a top-level parameter', () => {
    const err = badRequest(() =>
      parseInput(schema, { model: 'm', temperature: 5, messages: [{ role: 'user', content: 'x' }] }),
    );
    assert.equal(err.param, 'temperature');
  });

  test('uses "where" in the message, e.g. for query parameters', () => {
    const err = badRequest(() =>
      parseInput(z.object({ limit: z.coerce.number().int() }), { limit: 'x' }, 'query'),
    );
    assert.match(err.message, /^Invalid query parameter 'limit': /);
    assert.equal(err.param, 'limit');
  });

  test('a problem with the whole input has no param', () => {
    const err = badRequest(() => parseInput(schema, 'not an object'));
    assert.equal(err.param, null);
    assert.match(err.message, /^Invalid body: /);
    assert.deepEqual(err.toBody().error.param, null);
  });
});

/** `{"a":{"a":...}}` or `[[...]]` nested `depth` levels, as JSON.parse makes it. */
function nested(depth: number, kind: 'object' | 'array' = 'object'): unknown {
  const [open, close] = kind === 'object' ? ['{"a":', '}'] : ['[', ']'];
  return JSON.parse(`${open.repeat(depth)}${kind === 'object' ? '1' : ''}${close.repeat(depth)}`);
}

describe('assertStorableInput', () => {
  test('accepts ordinary input, emoji and other surrogate pairs included', () => {
    assertStorableInput({ messages: [{ role: 'user', content: 'héllo 👋 𝒳' }], n: 1, ok: true, none: null });
    assertStorableInput(['a', 2, ['b']]);
    assertStorableInput('plain');
    assertStorableInput(undefined);
    assertStorableInput(nested(MAX_INPUT_DEPTH));
    assertStorableInput(nested(MAX_INPUT_DEPTH, 'array'));
  });

  test('refuses a NUL character in a value, naming the field by its path', () => {
    const err = badRequest(() =>
      assertStorableInput({ messages: [{ content: 'a' }, { content: 'b' }, { content: 'x\u0000y' }] }),
    );
    assert.equal(err.status, 400);
    assert.equal(err.param, 'messages[2].content');
    assert.equal(err.code, 'invalid_text');
    assert.match(err.message, /'messages\[2\]\.content'.*NUL/);
  });

  test('refuses lone surrogates, high or low, anywhere in a string', () => {
    for (const text of ['\ud800', 'a\udfffb', 'end\ud83d', '\ude00start']) {
      const err = badRequest(() => assertStorableInput({ tags: ['ok', text] }));
      assert.equal(err.param, 'tags[1]', JSON.stringify(text));
      assert.match(err.message, /lone UTF-16 surrogate/);
    }
  });

  test('refuses a bad property name, naming the object that holds it', () => {
    assert.equal(badRequest(() => assertStorableInput({ metadata: { 'k\u0000': 'v' } })).param, 'metadata');
    const top = badRequest(() => assertStorableInput({ '\ud800': 1 }));
    assert.equal(top.param, null);
    assert.match(top.message, /property name/);
  });

  test('names the field under a root, and a whole value by the root alone', () => {
    assert.equal(
      badRequest(() => assertStorableInput({ a: '\u0000' }, 'header', 'x-meta')).param,
      'x-meta.a',
    );
    const whole = badRequest(() => assertStorableInput('\u0000', 'path', 'slug'));
    assert.equal(whole.param, 'slug');
    assert.match(whole.message, /^Invalid path parameter 'slug'/);
  });

  test(`refuses nesting deeper than ${MAX_INPUT_DEPTH} levels, however deep, without overflowing the stack`, () => {
    for (const depth of [MAX_INPUT_DEPTH + 1, 100_000]) {
      for (const [kind, param] of [
        ['object', 'a'],
        ['array', '[0]'],
      ] as const) {
        const err = badRequest(() => assertStorableInput(nested(depth, kind)));
        assert.equal(err.code, 'too_deeply_nested');
        assert.equal(err.param, param, 'named by the top-level field');
      }
    }
    assert.equal(
      badRequest(() => assertStorableInput(nested(100_000), 'config', 'config')).param,
      'config.a',
    );
  });
});

describe('httpUrl', () => {
  test('a URL that cannot be parsed is a 400 naming the field, and refinements after it never see it', () => {
    const schema = z.object({
      issuer: httpUrl('an https URL').refine((value) => new URL(value).protocol === 'https:', 'https only'),
    });
    for (const issuer of ['https://[::1', 'not a url', 'https://', 'ftp://example.com']) {
      const err = badRequest(() => parseInput(schema, { issuer }));
      assert.equal(err.param, 'issuer', issuer);
      assert.match(err.message, /an https URL/, issuer);
    }
    assert.equal(badRequest(() => parseInput(schema, { issuer: 'http://example.com' })).param, 'issuer');
    assert.deepEqual(parseInput(schema, { issuer: 'https://example.com/a' }), {
      issuer: 'https://example.com/a',
    });
  });
});

describe('parsePage', () => {
  test('defaults to the first page of 100', () => {
    assert.deepEqual(parsePage({}), { page: 0, pageSize: 100, offset: 0, limit: 100 });
    assert.deepEqual(parsePage({ current_page: '', page_size: '' }), {
      page: 0,
      pageSize: 100,
      offset: 0,
      limit: 100,
    });
  });

  test('computes offset and limit from current_page and page_size', () => {
    assert.deepEqual(parsePage({ current_page: '3', page_size: '25' }), {
      page: 3,
      pageSize: 25,
      offset: 75,
      limit: 25,
    });
  });

  test('accepts the bounds: page_size 1 and 1000, current_page 0 and 1000000', () => {
    assert.equal(parsePage({ page_size: '1' }).pageSize, 1);
    assert.equal(parsePage({ page_size: '1000' }).pageSize, 1000);
    assert.equal(parsePage({ current_page: '0' }).page, 0);
    assert.equal(parsePage({ current_page: '1000000' }).page, 1_000_000);
  });

  test('rejects page_size outside 1 to 1000 with a 400 naming page_size', () => {
    for (const value of ['0', '1001', '-5', '2.5', 'ten']) {
      const err = badRequest(() => parsePage({ page_size: value }));
      assert.equal(err.param, 'page_size', value);
      assert.equal(err.message, "Query parameter 'page_size' must be an integer from 1 to 1000.");
    }
  });

  test('rejects a negative, fractional, huge or non-numeric current_page', () => {
    for (const value of ['-1', '0.5', '1000001', 'first']) {
      assert.equal(badRequest(() => parsePage({ current_page: value })).param, 'current_page', value);
    }
  });

  test('rejects a repeated parameter (an array) rather than picking one', () => {
    assert.equal(badRequest(() => parsePage({ page_size: ['10', '20'] })).param, 'page_size');
  });
});

describe('listBody', () => {
  test('wraps data and total in a list object', () => {
    assert.deepEqual(listBody([{ id: 1 }], 7), { object: 'list', total: 7, data: [{ id: 1 }] });
  });
});
