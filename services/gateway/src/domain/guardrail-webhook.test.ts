import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FakeOpenAi, ServiceHarness } from '@switchyard/testing';
import {
  startGuardrailHarness,
  startWebhook,
  type GuardrailHarness,
  type Json,
  type TestWebhook,
} from '../testing/guardrails.ts';

// The webhook listens on loopback, which the harness trusts (TRUSTED_CUSTOM_HOSTS=127.0.0.1)
// for these tests only; the unsafe-host check itself is tested in upstream/webhook-client.test.ts.

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

function webhookCheck(parameters: Json = {}, check: Json = {}): Json {
  return { id: 'default.webhook', parameters: { webhookURL: hook.url, ...parameters }, ...check };
}

const guardrail = async (checks: Json[], actions: Json) => (await g.guardrail(checks, actions)).slug;

function chat(content: string, headers: Record<string, string>, extra: Json = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model: 'gpt-x', messages: [{ role: 'user', content }], ...extra },
    headers,
  });
}

describe('webhook checks on input', () => {
  test('a false verdict denies with 446 naming the webhook and its reason; the provider never sees the request', async () => {
    const slug = await guardrail([webhookCheck({ headers: { 'x-webhook-token': 'hook-secret' } })], {
      deny: true,
    });
    hook.reply = () => ({ body: { verdict: false, data: { reason: 'mentions a competitor' } } });
    const before = fake.requests.length;
    const res = await chat('compare us with Acme', {
      'x-vendor-config': g.config({ input: [slug] }),
      'x-vendor-metadata': JSON.stringify({ team: 'search' }),
    });
    assert.equal(res.status, 446, res.text);
    assert.match(
      res.body.error.message,
      /default\.webhook: the webhook failed the text: mentions a competitor/,
    );
    assert.equal(fake.requests.length, before, 'the provider never saw the request');

    assert.equal(hook.calls.length, 1);
    const { headers, body } = hook.calls[0]!;
    assert.equal(headers['x-webhook-token'], 'hook-secret');
    assert.equal(headers['content-type'], 'application/json');
    assert.equal(headers.authorization, undefined, "the caller's credentials are never sent");
    assert.equal(body.eventType, 'beforeRequestHook');
    assert.equal(body.requestType, 'chat');
    assert.equal(body.model, 'gpt-x');
    assert.deepEqual(body.metadata, { team: 'search' });
    assert.equal(body.request.text, 'compare us with Acme');
    assert.equal(body.request.json.messages[0].content, 'compare us with Acme');
    assert.equal(body.request.isStreamingRequest, false);
  });

  test('a true verdict lets the request through', async () => {
    const slug = await guardrail([webhookCheck()], { deny: true });
    const res = await chat('hello', { 'x-vendor-config': g.config({ input: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(hook.calls.length, 1);
  });

  test('forwardHeaders pass the named headers of the client request on to the webhook', async () => {
    const slug = await guardrail([webhookCheck({ forwardHeaders: ['x-end-user', 'X-Tenant'] })], {
      deny: true,
    });
    const res = await chat('hello', {
      'x-vendor-config': g.config({ input: [slug] }),
      'x-end-user': 'user-7',
      'x-tenant': 'acme',
      'x-not-forwarded': 'no',
    });
    assert.equal(res.status, 200, res.text);
    const { headers } = hook.calls[0]!;
    assert.equal(headers['x-end-user'], 'user-7');
    assert.equal(headers['x-tenant'], 'acme');
    assert.equal(headers['x-not-forwarded'], undefined);
  });

  test('a webhook that does not answer in time decides by its failure mode: closed denies, open passes, both say why', async () => {
    hook.reply = () => ({ body: { verdict: true }, delayMs: 5_000 });
    const closed = await guardrail([webhookCheck({}, { timeout_ms: 150 })], { deny: true });
    const refused = await chat('hello', { 'x-vendor-config': g.config({ input: [closed] }) });
    assert.equal(refused.status, 446, refused.text);
    assert.match(refused.body.error.message, /did not answer within 150 ms/);
    const check = (refused.body.hook_results.before_request_hooks as Json[])[0]!.checks[0];
    assert.equal(check.verdict, false);
    assert.match(check.error, /did not answer within 150 ms/);

    const open = await guardrail([webhookCheck({ timeout: 150 }, { failure_mode: 'open' })], { deny: true });
    const passed = await chat('hello', { 'x-vendor-config': g.config({ input: [open] }) });
    assert.equal(passed.status, 200, passed.text);
  });

  test('an error status or an answer without a boolean verdict never passes a fail-closed check', async () => {
    const slug = await guardrail([webhookCheck()], { deny: true });
    const headers = { 'x-vendor-config': g.config({ input: [slug] }) };
    hook.reply = () => ({ status: 500, body: { verdict: true } });
    const errored = await chat('hello', headers);
    assert.equal(errored.status, 446, errored.text);
    assert.match(errored.body.error.message, /the webhook answered HTTP 500/);

    hook.reply = () => ({ body: { verdict: 'yes' } });
    const unclear = await chat('hello', headers);
    assert.equal(unclear.status, 446, unclear.text);
    assert.match(unclear.body.error.message, /no boolean verdict/);

    hook.reply = () => ({ body: 'not json' });
    const garbled = await chat('hello', headers);
    assert.equal(garbled.status, 446, garbled.text);
    assert.match(garbled.body.error.message, /something other than JSON/);
  });

  test('failOnError: false, as clients of the reference shapes set it, makes the check fail open', async () => {
    const slug = await guardrail([webhookCheck({ failOnError: false })], { deny: true });
    hook.reply = () => ({ status: 503, body: {} });
    const res = await chat('hello', { 'x-vendor-config': g.config({ input: [slug] }) });
    assert.equal(res.status, 200, res.text);
  });

  test('webhook checks of several guardrails are called at once, not one after another', async () => {
    // Each webhook answers only once both calls have arrived: called one after the other, the
    // first would wait for a call that never comes and time out.
    let release: (() => void) | undefined;
    const bothArrived = new Promise<void>((resolve) => {
      release = resolve;
    });
    hook.reply = () => {
      if (hook.calls.length === 2) release!();
      return { body: { verdict: true } };
    };
    const first = await guardrail([webhookCheck({}, { timeout_ms: 3_000 })], { deny: true });
    const second = await guardrail([webhookCheck({}, { timeout_ms: 3_000 })], { deny: true });
    const answered = chat('hello', { 'x-vendor-config': g.config({ input: [first, second] }) });
    await bothArrived;
    assert.equal((await answered).status, 200);
  });
});

describe('webhook checks on output', () => {
  test('a false verdict withholds a whole answer with finish_reason content_filter; the webhook read the answer', async () => {
    const slug = await guardrail([webhookCheck()], { deny: true });
    hook.reply = (body) => ({ body: { verdict: body.eventType !== 'afterRequestHook' } });
    const res = await chat('tell me', { 'x-vendor-config': g.config({ output: [slug] }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].finish_reason, 'content_filter');
    assert.equal(res.body.choices[0].message.content, '');
    const call = hook.calls.at(-1)!.body;
    assert.equal(call.eventType, 'afterRequestHook');
    assert.equal(call.response.text, 'Echo: tell me');
    assert.equal(call.response.json.choices[0].message.content, 'Echo: tell me');
    assert.equal(call.response.statusCode, 200);
  });

  test('on a stream, a denying webhook holds the text to the end: nothing of a refused answer is sent', async () => {
    const slug = await guardrail([webhookCheck()], { deny: true });
    hook.reply = () => ({ body: { verdict: false } });
    const res = await chat(
      'tell me something long',
      { 'x-vendor-config': g.config({ output: [slug] }) },
      {
        stream: true,
      },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('Echo'), res.text);
    assert.match(res.text, /"finish_reason":"content_filter"/);
    assert.match(res.text, /data: \[DONE\]\n\n$/);
    const call = hook.calls.at(-1)!.body;
    assert.equal(call.response.text, 'Echo: tell me something long');
    assert.equal(call.response.json, null);
  });

  test('on a stream, a passing webhook lets the whole answer through', async () => {
    const slug = await guardrail([webhookCheck()], { deny: true });
    const res = await chat('tell me', { 'x-vendor-config': g.config({ output: [slug] }) }, { stream: true });
    assert.equal(res.status, 200, res.text);
    const content = res.text
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => (JSON.parse(event.slice(6)) as Json).choices?.[0]?.delta?.content ?? '')
      .join('');
    assert.equal(content, 'Echo: tell me');
  });
});

describe('webhook check definitions', () => {
  test('forwardHeaders naming a restricted or invalid header are refused on create and update', async () => {
    for (const name of ['authorization', 'Cookie', 'host', 'x-vendor-api-key', 'bad header']) {
      const res = await h.request('POST', '/v1/guardrails', {
        key: h.adminKey,
        json: { name: 'hook', checks: [webhookCheck({ forwardHeaders: [name] })], actions: { deny: true } },
      });
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assert.match(res.body.error.param, /^checks\[0\]\.parameters\.forwardHeaders/);
    }
    const slug = await guardrail([webhookCheck()], { deny: true });
    const updated = await h.request('PUT', `/v1/guardrails/${slug}`, {
      key: h.adminKey,
      json: { checks: [webhookCheck({ forwardHeaders: ['cookie'] })] },
    });
    assert.equal(updated.status, 400, updated.text);
  });
});
