import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { FakeOpenAi, ServiceHarness } from '@switchyard/testing';
import { startGuardrailHarness, type GuardrailHarness, type Json } from '../testing/guardrails.ts';

let g: GuardrailHarness;
let fake: FakeOpenAi;
let h: ServiceHarness;

before(async () => {
  g = await startGuardrailHarness();
  ({ fake, h } = g);
});
after(() => g?.close());

const guardrail = async (checks: Json[], actions: Json, extra: Json = {}) =>
  (await g.guardrail(checks, actions, extra)).slug;
const config = (guardrails: { input?: string[]; output?: string[] }) => g.config(guardrails);

function chat(content: string, headers: Record<string, string>, extra: Json = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model: 'gpt-x', messages: [{ role: 'user', content }], ...extra },
    headers,
  });
}

const forbiddenWords = [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }];
const pii = [{ id: 'default.pii', parameters: { categories: ['email'] } }];
const lastUpstreamContent = () =>
  (JSON.parse(fake.requests.at(-1)!.body) as { messages: Array<{ content: string }> }).messages[0]!.content;

/** A streamed answer as a client reads it: the text of its deltas, its finish reason, whether it ended with [DONE]. */
function readStream(text: string) {
  const events = text
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
  const chunks = events.filter((data) => data !== '[DONE]').map((data) => JSON.parse(data) as Json);
  const choices = chunks.flatMap((chunk) => (chunk.choices ?? []) as Json[]);
  return {
    content: choices.map((choice) => choice.delta?.content ?? '').join(''),
    contentChunks: choices.filter((choice) => choice.delta?.content).length,
    finishReason: choices.find((choice) => choice.finish_reason)?.finish_reason as string | undefined,
    done: events.at(-1) === '[DONE]',
  };
}

describe('input guardrails', () => {
  test('deny: the request is refused with 446 naming the guardrail, the check and why, and the provider never sees it', async () => {
    const slug = await guardrail(forbiddenWords, { deny: true });
    const before = fake.requests.length;
    const res = await chat('this is classified', { 'x-vendor-config': config({ input: [slug] }) });
    assert.equal(res.status, 446, res.text);
    assert.equal(res.body.error.type, 'guardrail_error');
    assert.equal(res.body.error.code, 'guardrail_denied');
    assert.match(res.body.error.message, new RegExp(slug));
    assert.match(res.body.error.message, /default\.contains: the text holds forbidden words/);
    const hook = (res.body.hook_results.before_request_hooks as Json[])[0]!;
    assert.equal(hook.slug, slug);
    assert.equal(hook.verdict, false);
    assert.equal(hook.checks[0].id, 'default.contains');
    assert.equal(hook.checks[0].verdict, false);
    assert.equal(fake.requests.length, before, 'the provider never saw the request');

    const clean = await chat('nothing to see', { 'x-vendor-config': config({ input: [slug] }) });
    assert.equal(clean.status, 200, clean.text);
  });

  test('redact: the provider sees the message with what matched replaced', async () => {
    const slug = await guardrail(pii, { deny: false, redact: true });
    const res = await chat('write to jane.doe@example.com today', {
      'x-vendor-config': config({ input: [slug] }),
    });
    assert.equal(res.status, 200, res.text);
    const sent = lastUpstreamContent();
    assert.ok(!sent.includes('jane.doe@example.com'), sent);
    assert.match(sent, /^write to \[[A-Z_]+\] today$/);
  });

  test('warn: a failed check lets the request through unchanged', async () => {
    const slug = await guardrail(pii, { deny: false });
    const res = await chat('write to jane.doe@example.com', { 'x-vendor-config': config({ input: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(lastUpstreamContent(), 'write to jane.doe@example.com');
  });

  test('async: a failed check neither refuses nor changes the request; it is recorded as a warning', async () => {
    const slug = await guardrail(forbiddenWords, { deny: true, async: true });
    const res = await chat('this is classified', { 'x-vendor-config': config({ input: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(lastUpstreamContent(), 'this is classified');
  });

  test('a guardrail that does not exist is a 400 naming where the config names it', async () => {
    const res = await chat('hi', { 'x-vendor-config': config({ input: ['guard_nothing-00000000'] }) });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'guardrail_not_found');
    assert.equal(res.body.error.param, 'config.input_guardrails[0]');
  });

  test('a guardrail changed through the API applies to the next requests', async () => {
    const slug = await guardrail(forbiddenWords, { deny: true });
    const headers = { 'x-vendor-config': config({ input: [slug] }) };
    assert.equal((await chat('classified', headers)).status, 446);
    const updated = await h.request('PUT', `/v1/guardrails/${slug}`, {
      key: h.adminKey,
      json: { checks: [{ id: 'default.contains', parameters: { operator: 'none', words: ['secret'] } }] },
    });
    assert.equal(updated.status, 200, updated.text);
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await chat('classified', headers)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(status, 200, 'the new version lets the word through');
    assert.equal((await chat('a secret', headers)).status, 446);
  });

  test('the openai SDK raises an error whose message names the check', async () => {
    const slug = await guardrail(forbiddenWords, { deny: true });
    const client = new OpenAI({
      apiKey: h.workspaceKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': config({ input: [slug] }) },
    });
    const err = await client.chat.completions
      .create({ model: 'gpt-x', messages: [{ role: 'user', content: 'classified' }] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 446);
    assert.match(err.message, new RegExp(`${slug}.*default\\.contains`));
  });
});

describe('output guardrails on answers that are not streamed', () => {
  test('deny: the choice is withheld with finish_reason content_filter', async () => {
    const slug = await guardrail(pii, { deny: true });
    const res = await chat('jane.doe@example.com', { 'x-vendor-config': config({ output: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].finish_reason, 'content_filter');
    assert.ok(!res.text.includes('jane.doe@example.com'), res.text);
  });

  test('redact: the client gets the answer with what matched replaced', async () => {
    const slug = await guardrail(pii, { deny: false, redact: true });
    const res = await chat('mail jane.doe@example.com', { 'x-vendor-config': config({ output: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.choices[0].message.content, /^Echo: mail \[[A-Z_]+\]$/);
    assert.equal(res.body.choices[0].finish_reason, 'stop');
  });

  test('a clean answer passes unchanged', async () => {
    const slug = await guardrail(pii, { deny: true });
    const res = await chat('hello', { 'x-vendor-config': config({ output: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].message.content, 'Echo: hello');
  });

  test('input guardrails apply to a streamed request', async () => {
    const slug = await guardrail(forbiddenWords, { deny: true });
    const res = await chat('classified', { 'x-vendor-config': config({ input: [slug] }) }, { stream: true });
    assert.equal(res.status, 446, res.text);
  });
});

describe('output guardrails on streamed answers', () => {
  test('deny on a streamed answer: it ends with finish_reason content_filter and the match never reaches the client', async () => {
    const slug = await guardrail(pii, { deny: true });
    const res = await chat(
      'please mail jane.doe@example.com today',
      { 'x-vendor-config': config({ output: [slug] }) },
      { stream: true },
    );
    assert.equal(res.status, 200, res.text);
    const streamed = readStream(res.text);
    assert.equal(streamed.finishReason, 'content_filter');
    assert.equal(streamed.done, true);
    assert.ok(!res.text.includes('jane'), res.text);
    assert.ok(!res.text.includes('example.com'), res.text);
    assert.ok('Echo: please mail '.startsWith(streamed.content), streamed.content);
  });

  test('redact on a streamed answer: the client gets the text with what matched replaced', async () => {
    const slug = await guardrail(pii, { deny: false, redact: true });
    const res = await chat(
      'mail jane.doe@example.com today',
      { 'x-vendor-config': config({ output: [slug] }) },
      { stream: true },
    );
    assert.equal(res.status, 200, res.text);
    const streamed = readStream(res.text);
    assert.match(streamed.content, /^Echo: mail \[[A-Z_]+\] today$/);
    assert.equal(streamed.finishReason, 'stop');
    assert.ok(!res.text.includes('jane.doe'), res.text);
  });

  test('a clean streamed answer passes unchanged, in as many chunks as the provider sent', async () => {
    const slug = await guardrail(pii, { deny: true });
    const res = await chat(
      'hello there friend',
      { 'x-vendor-config': config({ output: [slug] }) },
      { stream: true },
    );
    assert.equal(res.status, 200, res.text);
    const streamed = readStream(res.text);
    assert.equal(streamed.content, 'Echo: hello there friend');
    assert.equal(streamed.finishReason, 'stop');
    assert.ok(streamed.contentChunks > 1, 'the answer was not gathered into one chunk');
  });

  test('an answer a guardrail withheld is cached for requests checked the same way only', async () => {
    const slug = await guardrail(pii, { deny: true });
    const question = `mail ${Date.now()}@example.com`;
    const guarded = { 'x-vendor-config': config({ output: [slug] }), 'x-vendor-cache': 'simple' };
    const filtered = await chat(question, guarded, { stream: true });
    assert.equal(readStream(filtered.text).finishReason, 'content_filter');

    // The same request without the guardrail gets the provider's answer, never the filtered one.
    const unguarded = await chat(
      question,
      { 'x-vendor-config': config({}), 'x-vendor-cache': 'simple' },
      { stream: true },
    );
    assert.notEqual(unguarded.headers.get('x-vendor-cache-status'), 'HIT');
    assert.equal(readStream(unguarded.text).finishReason, 'stop');
    assert.ok(unguarded.text.includes('@example.com'), unguarded.text);

    // With the guardrail again it is answered from the cache (once stored), filtered still.
    let replayed = await chat(question, guarded, { stream: true });
    for (let i = 0; i < 50 && replayed.headers.get('x-vendor-cache-status') !== 'HIT'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      replayed = await chat(question, guarded, { stream: true });
    }
    assert.equal(replayed.headers.get('x-vendor-cache-status'), 'HIT');
    assert.equal(readStream(replayed.text).finishReason, 'content_filter');
    assert.ok(!replayed.text.includes('@example.com'), replayed.text);
  });

  test('the openai SDK reading a denied stream sees finish_reason content_filter', async () => {
    const slug = await guardrail(forbiddenWords, { deny: true });
    const client = new OpenAI({
      apiKey: h.workspaceKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': config({ output: [slug] }) },
    });
    const stream = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'the plan is classified for now' }],
      stream: true,
    });
    let content = '';
    const reasons: string[] = [];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        content += choice.delta.content ?? '';
        if (choice.finish_reason) reasons.push(choice.finish_reason);
      }
    }
    assert.deepEqual(reasons, ['content_filter']);
    assert.ok(!content.includes('classified'), content);
  });
});
