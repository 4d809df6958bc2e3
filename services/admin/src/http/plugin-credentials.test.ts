import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { controlPlane } from '@switchyard/control-plane';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

const SECRET = 'plugin-secret-value-that-must-never-show-0123456789';
const TOKEN = 'plugin-token-value-that-must-never-show-9876543210';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
});
after(() => h.close());

const create = (json: unknown) => h.request('POST', '/v1/integrations', { key: h.adminKey, json });

describe('plugin integrations', () => {
  test('store their credentials encrypted and show each one only masked', async () => {
    const created = await create({
      name: 'Search plugin',
      slug: 'search-plugin',
      plugin_provider_id: 'web-search',
      credentials: { api_key: SECRET, token: TOKEN },
    });
    assert.equal(created.status, 200, created.text);
    const read = await h.request('GET', '/v1/integrations/search-plugin', { key: h.adminKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.plugin_provider_id, 'web-search');
    assert.equal(read.body.ai_provider_id, null);
    assert.deepEqual(read.body.credentials, { api_key: 'plug****89', token: 'plug****10' });
    const list = await h.request('GET', '/v1/integrations', { key: h.adminKey });
    for (const res of [created, read, list]) {
      assert.ok(!res.text.includes(SECRET.slice(4, -2)) && !res.text.includes(TOKEN.slice(4, -2)), res.text);
    }
    const [row] = (await h
      .db('admin')
      .query(`SELECT encrypted_credentials FROM admin.integrations WHERE slug = 'search-plugin'`)) as Array<{
      encrypted_credentials: Record<string, string>;
    }>;
    assert.deepEqual(Object.keys(row!.encrypted_credentials).sort(), ['api_key', 'token']);
    for (const value of Object.values(row!.encrypted_credentials)) assert.match(value, /^v1\./);
    assert.ok(!JSON.stringify(row).includes(SECRET) && !JSON.stringify(row).includes(TOKEN));
  });

  test('an update sets the credentials given, removes those set to null and keeps the rest', async () => {
    const updated = await h.request('PUT', '/v1/integrations/search-plugin', {
      key: h.adminKey,
      json: { credentials: { token: null, region: 'eu-west-credential-1' } },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.body.credentials, { api_key: 'plug****89', region: 'eu-w****-1' });
    assert.ok(!updated.text.includes('eu-west-credential-1'));
  });

  test('bad input is a 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'Both', ai_provider_id: 'openai', plugin_provider_id: 'p' }, 'plugin_provider_id'],
      [{ name: 'Neither' }, 'ai_provider_id'],
      [{ name: 'No credentials', plugin_provider_id: 'p' }, 'credentials'],
      [{ name: 'Not strings', plugin_provider_id: 'p', credentials: { api_key: 42 } }, 'credentials.api_key'],
      [{ name: 'Empty', plugin_provider_id: 'p', credentials: {} }, 'credentials'],
      [
        { name: 'Bad name', plugin_provider_id: 'p', credentials: { 'bad name': 'x' } },
        'credentials.bad name',
      ],
      [
        {
          name: 'Too many',
          plugin_provider_id: 'p',
          credentials: Object.fromEntries([...Array(33)].map((_, i) => [`k${i}`, 'v'])),
        },
        'credentials',
      ],
      [{ name: 'Too long', plugin_provider_id: 'p', credentials: { k: 'x'.repeat(8193) } }, 'credentials.k'],
      [{ name: 'Key too', plugin_provider_id: 'p', credentials: { k: 'v' }, key: 'sk-x' }, 'key'],
      [{ name: 'Credentials for AI', ai_provider_id: 'openai', credentials: { k: 'v' } }, 'credentials'],
    ];
    for (const [json, param] of cases) {
      const res = await create(json);
      assert.equal(res.status, 400, `${JSON.stringify(json).slice(0, 80)}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
    }
    const openai = await create({
      name: 'OpenAI',
      slug: 'openai-plain',
      ai_provider_id: 'openai',
      key: 'sk-plain-0000000000',
    });
    assert.equal(openai.status, 200, openai.text);
    const wrongKind = await h.request('PUT', '/v1/integrations/openai-plain', {
      key: h.adminKey,
      json: { credentials: { k: 'v' } },
    });
    assert.equal(wrongKind.status, 400, wrongKind.text);
    assert.equal(wrongKind.body.error.param, 'credentials');
    const pluginKey = await h.request('PUT', '/v1/integrations/search-plugin', {
      key: h.adminKey,
      json: { key: 'sk-nope-000000000' },
    });
    assert.equal(pluginKey.status, 400, pluginKey.text);
    assert.equal(pluginKey.body.error.param, 'key');
  });

  test('an AI provider integration shows no credentials, and its key can be replaced', async () => {
    const updated = await h.request('PUT', '/v1/integrations/openai-plain', {
      key: h.adminKey,
      json: { name: 'OpenAI renamed', key: 'sk-replaced-key-0000000042' },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.name, 'OpenAI renamed');
    assert.equal(updated.body.credentials, null);
    assert.equal(updated.body.masked_key, 'sk-r****42');
  });
});
