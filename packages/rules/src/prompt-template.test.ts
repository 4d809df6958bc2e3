import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '@switchyard/core';
import { checkPartials, includedPartials, promptVariables, renderPrompt } from './prompt-template.ts';

const refused = (code: string) => (error: unknown) =>
  error instanceof AppError && error.status === 400 && error.code === code;

test('a JSON message template renders each message, values inserted as they are', () => {
  const template = JSON.stringify([
    { role: 'system', content: 'You are {{tone}}. {{> rules}}' },
    { role: 'user', content: [{ type: 'text', text: 'Q: {{question}}' }] },
  ]);
  const messages = renderPrompt(
    template,
    { rules: 'Answer in {{lang}}.' },
    { tone: 'terse & "exact"', question: '<b>2+2</b>?', lang: 'French' },
  );
  assert.deepEqual(messages, [
    { role: 'system', content: 'You are terse & "exact". Answer in French.' },
    { role: 'user', content: [{ type: 'text', text: 'Q: <b>2+2</b>?' }] },
  ]);
});

test('a text template becomes one user message; sections may be left out', () => {
  assert.deepEqual(renderPrompt('Hi {{name}}{{#extra}}, {{extra}}{{/extra}}', {}, { name: 'Ada' }), [
    { role: 'user', content: 'Hi Ada' },
  ]);
  assert.deepEqual(promptVariables('{{a}} {{#s}}{{b}}{{/s}} {{> p}}', { p: '{{{c}}}' }), {
    required: ['a', 'c'],
    sections: ['s'],
  });
});

test('missing variables, unknown partials, cycles and bad syntax are 400s that name them', () => {
  assert.throws(
    () => renderPrompt('{{a}} {{b.c}}', {}, { a: 1, b: {} }),
    (error: unknown) => {
      assert.ok(refused('missing_prompt_variables')(error));
      assert.match((error as Error).message, /'b\.c'/);
      return true;
    },
  );
  assert.throws(() => checkPartials('{{> nope}}', {}), refused('prompt_partial_not_found'));
  assert.throws(
    () => checkPartials('{{> a}}', { a: '{{> b}}', b: '{{> a}}' }),
    refused('prompt_partial_cycle'),
  );
  assert.throws(() => includedPartials('{{#open}}'), refused('invalid_prompt_template'));
  assert.deepEqual(includedPartials('{{> one}} {{#x}}{{> two}}{{/x}}').sort(), ['one', 'two']);
});
