import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';

let h: ServiceHarness;
let saved: { id: string; version_id: string; slug: string };

const document = {
  strategy: { mode: 'fallback' },
  targets: [{ provider: '@primary' }, { virtual_key: 'backup' }],
};

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  const res = await h.request('POST', '/v2/configs', {
    key: h.workspaceKey,
    json: { name: 'Served', config: document },
  });
  assert.equal(res.status, 200, res.text);
  saved = res.body.data;
});
after(() => h.close());

const getConfig = (idOrSlug: string, workspaceId = h.workspaceId, organisationId = h.organisationId) =>
  h.client('configs').getConfig({ organisationId, workspaceId, idOrSlug });

test('GetConfig answers with the saved config by slug and by id', async () => {
  for (const ref of [saved.slug, saved.id]) {
    const { config } = await getConfig(ref);
    assert.ok(config, ref);
    assert.equal(config.id, saved.id);
    assert.equal(config.slug, saved.slug);
    assert.equal(config.name, 'Served');
    assert.equal(config.workspaceId, h.workspaceId);
    assert.equal(config.versionId, saved.version_id);
    assert.deepEqual(JSON.parse(config.configJson), document);
  }
});

test('GetConfig answers with the latest version after an update', async () => {
  const next = { virtual_key: 'only-one' };
  const updated = await h.request('PUT', `/v2/configs/${saved.slug}`, {
    key: h.workspaceKey,
    json: { config: next },
  });
  assert.equal(updated.status, 200);
  const { config } = await getConfig(saved.slug);
  assert.equal(config?.versionId, updated.body.data.version_id);
  assert.deepEqual(JSON.parse(config!.configJson), next);
});

test('GetConfig answers with no config for an unknown slug or id', async () => {
  for (const ref of ['pc-never-000000', '00000000-0000-4000-8000-000000000000']) {
    assert.equal((await getConfig(ref)).config, undefined, ref);
  }
});

test('GetConfig answers with no config for another workspace or organisation', async () => {
  const workspace = await h.request('POST', '/v2/workspaces', { key: h.adminKey, json: { name: 'Other' } });
  assert.equal(workspace.status, 200);
  assert.equal((await getConfig(saved.slug, workspace.body.id)).config, undefined);
  assert.equal((await getConfig(saved.id, workspace.body.id)).config, undefined);
  assert.equal(
    (await getConfig(saved.slug, h.workspaceId, '00000000-0000-4000-8000-000000000000')).config,
    undefined,
  );
});

test('GetConfig treats malformed ids as names that match nothing, never as a fault', async () => {
  const odd = [
    ['not-a-uuid', h.workspaceId, h.organisationId],
    [saved.slug, 'not-a-uuid', h.organisationId],
    [saved.slug, '', h.organisationId],
    [saved.slug, h.workspaceId, 'not-a-uuid'],
    ['', h.workspaceId, h.organisationId],
    ["x' OR '1'='1", h.workspaceId, h.organisationId],
    [`${saved.id}x`, h.workspaceId, h.organisationId],
  ] as const;
  for (const [ref, workspaceId, organisationId] of odd) {
    const { config } = await getConfig(ref, workspaceId, organisationId);
    assert.equal(config, undefined, JSON.stringify([ref, workspaceId, organisationId]));
  }
});

test('GetConfig answers with no config once it is deleted', async () => {
  const created = await h.request('POST', '/v2/configs', {
    key: h.workspaceKey,
    json: { name: 'Going away', config: document },
  });
  assert.ok((await getConfig(created.body.data.slug)).config);
  await h.request('DELETE', `/v2/configs/${created.body.data.slug}`, { key: h.workspaceKey });
  assert.equal((await getConfig(created.body.data.slug)).config, undefined);
  assert.equal((await getConfig(created.body.data.id)).config, undefined);
});
