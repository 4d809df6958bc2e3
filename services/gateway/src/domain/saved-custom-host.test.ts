import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

const upstreamKey = 'sk-custom-host-upstream-0123456789';
const services = [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[];
const body = { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] };
/** What the injected resolver answers; tests change it between saving and connecting. */
const dns: Record<string, string[]> = {};
let fake: FakeOpenAi;
let h: ServiceHarness;
/** The fake upstream's port: a name that resolves to 127.0.0.1 would reach it, were it allowed. */
let port: string;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  port = new URL(fake.url).port;
  h = await startServiceHarness({ services, resolve: async (host) => dns[host] ?? [] });
});
after(async () => {
  await h?.close();
  await fake?.close();
});

async function saveIntegration(slug: string, customHost: string) {
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: customHost },
    },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string };
}

const chatThrough = (slug: string) =>
  h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { ...body, model: `@${slug}/gpt-x` },
  });

describe('a saved custom host at connect time', () => {
  test('a name public when saved and private when connecting is refused before any connection (DNS rebinding)', async () => {
    dns['rebind.example.com'] = ['93.184.216.34'];
    await saveIntegration('rebinding', `http://rebind.example.com:${port}/v1`);
    dns['rebind.example.com'] = ['127.0.0.1'];
    const seen = fake.requests.length;

    const res = await chatThrough('rebinding');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsafe_custom_host');
    assert.equal(res.body.error.param, 'custom_host');
    assert.match(
      res.body.error.message,
      /rebind\.example\.com resolves to the non-public address 127\.0\.0\.1/,
    );
    assert.equal(fake.requests.length, seen);
  });

  test('a streaming request is refused the same way, before its stream starts', async () => {
    dns['rebind-stream.example.com'] = ['93.184.216.34'];
    await saveIntegration('rebinding-stream', `http://rebind-stream.example.com:${port}/v1`);
    dns['rebind-stream.example.com'] = ['::ffff:127.0.0.1'];
    const res = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: { ...body, model: '@rebinding-stream/gpt-x', stream: true },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsafe_custom_host');
  });

  for (const [what, stored] of [
    ['a metadata address', 'http://169.254.169.254/v1'],
    ['a metadata host name', 'http://metadata.google.internal/v1'],
    ['a private address', 'http://10.0.0.5/v1'],
    ['a name that resolves to a private address', 'http://stale.example.com:{port}/v1'],
  ] as const) {
    test(`an integration stored before the check with ${what} is refused`, async () => {
      dns['stale.example.com'] = ['10.0.0.5'];
      const slug = `stored-${what.replace(/\W+/g, '-')}`;
      // Saved when the host was trusted; the row is then changed as an older release could have stored it.
      const { id } = await saveIntegration(slug, fake.baseUrl);
      await h
        .db('admin')
        .query(`UPDATE admin.integrations SET configurations = $1 WHERE id = $2`, [
          { custom_host: stored.replace('{port}', port) },
          id,
        ]);
      const seen = fake.requests.length;
      const res = await chatThrough(slug);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'unsafe_custom_host');
      assert.equal(res.body.error.param, 'custom_host');
      assert.equal(fake.requests.length, seen);
    });
  }

  test('a trusted host is reached', async () => {
    await saveIntegration('trusted', fake.baseUrl);
    const res = await chatThrough('trusted');
    assert.equal(res.status, 200, res.text);
  });
});

describe('an inline custom host at connect time', () => {
  test('a name that resolves to a private address is refused naming the header, with nothing sent', async () => {
    dns['inline.example.com'] = ['127.0.0.1'];
    const seen = fake.requests.length;
    const res = await h.request('POST', '/v1/chat/completions', {
      key: h.workspaceKey,
      json: body,
      headers: {
        'x-vendor-provider': 'openai',
        'x-vendor-custom-host': `http://inline.example.com:${port}/v1`,
      },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'unsafe_custom_host');
    assert.equal(res.body.error.param, 'x-vendor-custom-host');
    assert.equal(fake.requests.length, seen);
  });
});
