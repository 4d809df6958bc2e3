import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { controlPlane } from '@switchyard/control-plane';
import { seedOrganisation } from '@switchyard/control-plane/testing';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

let h: ServiceHarness;
/** What the injected resolver answers: no test resolves a name for real. */
const dns: Record<string, string[]> = {
  'llm.example.com': ['93.184.216.34'],
  'ten.example.com': ['10.0.0.5'],
  'loopback.example.com': ['127.0.0.1'],
};

before(async () => {
  h = await startServiceHarness({
    services: [controlPlane, adminService],
    resolve: async (host) => dns[host] ?? [],
  });
});
after(() => h.close());

const credentials = (slug: string) =>
  h.client('integrations').getIntegrationCredentials({
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    slug,
  });

async function createIntegration(slug: string, provider = 'openai') {
  const res = await h.request('POST', '/v1/integrations', {
    key: h.adminKey,
    json: { name: slug, slug, ai_provider_id: provider, key: 'sk-upstream-key-000000' },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

const setModels = (slug: string, models: unknown[], key = h.adminKey) =>
  h.request('PUT', `/v1/integrations/${slug}/integration-models`, { key, json: { models } });

const shownModels = async (slug: string, key = h.adminKey) => {
  const res = await h.request('GET', `/v1/integrations/${slug}/models`, { key });
  assert.equal(res.status, 200, res.text);
  return res.body as { total: number; models: Array<Record<string, unknown>> };
};

const customModels = async (slug: string) =>
  (await shownModels(slug)).models.filter((model) => model.is_custom === true);

describe('setting integration models', () => {
  before(() => createIntegration('models-openai'));

  test('PUT then GET shows each model with its configurations and custom headers, and the gateway gets them', async () => {
    const put = await setModels('models-openai', [
      {
        slug: 'gpt-4o',
        enabled: true,
        configurations: { custom_host: 'https://llm.example.com/v1' },
        custom_headers: { 'X-Team': 'search', 'x-region': 'eu' },
      },
      { slug: 'my-finetune', enabled: false, is_finetune: true, base_model_slug: 'gpt-4o' },
    ]);
    assert.equal(put.status, 200, put.text);

    const shown = await shownModels('models-openai');
    assert.equal(shown.total, shown.models.length);
    const gpt4o = shown.models.find((model) => model.slug === 'gpt-4o');
    assert.deepEqual(gpt4o, {
      slug: 'gpt-4o',
      name: 'gpt-4o',
      enabled: true,
      is_custom: null,
      is_finetune: null,
      base_model_slug: null,
      configurations: { custom_host: 'https://llm.example.com/v1' },
      custom_headers: { 'X-Team': 'search', 'x-region': 'eu' },
    });
    assert.deepEqual(shown.models.at(-1), {
      slug: 'my-finetune',
      name: 'my-finetune',
      enabled: false,
      is_custom: true,
      is_finetune: true,
      base_model_slug: 'gpt-4o',
      configurations: {},
      custom_headers: {},
    });
    // A listed model nobody set is shown enabled, with no settings of its own.
    const untouched = shown.models.find((model) => model.slug === 'gpt-4o-mini');
    assert.equal(untouched?.enabled, true);
    assert.deepEqual(untouched?.configurations, {});
    assert.deepEqual(put.body, shown);

    const { integration } = await credentials('models-openai');
    assert.deepEqual(
      integration?.models.map(({ slug, enabled, customHost, customHeaders }) => ({
        slug,
        enabled,
        customHost,
        customHeaders,
      })),
      [
        {
          slug: 'gpt-4o',
          enabled: true,
          customHost: 'https://llm.example.com/v1',
          customHeaders: { 'X-Team': 'search', 'x-region': 'eu' },
        },
        { slug: 'my-finetune', enabled: false, customHost: '', customHeaders: {} },
      ],
    );
  });

  test('a second PUT replaces the whole list, and /admin/v2 and the integration id reach the same models', async () => {
    const { id } = await createIntegration('replaced');
    await setModels('replaced', [{ slug: 'one', custom_headers: { 'x-a': '1' } }, { slug: 'two' }]);
    const res = await h.request('PUT', `/admin/v2/integrations/${id}/integration-models`, {
      key: h.adminKey,
      json: { models: [{ slug: 'three', enabled: true }] },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      (await customModels('replaced')).map((model) => model.slug),
      ['three'],
    );
    const viaV2 = await h.request('GET', '/admin/v2/integrations/replaced/models', { key: h.adminKey });
    assert.deepEqual(viaV2.body, await shownModels('replaced'));
    const viaModels = await h.request('PUT', '/v1/integrations/replaced/models', {
      key: h.adminKey,
      json: { models: [] },
    });
    assert.equal(viaModels.status, 200);
    assert.deepEqual(await customModels('replaced'), []);
  });

  test('empty configurations are a 400 naming them, and nothing changes', async () => {
    const before = await shownModels('models-openai');
    const res = await setModels('models-openai', [{ slug: 'gpt-4o', configurations: {} }]);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'models[0].configurations');
    assert.deepEqual(await shownModels('models-openai'), before);
  });

  for (const [what, custom_host, code] of [
    ['not a URL', 'not a url', undefined],
    ['an ftp:// URL', 'ftp://llm.example.com/', undefined],
    ['a private address', 'http://10.0.0.5/v1', 'unsafe_custom_host'],
    ['a cloud metadata address', 'http://169.254.169.254/', 'unsafe_custom_host'],
    ['a cloud metadata host name', 'http://metadata.google.internal/', 'unsafe_custom_host'],
    ['a name that resolves to a private address', 'http://ten.example.com/v1', 'unsafe_custom_host'],
    ['a name that resolves to loopback', 'http://loopback.example.com/v1', 'unsafe_custom_host'],
    ['a name that does not resolve', 'https://nowhere.example.com/v1', 'unsafe_custom_host'],
    ['a URL with a fragment', 'https://llm.example.com/v1#frag', 'unsafe_custom_host'],
  ] as const) {
    test(`a custom_host that is ${what} is a 400 naming it, and nothing changes`, async () => {
      const before = await shownModels('models-openai');
      const res = await setModels('models-openai', [
        { slug: 'fine', configurations: { custom_host: 'https://llm.example.com/v1' } },
        { slug: 'gpt-4o', configurations: { custom_host } },
      ]);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, 'models[1].configurations.custom_host');
      if (code) assert.equal(res.body.error.code, code);
      assert.deepEqual(await shownModels('models-openai'), before);
    });
  }

  for (const name of [
    'Host',
    'content-length',
    'Authorization',
    'transfer-encoding',
    'connection',
    'cookie',
    'proxy-authorization',
    'x-vendor-provider',
    'x-switchyard-trace',
  ]) {
    test(`the restricted header ${name} is a 400 naming it`, async () => {
      const res = await setModels('models-openai', [{ slug: 'gpt-4o', custom_headers: { [name]: 'x' } }]);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, `models[0].custom_headers.${name}`);
      assert.match(res.body.error.message, new RegExp(`'${name}'`));
    });
  }

  test('a header name that is not an HTTP token, or a value with a line break, is a 400 naming it', async () => {
    for (const [headers, param] of [
      [{ 'bad header': 'x' }, 'models[0].custom_headers.bad header'],
      [{ 'x-ok': 'a\r\nInjected: yes' }, 'models[0].custom_headers.x-ok'],
    ] as const) {
      const res = await setModels('models-openai', [{ slug: 'gpt-4o', custom_headers: headers }]);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, param);
    }
  });

  test('a model given twice, or a custom header that is not a string, is a 400', async () => {
    const twice = await setModels('models-openai', [{ slug: 'gpt-4o' }, { slug: 'gpt-4o' }]);
    assert.equal(twice.status, 400);
    assert.equal(twice.body.error.param, 'models[1].slug');
    const numeric = await setModels('models-openai', [{ slug: 'gpt-4o', custom_headers: { 'x-n': 1 } }]);
    assert.equal(numeric.status, 400);
    const missing = await h.request('PUT', '/v1/integrations/models-openai/integration-models', {
      key: h.adminKey,
      json: {},
    });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.param, 'models');
  });

  test('an unknown integration is a 404', async () => {
    assert.equal((await setModels('no-such-integration', [])).status, 404);
    assert.equal(
      (await h.request('GET', '/v1/integrations/no-such/models', { key: h.adminKey })).status,
      404,
    );
  });

  test('a workspace key may read the models but not set them', async () => {
    assert.equal((await shownModels('models-openai', h.workspaceKey)).models.length > 0, true);
    const res = await setModels('models-openai', [], h.workspaceKey);
    assert.equal(res.status, 403);
  });
});

describe('another organisation', () => {
  test('gets 404 for the integration by slug and by id, and nothing changes', async () => {
    const { id } = await createIntegration('guarded');
    await setModels('guarded', [{ slug: 'kept', custom_headers: { 'x-kept': 'yes' } }]);
    const before = await shownModels('guarded');
    const rival = await seedOrganisation(h.db('control-plane').manager, 'models-rival');
    for (const ref of ['guarded', id]) {
      const put = await setModels(ref, [{ slug: 'theirs' }], rival.adminKey);
      assert.equal(put.status, 404, put.text);
      const get = await h.request('GET', `/v1/integrations/${ref}/models`, { key: rival.adminKey });
      assert.equal(get.status, 404);
    }
    assert.deepEqual(await shownModels('guarded'), before);
  });
});

describe('concurrent replacements', { timeout: 60_000 }, () => {
  test('leave exactly one of the lists sent, whole', async () => {
    await createIntegration('raced');
    const lists = Array.from({ length: 10 }, (_, i) =>
      Array.from({ length: 5 }, (_, j) => ({
        slug: `model-${i}-${j}`,
        custom_headers: { 'x-list': String(i) },
      })),
    );
    const answers = await Promise.all(lists.map((list) => setModels('raced', list)));
    assert.deepEqual(
      answers.map((res) => res.status),
      lists.map(() => 200),
    );
    const stored = (await customModels('raced')).map((model) => model.slug);
    assert.ok(
      lists.some((list) => JSON.stringify(list.map((model) => model.slug)) === JSON.stringify(stored)),
      `not one whole list: ${stored.join(', ')}`,
    );
  });
});
