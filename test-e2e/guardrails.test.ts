// Guardrails end to end, each service its own process: a guardrail defined over HTTP, named
// by a saved config, and the official openai SDK seeing what it does — a deny (446, and
// finish_reason content_filter on a stream), a redaction (the provider never sees the
// match) and a warning (recorded on the request log) — streamed and not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import {
  addFakeOpenAi,
  createServiceKey,
  createWorkspace,
  eventually,
  startStack,
  type Json,
  type Stack,
} from './harness/index.ts';

const UPSTREAM_KEY = 'sk-upstream-guardrails';

let stack: Stack;
let workspaceKey: string;

before(async () => {
  stack = await startStack({ upstreamKey: UPSTREAM_KEY });
  workspaceKey = (await createServiceKey(stack, await createWorkspace(stack, 'Guardrails'), 'guardrails'))
    .key;
  await addFakeOpenAi(stack, UPSTREAM_KEY);
});

after(() => stack?.stop());

/** A guardrail finding email addresses, with these actions; its slug. */
async function emailGuardrail(actions: Json): Promise<string> {
  const created = await stack.request('POST', '/v1/guardrails', {
    key: stack.adminKey,
    body: {
      name: `emails ${JSON.stringify(actions)}`,
      checks: [{ id: 'default.pii', parameters: { categories: ['email'] } }],
      actions,
    },
  });
  assert.equal(created.status, 200, created.text);
  return created.body.slug;
}

/** A saved config routing to the fake upstream through these guardrails; its slug. */
async function savedConfig(input: string[], output: string[]): Promise<string> {
  const saved = await stack.request('POST', '/v2/configs', {
    key: workspaceKey,
    body: {
      name: `guarded ${input.join(',')} ${output.join(',')}`,
      config: { provider: '@fake-openai', input_guardrails: input, output_guardrails: output },
    },
  });
  assert.equal(saved.status, 200, saved.text);
  return saved.body.data.slug;
}

function client(config: string): OpenAI {
  return new OpenAI({
    apiKey: workspaceKey,
    baseURL: `${stack.url('gateway')}/v1`,
    maxRetries: 0,
    timeout: 15_000,
    defaultHeaders: { 'x-vendor-config': config },
  });
}

const ask = (content: string) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user' as const, content }],
});

async function streamed(openai: OpenAI, content: string) {
  const stream = await openai.chat.completions.create({ ...ask(content), stream: true });
  let text = '';
  let finishReason: string | null = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
  }
  return { text, finishReason };
}

test('deny: an input denial is a 446 the SDK raises naming the check; an output denial withholds the answer, streamed or not', async () => {
  const slug = await emailGuardrail({ deny: true });
  const before = stack.upstream.requests.length;
  const inputDenied = client(await savedConfig([slug], []));
  const err = await inputDenied.chat.completions.create(ask('mail jane@example.com')).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof OpenAI.APIError, String(err));
  assert.equal(err.status, 446);
  assert.match(err.message, new RegExp(`${slug}.*default\\.pii`));
  assert.equal(stack.upstream.requests.length, before, 'the provider never saw it');

  const outputDenied = client(await savedConfig([], [slug]));
  const answer = await outputDenied.chat.completions.create(ask('mail jane@example.com'));
  assert.equal(answer.choices[0]!.finish_reason, 'content_filter');
  assert.ok(!JSON.stringify(answer).includes('jane@example.com'));
  const stream = await streamed(outputDenied, 'mail jane@example.com');
  assert.equal(stream.finishReason, 'content_filter');
  assert.ok(!stream.text.includes('jane@example.com'), stream.text);
  assert.equal(
    (await outputDenied.chat.completions.create(ask('hello'))).choices[0]!.message.content,
    'Echo: hello',
  );
});

test('redact: the provider never sees the address, and the client gets the answer with it replaced, streamed or not', async () => {
  const slug = await emailGuardrail({ redact: true });
  const openai = client(await savedConfig([slug], [slug]));
  const answer = await openai.chat.completions.create(ask('mail jane@example.com'));
  const sent = JSON.parse(stack.upstream.requests.at(-1)!.body) as Json;
  assert.ok(!JSON.stringify(sent).includes('jane@example.com'), 'the provider saw the address');
  assert.match(answer.choices[0]!.message.content!, /^Echo: mail \[[A-Z_]+\]$/);

  const outputOnly = client(await savedConfig([], [slug]));
  const stream = await streamed(outputOnly, 'mail jane@example.com please');
  assert.equal(stream.finishReason, 'stop');
  assert.match(stream.text, /^Echo: mail \[[A-Z_]+\] please$/);
});

test('warn: the request goes through unchanged, streamed or not, and its log records the failed check', async () => {
  const slug = await emailGuardrail({ deny: false });
  const config = await savedConfig([slug], [slug]);
  const { data, response } = await client(config)
    .chat.completions.create(ask('mail jane@example.com'))
    .withResponse();
  assert.equal(data.choices[0]!.message.content, 'Echo: mail jane@example.com');
  const stream = await streamed(client(config), 'mail jane@example.com');
  assert.deepEqual(stream, { text: 'Echo: mail jane@example.com', finishReason: 'stop' });
  const id = response.headers.get('x-request-id')!;
  const log = await eventually(
    `the request log of ${id}`,
    async () => {
      const found = await stack.request('GET', `/v1/logs/${id}`, { key: workspaceKey });
      return found.status === 200 ? found.body : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 250 },
  );
  const [run] = (log.guardrails as Json[]).filter((logged) => logged.phase === 'input');
  assert.equal(run.slug, slug);
  assert.equal(run.action, 'warn');
  assert.equal(run.checks[0].id, 'default.pii');
  assert.equal(run.checks[0].passed, false);
});
