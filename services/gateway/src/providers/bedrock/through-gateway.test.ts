import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import {
  fakeAwsCredentials,
  startFakeBedrock,
  startServiceHarness,
  type FakeBedrock,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../../service.ts';

let h: ServiceHarness;
let fake: FakeBedrock;

before(async () => {
  fake = await startFakeBedrock();
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  await createIntegration('aws', fakeAwsCredentials.secretAccessKey);
  await createIntegration('aws-wrong-secret', 'not-the-secret');
});
after(async () => {
  await h.close();
  await fake.close();
});

async function createIntegration(slug: string, secret: string) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'bedrock',
      configurations: {
        custom_host: fake.url,
        aws_region: fakeAwsCredentials.region,
        aws_access_key_id: fakeAwsCredentials.accessKeyId,
        aws_secret_access_key: secret,
      },
    },
  });
  assert.equal(res.status, 200, res.text);
}

function chat(body: Record<string, unknown>) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { messages: [{ role: 'user', content: 'Hello there' }], ...body },
  });
}

describe('a bedrock integration, through the gateway', () => {
  test('answers a chat completion in the OpenAI shape from a signed Converse call', async () => {
    const res = await chat({ model: '@aws/anthropic.claude-3-haiku-20240307-v1:0', max_tokens: 50 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-provider'), 'bedrock');
    assert.equal(res.body.object, 'chat.completion');
    assert.equal(res.body.model, 'anthropic.claude-3-haiku-20240307-v1:0');
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello there');
    assert.equal(res.body.choices[0].finish_reason, 'stop');
    assert.deepEqual(res.body.usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });

    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
    assert.match(String(upstream.headers.authorization), /\/us-east-1\/bedrock\/aws4_request, /);
    assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey), 'the gateway key went upstream');
    assert.deepEqual(JSON.parse(upstream.body).inferenceConfig, { maxTokens: 50 });
  });

  test('streams tool calls as OpenAI chunks ending in [DONE]', async () => {
    const res = await chat({ model: '@aws/tool-use', stream: true, stream_options: { include_usage: true } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const data = String(res.text)
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.slice('data: '.length));
    assert.equal(data.at(-1), '[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    const ids = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).filter((t) => t.id);
    assert.deepEqual(
      ids.map((t) => [t.index, t.function.name]),
      [
        [0, 'get_weather'],
        [1, 'get_weather'],
      ],
    );
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
  });

  test('a wrong secret is the upstream’s 403, naming bedrock', async () => {
    const res = await chat({ model: '@aws-wrong-secret/m' });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.type, 'upstream_error');
    assert.equal(res.body.error.code, 'InvalidSignatureException');
    assert.match(res.body.error.message, /^bedrock error: The request signature we calculated/);
  });

  test('throttling is a 429 with the upstream’s retry-after', async () => {
    const res = await chat({ model: '@aws/error-429' });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '3');
    assert.deepEqual(res.body.error, {
      message: 'bedrock error: Simulated error 429.',
      type: 'upstream_error',
      param: null,
      code: 'ThrottlingException',
    });
  });

  test('an image given by URL is a 400 naming the parameter, and Bedrock is not called', async () => {
    const before = fake.requests.length;
    const res = await chat({
      model: '@aws/m',
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
      ],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'messages[0].content[0].image_url.url');
    assert.equal(fake.requests.length, before);
  });
});
