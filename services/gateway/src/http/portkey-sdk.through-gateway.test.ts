import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import { Portkey } from 'portkey-ai';
import { Topics } from '@switchyard/adapters';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import { events } from '@switchyard/proto';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

// The Portkey SDK against a gateway whose header prefix is `x-portkey-` (HEADER_PREFIX): its
// api key, virtual key, provider, config, trace id and metadata options as it sends them.

const keyA = 'sk-portkey-upstream-a-0123456789';
const keyB = 'sk-portkey-upstream-b-0123456789';
let h: ServiceHarness;
let fakeA: FakeOpenAi;
let fakeB: FakeOpenAi;
let configB: { id: string; slug: string };

before(async () => {
  fakeA = await startFakeOpenAi({ apiKey: keyA });
  fakeB = await startFakeOpenAi({ apiKey: keyB });
  h = await startServiceHarness({
    services: [controlPlane, policyService, adminService, logExportService, gatewayService],
    env: { HEADER_PREFIX: 'x-portkey-' },
  });
  for (const [slug, key, fake] of [
    ['portkey-a', keyA, fakeA],
    ['portkey-b', keyB, fakeB],
  ] as const) {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: slug,
        slug,
        ai_provider_id: 'openai',
        key,
        configurations: { custom_host: fake.baseUrl },
      },
    });
    assert.equal(res.status, 200, res.text);
  }
  const saved = await h.request('POST', '/v2/configs', {
    key: h.adminKey,
    json: { name: 'Portkey config', workspace_id: h.workspaceId, config: { provider: '@portkey-b' } },
  });
  assert.equal(saved.status, 200, saved.text);
  configB = saved.body.data;
});
after(async () => {
  await h?.close();
  await fakeA?.close();
  await fakeB?.close();
});

const portkey = (options: Record<string, unknown>) =>
  new Portkey({ apiKey: h.workspaceKey, baseURL: `${h.url}/v1`, maxRetries: 0, ...options });

const messages = [{ role: 'user' as const, content: 'Hello Portkey' }];

/** The one request a fake saw since `from`: its path and provider key. */
function upstreamSince(fake: FakeOpenAi, from: number) {
  const requests = fake.requests.slice(from);
  assert.equal(requests.length, 1, `the upstream saw ${requests.length} requests`);
  return requests[0]!;
}

/** The request log the gateway published for its last request with this trace id. */
function requestLog(traceId: string) {
  const log = h.bus
    .log(Topics.requestLogs)
    .map((message) => fromBinary(events.RequestLogEventSchema, message.value))
    .findLast((entry) => entry.traceId === traceId);
  assert.ok(log, `no request log with trace id ${traceId}`);
  return log;
}

describe('the Portkey SDK through a gateway with HEADER_PREFIX x-portkey-', () => {
  test('virtualKey routes to the saved integration of that slug, with the trace id and metadata logged', async () => {
    const from = fakeA.requests.length;
    const client = portkey({
      virtualKey: 'portkey-a',
      traceID: 'trace-portkey-virtual',
      metadata: { _user: 'ada', team: 'search' },
    });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    assert.equal(completion.choices[0]!.message?.content, 'Echo: Hello Portkey');
    const upstream = upstreamSince(fakeA, from);
    assert.equal(upstream.path, '/v1/chat/completions');
    assert.equal(upstream.headers.authorization, `Bearer ${keyA}`);
    assert.ok(!JSON.stringify(upstream.headers).includes(h.workspaceKey), 'the gateway key went upstream');
    assert.ok(
      !Object.keys(upstream.headers).some((name) => name.startsWith('x-portkey-')),
      'gateway headers went upstream',
    );

    const log = requestLog('trace-portkey-virtual');
    assert.equal(log.integrationSlug, 'portkey-a');
    assert.equal(log.status, 200);
    assert.deepEqual({ ...log.metadata }, { _user: 'ada', team: 'search' });
  });

  test('provider @slug routes to that integration', async () => {
    const from = fakeB.requests.length;
    const client = portkey({ provider: '@portkey-b', traceID: 'trace-portkey-provider' });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(upstreamSince(fakeB, from).headers.authorization, `Bearer ${keyB}`);
    assert.equal(requestLog('trace-portkey-provider').integrationSlug, 'portkey-b');
  });

  test('provider by kind with its own Authorization and custom host: that key goes upstream, never the gateway key', async () => {
    let from = fakeA.requests.length;
    const direct = portkey({
      provider: 'openai',
      customHost: fakeA.baseUrl,
      Authorization: `Bearer ${keyA}`,
      traceID: 'trace-portkey-direct',
    });
    const completion = await direct.chat.completions.create({ model: 'gpt-4o-mini', messages });
    assert.equal(completion.choices[0]!.message?.content, 'Echo: Hello Portkey');
    assert.equal(upstreamSince(fakeA, from).headers.authorization, `Bearer ${keyA}`);
    assert.equal(requestLog('trace-portkey-direct').provider, 'openai');

    // Without a provider key of its own, the SDK's Authorization is the gateway key: not passed on.
    from = fakeA.requests.length;
    const keyless = portkey({ provider: 'openai', customHost: fakeA.baseUrl });
    await assert.rejects(
      keyless.chat.completions.create({ model: 'gpt-4o-mini', messages }),
      (err: Error & { status?: number }) => {
        assert.equal(err.status, 401);
        assert.match(err.message, /invalid_api_key/);
        return true;
      },
    );
    assert.ok(
      !JSON.stringify(fakeA.requests.slice(from)).includes(h.workspaceKey),
      'the gateway key went upstream',
    );
  });

  test('config as a saved config slug and as inline JSON', async () => {
    let from = fakeB.requests.length;
    await portkey({ config: configB.slug, traceID: 'trace-portkey-saved' }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
    });
    assert.equal(upstreamSince(fakeB, from).headers.authorization, `Bearer ${keyB}`);
    assert.equal(requestLog('trace-portkey-saved').configSlug, configB.slug);

    from = fakeA.requests.length;
    await portkey({
      config: { provider: '@portkey-a' },
      traceID: 'trace-portkey-inline',
    }).chat.completions.create({ model: 'gpt-4o-mini', messages });
    assert.equal(upstreamSince(fakeA, from).headers.authorization, `Bearer ${keyA}`);
    const log = requestLog('trace-portkey-inline');
    assert.equal(log.integrationSlug, 'portkey-a');
    assert.equal(log.configSlug, '');
  });

  test('the gateway key alone in x-portkey-api-key authenticates; a wrong one is a 401', async () => {
    const call = (key: string) =>
      fetch(`${h.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-portkey-api-key': key,
          'x-portkey-virtual-key': 'portkey-a',
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
      });
    const res = await call(h.workspaceKey);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-portkey-provider'), 'openai');
    assert.equal((await call('sy-not-a-key')).status, 401);
  });

  test('an unknown virtual key is a 404 naming it', async () => {
    await assert.rejects(
      portkey({ virtualKey: 'no-such-integration' }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages,
      }),
      (err: Error & { status?: number }) => {
        assert.equal(err.status, 404);
        assert.match(err.message, /no-such-integration/);
        return true;
      },
    );
  });
});
