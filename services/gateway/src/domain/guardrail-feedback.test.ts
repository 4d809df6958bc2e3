import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '@switchyard/testing';
import { startGuardrailHarness, type GuardrailHarness, type Json } from '../testing/guardrails.ts';
import { everyService } from '../testing/services.ts';

/** A guardrail's on_success / on_fail feedback, from the gateway through the event bus onto the request's log. */

let g: GuardrailHarness;

before(async () => {
  g = await startGuardrailHarness({
    services: everyService,
  });
});
after(() => g?.close());

async function feedbackOn(traceId: string, content: string, config: string): Promise<Json[]> {
  const res = await g.h.request('POST', '/v1/chat/completions', {
    key: g.h.workspaceKey,
    json: { model: 'gpt-x', messages: [{ role: 'user', content }] },
    headers: { 'x-vendor-config': config, 'x-vendor-trace-id': traceId },
  });
  assert.equal(res.status, 200, res.text);
  const id = res.headers.get('x-request-id')!;
  return eventually(
    async () => {
      const log = await g.h.request('GET', `/v1/logs/${id}`, { key: g.h.workspaceKey });
      return log.status === 200 && (log.body.feedback as Json[]).length > 0
        ? (log.body.feedback as Json[])
        : undefined;
    },
    { what: `feedback on ${traceId}`, timeoutMs: 10_000 },
  );
}

test("a guardrail's on_fail feedback lands on a request it failed, its on_success on one it passed", async () => {
  const { id, slug } = await g.guardrail(
    [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }],
    {
      deny: false,
      on_success: { feedback: { value: 3, weight: 1, metadata: 'clean' } },
      on_fail: { feedback: { value: -5, weight: 0.5, metadata: 'forbidden word' } },
    },
  );
  const config = g.config({ input: [slug] });

  const failed = await feedbackOn('trace-guardrail-fail', 'this is classified', config);
  assert.deepEqual(
    failed.map((f) => ({ value: f.value, weight: f.weight, metadata: f.metadata, created_by: f.created_by })),
    [
      {
        value: -5,
        weight: 0.5,
        metadata: {
          source: 'guardrail',
          guardrail_id: id,
          guardrail: slug,
          phase: 'input',
          passed: false,
          metadata: 'forbidden word',
        },
        created_by: `guardrail:${id}`,
      },
    ],
  );
  const passed = await feedbackOn('trace-guardrail-pass', 'this is public', config);
  assert.deepEqual(
    passed.map((f) => [f.value, f.metadata.passed, f.metadata.metadata]),
    [[3, true, 'clean']],
  );
});
