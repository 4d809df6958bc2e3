import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { UpstreamError } from '@switchyard/core';
import { FAKE_AZURE_MODEL, startFakeAzureOpenAi, type FakeAzureOpenAi } from '@switchyard/testing';
import { chatCompletionRequest } from '../../http/chat-request.schema.ts';
import type { ChatCall, ProviderResponse, ProviderTarget } from '../types.ts';
import { chatCompletionsUrl, headers } from './api.ts';
import { azureOpenAiProvider } from './chat-complete.ts';

const apiKey = 'azure-key-0123456789';
const dispatcher = new Agent();
const provider = azureOpenAiProvider(dispatcher);
let fake: FakeAzureOpenAi;

before(async () => {
  fake = await startFakeAzureOpenAi({ apiKey, apiVersions: ['2024-10-21', '2025-04-01-preview'] });
});
after(async () => {
  await fake.close();
  await dispatcher.close();
});

function target(
  settings: Record<string, string> = {},
  overrides: Partial<ProviderTarget> = {},
): ProviderTarget {
  return { provider: 'azure-openai', apiKey, baseUrl: fake.url, headers: {}, settings, ...overrides };
}

function call(body: Record<string, unknown>, to: ProviderTarget, rawBody?: Buffer): ChatCall {
  return {
    body: chatCompletionRequest.parse({ messages: [{ role: 'user', content: 'Hello there' }], ...body }),
    rawBody,
    target: to,
    signal: new AbortController().signal,
    timeoutMs: 5_000,
  };
}

function complete(body: Record<string, unknown>, to: ProviderTarget, rawBody?: Buffer) {
  return provider.chatCompletions(call(body, to, rawBody));
}

async function text(response: ProviderResponse): Promise<string> {
  if (response.kind === 'json') return response.body.toString('utf8');
  const parts: Buffer[] = [];
  for await (const chunk of response.body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts).toString('utf8');
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof UpstreamError, String(err));
    return err;
  }
  assert.fail('the call succeeded');
}

describe('the Azure OpenAI URL and headers', () => {
  const cases: Array<[string, Record<string, string>, string | undefined, string, string]> = [
    [
      'the resource name, deployment and api-version make the classic deployment URL',
      { resource_name: 'contoso', deployment: 'gpt4o-prod', api_version: '2024-10-21' },
      undefined,
      'gpt-4o',
      'https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21',
    ],
    [
      'a custom host is the resource endpoint, with or without a trailing slash or /openai',
      { deployment: 'd', api_version: 'v' },
      'https://proxy.example.com/openai/',
      'gpt-4o',
      'https://proxy.example.com/openai/deployments/d/chat/completions?api-version=v',
    ],
    [
      'without a deployment setting the model names the deployment; the api-version defaults to a GA one',
      { resource_name: 'contoso' },
      undefined,
      'my deployment',
      'https://contoso.openai.azure.com/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21',
    ],
  ];
  for (const [name, settings, baseUrl, model, url] of cases) {
    test(name, () => assert.equal(chatCompletionsUrl(call({ model }, target(settings, { baseUrl }))), url));
  }

  test('without a resource name or custom host it is a 400 naming resource_name', () => {
    assert.throws(() => chatCompletionsUrl(call({ model: 'm' }, target({}, { baseUrl: undefined }))), {
      status: 400,
      param: 'resource_name',
    });
  });

  test('the key travels in api-key, never as a bearer token; integration headers are kept', () => {
    assert.deepEqual(headers(target({}, { headers: { 'x-ms-client-request-id': 'abc' } })), {
      'x-ms-client-request-id': 'abc',
      'content-type': 'application/json',
      'api-key': apiKey,
    });
  });
});

describe('chat completions against Azure OpenAI', () => {
  test('forwards the client’s bytes to the deployment and passes the answer through', async () => {
    const raw = Buffer.from('{"model":"gpt-4o","messages":[{"role":"user","content":"Hello there"}]}');
    const res = await complete(
      { model: 'gpt-4o' },
      target({ deployment: 'gpt4o-prod', api_version: '2024-10-21' }),
      raw,
    );
    const request = fake.requests.at(-1)!;
    assert.equal(request.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    assert.equal(request.headers['api-key'], apiKey);
    assert.equal(request.headers.authorization, undefined);
    assert.equal(request.body, raw.toString());

    assert.equal(res.status, 200);
    const body = JSON.parse(await text(res));
    assert.equal(body.model, FAKE_AZURE_MODEL);
    assert.equal(body.choices[0].message.content, 'Echo: Hello there');
    assert.equal(body.choices[0].content_filter_results.hate.filtered, false);
  });

  test('filtered output passes through as finish_reason content_filter', async () => {
    const body = JSON.parse(
      await text(await complete({ model: 'x' }, target({ deployment: 'output-filtered' }))),
    );
    assert.equal(body.choices[0].finish_reason, 'content_filter');
  });

  test('a stream passes through, prompt-filter event first and [DONE] last, with content_filter as finish', async () => {
    const res = await complete({ model: 'x', stream: true }, target({ deployment: 'output-filtered' }));
    assert.equal(res.kind, 'stream');
    const data = (await text(res))
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.slice('data: '.length));
    assert.equal(data.at(-1), '[DONE]');
    assert.deepEqual(JSON.parse(data[0]!).choices, []);
    assert.equal(JSON.parse(data.at(-2)!).choices[0].finish_reason, 'content_filter');
  });

  test('a prompt blocked by the content filter is the error body with status 400 and code content_filter', async () => {
    const err = await rejection(complete({ model: 'x' }, target({ deployment: 'prompt-filtered' })));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'content_filter');
    assert.equal(err.param, 'prompt');
    assert.match(err.message, /^azure-openai error: The response was filtered due to the prompt/);
  });

  const errors: Array<[string, () => ProviderTarget, number, string]> = [
    ['a wrong key is Azure’s 401', () => target({}, { apiKey: 'wrong' }), 401, '401'],
    [
      'an unknown deployment is a 404 DeploymentNotFound',
      () => target({ deployment: 'missing-deployment' }),
      404,
      'DeploymentNotFound',
    ],
    [
      'an api-version Azure does not serve is its 404',
      () => target({ deployment: 'd', api_version: '1999-01-01' }),
      404,
      '404',
    ],
  ];
  for (const [name, to, status, code] of errors) {
    test(name, async () => {
      const err = await rejection(complete({ model: 'x' }, to()));
      assert.equal(err.status, status);
      assert.equal(err.code, code);
      assert.match(err.message, /^azure-openai error: /);
    });
  }

  test('a 429 keeps Azure’s retry-after', async () => {
    const err = await rejection(complete({ model: 'x' }, target({ deployment: 'error-429' })));
    assert.equal(err.status, 429);
    assert.deepEqual(err.headers, { 'retry-after': '6' });
  });
});
