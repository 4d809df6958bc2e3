import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { eventually, startFakeOpenAi, type FakeOpenAi } from '@switchyard/testing';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import type { ChatProvider, ProviderResponse, ProviderTarget } from '../types.ts';
import { compatibleBaseUrl, compatibleProviders } from './chat-complete.ts';
import { compatibleFamily } from './family.ts';

const upstreamKey = 'sk-family-0123456789';
const dispatcher = new Agent();
const providers = new Map(compatibleProviders(dispatcher).map((p) => [p.id, p]));
let fake: FakeOpenAi;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
});
after(async () => {
  await fake.close();
  await dispatcher.close();
});

const member = (id: string) => compatibleFamily.find((p) => p.id === id)!;
const target = (overrides: Partial<ProviderTarget> = {}): ProviderTarget => ({
  provider: 'groq',
  apiKey: upstreamKey,
  baseUrl: fake.baseUrl,
  headers: {},
  settings: {},
  ...overrides,
});

function complete(
  provider: ChatProvider,
  body: Record<string, unknown>,
  rawBody?: Buffer,
): Promise<ProviderResponse> {
  return provider.chatCompletions({
    body: chatCompletionRequest.parse({ messages: [{ role: 'user', content: 'Hello there' }], ...body }),
    rawBody,
    target: target({ provider: provider.id }),
    signal: new AbortController().signal,
    timeoutMs: 5_000,
  });
}

describe('the OpenAI-compatible family', () => {
  const defaults: Array<[string, string | undefined]> = [
    ['groq', 'https://api.groq.com/openai/v1'],
    ['mistral-ai', 'https://api.mistral.ai/v1'],
    ['together-ai', 'https://api.together.xyz/v1'],
    ['deepseek', 'https://api.deepseek.com'],
    ['fireworks-ai', 'https://api.fireworks.ai/inference/v1'],
    ['openrouter', 'https://openrouter.ai/api/v1'],
    ['ollama', 'http://localhost:11434/v1'],
    ['vllm', undefined],
    ['openai-compatible', undefined],
  ];

  test('has exactly these members, each registered under its id', () => {
    assert.deepEqual(
      compatibleFamily.map((p) => p.id),
      defaults.map(([id]) => id),
    );
    assert.deepEqual(
      [...providers.keys()],
      defaults.map(([id]) => id),
    );
  });

  for (const [id, url] of defaults.filter(([, url]) => url)) {
    test(`${id} goes to ${url} unless the integration sets a custom_host`, () => {
      assert.equal(compatibleBaseUrl(member(id), target({ baseUrl: undefined })), url);
      assert.equal(
        compatibleBaseUrl(member(id), target({ baseUrl: 'http://127.0.0.1:8000/v1/' })),
        'http://127.0.0.1:8000/v1',
      );
    });
  }

  for (const id of ['vllm', 'openai-compatible']) {
    test(`${id} has no default address: without a custom_host it is a 400 naming custom_host`, () => {
      assert.throws(() => compatibleBaseUrl(member(id), target({ baseUrl: undefined })), {
        status: 400,
        param: 'custom_host',
        message: new RegExp(`^The ${id} integration needs a custom_host`),
      });
    });
  }
});

describe('a member of the family as a pass-through adapter', () => {
  test('forwards the client’s bytes with the bearer key and returns the answer as sent', async () => {
    const raw = Buffer.from('{"model":"llama-3.3-70b","messages":[{"role":"user","content":"Hello there"}]}');
    const res = await complete(providers.get('groq')!, { model: 'llama-3.3-70b' }, raw);
    assert.equal(res.kind, 'json');
    assert.equal(JSON.parse(res.body.toString()).choices[0].message.content, 'Echo: Hello there');
    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/v1/chat/completions');
    assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
    assert.equal(upstream.body, raw.toString());
  });

  test('streams pass through chunk by chunk', async () => {
    const res = await complete(providers.get('together-ai')!, { model: 'm', stream: true });
    assert.equal(res.kind, 'stream');
    const parts: Buffer[] = [];
    for await (const chunk of res.body) parts.push(Buffer.from(chunk));
    assert.match(Buffer.concat(parts).toString(), /data: \[DONE\]\n\n$/);
  });

  test('a whole answer: an abort while waiting rejects with its reason and closes the upstream request', async () => {
    const provider = providers.get('groq')!;
    const controller = new AbortController();
    const before = fake.aborted;
    const pending = provider.chatCompletions({
      body: chatCompletionRequest.parse({ model: 'hang', messages: [{ role: 'user', content: 'Hi' }] }),
      rawBody: undefined,
      target: target(),
      signal: controller.signal,
      timeoutMs: 5_000,
    });
    await eventually(() => (fake.requests.at(-1)?.body.includes('"hang"') ? true : undefined), {
      what: 'the upstream to receive the request',
    });
    const reason = new Error('client went away');
    controller.abort(reason);
    await assert.rejects(pending, (err) => err === reason);
    await eventually(() => (fake.aborted > before ? true : undefined), {
      what: 'the upstream to see the abort',
    });
  });

  test('a whole answer: no answer within the timeout is a 408 naming the provider; an unreachable host a 502', async () => {
    const provider = providers.get('groq')!;
    const call = (overrides: Partial<ProviderTarget>, timeoutMs: number) =>
      provider.chatCompletions({
        body: chatCompletionRequest.parse({ model: 'hang', messages: [{ role: 'user', content: 'Hi' }] }),
        rawBody: undefined,
        target: target(overrides),
        signal: new AbortController().signal,
        timeoutMs,
      });
    await assert.rejects(call({}, 100), { status: 408, message: 'groq did not answer within 100 ms.' });
    const closed = await startFakeOpenAi();
    const address = closed.baseUrl;
    await closed.close();
    await assert.rejects(call({ baseUrl: address }, 2_000), { status: 502, code: 'upstream_unreachable' });
  });

  test('a whole answer keeps the upstream status, content type and body', async () => {
    const res = await complete(providers.get('groq')!, { model: 'tool-call' });
    assert.equal(res.kind, 'json');
    assert.equal(res.status, 200);
    assert.match(res.contentType, /^application\/json/);
    assert.equal(JSON.parse(res.body.toString()).choices[0].finish_reason, 'tool_calls');
  });

  for (const id of ['groq', 'deepseek', 'ollama', 'vllm']) {
    test(`${id} names itself in upstream errors`, async () => {
      await assert.rejects(complete(providers.get(id)!, { model: 'error-503' }), {
        status: 503,
        message: `${id} error: Simulated error 503.`,
      });
    });
  }

  test('other OpenAI-format operations are forwarded to the same root with the bearer key', async () => {
    const res = await providers.get('groq')!.forward!({
      method: 'GET',
      path: '/models',
      headers: {},
      body: undefined,
      target: target(),
      signal: new AbortController().signal,
      timeoutMs: 5_000,
    });
    for await (const _chunk of res.body);
    const upstream = fake.requests.at(-1)!;
    assert.deepEqual([upstream.method, upstream.path], ['GET', '/v1/models']);
    assert.equal(upstream.headers.authorization, `Bearer ${upstreamKey}`);
  });

  test('mistral-ai receives the seed as random_seed', async () => {
    await complete(providers.get('mistral-ai')!, {
      model: 'mistral-large-latest',
      seed: 7,
      temperature: 0.1,
    });
    const sent = JSON.parse(fake.requests.at(-1)!.body);
    assert.equal(sent.random_seed, 7);
    assert.equal('seed' in sent, false);
    assert.equal(sent.temperature, 0.1);
  });

  test('mistral-ai without a seed gets the client’s bytes unchanged', async () => {
    const raw = Buffer.from('{"model":"m","messages":[{"role":"user","content":"Hello there"}]}');
    await complete(providers.get('mistral-ai')!, { model: 'm' }, raw);
    assert.equal(fake.requests.at(-1)!.body, raw.toString());
  });

  test('deepseek does not receive reasoning_content handed back in earlier messages', async () => {
    await complete(providers.get('deepseek')!, {
      model: 'deepseek-reasoner',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello', reasoning_content: 'Greet back.' },
        { role: 'user', content: 'Again' },
      ],
    });
    assert.deepEqual(JSON.parse(fake.requests.at(-1)!.body).messages, [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'Again' },
    ]);
  });
});
