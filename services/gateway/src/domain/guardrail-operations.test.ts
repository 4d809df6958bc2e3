import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { FakeOpenAi, ServiceHarness } from '@switchyard/testing';
import {
  startGuardrailHarness,
  startWebhook,
  type GuardrailHarness,
  type Json,
  type TestWebhook,
} from '../testing/guardrails.ts';

// Guardrails beyond chat completions: on the texts of the other model operations, and, through
// webhook checks with executeOnProxy, on pass-through requests. The webhook listens on loopback,
// which the harness trusts for these tests only.

let g: GuardrailHarness;
let fake: FakeOpenAi;
let h: ServiceHarness;
let hook: TestWebhook;

before(async () => {
  g = await startGuardrailHarness();
  ({ fake, h } = g);
  hook = await startWebhook();
});
after(async () => {
  await hook?.close();
  await g?.close();
});
beforeEach(() => {
  hook.calls.length = 0;
  hook.reply = () => ({ body: { verdict: true } });
});

const guardrail = async (checks: Json[], actions: Json) => (await g.guardrail(checks, actions)).slug;
const forbidden = [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }];
const email = [{ id: 'default.pii', parameters: { categories: ['email'] } }];
const lastUpstream = () => JSON.parse(fake.requests.at(-1)!.body) as Json;

function post(path: string, json: Json, guardrails: { input?: string[]; output?: string[] }) {
  return h.request('POST', path, {
    key: h.workspaceKey,
    json,
    headers: { 'x-vendor-config': g.config(guardrails) },
  });
}

/** The texts of a streamed answer's events, whatever the format, joined. */
function streamedText(text: string, read: (data: Json) => string | undefined): string {
  return text
    .split('\n\n')
    .flatMap((event) => event.split('\n').filter((line) => line.startsWith('data: {')))
    .map((line) => read(JSON.parse(line.slice(6)) as Json) ?? '')
    .join('');
}

describe('guardrails on text completions', () => {
  test('an input deny is a 446 and the provider never sees the prompt', async () => {
    const slug = await guardrail(forbidden, { deny: true });
    const before = fake.requests.length;
    const res = await post(
      '/v1/completions',
      { model: 'gpt-x', prompt: 'this is classified' },
      { input: [slug] },
    );
    assert.equal(res.status, 446, res.text);
    assert.match(res.body.error.message, /default\.contains/);
    assert.equal(fake.requests.length, before);
  });

  test('an input redact sends the provider the prompt with the match replaced', async () => {
    const slug = await guardrail(email, { redact: true });
    const res = await post(
      '/v1/completions',
      { model: 'gpt-x', prompt: ['mail jane@example.com', 'and more'] },
      { input: [slug] },
    );
    assert.equal(res.status, 200, res.text);
    const sent = lastUpstream().prompt as string[];
    assert.match(sent[0]!, /^mail \[[A-Z_]+\]$/);
    assert.equal(sent[1], 'and more');
  });

  test('an output deny withholds the whole answer with finish_reason content_filter', async () => {
    const slug = await guardrail(forbidden, { deny: true });
    const res = await post(
      '/v1/completions',
      { model: 'gpt-x', prompt: 'say classified' },
      { output: [slug] },
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].text, '');
    assert.equal(res.body.choices[0].finish_reason, 'content_filter');
  });

  test('a streamed answer is redacted as it flows, through the openai SDK', async () => {
    const slug = await guardrail(email, { redact: true });
    const client = new OpenAI({
      apiKey: h.workspaceKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': g.config({ output: [slug] }) },
    });
    const stream = await client.completions.create({
      model: 'gpt-x',
      prompt: 'write to jane@example.com now',
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    assert.ok(!text.includes('jane@example.com'), text);
    assert.match(text, /^Echo: write to \[[A-Z_]+\] now$/);
  });

  test('a streamed answer a guardrail denies ends with content_filter before the match', async () => {
    const slug = await guardrail(forbidden, { deny: true });
    const res = await post(
      '/v1/completions',
      { model: 'gpt-x', prompt: 'this is classified', stream: true },
      { output: [slug] },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('classified'), res.text);
    assert.match(res.text, /"finish_reason":"content_filter"/);
  });
});

describe('guardrails on embeddings', () => {
  test('input checks read every input: deny refuses, redact replaces before the provider sees it', async () => {
    const denying = await guardrail(forbidden, { deny: true });
    const refused = await post(
      '/v1/embeddings',
      { model: 'text-embedding-3-small', input: ['fine', 'classified'] },
      { input: [denying] },
    );
    assert.equal(refused.status, 446, refused.text);

    const redacting = await guardrail(email, { redact: true });
    const res = await post(
      '/v1/embeddings',
      { model: 'text-embedding-3-small', input: 'jane@example.com' },
      { input: [redacting] },
    );
    assert.equal(res.status, 200, res.text);
    assert.match(lastUpstream().input as string, /^\[[A-Z_]+\]$/);
    assert.equal(res.body.data.length, 1);
  });
});

describe('guardrails on responses', () => {
  test('an output redact replaces the match in the output and in output_text', async () => {
    const slug = await guardrail(email, { redact: true });
    const res = await post(
      '/v1/responses',
      { model: 'gpt-x', input: 'mail jane@example.com' },
      { output: [slug] },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('jane@example.com'), res.text);
    assert.match(res.body.output[0].content[0].text, /^Echo: mail \[[A-Z_]+\]$/);
    assert.equal(res.body.output_text, res.body.output[0].content[0].text);
  });

  test('a streamed answer never carries the match, deltas or the whole texts of the done events', async () => {
    const slug = await guardrail(email, { redact: true });
    const res = await post(
      '/v1/responses',
      { model: 'gpt-x', input: 'mail jane@example.com', stream: true },
      { output: [slug] },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('jane@example.com'), res.text);
    const deltas = streamedText(res.text, (data) =>
      data.type === 'response.output_text.delta' ? (data.delta as string) : undefined,
    );
    assert.match(deltas, /^Echo: mail \[[A-Z_]+\]$/);
    assert.match(res.text, /response\.completed/);
  });

  test('a streamed answer a guardrail denies ends incomplete, for content_filter', async () => {
    const slug = await guardrail(forbidden, { deny: true });
    const res = await post(
      '/v1/responses',
      { model: 'gpt-x', input: 'this is classified', stream: true },
      { output: [slug] },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('classified'), res.text);
    assert.match(res.text, /"reason":"content_filter"/);
  });
});

describe('webhook guardrails on pass-through requests (executeOnProxy)', () => {
  const proxyHook = (executeOnProxy: boolean) => [
    { id: 'default.webhook', parameters: { webhookURL: hook.url, executeOnProxy } },
  ];

  test('a file upload is judged by its method, path and content type; a false verdict refuses it before the provider sees it', async () => {
    const slug = await guardrail(proxyHook(true), { deny: true });
    hook.reply = () => ({ body: { verdict: false, data: { reason: 'uploads are closed' } } });
    const client = new OpenAI({
      apiKey: h.workspaceKey,
      baseURL: `${h.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-vendor-config': g.config({ input: [slug] }) },
    });
    const before = fake.requests.length;
    const err = await client.files
      .create({ file: await toFile(Buffer.from('{"a":1}\n'), 'data.jsonl'), purpose: 'batch' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 446);
    assert.match(err.message, /uploads are closed/);
    assert.equal(fake.requests.length, before, 'the provider never saw the upload');
    const told = hook.calls[0]!.body;
    assert.equal(told.eventType, 'beforeRequestHook');
    assert.equal(told.requestType, 'proxy');
    assert.equal(told.request.method, 'POST');
    assert.equal(told.request.path, '/v1/files');
    assert.match(told.request.contentType, /^multipart\/form-data; boundary=/);
  });

  test('a passing verdict lets it through; output webhooks are told the answer status and content type', async () => {
    const input = await guardrail(proxyHook(true), { deny: true });
    const output = await guardrail(proxyHook(true), { deny: true });
    const res = await h.request('GET', '/v1/files/file-abc/content', {
      key: h.workspaceKey,
      headers: { 'x-vendor-config': g.config({ input: [input], output: [output] }) },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /content of file-abc/);
    assert.deepEqual(
      hook.calls.map((call) => call.body.eventType),
      ['beforeRequestHook', 'afterRequestHook'],
    );
    const after = hook.calls[1]!.body;
    assert.equal(after.request.path, '/v1/files/file-abc/content');
    assert.equal(after.response.statusCode, 200);
    assert.equal(after.response.contentType, 'application/octet-stream');

    hook.reply = (body) => ({ body: { verdict: body.eventType === 'beforeRequestHook' } });
    const refused = await h.request('GET', '/v1/files/file-abc/content', {
      key: h.workspaceKey,
      headers: { 'x-vendor-config': g.config({ input: [input], output: [output] }) },
    });
    assert.equal(refused.status, 446, refused.text);
    assert.ok(!refused.text.includes('content of file-abc'));
  });

  test('a webhook without executeOnProxy, and checks that read text, do not run on pass-through requests', async () => {
    const slug = await guardrail([...proxyHook(false), ...forbidden], { deny: true });
    hook.reply = () => ({ body: { verdict: false } });
    const res = await h.request('GET', '/v1/files/classified/content', {
      key: h.workspaceKey,
      headers: { 'x-vendor-config': g.config({ input: [slug] }) },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(hook.calls.length, 0);
  });
});
