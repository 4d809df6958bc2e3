import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { seedOrganisation } from '@switchyard/control-plane/testing';
import type { ServiceHarness } from '@switchyard/testing';
import { startAdminWithResolver, oauthSettings } from '../testing/resolver-harness.ts';

// PUT /v1/integrations/:slug with `configurations`: settings changed, removed and kept, checked
// as on create against the result.

/** What the injected resolver answers: no test resolves a name for real. */
const dns: Record<string, string[]> = {
  'api.example.com': ['93.184.216.34'],
  'proxy.example.com': ['93.184.216.35'],
  'login.example.com': ['93.184.216.36'],
  'ten.example.com': ['10.0.0.5'],
};
const resolved: string[] = [];
let h: ServiceHarness;
before(async () => {
  h = await startAdminWithResolver(dns, resolved);
});
after(() => h.close());

const oauthSecret = 'oauth-client-secret-value-0123456789';
const oauth = oauthSettings(oauthSecret);

/** A slug no other test uses. */
const fresh = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

async function create(body: Record<string, unknown>): Promise<string> {
  const slug = fresh(String(body.ai_provider_id ?? body.plugin_provider_id));
  const res = await h.request('POST', '/admin/v2/integrations', {
    key: h.adminKey,
    json: { name: slug, slug, ...body },
  });
  assert.equal(res.status, 200, res.text);
  return slug;
}

const update = (slug: string, json: Record<string, unknown>, key = h.adminKey) =>
  h.request('PUT', `/v1/integrations/${slug}`, { key, json });

const shown = async (slug: string) => {
  const res = await h.request('GET', `/v1/integrations/${slug}`, { key: h.adminKey });
  assert.equal(res.status, 200, res.text);
  return res.body;
};

/** The integration's row as stored, every column. */
const row = async (slug: string) => {
  const [found] = await h.db('admin').query(`SELECT * FROM admin.integrations WHERE slug = $1`, [slug]);
  return found as Record<string, unknown> & { configurations: Record<string, unknown> };
};

/** What the gateway is handed for the integration. */
const credentials = async (slug: string) => {
  const { integration } = await h.client('integrations').getIntegrationCredentials({
    organisationId: h.organisationId,
    workspaceId: h.workspaceId,
    slug,
  });
  assert.ok(integration, `no credentials for ${slug}`);
  return integration;
};

/** The update is refused with this status naming `param`, and the stored row is as it was. */
async function refused(
  slug: string,
  json: Record<string, unknown>,
  status: number,
  param: string | null,
): Promise<Record<string, unknown>> {
  const before = await row(slug);
  const res = await update(slug, json);
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.param, param);
  assert.deepEqual(await row(slug), before);
  return res.body;
}

describe('configurations on update', () => {
  test('custom_host and api_version change; the others are kept; the gateway gets the new ones', async () => {
    const slug = await create({
      ai_provider_id: 'azure-openai',
      key: 'azure-api-key-0000',
      configurations: {
        custom_host: 'https://api.example.com/openai',
        api_version: '2024-06-01',
        resource_name: 'my-resource',
      },
    });
    resolved.length = 0;
    const res = await update(slug, {
      configurations: { custom_host: 'https://proxy.example.com/openai', api_version: '2024-10-21' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(resolved, ['proxy.example.com']);
    const expected = {
      custom_host: 'https://proxy.example.com/openai',
      api_version: '2024-10-21',
      resource_name: 'my-resource',
    };
    assert.deepEqual(res.body.configurations, expected);
    assert.deepEqual((await shown(slug)).configurations, expected);

    const handed = await credentials(slug);
    assert.equal(handed.baseUrl, 'https://proxy.example.com/openai');
    assert.equal(handed.apiKey, 'azure-api-key-0000');
    assert.deepEqual(handed.settings, { api_version: '2024-10-21', resource_name: 'my-resource' });
  });

  test('null removes a setting; one left out is kept', async () => {
    const slug = await create({
      ai_provider_id: 'azure-openai',
      key: 'azure-api-key-0000',
      configurations: { api_version: '2024-06-01', resource_name: 'my-resource', deployment: 'gpt4o' },
    });
    const res = await update(slug, { configurations: { api_version: null, deployment: null } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.configurations, { resource_name: 'my-resource' });
    assert.deepEqual((await row(slug)).configurations, { resource_name: 'my-resource' });
    assert.deepEqual((await credentials(slug)).settings, { resource_name: 'my-resource' });
  });

  test('headers given replace the whole map, stored encrypted and shown masked; null removes them', async () => {
    const slug = await create({
      ai_provider_id: 'openai',
      key: 'sk-openai-0000',
      configurations: { headers: { 'x-old-one': 'old-value-1', 'x-old-two': 'old-value-2' } },
    });
    const secretHeader = 'new-header-secret-value-42';
    const res = await update(slug, { configurations: { headers: { 'x-new': secretHeader } } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.configurations, { headers: { 'x-new': '****' } });
    assert.ok(!res.text.includes(secretHeader));
    assert.ok(!JSON.stringify(await row(slug)).includes(secretHeader));
    assert.deepEqual((await credentials(slug)).headers, { 'x-new': secretHeader });

    const removed = await update(slug, { configurations: { headers: null } });
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body.configurations, {});
    assert.deepEqual((await credentials(slug)).headers, {});
  });

  test('a rotated aws_secret_access_key is shown masked, stored encrypted and handed to the gateway; the session token left out is kept as stored', async () => {
    const oldSecret = 'aws-secret-access-key-old-000000000000';
    const newSecret = 'aws-secret-access-key-new-111111111111';
    const sessionToken = 'aws-session-token-value-2222222222';
    const slug = await create({
      ai_provider_id: 'bedrock',
      configurations: {
        aws_region: 'us-east-1',
        aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        aws_secret_access_key: oldSecret,
        aws_session_token: sessionToken,
      },
    });
    const storedToken = (await row(slug)).configurations.aws_session_token;

    const res = await update(slug, { configurations: { aws_secret_access_key: newSecret } });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes(newSecret));
    assert.deepEqual(res.body.configurations, {
      aws_region: 'us-east-1',
      aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      masked_aws_secret_access_key: '****',
      masked_aws_session_token: '****',
    });

    const stored = await row(slug);
    for (const [column, value] of Object.entries(stored))
      assert.ok(!JSON.stringify(value).includes(newSecret), `column ${column} holds the secret`);
    assert.equal(typeof stored.configurations.aws_secret_access_key, 'string');
    assert.equal(stored.configurations.aws_session_token, storedToken);

    assert.deepEqual((await credentials(slug)).settings, {
      aws_region: 'us-east-1',
      aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
      aws_secret_access_key: newSecret,
      aws_session_token: sessionToken,
    });
  });

  test('a bad aws_region is a 400 naming it, and nothing changes', async () => {
    const slug = await create({
      ai_provider_id: 'bedrock',
      configurations: {
        aws_region: 'us-east-1',
        aws_access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        aws_secret_access_key: 'aws-secret',
      },
    });
    await refused(slug, { configurations: { aws_region: 'mars' } }, 400, 'configurations.aws_region');
  });
});

describe('the unsafe-host check on update', () => {
  const hosts: Array<[string, Record<string, unknown>]> = [
    ['custom_host', {}],
    ['oauth_token_endpoint', oauth],
    [
      'wif_token_endpoint',
      {
        provider_auth_type: 'wif',
        wif_token_endpoint: 'https://login.example.com/t/token',
        wif_audience: 'api://AzureADTokenExchange',
      },
    ],
    [
      'azure_authority_host',
      {
        azure_auth_mode: 'entra',
        azure_entra_tenant_id: 'contoso.onmicrosoft.com',
        azure_entra_client_id: 'client-1',
        azure_entra_client_secret: 'entra-secret',
      },
    ],
  ];
  for (const [field, configurations] of hosts) {
    test(`a ${field} resolving to a private address is refused by the resolver's answer, and nothing changes`, async () => {
      const slug = await create({
        ai_provider_id: 'azure-openai',
        ...(field === 'custom_host' ? { key: 'azure-api-key-0000' } : {}),
        configurations,
      });
      resolved.length = 0;
      const body = await refused(
        slug,
        { configurations: { [field]: 'https://ten.example.com/token' } },
        400,
        `configurations.${field}`,
      );
      assert.equal((body.error as { code: string }).code, 'unsafe_custom_host');
      assert.deepEqual(resolved, ['ten.example.com']);
    });
  }

  test('a literal metadata address is refused without a lookup', async () => {
    const slug = await create({ ai_provider_id: 'openai', key: 'sk-openai-0000' });
    resolved.length = 0;
    await refused(
      slug,
      { configurations: { custom_host: 'http://169.254.169.254/v1' } },
      400,
      'configurations.custom_host',
    );
    assert.deepEqual(resolved, []);
  });
});

describe('auth settings on update', () => {
  test('apiKey to oauthClientCredentials with all its settings: the stored key is dropped, the gateway gets the token settings', async () => {
    const slug = await create({
      ai_provider_id: 'azure-openai',
      key: 'azure-api-key-0000',
      configurations: { resource_name: 'my-resource' },
    });
    const res = await update(slug, { configurations: oauth });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.masked_key, null);
    assert.ok(!res.text.includes(oauthSecret));
    assert.deepEqual(res.body.configurations, {
      resource_name: 'my-resource',
      provider_auth_type: 'oauthClientCredentials',
      oauth_token_endpoint: oauth.oauth_token_endpoint,
      oauth_client_id: oauth.oauth_client_id,
      masked_oauth_client_secret: '****',
    });
    const stored = await row(slug);
    assert.equal(stored.encrypted_key, null);
    for (const [column, value] of Object.entries(stored))
      assert.ok(!JSON.stringify(value).includes(oauthSecret), `column ${column} holds the secret`);

    const handed = await credentials(slug);
    assert.equal(handed.apiKey, '');
    assert.deepEqual(handed.settings, { resource_name: 'my-resource', ...oauth });
  });

  for (const field of ['oauth_token_endpoint', 'oauth_client_id', 'oauth_client_secret'] as const) {
    test(`apiKey to oauthClientCredentials without ${field} is a 400 naming it, and nothing changes`, async () => {
      const slug = await create({ ai_provider_id: 'azure-openai', key: 'azure-api-key-0000' });
      const { [field]: _left, ...rest } = oauth;
      const body = await refused(slug, { configurations: rest }, 400, `configurations.${field}`);
      assert.match((body.error as { message: string }).message, /required with provider_auth_type/);
      assert.equal((await credentials(slug)).apiKey, 'azure-api-key-0000');
    });
  }

  test('a key given with a switch to oauthClientCredentials is a 400 naming key', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', key: 'azure-api-key-0000' });
    await refused(slug, { key: 'azure-api-key-1111', configurations: oauth }, 400, 'key');
  });

  test('a changed oauth_client_secret reaches the gateway; the other settings are kept', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', configurations: oauth });
    const rotated = 'oauth-client-secret-rotated-9876543210';
    const res = await update(slug, { configurations: { oauth_client_secret: rotated } });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes(rotated));
    assert.equal(res.body.configurations.masked_oauth_client_secret, '****');
    assert.ok(!JSON.stringify(await row(slug)).includes(rotated));
    assert.deepEqual((await credentials(slug)).settings, { ...oauth, oauth_client_secret: rotated });
  });

  test('a required token setting set to null is a 400 naming it, and nothing changes', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', configurations: oauth });
    await refused(slug, { configurations: { oauth_client_id: null } }, 400, 'configurations.oauth_client_id');
  });

  test('back to apiKey: the token settings must be removed with it, then a key is taken', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', configurations: oauth });
    await refused(
      slug,
      { key: 'azure-api-key-0000', configurations: { provider_auth_type: 'apiKey' } },
      400,
      'configurations.oauth_token_endpoint',
    );
    const res = await update(slug, {
      key: 'azure-api-key-0000',
      configurations: {
        provider_auth_type: null,
        oauth_token_endpoint: null,
        oauth_client_id: null,
        oauth_client_secret: null,
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.configurations, {});
    const handed = await credentials(slug);
    assert.equal(handed.apiKey, 'azure-api-key-0000');
    assert.deepEqual(handed.settings, {});
  });

  test('a key given to an integration that sends a bearer token is a 400 naming key', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', configurations: oauth });
    await refused(slug, { key: 'azure-api-key-0000' }, 400, 'key');
  });

  test('oauthClientCredentials for a kind that does not offer it is a 400 naming provider_auth_type', async () => {
    const slug = await create({ ai_provider_id: 'openai', key: 'sk-openai-0000' });
    await refused(slug, { configurations: oauth }, 400, 'configurations.provider_auth_type');
  });

  test('azure_auth_mode entra is taken with its settings, and its secret rotates', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', key: 'azure-api-key-0000' });
    const entra = {
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: 'contoso.onmicrosoft.com',
      azure_entra_client_id: 'client-1',
      azure_entra_client_secret: 'entra-secret-one',
    };
    const res = await update(slug, { configurations: entra });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.masked_key, null);
    const rotated = await update(slug, { configurations: { azure_entra_client_secret: 'entra-secret-two' } });
    assert.equal(rotated.status, 200, rotated.text);
    assert.deepEqual(rotated.body.configurations, {
      azure_auth_mode: 'entra',
      azure_entra_tenant_id: 'contoso.onmicrosoft.com',
      azure_entra_client_id: 'client-1',
      masked_azure_entra_client_secret: '****',
    });
    assert.deepEqual((await credentials(slug)).settings, {
      ...entra,
      azure_entra_client_secret: 'entra-secret-two',
    });
  });

  test('azure_auth_mode managed is a 501, and nothing changes', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', key: 'azure-api-key-0000' });
    const body = await refused(
      slug,
      { configurations: { azure_auth_mode: 'managed' } },
      501,
      'configurations.azure_auth_mode',
    );
    assert.equal((body.error as { code: string }).code, 'azure_managed_identity_unsupported');
  });

  for (const field of ['azure_auth_mode', 'azure_entra_client_id', 'azure_authority_host'] as const) {
    test(`${field} on an openai integration is a 400 naming it, and nothing changes`, async () => {
      const slug = await create({ ai_provider_id: 'openai', key: 'sk-openai-0000' });
      const value = {
        azure_auth_mode: 'entra',
        azure_entra_client_id: 'client-1',
        azure_authority_host: 'https://login.example.com',
      }[field];
      const body = await refused(
        slug,
        { configurations: { [field]: value } },
        400,
        `configurations.${field}`,
      );
      assert.match((body.error as { message: string }).message, /only by azure-openai/);
    });
  }
});

describe('refused updates', () => {
  test('a plugin integration takes no configurations: a 400, and nothing changes', async () => {
    const slug = await create({ plugin_provider_id: 'my-plugin', credentials: { token: 'plugin-token' } });
    await refused(
      slug,
      { configurations: { custom_host: 'https://api.example.com' } },
      400,
      'configurations',
    );
  });

  test('an unknown setting is a 400 naming it, and nothing changes', async () => {
    const slug = await create({ ai_provider_id: 'openai', key: 'sk-openai-0000' });
    await refused(
      slug,
      { name: 'renamed', configurations: { api_version: '2024-10-21', no_such_setting: 'x' } },
      400,
      'configurations.no_such_setting',
    );
  });

  test("another organisation's integration is a 404, and nothing changes", async () => {
    const slug = await create({
      ai_provider_id: 'openai',
      key: 'sk-openai-0000',
      configurations: { custom_host: 'https://api.example.com' },
    });
    const other = await seedOrganisation(h.db('control-plane').manager, fresh('other-org'));
    const before = await row(slug);
    const res = await update(
      slug,
      { configurations: { custom_host: 'https://proxy.example.com' } },
      other.adminKey,
    );
    assert.equal(res.status, 404, res.text);
    assert.deepEqual(await row(slug), before);
  });
});

describe('concurrent updates', { timeout: 120_000 }, () => {
  test('updates of different settings sent at once are all kept', async () => {
    const slug = await create({ ai_provider_id: 'azure-openai', key: 'azure-api-key-0000' });
    const changes: Array<Record<string, string>> = [
      { api_version: '2024-10-21' },
      { resource_name: 'my-resource' },
      { deployment: 'gpt4o-prod' },
      { custom_host: 'https://api.example.com/openai' },
    ];
    // The database is held in a transaction while they arrive, so that each reads before any writes
    // unless its read and write are one locked step.
    const holder = h.db('admin').createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    const sent = Promise.all(
      changes.map((configurations) =>
        h.request('PUT', `/v1/integrations/${slug}`, {
          key: h.adminKey,
          json: { configurations },
          signal: AbortSignal.timeout(30_000),
        }),
      ),
    );
    await sleep(500);
    await holder.commitTransaction();
    await holder.release();
    for (const res of await sent) assert.equal(res.status, 200, res.text);
    assert.deepEqual((await shown(slug)).configurations, Object.assign({}, ...changes));
  });
});
