import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { maskSecret } from '@switchyard/core';
import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService, type Admin } from './service.ts';

const openAiKey = 'sk-from-the-environment-0123456789';
const openAiBaseUrl = 'http://127.0.0.1:9/v1';
let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({
    services: [controlPlane, adminService],
    env: { OPENAI_API_KEY: openAiKey, OPENAI_BASE_URL: openAiBaseUrl },
  });
});
after(() => h.close());

test('OPENAI_API_KEY becomes an openai integration once, however often seeding runs', async () => {
  const admin = h.instance<Admin>('admin');
  assert.deepEqual(await admin.seedIntegrationsFromEnvironment(h.organisationId), ['openai']);
  assert.deepEqual(await admin.seedIntegrationsFromEnvironment(h.organisationId), []);
  assert.deepEqual(await admin.seedIntegrationsFromEnvironment(h.organisationId), []);

  const rows = await h.db('admin').query(`SELECT slug, status FROM admin.integrations WHERE slug = 'openai'`);
  assert.deepEqual(rows, [{ slug: 'openai', status: 'active' }]);

  const shown = await h.request('GET', '/admin/v2/integrations/openai', { key: h.adminKey });
  assert.equal(shown.status, 200);
  assert.equal(shown.body.ai_provider_id, 'openai');
  assert.equal(shown.body.workspace_id, null);
  assert.equal(shown.body.masked_key, maskSecret(openAiKey));
  assert.equal(shown.body.configurations.custom_host, openAiBaseUrl);

  const { integration } = await h.client('integrations').getIntegrationCredentials({
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    slug: 'openai',
  });
  assert.equal(integration?.apiKey, openAiKey);
  assert.equal(integration?.baseUrl, openAiBaseUrl);
});

test('ANTHROPIC_BASE_URL in the Anthropic SDK convention (no /v1) becomes the API root', async () => {
  const other = await startServiceHarness({
    services: [controlPlane, adminService],
    env: { ANTHROPIC_API_KEY: 'sk-ant-0123456789', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' },
  });
  try {
    await other.instance<Admin>('admin').seedIntegrationsFromEnvironment(other.organisationId);
    const shown = await other.request('GET', '/admin/v2/integrations/anthropic', { key: other.adminKey });
    assert.equal(shown.body.configurations.custom_host, 'http://127.0.0.1:9/v1');
  } finally {
    await other.close();
  }
});

test('the all-in-one @mock integration is created once, organisation-wide, with no key', async () => {
  const admin = h.instance<Admin>('admin');
  await admin.ensureMockIntegration(h.organisationId);
  await admin.ensureMockIntegration(h.organisationId);
  const rows = await h
    .db('admin')
    .query(
      `SELECT provider, workspace_id, encrypted_key FROM admin.integrations WHERE slug = 'mock' AND status = 'active'`,
    );
  assert.deepEqual(rows, [{ provider: 'mock', workspace_id: null, encrypted_key: null }]);
});
