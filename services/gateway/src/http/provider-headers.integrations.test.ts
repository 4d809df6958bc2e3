import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import {
  fakeAwsCredentials,
  startFakeAzureOpenAi,
  startFakeBedrock,
  startServiceHarness,
  type FakeAzureOpenAi,
  type FakeBedrock,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// The provider headers of the families reached through saved integrations only (Azure's
// deployments, Bedrock's signed calls), as an OpenAI SDK client sees them through the gateway.

const azureKey = 'azure-key-0123456789';
let h: ServiceHarness;
let azure: FakeAzureOpenAi;
let bedrock: FakeBedrock;
let sdk: OpenAI;

before(async () => {
  azure = await startFakeAzureOpenAi({ apiKey: azureKey });
  bedrock = await startFakeBedrock();
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  await createIntegration('azure', 'azure-openai', azureKey, {
    custom_host: azure.url,
    deployment: 'gpt4o-prod',
    api_version: '2024-10-21',
  });
  await createIntegration('azure-busy', 'azure-openai', azureKey, {
    custom_host: azure.url,
    deployment: 'error-429',
    api_version: '2024-10-21',
  });
  await createIntegration('aws', 'bedrock', undefined, {
    custom_host: bedrock.url,
    aws_region: fakeAwsCredentials.region,
    aws_access_key_id: fakeAwsCredentials.accessKeyId,
    aws_secret_access_key: fakeAwsCredentials.secretAccessKey,
  });
  sdk = new OpenAI({ apiKey: h.workspaceKey, baseURL: `${h.url}/v1`, maxRetries: 0 });
});
after(async () => {
  await h?.close();
  await azure?.close();
  await bedrock?.close();
});

async function createIntegration(
  slug: string,
  provider: string,
  key: string | undefined,
  configurations: Record<string, string>,
) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: slug, slug, ai_provider_id: provider, ...(key ? { key } : {}), configurations },
  });
  assert.equal(res.status, 200, res.text);
}

const messages = [{ role: 'user' as const, content: 'Hello there' }];

describe('provider headers through saved integrations', () => {
  test('an Azure answer: its x-request-id under the prefix and its remaining rate limits; not its apim id or region', async () => {
    for (const stream of [false, true]) {
      const { data, response } = await sdk.chat.completions
        .create({ model: '@azure/gpt-4o', messages, stream })
        .withResponse();
      if (stream) for await (const chunk of data as AsyncIterable<unknown>) void chunk;
      const headers = response.headers;
      assert.equal(headers.get('x-vendor-provider-request-id'), 'fake-azure-request', `stream: ${stream}`);
      assert.notEqual(headers.get('x-request-id'), 'fake-azure-request');
      assert.equal(headers.get('x-ratelimit-remaining-requests'), '99');
      assert.equal(headers.get('x-ratelimit-remaining-tokens'), '99000');
      assert.equal(headers.get('apim-request-id'), null);
      assert.equal(headers.get('x-ms-region'), null);
    }
  });

  test('an Azure 429 is relayed with retry-after and retry-after-ms, which the SDK reads', async () => {
    const error = await sdk.chat.completions.create({ model: '@azure-busy/gpt-4o', messages }).then(
      () => assert.fail('the request succeeded'),
      (err: unknown) => err,
    );
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.equal(error.headers?.get('retry-after'), '6');
    assert.equal(error.headers?.get('retry-after-ms'), '6000');
    assert.equal(error.headers?.get('x-vendor-provider-request-id'), 'fake-azure-request');
  });

  test('a Bedrock answer, streamed or not: its x-amzn-requestid under the prefix', async () => {
    for (const stream of [false, true]) {
      const { data, response } = await sdk.chat.completions
        .create({ model: '@aws/anthropic.claude-3-haiku-20240307-v1:0', messages, max_tokens: 50, stream })
        .withResponse();
      let id = '';
      if (stream) {
        for await (const chunk of data as AsyncIterable<{ id: string }>) id = chunk.id;
      } else {
        id = (data as { id: string }).id;
      }
      const requestId = response.headers.get('x-vendor-provider-request-id');
      assert.match(requestId ?? '', /^[0-9a-f-]{36}$/, `stream: ${stream}`);
      // The completion's id is made from the same request id.
      assert.equal(id, `chatcmpl-${requestId}`);
      assert.equal(response.headers.get('x-amzn-requestid'), null);
    }
  });

  test('a Bedrock 429 is relayed with its retry-after and request id', async () => {
    const error = await sdk.chat.completions
      .create({ model: '@aws/error-429', messages, max_tokens: 50 })
      .then(
        () => assert.fail('the request succeeded'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.equal(error.headers?.get('retry-after'), '3');
    assert.match(error.headers?.get('x-vendor-provider-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});
