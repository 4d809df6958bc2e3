import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeOpenAi, HarnessResponse, ServiceHarness } from '@switchyard/testing';
import { startGuardrailHarness, type GuardrailHarness, type Json } from '../testing/guardrails.ts';

/** The organisation's default guardrails, as admin sets them, run on requests that name none. */

let g: GuardrailHarness;
let fake: FakeOpenAi;
let h: ServiceHarness;
/** A key of a second workspace of the organisation, which no exclusion names. */
let otherWorkspaceKey: string;

before(async () => {
  g = await startGuardrailHarness({ upstreamKey: 'sk-guardrail-defaults-upstream-0123' });
  ({ fake, h } = g);
  const integration = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: 'Upstream',
      slug: 'up',
      ai_provider_id: 'openai',
      key: g.upstreamKey,
      configurations: { custom_host: fake.baseUrl },
    },
  });
  assert.equal(integration.status, 200, integration.text);
  const workspace = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name: 'Other' } });
  assert.equal(workspace.status, 200, workspace.text);
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Other key', workspace_id: workspace.body.id },
  });
  assert.equal(key.status, 200, key.text);
  otherWorkspaceKey = key.body.key;
});
after(() => g?.close());

const guardrail = (checks: Json[], actions: Json) => g.guardrail(checks, actions);

const forbiddenWords = [{ id: 'default.contains', parameters: { operator: 'none', words: ['classified'] } }];
const pii = [{ id: 'default.pii', parameters: { categories: ['email'] } }];

/** A chat completion through the saved integration: no config at all. */
function chat(content: string, key = h.workspaceKey, headers: Record<string, string> = {}) {
  return h.request('POST', '/v1/chat/completions', {
    key,
    json: { model: 'gpt-x', messages: [{ role: 'user', content }] },
    headers: { 'x-vendor-provider': '@up', ...headers },
  });
}

async function setDefaults(json: { input_guardrails?: string[]; output_guardrails?: string[] }) {
  const res = await h.request('PUT', '/v1/admin/organisation/defaults', { key: h.adminKey, json });
  assert.equal(res.status, 200, res.text);
}

async function exclude(phase: 'input' | 'output', workspaceIds: string[]) {
  const res = await h.request('PUT', `/v1/workspace-exclusions/${phase}-guardrails`, {
    key: h.adminKey,
    json: { workspace_ids: workspaceIds, override_existing: true },
  });
  assert.equal(res.status, 200, res.text);
}

/**
 * Sends the request until it answers `status`: a change reaches the gateway through its
 * change event, which arrives a moment after the write.
 */
async function until(status: number, send: () => Promise<HarnessResponse>): Promise<HarnessResponse> {
  let res = await send();
  for (let i = 0; i < 100 && res.status !== status; i++) {
    await sleep(50);
    res = await send();
  }
  assert.equal(res.status, status, res.text);
  return res;
}

describe('organisation default guardrails', () => {
  test('an input default denies a request that names no config, before the provider sees it', async () => {
    const denying = await guardrail(forbiddenWords, { deny: true });
    assert.equal((await chat('this is classified')).status, 200, 'no default yet');
    await setDefaults({ input_guardrails: [denying.slug] });
    const before = fake.requests.length;
    const res = await until(446, () => chat('this is classified'));
    assert.equal(res.body.error.code, 'guardrail_denied');
    assert.match(res.body.error.message, new RegExp(denying.slug));
    assert.equal(fake.requests.length, before, 'the provider never saw a denied request');
    assert.equal((await chat('nothing to see')).status, 200);
    await setDefaults({ input_guardrails: [] });
    await until(200, () => chat('this is classified'));
  });

  test('an output default withholds the answer of a request that names no config', async () => {
    const denying = await guardrail(pii, { deny: true });
    await setDefaults({ output_guardrails: [denying.id] });
    let res = await chat('jane.doe@example.com');
    for (let i = 0; i < 100 && res.body.choices?.[0]?.finish_reason !== 'content_filter'; i++) {
      await sleep(50);
      res = await chat('jane.doe@example.com');
    }
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0].finish_reason, 'content_filter');
    assert.ok(!res.text.includes('jane.doe@example.com'), res.text);
    await setDefaults({ output_guardrails: [] });
  });

  test('an excluded workspace is not checked by the defaults of that phase; other workspaces are', async () => {
    const denying = await guardrail(forbiddenWords, { deny: true });
    await setDefaults({ input_guardrails: [denying.id] });
    await until(446, () => chat('classified'));
    await exclude('input', [h.workspaceId]);
    await until(200, () => chat('classified'));
    assert.equal(
      (await chat('classified', otherWorkspaceKey)).status,
      446,
      'the other workspace is still checked',
    );
    await exclude('output', [h.workspaceId]);
    await exclude('input', []);
    await until(446, () => chat('classified'));
    await setDefaults({ input_guardrails: [] });
    await exclude('output', []);
    await until(200, () => chat('classified'));
  });

  test('a change to the defaults applies to the next requests', async () => {
    const first = await guardrail(forbiddenWords, { deny: true });
    const second = await guardrail(
      [{ id: 'default.contains', parameters: { operator: 'none', words: ['secret'] } }],
      { deny: true },
    );
    await setDefaults({ input_guardrails: [first.id] });
    await until(446, () => chat('classified'));
    await setDefaults({ input_guardrails: [second.id] });
    await until(200, () => chat('classified'));
    assert.equal((await chat('a secret')).status, 446);
    await setDefaults({ input_guardrails: [] });
    await until(200, () => chat('a secret'));
  });

  test("the defaults run before the config's, and a guardrail both name runs once", async () => {
    const warning = await guardrail(pii, { deny: false });
    const denying = await guardrail(forbiddenWords, { deny: true });
    await setDefaults({ input_guardrails: [warning.id, denying.id] });
    const config = JSON.stringify({ input_guardrails: [denying.slug] });
    const res = await until(446, () =>
      chat('classified, mail jane.doe@example.com', h.workspaceKey, { 'x-vendor-config': config }),
    );
    const hooks = res.body.hook_results.before_request_hooks as Json[];
    assert.deepEqual(
      hooks.map((hook) => hook.slug),
      [warning.slug, denying.slug],
    );
    await setDefaults({ input_guardrails: [] });
    await until(200, () => chat('classified'));
  });

  test('a default archived since it was chosen is skipped, not an error', async () => {
    const kept = await guardrail(forbiddenWords, { deny: true });
    const archived = await guardrail(
      [{ id: 'default.contains', parameters: { operator: 'none', words: ['secret'] } }],
      { deny: true },
    );
    await setDefaults({ input_guardrails: [archived.id, kept.id] });
    await until(446, () => chat('a secret'));
    const deleted = await h.request('DELETE', `/v1/guardrails/${archived.id}`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    await until(200, () => chat('a secret'));
    assert.equal((await chat('classified')).status, 446, 'the remaining default still applies');
    await setDefaults({ input_guardrails: [] });
    await until(200, () => chat('classified'));
  });
});
