import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import {
  FAKE_AZURE_MODEL,
  startFakeAzureOpenAi,
  startServiceHarness,
  type FakeAzureOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../../service.ts';

const apiKey = 'azure-key-0123456789';
let h: ServiceHarness;
let fake: FakeAzureOpenAi;

before(async () => {
  fake = await startFakeAzureOpenAi({ apiKey });
  h = await startServiceHarness({ services: [controlPlane, policyService, adminService, gatewayService] });
  await createIntegration('azure', 'gpt4o-prod');
  await createIntegration('azure-strict', 'prompt-filtered');
  await createIntegration('azure-any');
});
after(async () => {
  await h.close();
  await fake.close();
});

async function createIntegration(slug: string, deployment?: string) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'azure-openai',
      key: apiKey,
      configurations: {
        custom_host: fake.url,
        api_version: '2024-10-21',
        ...(deployment ? { deployment } : {}),
      },
    },
  });
  assert.equal(res.status, 200, res.text);
}

function chat(model: string) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model, messages: [{ role: 'user', content: 'Hello there' }] },
  });
}

describe('an azure-openai integration, through the gateway', () => {
  test('sends the request to the integration’s deployment with api-key and returns Azure’s answer', async () => {
    const res = await chat('@azure/gpt-4o');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-vendor-provider'), 'azure-openai');
    assert.equal(res.body.model, FAKE_AZURE_MODEL);
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello there');

    const upstream = fake.requests.at(-1)!;
    assert.equal(upstream.path, '/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    assert.equal(upstream.headers['api-key'], apiKey);
    assert.equal(upstream.headers.authorization, undefined);
    assert.equal(JSON.parse(upstream.body).model, 'gpt-4o');
  });

  test('a prompt blocked by Azure’s content filter reaches the client as a 400 with code content_filter', async () => {
    const res = await chat('@azure-strict/gpt-4o');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.type, 'upstream_error');
    assert.equal(res.body.error.code, 'content_filter');
    assert.match(res.body.error.message, /^azure-openai error: The response was filtered/);
  });

  test('embeddings go to the deployment’s embeddings path: the integration’s, else the model', async () => {
    for (const [model, deployment] of [
      ['@azure/text-embedding-3-small', 'gpt4o-prod'],
      ['@azure-any/embeddings-prod', 'embeddings-prod'],
    ] as const) {
      const res = await h.request('POST', '/v1/embeddings', {
        key: h.workspaceKey,
        json: { model, input: ['one', 'two'] },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-vendor-provider'), 'azure-openai');
      assert.equal(res.body.data.length, 2);
      assert.deepEqual(res.body.data[0].embedding, [0.1, 0.2, 0.3]);
      const upstream = fake.requests.at(-1)!;
      assert.equal(upstream.path, `/openai/deployments/${deployment}/embeddings?api-version=2024-10-21`);
      assert.equal(upstream.headers['api-key'], apiKey);
      assert.deepEqual(JSON.parse(upstream.body).input, ['one', 'two']);
    }
  });

  test('operations outside a deployment go under /openai with the api-version', async () => {
    const from = fake.requests.length;
    const res = await h.request('GET', '/v1/files?purpose=batch', {
      key: h.workspaceKey,
      headers: { 'x-vendor-provider': '@azure' },
    });
    // The fake serves deployments only: Azure's 404 comes back, after the request went where Azure serves files.
    assert.equal(res.status, 404, res.text);
    assert.equal(fake.requests[from]!.path, '/openai/files?purpose=batch&api-version=2024-10-21');
  });
});
