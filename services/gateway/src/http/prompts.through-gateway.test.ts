import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { Stream } from 'openai/streaming';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  eventually,
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type HarnessResponse,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// The "done when" for prompts: a partial and a prompt created through control-plane's
// HTTP API, run with the official openai SDK through the gateway (streamed and not), the
// rendered prompt reaching the provider, and the run on the request log, found by prompt.

const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];

const upstreamKey = 'sk-prompt-e2e-upstream-0123456789';
let h: ServiceHarness;
let fake: FakeOpenAi;
let client: OpenAI;
/** The workspace key that created the prompt and runs it. */
let promptKey: string;
let prompt: { id: string; slug: string; version_id: string };

async function ok<T = HarnessResponse['body']>(
  method: 'GET' | 'POST',
  path: string,
  json: unknown,
  key: string,
): Promise<T> {
  const res = await h.request(method, path, { key, json });
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
  return res.body as T;
}

const lastUpstreamBody = () => JSON.parse(fake.requests.at(-1)!.body) as Record<string, unknown>;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({ services, env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' } });
  await ok(
    'POST',
    '/admin/v2/integrations',
    {
      name: 'Fake OpenAI',
      slug: 'fake-openai',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
    h.adminKey,
  );
  // A workspace key that may manage prompts and run them.
  const key = await ok<{ key: string }>(
    'POST',
    '/v2/api-keys/workspace/service',
    {
      name: 'Prompt author',
      workspace_id: h.workspaceId,
      scopes: [
        'prompts.create',
        'prompts.read',
        'prompts.list',
        'prompts.update',
        'prompts.render',
        'completions.write',
        'logs.view',
      ],
    },
    h.adminKey,
  );
  const partial = await ok<{ id: string; slug: string; version_id: string }>(
    'POST',
    '/v2/prompts/partials',
    { name: 'Signature', slug: 'signature', string: 'Thanks, the {{team}} team' },
    key.key,
  );
  assert.equal(partial.slug, 'signature');
  prompt = await ok(
    'POST',
    '/v2/prompts',
    {
      name: 'Release note',
      slug: 'release-note',
      string: JSON.stringify([
        { role: 'system', content: 'You write release notes in {{language}}.' },
        { role: 'user', content: 'Announce {{feature}}. {{> signature}}' },
      ]),
      model: 'gpt-x',
      virtual_key: 'fake-openai',
      parameters: { temperature: 0.3, max_completion_tokens: 80 },
    },
    key.key,
  );
  assert.equal((prompt as unknown as { object: string }).object, 'prompt');
  promptKey = key.key;
  client = new OpenAI({ apiKey: key.key, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await h?.close();
  await fake?.close();
});

const variables = { language: 'English', feature: 'prompt completions', team: 'gateway' };
const rendered = [
  { role: 'system', content: 'You write release notes in English.' },
  { role: 'user', content: 'Announce prompt completions. Thanks, the gateway team' },
];

describe('a saved prompt run through the gateway with the openai SDK', () => {
  test('not streamed: the rendered prompt reaches the provider and a ChatCompletion comes back', async () => {
    const completion = await client.post<ChatCompletion>(`/prompts/${prompt.slug}/completions`, {
      body: { variables, temperature: 0.9 },
    });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(
      completion.choices[0]?.message.content,
      'Echo: Announce prompt completions. Thanks, the gateway team',
    );
    assert.deepEqual(lastUpstreamBody(), {
      temperature: 0.9,
      max_completion_tokens: 80,
      model: 'gpt-x',
      messages: rendered,
    });
  });

  test('streamed: chat completion chunks, read by the SDK as they arrive', async () => {
    const stream = await client.post<Stream<ChatCompletionChunk>>(`/prompts/${prompt.id}/completions`, {
      body: { variables, stream: true },
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'Echo: Announce prompt completions. Thanks, the gateway team');
    assert.equal(lastUpstreamBody().stream, true);
    assert.deepEqual(lastUpstreamBody().messages, rendered);
  });

  test('render answers the request the prompt makes, without calling a model', async () => {
    const before = fake.requests.length;
    const res = await h.request('POST', `/v1/prompts/${prompt.slug}/render`, {
      key: promptKey,
      json: { variables },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.success, true);
    assert.deepEqual(res.body.data.messages, rendered);
    assert.equal(res.body.data.model, 'gpt-x');
    assert.equal(fake.requests.length, before);
  });

  test('both runs are on the request log with the prompt and its version, found by prompt_id', async () => {
    const logs = await eventually(
      async () => {
        const res = await h.request('GET', `/v1/logs?prompt_id=${prompt.id}`, { key: h.workspaceKey });
        const data = (res.body?.data ?? []) as Array<HarnessResponse['body']>;
        return data.length >= 2 ? data : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'the prompt runs logged' },
    );
    for (const log of logs) {
      assert.equal(log.prompt.prompt_id, prompt.id);
      assert.equal(log.prompt.prompt_slug, 'release-note');
      assert.equal(log.prompt.version_id, prompt.version_id);
      assert.equal(log.prompt.version_number, 1);
      assert.equal(log.status, 200);
    }
    assert.deepEqual(logs.map((log) => log.stream).sort(), [false, true]);
    const bySlug = await h.request('GET', '/v1/logs?prompt_id=release-note', { key: h.workspaceKey });
    assert.equal(bySlug.body.data.length, logs.length);
  });
});
