import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServiceHarness } from '@switchyard/testing';
import { startAdminWithResolver } from '../testing/resolver-harness.ts';

// Azure OpenAI integrations with the reference's Entra settings (azure_auth_mode entra).

/** What the injected resolver answers: no test resolves a name for real. */
const dns: Record<string, string[]> = {
  'login.microsoftonline.us': ['20.140.0.1'],
  'login.internal.example': ['10.0.0.7'],
};
const resolved: string[] = [];
let h: ServiceHarness;
before(async () => {
  h = await startAdminWithResolver(dns, resolved);
});
after(() => h.close());

const clientSecret = 'entra-app-secret-value-9876543210';

const entra = {
  azure_auth_mode: 'entra',
  azure_entra_tenant_id: '72f988bf-86f1-41af-91ab-2d7cd011db47',
  azure_entra_client_id: '00000000-0000-0000-0000-0000000000e1',
  azure_entra_client_secret: clientSecret,
};

const create = (body: Record<string, unknown>) =>
  h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: 'Azure Entra', ai_provider_id: 'azure-openai', ...body },
  });

const credentials = (slug: string) =>
  h.client('integrations').getIntegrationCredentials({
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    slug,
  });

describe('azure_auth_mode entra on create', () => {
  test('stored with the client secret encrypted, shown only masked, handed decrypted to the gateway', async () => {
    const res = await create({
      slug: 'azure-entra',
      configurations: { resource_name: 'my-resource', ...entra },
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes(clientSecret));

    const [row] = await h.db('admin').query(`SELECT * FROM admin.integrations WHERE slug = 'azure-entra'`);
    for (const [column, value] of Object.entries(row))
      assert.ok(!JSON.stringify(value).includes(clientSecret), `column ${column} holds the secret`);
    assert.equal(typeof row.configurations.azure_entra_client_secret, 'string');

    const shown = await h.request('GET', '/admin/v2/integrations/azure-entra', { key: h.adminKey });
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body.configurations, {
      resource_name: 'my-resource',
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: entra.azure_entra_tenant_id,
      azure_entra_client_id: entra.azure_entra_client_id,
      masked_azure_entra_client_secret: '****',
    });
    assert.equal(shown.body.masked_key, null);
    assert.ok(!shown.text.includes(clientSecret));
    for (const path of ['/admin/v2/integrations', '/v1/integrations']) {
      const list = await h.request('GET', path, { key: h.adminKey });
      assert.equal(list.status, 200);
      assert.ok(list.text.includes('azure-entra'));
      assert.ok(!list.text.includes(clientSecret));
    }

    const { integration } = await credentials('azure-entra');
    assert.equal(integration?.apiKey, '');
    assert.deepEqual(integration?.settings, {
      resource_name: 'my-resource',
      ...entra,
    });
  });

  test('a tenant domain name and a national cloud authority are taken', async () => {
    resolved.length = 0;
    const res = await create({
      slug: 'azure-entra-gov',
      configurations: {
        ...entra,
        azure_entra_tenant_id: 'contoso.onmicrosoft.com',
        azure_authority_host: 'https://login.microsoftonline.us',
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(resolved, ['login.microsoftonline.us']);
    const { integration } = await credentials('azure-entra-gov');
    assert.equal(integration?.settings.azure_entra_tenant_id, 'contoso.onmicrosoft.com');
    assert.equal(integration?.settings.azure_authority_host, 'https://login.microsoftonline.us');
  });

  test('default takes the key as before', async () => {
    const res = await create({
      slug: 'azure-default',
      key: 'azure-api-key-0000',
      configurations: { azure_auth_mode: 'default', resource_name: 'r' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await credentials('azure-default')).integration?.apiKey, 'azure-api-key-0000');
  });

  test('a client secret mapped from a secret reference may be left out: the mapping is what is checked', async () => {
    const { azure_entra_client_secret: _left, ...rest } = entra;
    const res = await create({
      configurations: rest,
      secret_mappings: [
        {
          target_field: 'configurations.azure_entra_client_secret',
          secret_reference_id: 'no-such-reference',
        },
      ],
    });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.body.error.param, 'secret_mappings[0].secret_reference_id');
  });

  test('managed is a 501 saying why, and nothing is stored', async () => {
    const res = await create({ slug: 'azure-managed', configurations: { azure_auth_mode: 'managed' } });
    assert.equal(res.status, 501, res.text);
    assert.equal(res.body.error.param, 'configurations.azure_auth_mode');
    assert.equal(res.body.error.code, 'azure_managed_identity_unsupported');
    assert.match(res.body.error.message, /metadata endpoint, which the gateway does not call/);
    const shown = await h.request('GET', '/admin/v2/integrations/azure-managed', { key: h.adminKey });
    assert.equal(shown.status, 404);
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ...(['azure_entra_tenant_id', 'azure_entra_client_id', 'azure_entra_client_secret'] as const).map(
      (field): [string, Record<string, unknown>, string] => {
        const { [field]: _left, ...rest } = entra;
        return [`entra without ${field}`, { configurations: rest }, `configurations.${field}`];
      },
    ),
    [
      'a tenant that is neither a GUID nor a domain name',
      { configurations: { ...entra, azure_entra_tenant_id: 'not a tenant/../x' } },
      'configurations.azure_entra_tenant_id',
    ],
    [
      'a tenant domain without a dot',
      { configurations: { ...entra, azure_entra_tenant_id: 'contoso' } },
      'configurations.azure_entra_tenant_id',
    ],
    [
      'an empty client id',
      { configurations: { ...entra, azure_entra_client_id: '' } },
      'configurations.azure_entra_client_id',
    ],
    [
      'a client secret over 1024 characters',
      { configurations: { ...entra, azure_entra_client_secret: 'x'.repeat(1025) } },
      'configurations.azure_entra_client_secret',
    ],
    [
      'a client secret with a control character',
      { configurations: { ...entra, azure_entra_client_secret: 'secret\nvalue' } },
      'configurations.azure_entra_client_secret',
    ],
    [
      'an authority host that is not a URL',
      { configurations: { ...entra, azure_authority_host: 'login.microsoftonline.us' } },
      'configurations.azure_authority_host',
    ],
    [
      'an authority host with a query',
      { configurations: { ...entra, azure_authority_host: 'https://login.microsoftonline.us/?x=1' } },
      'configurations.azure_authority_host',
    ],
    [
      'an unknown auth mode',
      { configurations: { azure_auth_mode: 'magic' } },
      'configurations.azure_auth_mode',
    ],
    ['a key with entra', { key: 'azure-api-key-0000', configurations: entra }, 'key'],
    [
      'entra settings without entra',
      { key: 'azure-api-key-0000', configurations: { azure_entra_client_id: 'client-1' } },
      'configurations.azure_entra_client_id',
    ],
    [
      'entra settings with default',
      {
        key: 'azure-api-key-0000',
        configurations: {
          azure_auth_mode: 'default',
          azure_authority_host: 'https://login.microsoftonline.us',
        },
      },
      'configurations.azure_authority_host',
    ],
    [
      'entra with provider_auth_type oauthClientCredentials',
      {
        configurations: {
          ...entra,
          provider_auth_type: 'oauthClientCredentials',
          oauth_token_endpoint: 'https://login.microsoftonline.us/t/oauth2/v2.0/token',
          oauth_client_id: 'client-1',
          oauth_client_secret: 'other-secret',
        },
      },
      'configurations.azure_auth_mode',
    ],
    [
      'entra with provider_auth_type wif',
      {
        configurations: {
          ...entra,
          provider_auth_type: 'wif',
          wif_token_endpoint: 'https://login.microsoftonline.us/t/oauth2/v2.0/token',
          wif_audience: 'api://AzureADTokenExchange',
        },
      },
      'configurations.azure_auth_mode',
    ],
  ];
  for (const [what, body, param] of refusals) {
    test(`${what} is a 400 naming ${param}`, async () => {
      const res = await create(body);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, param);
      assert.ok(!res.text.includes(clientSecret));
    });
  }

  for (const provider of ['openai', 'anthropic', 'bedrock']) {
    for (const field of ['azure_auth_mode', 'azure_entra_client_secret'] as const) {
      test(`${field} for ${provider} is a 400 naming it`, async () => {
        const res = await create({
          ai_provider_id: provider,
          key: 'provider-key-0000',
          configurations: { [field]: entra[field] },
        });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.error.param, `configurations.${field}`);
        assert.match(res.body.error.message, /only by azure-openai/);
        assert.ok(!res.text.includes(clientSecret));
      });
    }
  }

  for (const [what, host, lookedUp] of [
    ['a private address', 'http://10.0.0.5', false],
    ['a cloud metadata address', 'http://169.254.169.254', false],
    ['a name that resolves to a private address', 'https://login.internal.example', true],
  ] as const) {
    test(`an azure_authority_host at ${what} is refused, and nothing is stored`, async () => {
      resolved.length = 0;
      const slug = `refused-authority-${Math.random().toString(36).slice(2, 8)}`;
      const res = await create({ slug, configurations: { ...entra, azure_authority_host: host } });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.param, 'configurations.azure_authority_host');
      assert.equal(res.body.error.code, 'unsafe_custom_host');
      assert.equal(resolved.length > 0, lookedUp);
      const shown = await h.request('GET', `/admin/v2/integrations/${slug}`, { key: h.adminKey });
      assert.equal(shown.status, 404);
    });
  }
});

describe('provider details', () => {
  test('azure-openai lists the Entra settings, the client secret marked secret', async () => {
    const res = await h.request('GET', '/v1/providers/details/azure-openai', { key: h.adminKey });
    assert.equal(res.status, 200, res.text);
    const secret = Object.fromEntries(
      res.body.configurations.map((f: { name: string; secret: boolean }) => [f.name, f.secret]),
    );
    assert.equal(secret.azure_entra_client_secret, true);
    for (const name of [
      'azure_auth_mode',
      'azure_entra_tenant_id',
      'azure_entra_client_id',
      'azure_authority_host',
    ])
      assert.equal(secret[name], false, name);
  });

  test('other kinds list none of them', async () => {
    const res = await h.request('GET', '/v1/providers/details/openai', { key: h.adminKey });
    const names: string[] = res.body.configurations.map((f: { name: string }) => f.name);
    assert.deepEqual(
      names.filter((name) => name.startsWith('azure_')),
      [],
    );
  });
});
