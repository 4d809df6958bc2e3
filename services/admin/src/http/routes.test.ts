import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SecretBox, maskSecret } from '@switchyard/core';
import { scopesForKind } from '@switchyard/access';
import { controlPlane } from '@switchyard/control-plane';
import { keyMaterialOf, IdentityRepository, seedOrganisation } from '@switchyard/control-plane/testing';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

let h: ServiceHarness;
let otherWorkspace: { id: string };
let otherWorkspaceKey: string;
/** What the injected resolver answers: no test resolves a name for real. */
const dns: Record<string, string[]> = {
  'llm.example.com': ['93.184.216.34'],
  'ten.example.com': ['10.0.0.5'],
  'loopback.example.com': ['127.0.0.1'],
  'link-local.example.com': ['fe80::1'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'half-private.example.com': ['93.184.216.34', '10.0.0.5'],
  'vllm.models.internal': ['10.0.0.7'],
};

before(async () => {
  h = await startServiceHarness({
    services: [controlPlane, adminService],
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1,models.internal' },
    resolve: async (host) => dns[host] ?? [],
  });
  const created = await h.request('POST', '/v2/workspaces', {
    key: h.adminKey,
    json: { name: 'Other team' },
  });
  otherWorkspace = created.body;
  const key = await h.request('POST', '/v2/api-keys/workspace/service', {
    key: h.adminKey,
    json: { name: 'Other team key', workspace_id: otherWorkspace.id },
  });
  otherWorkspaceKey = key.body.key;
});
after(() => h.close());

const credentials = (slug: string, workspaceId = h.workspaceId) =>
  h.client('integrations').getIntegrationCredentials({ organisationId: h.organisationId, workspaceId, slug });

async function createIntegration(body: Record<string, unknown>, base = '/admin/v2/integrations') {
  const res = await h.request('POST', base, {
    key: h.adminKey,
    json: { name: 'An integration', ai_provider_id: 'openai', ...body },
  });
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string };
}

describe('creating an integration', () => {
  const plaintext = 'sk-proj-very-secret-upstream-key-1234567890';
  const headerValue = 'org-header-secret-value';

  test('stores the key encrypted and answers with only the id and slug', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: 'Team OpenAI',
        slug: 'team-openai',
        ai_provider_id: 'openai',
        key: plaintext,
        configurations: {
          custom_host: 'http://127.0.0.1:9/v1',
          headers: { 'OpenAI-Organization': headerValue },
        },
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['id', 'slug']);
    assert.equal(res.body.slug, 'team-openai');

    const [row] = await h.db('admin').query(`SELECT * FROM admin.integrations WHERE id = $1`, [res.body.id]);
    assert.ok(row.encrypted_key);
    assert.ok(!row.encrypted_key.includes(plaintext));
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!JSON.stringify(value).includes(plaintext), `column ${column} holds the key`);
      assert.ok(!JSON.stringify(value).includes(headerValue), `column ${column} holds a header value`);
    }
    assert.equal(new SecretBox(h.env.SWITCHYARD_ENCRYPTION_KEY!).decrypt(row.encrypted_key), plaintext);
  });

  test('shows the key and header values only masked', async () => {
    const res = await h.request('GET', '/admin/v2/integrations/team-openai', { key: h.adminKey });
    assert.equal(res.status, 200);
    assert.equal(res.body.masked_key, maskSecret(plaintext));
    assert.notEqual(res.body.masked_key, plaintext);
    assert.deepEqual(res.body.configurations, {
      custom_host: 'http://127.0.0.1:9/v1',
      headers: { 'OpenAI-Organization': '****' },
    });
    assert.equal(res.body.ai_provider_id, 'openai');
    assert.equal(res.body.object, 'integration');
    assert.ok(!res.text.includes(plaintext));
    assert.ok(!res.text.includes(headerValue));

    const list = await h.request('GET', '/admin/v2/integrations', { key: h.adminKey });
    assert.ok(list.body.data.some((i: { slug: string }) => i.slug === 'team-openai'));
    assert.ok(!list.text.includes(plaintext));
    assert.ok(!list.text.includes(headerValue));
  });

  test('secret provider settings are encrypted at rest, shown masked, and handed decrypted to the gateway', async () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    await createIntegration({
      slug: 'aws',
      ai_provider_id: 'bedrock',
      configurations: {
        aws_region: 'eu-west-1',
        aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        aws_secret_access_key: secret,
      },
    });
    const [row] = await h
      .db('admin')
      .query(`SELECT configurations FROM admin.integrations WHERE slug = 'aws'`);
    assert.ok(!JSON.stringify(row.configurations).includes(secret));
    const shown = await h.request('GET', '/admin/v2/integrations/aws', { key: h.adminKey });
    assert.deepEqual(shown.body.configurations, {
      aws_region: 'eu-west-1',
      aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      masked_aws_secret_access_key: '****',
    });
    const { integration } = await credentials('aws');
    assert.deepEqual(integration?.settings, {
      aws_region: 'eu-west-1',
      aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      aws_secret_access_key: secret,
    });
  });

  test('a malformed provider setting is a 400 naming it', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: 'x', ai_provider_id: 'bedrock', configurations: { aws_region: 'moon' } },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'configurations.aws_region');
  });

  test('hands the decrypted credentials to the gateway over gRPC', async () => {
    const { integration } = await credentials('team-openai');
    assert.ok(integration);
    assert.equal(integration.apiKey, plaintext);
    assert.equal(integration.provider, 'openai');
    assert.equal(integration.baseUrl, 'http://127.0.0.1:9/v1');
    assert.deepEqual(integration.headers, { 'OpenAI-Organization': headerValue });
  });

  test('a second live integration with the same slug is a 409', async () => {
    await createIntegration({ slug: 'taken' });
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: 'Again', slug: 'taken', ai_provider_id: 'openai' },
    });
    assert.equal(res.status, 409);
    assert.equal(res.body.error.param, 'slug');
  });

  test('an unknown ai_provider_id is a 400 naming it', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: 'Nope', ai_provider_id: 'not-a-provider' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'ai_provider_id');
  });

  test('a custom_host that is not an http(s) URL is a 400 naming it', async () => {
    for (const custom_host of ['ftp://x', 'not a url', 'file:///etc/passwd']) {
      const res = await h.request('POST', '/admin/v2/integrations', {
        key: h.adminKey,
        json: { name: 'Nope', ai_provider_id: 'openai', configurations: { custom_host } },
      });
      assert.equal(res.status, 400, custom_host);
      assert.equal(res.body.error.param, 'configurations.custom_host');
    }
  });

  test('a slug with characters outside letters, digits, - and _ is a 400 naming slug', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: { name: 'Nope', slug: 'has space', ai_provider_id: 'openai' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'slug');
  });

  test('a workspace key cannot create one', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.workspaceKey,
      json: { name: 'Mine', slug: 'mine', ai_provider_id: 'openai', key: 'sk-x' },
    });
    assert.equal(res.status, 403);
    assert.equal((await h.request('GET', '/admin/v2/integrations/mine', { key: h.adminKey })).status, 404);
  });
});

describe('a saved custom_host', () => {
  const slugs = async () =>
    (await h.request('GET', '/admin/v2/integrations?page_size=1000', { key: h.adminKey })).body.data.map(
      (i: { slug: string }) => i.slug,
    );

  for (const [what, custom_host] of [
    ['a cloud metadata address', 'http://169.254.169.254/'],
    ['a cloud metadata host name', 'http://metadata.google.internal/'],
    ['a private address', 'http://10.0.0.5/v1'],
    ['a name that resolves to a private address', 'http://ten.example.com/v1'],
    ['a name that resolves to a loopback address', 'http://loopback.example.com/v1'],
    ['a name that resolves to a link-local address', 'http://link-local.example.com/v1'],
    ['a name that resolves to an IPv4-mapped private address', 'http://mapped.example.com/v1'],
    ['a name with one private address among public ones', 'https://half-private.example.com/v1'],
    ['a name that does not resolve', 'https://nowhere.example.com/v1'],
    ['a URL with a fragment', 'https://llm.example.com/v1#frag'],
  ] as const) {
    test(`is refused on creation when it is ${what}, and nothing is stored`, async () => {
      const before = await slugs();
      const res = await h.request('POST', '/admin/v2/integrations', {
        key: h.adminKey,
        json: {
          name: 'Refused',
          slug: 'refused-host',
          ai_provider_id: 'openai',
          configurations: { custom_host },
        },
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'unsafe_custom_host');
      assert.equal(res.body.error.param, 'configurations.custom_host');
      assert.deepEqual(await slugs(), before);
    });
  }

  test('an ftp:// URL is refused naming it', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.adminKey,
      json: {
        name: 'Refused',
        ai_provider_id: 'openai',
        configurations: { custom_host: 'ftp://llm.example.com/' },
      },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'configurations.custom_host');
  });

  test('is accepted when every address is public, or when TRUSTED_CUSTOM_HOSTS lists the host', async () => {
    for (const [slug, custom_host] of [
      ['public-host', 'https://llm.example.com/v1'],
      ['trusted-host', 'http://vllm.models.internal:8000/v1'],
    ]) {
      const { integration: before } = await credentials(slug!);
      assert.equal(before, undefined);
      await createIntegration({ slug, configurations: { custom_host } });
      assert.equal((await credentials(slug!)).integration?.baseUrl, custom_host);
    }
  });

  test('cannot be changed by an update: the update body takes no configurations', async () => {
    await createIntegration({
      slug: 'fixed-host',
      configurations: { custom_host: 'https://llm.example.com/v1' },
    });
    const res = await h.request('PUT', '/admin/v2/integrations/fixed-host', {
      key: h.adminKey,
      json: { configurations: { custom_host: 'http://169.254.169.254/' } },
    });
    assert.equal(res.status, 400);
    assert.equal((await credentials('fixed-host')).integration?.baseUrl, 'https://llm.example.com/v1');
  });
});

describe('the workspace of an integration', () => {
  test("another organisation's workspace, or none at all, is a 404 naming workspace_id, and nothing is stored", async () => {
    const rival = await seedOrganisation(h.db('control-plane').manager, 'integration-rival');
    const listed = () => h.request('GET', '/admin/v2/integrations?page_size=1000', { key: h.adminKey });
    const before = (await listed()).body.total;
    for (const workspace_id of [rival.workspaceId, '00000000-0000-4000-8000-000000000000']) {
      const res = await h.request('POST', '/admin/v2/integrations', {
        key: h.adminKey,
        json: { name: 'Elsewhere', slug: 'elsewhere', ai_provider_id: 'openai', key: 'sk-x', workspace_id },
      });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error.param, 'workspace_id');
    }
    assert.equal((await listed()).body.total, before);
    const rivalList = await h.request('GET', '/admin/v2/integrations', { key: rival.adminKey });
    assert.equal(rivalList.body.total, 0);
    const { integration } = await h.client('integrations').getIntegrationCredentials({
      organisationId: h.organisationId,
      workspaceId: rival.workspaceId,
      slug: 'elsewhere',
    });
    assert.equal(integration, undefined);
  });
});

describe('deleting an integration', () => {
  test('answers exactly {} and then the integration is gone everywhere', async () => {
    await createIntegration({ slug: 'short-lived', key: 'sk-short-lived-key-000' });
    assert.ok((await credentials('short-lived')).integration);

    const res = await h.request('DELETE', '/admin/v2/integrations/short-lived', { key: h.adminKey });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {});

    assert.equal(
      (await h.request('GET', '/admin/v2/integrations/short-lived', { key: h.adminKey })).status,
      404,
    );
    const list = await h.request('GET', '/admin/v2/integrations?page_size=1000', { key: h.adminKey });
    assert.ok(!list.body.data.some((i: { slug: string }) => i.slug === 'short-lived'));
    assert.equal(list.body.total, list.body.data.length);
    assert.equal((await credentials('short-lived')).integration, undefined);
    assert.equal(
      (await h.request('DELETE', '/admin/v2/integrations/short-lived', { key: h.adminKey })).status,
      404,
    );
  });

  test('frees the slug for a new integration', async () => {
    const first = await createIntegration({ slug: 'reused', key: 'sk-first-key-0000000' });
    await h.request('DELETE', '/admin/v2/integrations/reused', { key: h.adminKey });
    const second = await createIntegration({ slug: 'reused', key: 'sk-second-key-000000' });
    assert.notEqual(second.id, first.id);
    assert.equal((await credentials('reused')).integration?.apiKey, 'sk-second-key-000000');
    const shown = await h.request('GET', '/admin/v2/integrations/reused', { key: h.adminKey });
    assert.equal(shown.body.id, second.id);
  });

  test('a workspace key is refused with 403 before its body is even validated', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: h.workspaceKey,
      json: { name: '' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'admin_key_required');
  });

  test('a workspace key cannot delete one', async () => {
    await createIntegration({ slug: 'protected' });
    const res = await h.request('DELETE', '/admin/v2/integrations/protected', { key: h.workspaceKey });
    assert.equal(res.status, 403);
    assert.equal(
      (await h.request('GET', '/admin/v2/integrations/protected', { key: h.adminKey })).status,
      200,
    );
  });
});

describe('what a workspace key can read', () => {
  before(async () => {
    await createIntegration({ slug: 'org-wide', key: 'sk-org-wide-000000000' });
    await createIntegration({ slug: 'ours', workspace_id: h.workspaceId });
    await createIntegration({ slug: 'theirs', workspace_id: otherWorkspace.id });
  });

  test('integrations of the whole organisation and of its own workspace', async () => {
    for (const slug of ['org-wide', 'ours']) {
      const res = await h.request('GET', `/admin/v2/integrations/${slug}`, { key: h.workspaceKey });
      assert.equal(res.status, 200, slug);
    }
    const shown = await h.request('GET', '/admin/v2/integrations/org-wide', { key: h.workspaceKey });
    assert.equal(shown.body.masked_key, maskSecret('sk-org-wide-000000000'));
    const list = await h.request('GET', '/admin/v2/integrations?page_size=1000', { key: h.workspaceKey });
    const slugs = list.body.data.map((i: { slug: string }) => i.slug);
    assert.ok(slugs.includes('org-wide') && slugs.includes('ours'));
    assert.equal(list.body.total, slugs.length);
  });

  test('not those bound to another workspace', async () => {
    const res = await h.request('GET', '/admin/v2/integrations/theirs', { key: h.workspaceKey });
    assert.equal(res.status, 404);
    const list = await h.request('GET', '/admin/v2/integrations?page_size=1000', { key: h.workspaceKey });
    assert.ok(!list.body.data.some((i: { slug: string }) => i.slug === 'theirs'));
    assert.equal((await credentials('theirs')).integration, undefined);

    const theirs = await h.request('GET', '/admin/v2/integrations/theirs', { key: otherWorkspaceKey });
    assert.equal(theirs.status, 200);
    const ours = await h.request('GET', '/admin/v2/integrations/ours', { key: otherWorkspaceKey });
    assert.equal(ours.status, 404);
    assert.ok((await credentials('theirs', otherWorkspace.id)).integration);
  });

  test('the organisation admin sees all of them', async () => {
    const list = await h.request('GET', '/admin/v2/integrations?page_size=1000', { key: h.adminKey });
    const slugs = list.body.data.map((i: { slug: string }) => i.slug);
    for (const slug of ['org-wide', 'ours', 'theirs']) assert.ok(slugs.includes(slug), slug);
  });
});

describe('the /v1/integrations routes', () => {
  test('create, show, list and delete like /admin/v2/integrations', async () => {
    const created = await createIntegration(
      { slug: 'via-v1', key: 'sk-via-v1-0000000000' },
      '/v1/integrations',
    );
    const shown = await h.request('GET', '/v1/integrations/via-v1', { key: h.adminKey });
    assert.equal(shown.status, 200);
    assert.equal(shown.body.id, created.id);
    assert.equal(shown.body.masked_key, maskSecret('sk-via-v1-0000000000'));
    const sameThing = await h.request('GET', '/admin/v2/integrations/via-v1', { key: h.adminKey });
    assert.deepEqual(sameThing.body, shown.body);

    const list = await h.request('GET', '/v1/integrations?page_size=1000', { key: h.adminKey });
    assert.equal(list.body.object, 'list');
    assert.ok(list.body.data.some((i: { slug: string }) => i.slug === 'via-v1'));

    const forbidden = await h.request('POST', '/v1/integrations', {
      key: h.workspaceKey,
      json: { name: 'Mine', ai_provider_id: 'openai' },
    });
    assert.equal(forbidden.status, 403);
    const notDeleted = await h.request('DELETE', '/v1/integrations/via-v1', { key: h.workspaceKey });
    assert.equal(notDeleted.status, 403);
    const bad = await h.request('POST', '/v1/integrations', {
      key: h.adminKey,
      json: { name: 'Bad', ai_provider_id: 'openai', configurations: { custom_host: 'ftp://x' } },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'configurations.custom_host');

    const deleted = await h.request('DELETE', '/v1/integrations/via-v1', { key: h.adminKey });
    assert.deepEqual(deleted.body, {});
    assert.equal((await h.request('GET', '/v1/integrations/via-v1', { key: h.adminKey })).status, 404);
  });
});

describe('another organisation', () => {
  const otherAdminKey = 'sy-admin-of-another-organisation-000000';

  before(async () => {
    const repo = new IdentityRepository(h.db('control-plane').manager);
    const organisation = await repo.createOrganisation('Other Inc', 'other-inc');
    await repo.insertApiKey({
      organisationId: organisation.id,
      workspaceId: null,
      kind: 'organisation_admin',
      name: 'Other admin',
      description: null,
      scopes: [...scopesForKind('organisation_admin')],
      userId: null,
      expiresAt: null,
      ...keyMaterialOf(otherAdminKey, 'sy-'),
    });
    await createIntegration({ slug: 'first-org-only', key: 'sk-first-org-0000000' });
  });

  test('sees none of the first organisation’s integrations and cannot delete them', async () => {
    const list = await h.request('GET', '/admin/v2/integrations', { key: otherAdminKey });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, { object: 'list', total: 0, data: [] });
    assert.equal(
      (await h.request('GET', '/admin/v2/integrations/first-org-only', { key: otherAdminKey })).status,
      404,
    );
    const deleted = await h.request('DELETE', '/admin/v2/integrations/first-org-only', {
      key: otherAdminKey,
    });
    assert.equal(deleted.status, 404);
    assert.equal(
      (await h.request('GET', '/admin/v2/integrations/first-org-only', { key: h.adminKey })).status,
      200,
    );
  });

  test('may use a slug the first organisation already uses', async () => {
    const res = await h.request('POST', '/admin/v2/integrations', {
      key: otherAdminKey,
      json: { name: 'Theirs', slug: 'first-org-only', ai_provider_id: 'openai', key: 'sk-other-org-000000' },
    });
    assert.equal(res.status, 200);
    assert.equal((await credentials('first-org-only')).integration?.apiKey, 'sk-first-org-0000000');
  });
});

test('requests without a key are refused', async () => {
  assert.equal((await h.request('GET', '/admin/v2/integrations')).status, 401);
  assert.equal((await h.request('GET', '/v1/integrations')).status, 401);
});
