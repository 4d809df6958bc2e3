import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startGuardrailHarness, type GuardrailHarness, type Json } from '../testing/guardrails.ts';

// Guardrails apply to POST /v1/messages as to chat completions: on the translated request and
// on the chat answer before it is translated back.

let g: GuardrailHarness;

before(async () => {
  g = await startGuardrailHarness();
});
after(() => g?.close());

const forbiddenWords = [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }];
const pii = [{ id: 'default.pii', parameters: { categories: ['email'] } }];

/** An Anthropic client of the gateway whose requests go through these guardrails. */
async function guarded(checks: Json[], actions: Json, where: 'input' | 'output') {
  const { slug } = await g.guardrail(checks, actions);
  return {
    slug,
    client: new Anthropic({
      apiKey: g.h.workspaceKey,
      baseURL: g.h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': g.config({ [where]: [slug] }) },
    }),
  };
}

const ask = (content: string) => ({
  model: 'gpt-x',
  max_tokens: 50,
  messages: [{ role: 'user' as const, content }],
});

describe('guardrails on /v1/messages', () => {
  test('an input guardrail that denies: its status, in Anthropic’s shape with the hook results', async () => {
    const { client, slug } = await guarded(forbiddenWords, { deny: true }, 'input');
    const before = g.fake.requests.length;
    const err = await client.messages.create(ask('this is classified')).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, 446);
    const body = err.error as Json;
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(body.error.code, 'guardrail_denied');
    assert.match(body.error.message, new RegExp(slug));
    assert.equal(body.hook_results.before_request_hooks[0].slug, slug);
    assert.equal(g.fake.requests.length, before, 'the provider never saw the request');

    const clean = await client.messages.create(ask('nothing to see'));
    assert.equal(clean.content[0]?.type === 'text' && clean.content[0].text, 'Echo: nothing to see');
  });

  test('an output guardrail that redacts: the message carries the redacted text', async () => {
    const { client } = await guarded(pii, { deny: false, redact: true }, 'output');
    const message = await client.messages.create(ask('mail jane.doe@example.com'));
    assert.equal(message.content.length, 1);
    assert.match(
      message.content[0]?.type === 'text' ? message.content[0].text : '',
      /^Echo: mail \[[A-Z_]+\]$/,
    );
    assert.equal(message.stop_reason, 'end_turn');
  });

  test('an output guardrail that denies a stream: it ends as a refusal and the match never arrives', async () => {
    const { client } = await guarded(pii, { deny: true }, 'output');
    const stream = client.messages.stream(ask('please mail jane.doe@example.com today'));
    const message = await stream.finalMessage();
    assert.equal(message.stop_reason, 'refusal');
    assert.ok(!JSON.stringify(message.content).includes('jane'), JSON.stringify(message.content));
  });
});
