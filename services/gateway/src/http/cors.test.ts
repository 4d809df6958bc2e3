import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { GATEWAY_HEADER_NAMES } from '../domain/gateway-headers.ts';
import { gatewayService } from '../service.ts';

const APP = 'https://app.example.com';
const services = [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[];
/** What the official `openai` SDK in a browser asks a preflight to allow. */
const SDK_HEADERS = [
  'authorization',
  'content-type',
  'x-stainless-arch',
  'x-stainless-lang',
  'x-stainless-os',
  'x-stainless-package-version',
  'x-stainless-retry-count',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-timeout',
  'x-vendor-provider',
];
const body = { model: 'mock-1', messages: [{ role: 'user', content: 'hi' }] };

function preflight(h: ServiceHarness, origin: string, requestHeaders: string): Promise<Response> {
  return fetch(`${h.url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': requestHeaders,
    },
  });
}

function chat(h: ServiceHarness, origin: string, extra: object = {}): Promise<Response> {
  return fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      origin,
      authorization: `Bearer ${h.workspaceKey}`,
      'content-type': 'application/json',
      'x-vendor-provider': 'mock',
    },
    body: JSON.stringify({ ...body, ...extra }),
  });
}

describe('CORS through the gateway', () => {
  let h: ServiceHarness;
  before(async () => {
    h = await startServiceHarness({
      services,
      cors: { allowedOrigins: [APP], maxAgeSeconds: 600, headerPrefix: 'x-vendor-' },
    });
  });
  after(() => h?.close());

  test("a browser's preflight then chat completion: answered without a key, then served and readable", async () => {
    const checked = await preflight(h, APP, SDK_HEADERS.join(','));
    assert.equal(checked.status, 204, await checked.text());
    assert.equal(checked.headers.get('access-control-allow-origin'), APP);
    assert.equal(checked.headers.get('access-control-allow-credentials'), 'true');
    assert.match(checked.headers.get('access-control-allow-methods')!, /\bPOST\b/);
    assert.deepEqual(checked.headers.get('access-control-allow-headers')!.split(', '), SDK_HEADERS);
    assert.equal(checked.headers.get('access-control-max-age'), '600');

    const res = await chat(h, APP);
    assert.equal(res.status, 200, await res.clone().text());
    const completion = (await res.json()) as { object: string; choices: unknown[] };
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.choices.length, 1);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.match(res.headers.get('vary')!, /\bOrigin\b/);
    // Every header of the gateway's own a page may want is readable by it.
    const exposed = res.headers.get('access-control-expose-headers')!.split(', ');
    const own = [...res.headers.keys()].filter(
      (name) => name === 'x-request-id' || name.startsWith('x-vendor-') || name.startsWith('x-ratelimit-'),
    );
    assert.ok(own.includes('x-vendor-trace-id'), `the answer carries a trace id: ${own.join(', ')}`);
    for (const name of own) assert.ok(exposed.includes(name), `${name} is exposed`);
  });

  test('a streamed chat completion carries the CORS headers', async () => {
    const res = await chat(h, APP, { stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.match(await res.text(), /data: \[DONE\]/);
  });

  test('a chat completion without a key from the allowed origin is refused, readably', async () => {
    const res = await fetch(`${h.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json', 'x-vendor-provider': 'mock' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
  });

  test('another origin is served as usual, with no CORS headers, and its preflight is not answered', async () => {
    const res = await chat(h, 'https://other.example.com');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    const checked = await preflight(h, 'https://other.example.com', 'authorization');
    assert.notEqual(checked.status, 204);
    assert.equal(checked.headers.get('access-control-allow-origin'), null);
  });

  test("the fixed list of allowed headers names every request header of the gateway's own", async () => {
    const checked = await preflight(h, APP, 'not a header');
    assert.equal(checked.status, 204);
    const allowed = checked.headers.get('access-control-allow-headers')!.split(', ');
    for (const name of GATEWAY_HEADER_NAMES.filter((n) => n !== 'cache-status')) {
      assert.ok(allowed.includes(`x-vendor-${name}`), `x-vendor-${name} is allowed`);
    }
  });
});
