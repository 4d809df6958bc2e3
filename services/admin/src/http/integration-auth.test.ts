import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServiceHarness } from '@switchyard/testing';
import { startAdminWithResolver, oauthSettings } from '../testing/resolver-harness.ts';

/** What the injected resolver answers: no test resolves a name for real. */
const dns: Record<string, string[]> = {
  'login.example.com': ['93.184.216.34'],
  'ten.example.com': ['10.0.0.5'],
  'loopback.example.com': ['127.0.0.1'],
};
const resolved: string[] = [];
let h: ServiceHarness;
before(async () => {
  h = await startAdminWithResolver(dns, resolved);
});
after(() => h.close());

const clientSecret = 'entra-client-secret-value-0123456789';

const oauth = oauthSettings(clientSecret);
const wif = {
  provider_auth_type: 'wif',
  wif_token_endpoint: 'https://login.example.com/tenant-1/oauth2/v2.0/token',
  wif_audience: 'api://AzureADTokenExchange',
};

const create = (body: Record<string, unknown>) =>
  h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: 'Azure', ai_provider_id: 'azure-openai', ...body },
  });

const credentials = (slug: string) =>
  h.client('integrations').getIntegrationCredentials({
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    slug,
  });

describe('provider_auth_type on create', () => {
  test('oauthClientCredentials: stored with the secret encrypted, shown only masked, handed decrypted to the gateway', async () => {
    const res = await create({
      slug: 'azure-oauth',
      configurations: { resource_name: 'my-resource', ...oauth, oauth_scope: 'api://custom/.default' },
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes(clientSecret));

    const [row] = await h.db('admin').query(`SELECT * FROM admin.integrations WHERE slug = 'azure-oauth'`);
    for (const [column, value] of Object.entries(row))
      assert.ok(!JSON.stringify(value).includes(clientSecret), `column ${column} holds the secret`);

    const shown = await h.request('GET', '/admin/v2/integrations/azure-oauth', { key: h.adminKey });
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body.configurations, {
      resource_name: 'my-resource',
      provider_auth_type: 'oauthClientCredentials',
      oauth_token_endpoint: oauth.oauth_token_endpoint,
      oauth_client_id: oauth.oauth_client_id,
      masked_oauth_client_secret: '****',
      oauth_scope: 'api://custom/.default',
    });
    assert.equal(shown.body.masked_key, null);
    assert.ok(!shown.text.includes(clientSecret));
    for (const path of ['/admin/v2/integrations', '/v1/integrations']) {
      const list = await h.request('GET', path, { key: h.adminKey });
      assert.equal(list.status, 200);
      assert.ok(list.text.includes('azure-oauth'));
      assert.ok(!list.text.includes(clientSecret));
    }

    const { integration } = await credentials('azure-oauth');
    assert.equal(integration?.apiKey, '');
    assert.deepEqual(integration?.settings, {
      resource_name: 'my-resource',
      provider_auth_type: 'oauthClientCredentials',
      oauth_token_endpoint: oauth.oauth_token_endpoint,
      oauth_client_id: oauth.oauth_client_id,
      oauth_client_secret: clientSecret,
      oauth_scope: 'api://custom/.default',
    });
  });

  test('wif: stored with its endpoint and audience, no secret', async () => {
    const res = await create({ slug: 'azure-wif', configurations: { resource_name: 'my-resource', ...wif } });
    assert.equal(res.status, 200, res.text);
    const shown = await h.request('GET', '/admin/v2/integrations/azure-wif', { key: h.adminKey });
    assert.deepEqual(shown.body.configurations, { resource_name: 'my-resource', ...wif });
    const { integration } = await credentials('azure-wif');
    assert.deepEqual(integration?.settings, { resource_name: 'my-resource', ...wif });
  });

  test('apiKey, named or not, takes the key as before', async () => {
    for (const [slug, configurations] of [
      ['azure-key-named', { provider_auth_type: 'apiKey', resource_name: 'r' }],
      ['azure-key', { resource_name: 'r' }],
    ] as const) {
      const res = await create({ slug, key: 'azure-api-key-0000', configurations });
      assert.equal(res.status, 200, res.text);
      assert.equal((await credentials(slug)).integration?.apiKey, 'azure-api-key-0000');
    }
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ...(['oauth_token_endpoint', 'oauth_client_id', 'oauth_client_secret'] as const).map(
      (field): [string, Record<string, unknown>, string] => {
        const { [field]: _left, ...rest } = oauth;
        return [
          `oauthClientCredentials without ${field}`,
          { configurations: rest },
          `configurations.${field}`,
        ];
      },
    ),
    ...(['wif_token_endpoint', 'wif_audience'] as const).map(
      (field): [string, Record<string, unknown>, string] => {
        const { [field]: _left, ...rest } = wif;
        return [`wif without ${field}`, { configurations: rest }, `configurations.${field}`];
      },
    ),
    [
      'an oauth_token_endpoint that is not a URL',
      { configurations: { ...oauth, oauth_token_endpoint: 'not a url' } },
      'configurations.oauth_token_endpoint',
    ],
    [
      'an oauth_token_endpoint that is not http(s)',
      { configurations: { ...oauth, oauth_token_endpoint: 'ftp://login.example.com/token' } },
      'configurations.oauth_token_endpoint',
    ],
    [
      'an empty oauth_client_secret',
      { configurations: { ...oauth, oauth_client_secret: '' } },
      'configurations.oauth_client_secret',
    ],
    [
      'an oauth_client_id with a control character',
      { configurations: { ...oauth, oauth_client_id: 'client\n1' } },
      'configurations.oauth_client_id',
    ],
    [
      'an oauth_scope with a quote',
      { configurations: { ...oauth, oauth_scope: 'a"b' } },
      'configurations.oauth_scope',
    ],
    [
      'an unknown auth type',
      { configurations: { provider_auth_type: 'magic' } },
      'configurations.provider_auth_type',
    ],
    [
      'oauth settings without their auth type',
      { key: 'azure-api-key-0000', configurations: { oauth_client_id: 'client-1' } },
      'configurations.oauth_client_id',
    ],
    [
      'wif settings with oauthClientCredentials',
      { configurations: { ...oauth, wif_audience: 'api://x' } },
      'configurations.wif_audience',
    ],
    ['a key with oauthClientCredentials', { key: 'azure-api-key-0000', configurations: oauth }, 'key'],
    ['a key with wif', { key: 'azure-api-key-0000', configurations: wif }, 'key'],
  ];
  for (const [what, body, param] of refusals) {
    test(`${what} is a 400 naming ${param}`, async () => {
      const res = await create(body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, param);
      assert.ok(!res.text.includes(clientSecret));
    });
  }

  for (const provider of ['openai', 'anthropic', 'google', 'bedrock']) {
    for (const configurations of [oauth, wif]) {
      test(`${configurations.provider_auth_type} for ${provider} is a 400 naming configurations.provider_auth_type`, async () => {
        const res = await create({ ai_provider_id: provider, configurations });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error.param, 'configurations.provider_auth_type');
        assert.match(res.body.error.message, /only for azure-openai/);
      });
    }
  }

  for (const [what, endpoint, lookedUp] of [
    ['a private address', 'http://10.0.0.5/token', false],
    ['a cloud metadata address', 'http://169.254.169.254/token', false],
    ['a name that resolves to a private address', 'https://ten.example.com/token', true],
    ['a name that resolves to loopback', 'https://loopback.example.com/token', true],
    ['a URL with a fragment', 'https://login.example.com/token#x', false],
  ] as const) {
    for (const [field, configurations] of [
      ['oauth_token_endpoint', oauth],
      ['wif_token_endpoint', wif],
    ] as const) {
      test(`a ${field} at ${what} is refused, and nothing is stored`, async () => {
        resolved.length = 0;
        const slug = `refused-${field.slice(0, 4)}-${Math.random().toString(36).slice(2, 8)}`;
        const res = await create({ slug, configurations: { ...configurations, [field]: endpoint } });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error.param, `configurations.${field}`);
        assert.equal(res.body.error.code, 'unsafe_custom_host');
        assert.equal(resolved.length > 0, lookedUp);
        const shown = await h.request('GET', `/admin/v2/integrations/${slug}`, { key: h.adminKey });
        assert.equal(shown.status, 404);
      });
    }
  }
});

describe('provider details', () => {
  test('azure-openai offers the three auth types, its OAuth client secret marked secret', async () => {
    const res = await h.request('GET', '/v1/providers/details/azure-openai', { key: h.adminKey });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.integration_auth_types, ['apiKey', 'oauthClientCredentials', 'wif']);
    const secret = Object.fromEntries(
      res.body.configurations.map((f: { name: string; secret: boolean }) => [f.name, f.secret]),
    );
    assert.equal(secret.oauth_client_secret, true);
    for (const name of [
      'provider_auth_type',
      'oauth_token_endpoint',
      'oauth_client_id',
      'oauth_scope',
      'wif_token_endpoint',
      'wif_audience',
      'wif_scope',
    ])
      assert.equal(secret[name], false, name);
  });

  test('other kinds offer apiKey only and list no token settings', async () => {
    const res = await h.request('GET', '/v1/providers/details/openai', { key: h.adminKey });
    assert.deepEqual(res.body.integration_auth_types, ['apiKey']);
    const names = res.body.configurations.map((f: { name: string }) => f.name);
    assert.ok(!names.includes('oauth_client_secret'));
  });
});
