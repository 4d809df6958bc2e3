import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  startFakeOpenAi,
  startServiceHarness,
  type FakeOpenAi,
  type HarnessResponse,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

/** Which workspaces may use an organisation-level integration, as admin stores it and the gateway honours it. */

const upstreamKey = 'sk-integration-workspaces-0123456789';
const services = [controlPlane, policyService, adminService, gatewayService] as ServiceDefinition[];
let fake: FakeOpenAi;
let h: ServiceHarness;
let workspaceSlug: string;

before(async () => {
  fake = await startFakeOpenAi({ apiKey: upstreamKey });
  h = await startServiceHarness({ services });
  const self = await h.request('GET', `/v2/workspaces/${h.workspaceId}`, { key: h.adminKey });
  assert.equal(self.status, 200, self.text);
  workspaceSlug = self.body.slug;
});
after(async () => {
  await h?.close();
  await fake?.close();
});

async function integration(json: Record<string, unknown> = {}): Promise<string> {
  const slug = `ws-${randomUUID().slice(0, 8)}`;
  const created = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: {
      name: slug,
      slug,
      ai_provider_id: 'openai',
      key: upstreamKey,
      configurations: { custom_host: fake.baseUrl },
      ...json,
    },
  });
  assert.equal(created.status, 200, created.text);
  return slug;
}

async function workspace(): Promise<{ id: string; slug: string }> {
  const created = await h.request('POST', '/v2/workspaces', {
    key: h.adminKey,
    json: { name: `w ${randomUUID().slice(0, 8)}` },
  });
  assert.equal(created.status, 200, created.text);
  return { id: created.body.id, slug: created.body.slug };
}

const access = (slug: string, key = h.adminKey) =>
  h.request('GET', `/v1/integrations/${slug}/workspaces`, { key });
const setAccess = (slug: string, json: unknown, key = h.adminKey) =>
  h.request('PUT', `/v1/integrations/${slug}/workspaces`, { key, json });

const chat = (slug: string) =>
  h.request('POST', '/v1/chat/completions', {
    key: h.workspaceKey,
    json: { model: `@${slug}/gpt-4o-mini`, messages: [{ role: 'user', content: 'hi' }] },
  });

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

async function listedModels(): Promise<string[]> {
  const res = await h.request('GET', '/v1/models', { key: h.workspaceKey });
  assert.equal(res.status, 200, res.text);
  return res.body.data.map((m: { id: string }) => m.id);
}

describe('integration workspace access', () => {
  test('an integration with no access settings is open to every workspace of its organisation', async () => {
    const slug = await integration();
    const res = await access(slug);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      total: 0,
      workspaces: [],
      global_workspace_access: { enabled: true, usage_limits: null, rate_limits: null },
    });
    assert.equal((await chat(slug)).status, 200);
    assert.ok((await listedModels()).includes(`@${slug}/gpt-4o-mini`));
  });

  test('a workspace denied the integration gets a 403 naming it, and no longer sees its models', async () => {
    const slug = await integration();
    assert.equal((await chat(slug)).status, 200, 'usable before');
    const before = fake.requests.length;
    const denied = await setAccess(slug, { workspaces: [{ id: workspaceSlug, enabled: false }] });
    assert.equal(denied.status, 200, denied.text);
    assert.deepEqual(denied.body.workspaces, [
      { id: h.workspaceId, enabled: false, usage_limits: null, rate_limits: null },
    ]);
    assert.deepEqual((await access(slug)).body, denied.body);

    const refused = await until(403, () => chat(slug));
    assert.equal(refused.body.error.code, 'integration_workspace_denied');
    assert.match(refused.body.error.message, new RegExp(`'${slug}'`));
    assert.equal(fake.requests.length, before, 'the provider was asked for a denied workspace');
    assert.ok(!(await listedModels()).some((id) => id.startsWith(`@${slug}/`)));

    // Granted again, by id this time.
    const granted = await setAccess(slug, { workspaces: [{ id: h.workspaceId, enabled: true }] });
    assert.equal(granted.status, 200, granted.text);
    await until(200, () => chat(slug));
    assert.ok((await listedModels()).includes(`@${slug}/gpt-4o-mini`));
  });

  test("with global access off only the workspaces granted their own access may use it; override drops the others' settings", async () => {
    const slug = await integration();
    const other = await workspace();
    const off = await setAccess(slug, {
      global_workspace_access: { enabled: false },
      workspaces: [{ id: other.id, enabled: true }],
    });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.global_workspace_access.enabled, false);
    assert.equal(off.body.total, 1);
    await until(403, () => chat(slug));

    const mine = await setAccess(slug, { workspaces: [{ id: h.workspaceId, enabled: true }] });
    assert.deepEqual(
      mine.body.workspaces.map((w: { id: string }) => w.id),
      [other.id, h.workspaceId],
      'a PUT without override keeps the settings it does not name',
    );
    await until(200, () => chat(slug));

    const replaced = await setAccess(slug, {
      workspaces: [{ id: other.slug, enabled: true }],
      override_existing_workspace_access: true,
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(
      replaced.body.workspaces.map((w: { id: string }) => w.id),
      [other.id],
    );
    await until(403, () => chat(slug));

    const open = await setAccess(slug, {
      global_workspace_access: { enabled: true },
      override_existing_workspace_access: true,
    });
    assert.deepEqual(open.body, {
      total: 0,
      workspaces: [],
      global_workspace_access: { enabled: true, usage_limits: null, rate_limits: null },
    });
    await until(200, () => chat(slug));
  });

  test('an unknown workspace is a 404 naming its index, and nothing is changed', async () => {
    const slug = await integration();
    const res = await setAccess(slug, {
      global_workspace_access: { enabled: false },
      workspaces: [
        { id: h.workspaceId, enabled: false },
        { id: 'no-such-workspace', enabled: true },
      ],
    });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.body.error.code, 'workspace_not_found');
    assert.equal(res.body.error.param, 'workspaces[1].id');
    assert.match(res.body.error.message, /no-such-workspace/);
    assert.deepEqual((await access(slug)).body.total, 0);
    assert.equal((await access(slug)).body.global_workspace_access.enabled, true);
    // Another organisation's workspace is not found either.
    const foreign = await setAccess(slug, { workspaces: [{ id: randomUUID(), enabled: true }] });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.error.param, 'workspaces[0].id');
  });

  test('per-workspace usage or rate limits are answered 501; null or empty limits are taken', async () => {
    const slug = await integration();
    const limited = await setAccess(slug, {
      workspaces: [{ id: h.workspaceId, enabled: true, usage_limits: [{ credit_limit: 10 }] }],
    });
    assert.equal(limited.status, 501, limited.text);
    assert.equal(limited.body.error.param, 'workspaces[0].usage_limits');
    assert.match(limited.body.error.message, /not supported/);
    const globalRate = await setAccess(slug, {
      global_workspace_access: { enabled: true, rate_limits: [{ value: 5 }] },
    });
    assert.equal(globalRate.status, 501);
    assert.equal(globalRate.body.error.param, 'global_workspace_access.rate_limits');
    const reset = await setAccess(slug, {
      workspaces: [{ id: h.workspaceId, enabled: true, reset_usage: true }],
    });
    assert.equal(reset.status, 501);
    assert.equal((await access(slug)).body.total, 0, 'a refused PUT changed access');

    const none = await setAccess(slug, {
      workspaces: [{ id: h.workspaceId, enabled: true, usage_limits: null, rate_limits: [] }],
    });
    assert.equal(none.status, 200, none.text);
  });

  test('bad bodies are 400s naming the field', async () => {
    const slug = await integration();
    const cases: Array<[unknown, string]> = [
      [{ workspaces: [{ id: h.workspaceId }] }, 'workspaces.0.enabled'],
      [{ workspaces: [{ id: h.workspaceId, enabled: 'yes' }] }, 'workspaces.0.enabled'],
      [{ workspaces: [{ id: '', enabled: true }] }, 'workspaces.0.id'],
      [{ global_workspace_access: {} }, 'global_workspace_access.enabled'],
      [{ override_existing_workspace_access: 'true' }, 'override_existing_workspace_access'],
      [{ workspaces: 'all' }, 'workspaces'],
      [{ surprise: 1 }, 'surprise'],
    ];
    for (const [json, param] of cases) {
      const res = await setAccess(slug, json);
      assert.equal(res.status, 400, `${JSON.stringify(json)}: ${res.text}`);
      assert.equal(res.body.error.param?.replace(/\[(\d+)\]/g, '.$1'), param, JSON.stringify(json));
    }
    const twice = await setAccess(slug, {
      workspaces: [
        { id: h.workspaceId, enabled: true },
        { id: workspaceSlug, enabled: false },
      ],
    });
    assert.equal(twice.status, 400, twice.text);
    assert.equal(twice.body.error.param, 'workspaces[1].id');
  });

  test("a workspace's own integration has no workspace access: refused with a 409 saying why", async () => {
    const slug = await integration({ workspace_id: h.workspaceId });
    for (const res of [await access(slug), await setAccess(slug, { workspaces: [] })]) {
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.code, 'workspace_integration');
      assert.match(res.body.error.message, /organisation-level/);
    }
  });

  test('a workspace key may not read or change access; an unknown integration is a 404', async () => {
    const slug = await integration();
    assert.equal((await access(slug, h.workspaceKey)).status, 403);
    assert.equal((await setAccess(slug, { workspaces: [] }, h.workspaceKey)).status, 403);
    assert.equal((await access('no-such-integration')).status, 404);
    assert.equal((await setAccess('no-such-integration', { workspaces: [] })).status, 404);
  });

  test('concurrent changes apply whole: the access ends as one of them set it', async () => {
    const slug = await integration();
    const spaces = await Promise.all([workspace(), workspace(), workspace(), workspace()]);
    const bodies = [0, 1, 2, 3].map((i) => ({
      override_existing_workspace_access: true,
      global_workspace_access: { enabled: i % 2 === 0 },
      workspaces: spaces.map((w, j) => ({ id: w.id, enabled: (i + j) % 2 === 0 })),
    }));
    const answers = await Promise.all(bodies.map((body) => setAccess(slug, body)));
    for (const res of answers) assert.equal(res.status, 200, res.text);
    const final = (await access(slug)).body;
    const shown = (body: (typeof bodies)[number]) => ({
      global: body.global_workspace_access.enabled,
      enabled: body.workspaces.map((w) => `${w.id}:${w.enabled}`).sort(),
    });
    const got = {
      global: final.global_workspace_access.enabled,
      enabled: final.workspaces.map((w: { id: string; enabled: boolean }) => `${w.id}:${w.enabled}`).sort(),
    };
    assert.equal(final.total, spaces.length);
    assert.ok(
      bodies.some((body) => JSON.stringify(shown(body)) === JSON.stringify(got)),
      `a mix of concurrent changes: ${JSON.stringify(got)}`,
    );
  });
});
