import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configSlugFrom, guardrailSlugFrom, resourceSlugFrom, slugFrom } from './slugs.ts';

test('a config slug is pc-, the first letters of the name, and the suffix', () => {
  assert.equal(configSlugFrom('Pplx Cache Test', 'ca7a87'), 'pc-pplx-c-ca7a87');
  assert.equal(configSlugFrom('PII Redaction Guardrail', '7f1051'), 'pc-pii-re-7f1051');
  assert.equal(configSlugFrom('Short', 'abcdef'), 'pc-short-abcdef');
});

test('a config slug never has a dash before the suffix doubled, nor an empty name part', () => {
  assert.equal(configSlugFrom('Ab cd ef', '000000'), 'pc-ab-cd-000000');
  assert.equal(configSlugFrom('abcde fgh', '000000'), 'pc-abcde-000000');
  assert.equal(configSlugFrom('!!!', '000000'), 'pc-000000');
  assert.equal(configSlugFrom('', '000000'), 'pc-000000');
});

test('a workspace slug keeps up to 40 characters of the name', () => {
  assert.equal(slugFrom('Data Platform!', 'abc123'), 'data-platform-abc123');
  assert.equal(slugFrom('???', 'abc123'), 'workspace-abc123');
  assert.equal(slugFrom('x'.repeat(50), 'abc123'), `${'x'.repeat(40)}-abc123`);
});

test('a guardrail slug is guard_, the first letters of the name, and the suffix', () => {
  assert.equal(guardrailSlugFrom('PII Redaction', '7f1051ab'), 'guard_pii-re-7f1051ab');
  assert.equal(guardrailSlugFrom('Ab cd ef', '00000000'), 'guard_ab-cd-00000000');
  assert.equal(guardrailSlugFrom('!!!', '00000000'), 'guard_00000000');
});

test('an integration or prompt slug keeps up to 40 characters of the name, no dash doubled, the fallback for none', () => {
  assert.equal(resourceSlugFrom('Weather Tools', 'mcp', 'abc123'), 'weather-tools-abc123');
  assert.equal(resourceSlugFrom(`${'a'.repeat(39)} b`, 'mcp', 'abc123'), `${'a'.repeat(39)}-abc123`);
  assert.equal(resourceSlugFrom('???', 'prompt', 'abc123'), 'prompt-abc123');
});
