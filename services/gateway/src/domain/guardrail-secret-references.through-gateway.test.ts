import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  startGuardrailHarness,
  startWebhook,
  type GuardrailHarness,
  type TestWebhook,
} from '../testing/guardrails.ts';
import { gatewayService } from '../service.ts';

// Issue 21's "rotating a referenced secret reaches gateways within a second", through every
// service as deployed: admin keeps the secret (its internal store), control-plane maps it to a
// guardrail webhook's header, the gateway calls the webhook with it. The webhook listens on
// loopback, which the harness trusts (TRUSTED_CUSTOM_HOSTS=127.0.0.1) for this test only.

const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];

let g: GuardrailHarness;
let hook: TestWebhook;

before(async () => {
  g = await startGuardrailHarness({ services });
  hook = await startWebhook();
});
after(async () => {
  await hook?.close();
  await g?.close();
});

/** A chat completion through the guardrail; answers the header the webhook was sent. */
async function chatThrough(slug: string): Promise<unknown> {
  const calls = hook.calls.length;
  const res = await g.h.request('POST', '/v1/chat/completions', {
    key: g.h.workspaceKey,
    json: { model: 'gpt-x', messages: [{ role: 'user', content: 'hello' }] },
    headers: { 'x-vendor-config': g.config({ input: [slug] }) },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(hook.calls.length, calls + 1, 'the webhook was called once');
  return hook.calls.at(-1)!.headers['x-hook-token'];
}

describe('a guardrail webhook header from an internal secret reference', () => {
  test('is sent by the gateway, never shown, and a rotation reaches the gateway within a second', async () => {
    const slug = `hook-token-${randomUUID().slice(0, 8)}`;
    const created = await g.h.request('POST', '/v1/secret-references', {
      key: g.h.adminKey,
      json: { name: 'Hook token', slug, manager_type: 'internal', secret_value: 'hook-token-value-1' },
    });
    assert.equal(created.status, 200, created.text);

    const guardrail = await g.guardrail(
      [{ id: 'default.webhook', parameters: { webhookURL: hook.url } }],
      { deny: true },
      {
        secret_mappings: [{ target_field: 'headers.X-Hook-Token', secret_reference_id: slug }],
      },
    );
    assert.equal(await chatThrough(guardrail.slug), 'hook-token-value-1');

    for (const path of [`/v1/guardrails/${guardrail.id}`, `/v1/secret-references/${slug}`]) {
      const shown = await g.h.request('GET', path, { key: g.h.adminKey });
      assert.equal(shown.status, 200, shown.text);
      assert.ok(!shown.text.includes('hook-token-value'), `${path}: ${shown.text}`);
    }

    const rotated = await g.h.request('PUT', `/v1/secret-references/${slug}`, {
      key: g.h.adminKey,
      json: { secret_value: 'hook-token-value-2' },
    });
    assert.equal(rotated.status, 200, rotated.text);
    const deadline = Date.now() + 1_000;
    for (;;) {
      const seen = await chatThrough(guardrail.slug);
      if (seen === 'hook-token-value-2') break;
      assert.equal(seen, 'hook-token-value-1');
      assert.ok(Date.now() < deadline, 'the rotated value did not reach the gateway within a second');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});
