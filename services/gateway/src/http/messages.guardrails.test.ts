import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startFakeAnthropic, type FakeAnthropic } from '@switchyard/testing';
import { startGuardrailHarness, type GuardrailHarness, type Json } from '../testing/guardrails.ts';

// Guardrails apply to POST /v1/messages as to chat completions: translated, on the chat request
// and on the chat answer before it is translated back; passed through to Anthropic, on the
// Messages request and on Anthropic's answer, whole or streamed.

let g: GuardrailHarness;
let anthropic: FakeAnthropic;

before(async () => {
  g = await startGuardrailHarness();
  anthropic = await startFakeAnthropic({ apiKey: g.upstreamKey });
});
after(async () => {
  await g?.close();
  await anthropic?.close();
});

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

describe('guardrails on /v1/messages passed through to Anthropic', () => {
  async function passedThrough(checks: Json[], actions: Json, where: 'input' | 'output') {
    const { slug } = await g.guardrail(checks, actions);
    const config = {
      provider: 'anthropic',
      custom_host: anthropic.baseUrl,
      api_key: g.upstreamKey,
      [`${where}_guardrails`]: [slug],
    };
    return new Anthropic({
      apiKey: g.h.workspaceKey,
      baseURL: g.h.url,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': JSON.stringify(config) },
    });
  }

  test('an input guardrail that denies: 446 in Anthropic’s shape, and Anthropic never sees it', async () => {
    const client = await passedThrough(forbiddenWords, { deny: true }, 'input');
    const before = anthropic.requests.length;
    const err = await client.messages.create(ask('this is classified')).catch((e: unknown) => e);
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, 446);
    assert.equal((err.error as Json).error.code, 'guardrail_denied');
    assert.equal(anthropic.requests.length, before);
  });

  test('an input guardrail that redacts: Anthropic gets the redacted text, the rest as sent', async () => {
    const client = await passedThrough(pii, { deny: false, redact: true }, 'input');
    const content = [
      {
        type: 'text' as const,
        text: 'mail jane.doe@example.com',
        cache_control: { type: 'ephemeral' as const },
      },
    ];
    await client.messages.create({ ...ask(''), messages: [{ role: 'user', content }] });
    const sent = JSON.parse(anthropic.requests.at(-1)!.body) as Json;
    assert.match(sent.messages[0].content[0].text, /^mail \[[A-Z_]+\]$/);
    assert.deepEqual(sent.messages[0].content[0].cache_control, { type: 'ephemeral' });
  });

  test('an output guardrail that redacts Anthropic’s message, and one that denies its stream', async () => {
    const redacting = await passedThrough(pii, { deny: false, redact: true }, 'output');
    const message = await redacting.messages.create(ask('mail jane.doe@example.com'));
    assert.match(message.id, /^msg_fake_/);
    assert.match(
      message.content[0]?.type === 'text' ? message.content[0].text : '',
      /^Echo: mail \[[A-Z_]+\]$/,
    );

    const denying = await passedThrough(pii, { deny: true }, 'output');
    const streamed = await denying.messages
      .stream(ask('please mail jane.doe@example.com today'))
      .finalMessage();
    assert.equal(streamed.stop_reason, 'refusal');
    assert.ok(!JSON.stringify(streamed.content).includes('jane'), JSON.stringify(streamed.content));
  });
});
