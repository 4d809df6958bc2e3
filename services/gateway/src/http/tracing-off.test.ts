import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  eventually,
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type ServiceHarness,
} from '@switchyard/testing';
import { everyService } from '../testing/services.ts';

const upstreamKey = 'sk-tracing-off-upstream-0123456789';
let fake: FakeOpenAi;
let h: ServiceHarness;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  // No OTEL_EXPORTER_OTLP_ENDPOINT: tracing is off.
  h = await startServiceHarness({ services: everyService });
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'untraced',
      slug: 'untraced',
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(res.status, 200, res.text);
});
after(async () => {
  await h?.close();
  await fake?.close();
});

function chat(headers: Record<string, string> = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model: '@untraced/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
    headers,
  });
}

function logOf(requestId: string) {
  return eventually(
    async () => {
      const found = await h.request('GET', `/v1/logs/${requestId}`, { key: h.workspaceKey });
      return found.status === 200 ? found.body : undefined;
    },
    { what: `log ${requestId}` },
  );
}

describe('with tracing off', () => {
  test("requests work, the provider is sent no traceparent, and the log keeps the caller's trace id", async () => {
    const traceId = randomBytes(16).toString('hex');
    const res = await chat({ traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].message.content, 'Echo: Hello');
    assert.equal(fake.requests.at(-1)!.headers.traceparent, undefined);
    const log = await logOf(res.headers.get('x-request-id')!);
    assert.equal(log.w3c_trace_id, traceId);
  });

  test('a request without a traceparent, or with a malformed one, is logged without a trace id', async () => {
    const cases: Array<Record<string, string>> = [{}, { traceparent: 'not-a-traceparent' }];
    for (const headers of cases) {
      const res = await chat(headers);
      assert.equal(res.status, 200, res.text);
      assert.equal(fake.requests.at(-1)!.headers.traceparent, undefined);
      const log = await logOf(res.headers.get('x-request-id')!);
      assert.equal(log.w3c_trace_id, null);
    }
  });
});
