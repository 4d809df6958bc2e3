import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Stream } from 'openai/streaming';
import { eventually } from '@switchyard/testing';
import { startPromptHarness, type PromptHarness } from '../testing/prompts.ts';

// The official OpenAI SDK runs saved prompts through the gateway: what it reads is a chat
// completion, or a stream of chat completion chunks, and the rendered prompt is what reached
// the provider.

let p: PromptHarness;
let client: OpenAI;

before(async () => {
  p = await startPromptHarness();
  client = new OpenAI({ apiKey: p.h.workspaceKey, baseURL: `${p.h.url}/v1`, maxRetries: 0 });
});
after(() => p?.close());

function storeGreeting() {
  return p.store(
    {
      slug: `sdk-${randomUUID().slice(0, 8)}`,
      template: JSON.stringify([
        { role: 'system', content: 'Answer in {{language}}.' },
        { role: 'user', content: 'Summarise {{topic}}' },
      ]),
      parametersJson: JSON.stringify({ temperature: 0.1, max_completion_tokens: 64 }),
    },
    ['', 'latest'],
  );
}

const lastUpstreamBody = () => JSON.parse(p.fake.requests.at(-1)!.body) as Record<string, unknown>;

describe('prompt completions with the openai SDK', () => {
  test('not streamed: a ChatCompletion answering the rendered prompt', async () => {
    const prompt = storeGreeting();
    const completion = await client.post<ChatCompletion>(`/prompts/${prompt.slug}/completions`, {
      body: { variables: { language: 'French', topic: 'the release notes' }, max_completion_tokens: 20 },
    });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.choices[0]?.message.content, 'Echo: Summarise the release notes');
    assert.deepEqual(lastUpstreamBody(), {
      temperature: 0.1,
      max_completion_tokens: 20,
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Summarise the release notes' },
      ],
    });
    const log = await eventually(() => p.requestLogs().find((e) => e.prompt?.promptId === prompt.id));
    assert.equal(log.prompt?.promptSlug, prompt.slug);
    assert.equal(log.prompt?.versionId, prompt.versionId);
  });

  test('streamed: a Stream of chat completion chunks, read as it arrives', async () => {
    const prompt = storeGreeting();
    const stream = await client.post<Stream<ChatCompletionChunk>>(
      `/prompts/${prompt.id}@latest/completions`,
      {
        body: { variables: { language: 'German', topic: 'the roadmap' }, stream: true },
        stream: true,
      },
    );
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      chunks += 1;
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.ok(chunks > 1, `only ${chunks} chunk(s)`);
    assert.equal(text, 'Echo: Summarise the roadmap');
    const sent = lastUpstreamBody();
    assert.equal(sent.stream, true);
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'Answer in German.' },
      { role: 'user', content: 'Summarise the roadmap' },
    ]);
    assert.equal(p.directory.asked.at(-1)?.version, 'latest');
  });

  test('errors reach the SDK as its typed errors: unknown prompt 404, missing variables 400', async () => {
    const missing = await client
      .post('/prompts/no-such-prompt/completions', { body: { variables: {} } })
      .catch((err: unknown) => err);
    assert.ok(missing instanceof OpenAI.NotFoundError, String(missing));
    assert.equal(missing.code, 'prompt_not_found');

    const prompt = storeGreeting();
    const incomplete = await client
      .post(`/prompts/${prompt.slug}/completions`, { body: { variables: { language: 'Dutch' } } })
      .catch((err: unknown) => err);
    assert.ok(incomplete instanceof OpenAI.BadRequestError, String(incomplete));
    assert.equal(incomplete.code, 'missing_prompt_variables');
  });
});
