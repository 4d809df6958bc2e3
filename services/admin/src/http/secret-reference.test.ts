import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { AppError } from '@switchyard/core';
import { scopesForKind } from '@switchyard/access';
import { controlPlane } from '@switchyard/control-plane';
import { IdentityRepository, keyMaterialOf } from '@switchyard/control-plane/testing';
import { listenOnLoopback, startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

let h: ServiceHarness;
/** What the injected resolver answers: no test resolves a name for real. */
const dns: Record<string, string[]> = {
  'vault.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.1.2.3'],
};

const AWS = {
  accessKeyId: 'AKIAFAKESECRETSMGR01',
  secretAccessKey: 'aws-secret-access-key-never-shown-0123456789',
  region: 'eu-west-1',
};
const VAULT_TOKEN = 'hvs.vault-token-never-shown-0123456789';
const APPROLE = { roleId: 'role-1234', secretId: 'approle-secret-id-never-shown-0123' };
const AZURE = {
  tenant: 'contoso.onmicrosoft.com',
  clientId: 'azure-client-1',
  clientSecret: 'azure-client-secret-never-shown-0123',
  accessToken: 'azure-access-token-from-entra-0123',
};
/** Every secret the auth configs hold: none may appear in any answer. */
const CREDENTIALS = [AWS.secretAccessKey, VAULT_TOKEN, APPROLE.secretId, AZURE.clientSecret];

/** The secrets each fake manager keeps, by path or name. */
const awsSecrets: Record<string, string> = {
  'prod/openai': '{"api_key":"sk-from-aws-json-000000000","other":"x"}',
  'prod/plain': 'sk-from-aws-plain-00000000000',
  'prod/bedrock-secret': 'bedrock-secret-access-key-from-aws',
};
const vaultSecrets: Record<string, Record<string, unknown>> = {
  'secret/data/team/openai': { api_key: 'sk-from-vault-000000000000' },
  'secret/data/team/many': { primary: 'sk-vault-primary-00000000', quoted: '"sk-vault-quoted-0000000"' },
  'secret/data/team/bad-json': { value: 'not json {' },
  'secret/data/team/object': { value: '{"a":1}' },
};
const azureSecrets: Record<string, string> = { 'openai-key': 'sk-from-azure-0000000000000' };

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
let managerUrl: string;
let closeManager: () => Promise<void>;

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/** The request's SigV4 signature recomputed with the known credentials: the fault, or undefined. */
async function awsSignatureFault(req: IncomingMessage, body: string): Promise<string | undefined> {
  const match = AUTHORIZATION.exec(req.headers.authorization ?? '');
  if (!match) return 'no well-formed AWS4-HMAC-SHA256 Authorization header';
  const [, keyId, , region, service, signedList, signature] = match;
  if (keyId !== AWS.accessKeyId || region !== AWS.region || service !== 'secretsmanager')
    return `credential scope ${keyId}/${region}/${service}`;
  const signed = signedList!.split(';');
  for (const name of ['host', 'x-amz-date', 'x-amz-target'])
    if (!signed.includes(name)) return `${name} unsigned`;
  const amzDate = String(req.headers['x-amz-date']);
  const expected = await new SignatureV4({
    service: 'secretsmanager',
    region: AWS.region,
    credentials: { accessKeyId: AWS.accessKeyId, secretAccessKey: AWS.secretAccessKey },
    sha256: Sha256,
    applyChecksum: false,
  }).sign(
    {
      method: req.method!,
      protocol: 'http:',
      hostname: String(req.headers.host).replace(/:\d+$/, ''),
      path: req.url!,
      query: {},
      headers: Object.fromEntries(signed.map((name) => [name, String(req.headers[name] ?? '')])),
      body,
    },
    {
      signingDate: new Date(
        amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
      ),
    },
  );
  return String(expected.headers.authorization).endsWith(`Signature=${signature}`) ? undefined : 'signature';
}

/**
 * One loopback server standing in for AWS Secrets Manager (POST /aws), Vault (/v1/...), the
 * Entra token endpoint (/<tenant>/oauth2/v2.0/token) and Azure Key Vault (/secrets/...). Each
 * checks the authentication it gets as the real one would and refuses anything else.
 */
async function handle(req: IncomingMessage, res: ServerResponse, body: string) {
  const url = new URL(req.url ?? '/', 'http://manager');
  if (url.pathname === '/aws/') {
    const fault = await awsSignatureFault(req, body);
    if (fault) return json(res, 403, { __type: 'InvalidSignatureException', message: fault });
    if (req.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue')
      return json(res, 400, { __type: 'UnknownOperationException' });
    const id = (JSON.parse(body) as { SecretId: string }).SecretId;
    const secret = awsSecrets[id];
    if (secret === undefined)
      return json(res, 400, { __type: 'ResourceNotFoundException', message: 'not found' });
    return json(res, 200, {
      ARN: `arn:aws:secretsmanager:${AWS.region}:1:secret:${id}`,
      Name: id,
      SecretString: secret,
    });
  }
  if (url.pathname === '/v1/auth/approle/login' && req.method === 'POST') {
    const login = JSON.parse(body) as { role_id?: string; secret_id?: string };
    if (login.role_id !== APPROLE.roleId || login.secret_id !== APPROLE.secretId)
      return json(res, 400, { errors: ['invalid role or secret ID'] });
    return json(res, 200, { auth: { client_token: VAULT_TOKEN, lease_duration: 60 } });
  }
  if (url.pathname.startsWith('/v1/') && req.method === 'GET') {
    if (req.headers['x-vault-token'] !== VAULT_TOKEN)
      return json(res, 403, { errors: ['permission denied'] });
    const data = vaultSecrets[decodeURIComponent(url.pathname.slice('/v1/'.length))];
    if (!data) return json(res, 404, { errors: [] });
    return json(res, 200, { data: { data, metadata: { version: 3 } } });
  }
  if (url.pathname === `/${AZURE.tenant}/oauth2/v2.0/token` && req.method === 'POST') {
    const form = new URLSearchParams(body);
    if (
      form.get('grant_type') !== 'client_credentials' ||
      form.get('client_id') !== AZURE.clientId ||
      form.get('client_secret') !== AZURE.clientSecret ||
      form.get('scope') !== 'https://vault.azure.net/.default'
    )
      return json(res, 401, { error: 'invalid_client' });
    return json(res, 200, { token_type: 'Bearer', expires_in: 3599, access_token: AZURE.accessToken });
  }
  if (url.pathname.startsWith('/secrets/') && req.method === 'GET') {
    if (
      req.headers.authorization !== `Bearer ${AZURE.accessToken}` ||
      url.searchParams.get('api-version') !== '7.4'
    )
      return json(res, 401, { error: { code: 'Unauthorized' } });
    const value = azureSecrets[decodeURIComponent(url.pathname.slice('/secrets/'.length))];
    if (value === undefined) return json(res, 404, { error: { code: 'SecretNotFound' } });
    return json(res, 200, { value, id: `${managerUrl}${url.pathname}` });
  }
  json(res, 404, {});
}

let otherAdminKey: string;
let unscopedAdminKey: string;
let otherWorkspaceId: string;

before(async () => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      handle(req, res, body).catch(() => res.destroy());
    });
  });
  const listening = await listenOnLoopback(server);
  managerUrl = listening.url;
  closeManager = listening.close;
  h = await startServiceHarness({
    services: [controlPlane, adminService],
    // The fake managers listen on loopback, which only a trusted host may reach.
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' },
    resolve: async (host) => dns[host] ?? [],
  });
  const repo = new IdentityRepository(h.db('control-plane').manager);
  const organisation = await repo.createOrganisation('Other Secrets Inc', 'other-secrets-inc');
  const workspace = await repo.createWorkspace({
    organisationId: h.organisationId,
    name: 'Elsewhere',
    slug: 'elsewhere',
    description: null,
  });
  otherWorkspaceId = workspace.id;
  const adminKey = async (organisationId: string, key: string, scopes: string[]) => {
    await repo.insertApiKey({
      organisationId,
      workspaceId: null,
      kind: 'organisation_admin',
      name: key,
      description: null,
      scopes,
      userId: null,
      expiresAt: null,
      ...keyMaterialOf(key, 'sy-'),
    });
    return key;
  };
  otherAdminKey = await adminKey(organisation.id, 'sy-admin-of-another-organisation-secret', [
    ...scopesForKind('organisation_admin'),
  ]);
  unscopedAdminKey = await adminKey(
    h.organisationId,
    'sy-admin-without-secret-reference-scopes',
    scopesForKind('organisation_admin').filter((scope) => !scope.startsWith('secret_references.')),
  );
});
after(async () => {
  await h?.close();
  await closeManager?.();
});

/** Every answer the tests saw, to check that no credential ever appears in one. */
const answers: string[] = [];
async function api(method: string, path: string, json?: unknown, key = h.adminKey) {
  const res = await h.request(method, path, { key, json });
  answers.push(res.text);
  return res;
}

const vaultToken = () => ({ vault_auth_type: 'token', vault_addr: managerUrl, vault_token: VAULT_TOKEN });
const awsAccessKey = () => ({
  aws_auth_type: 'accessKey',
  aws_access_key_id: AWS.accessKeyId,
  aws_secret_access_key: AWS.secretAccessKey,
  aws_region: AWS.region,
  aws_endpoint: `${managerUrl}/aws/`,
});
const azureEntra = () => ({
  azure_auth_mode: 'entra',
  azure_entra_tenant_id: AZURE.tenant,
  azure_entra_client_id: AZURE.clientId,
  azure_entra_client_secret: AZURE.clientSecret,
  azure_vault_url: managerUrl,
  azure_authority_host: managerUrl,
});

async function createReference(body: Record<string, unknown>, key?: string) {
  const res = await api(
    'POST',
    '/v1/secret-references',
    {
      manager_type: 'hashicorp_vault',
      auth_config: vaultToken(),
      secret_path: 'secret/team/openai',
      ...body,
    },
    key,
  );
  assert.equal(res.status, 200, res.text);
  return res.body as { id: string; slug: string; object: string };
}

async function createIntegration(body: Record<string, unknown>, key?: string) {
  return api('POST', '/v1/integrations', { ai_provider_id: 'openai', ...body }, key);
}

const credentials = (slug: string, workspaceId = h.workspaceId) =>
  h.client('integrations').getIntegrationCredentials({ organisationId: h.organisationId, workspaceId, slug });

/** The error the gateway gets for an integration's credentials. */
async function credentialsFailure(slug: string): Promise<AppError> {
  const err = await credentials(slug).then(
    () => assert.fail('the credentials were answered'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof AppError, String(err));
  return err;
}

describe('secret references', () => {
  test('create, get by id and by slug, list with paging, update and delete', async () => {
    const created = await createReference({
      name: 'Crud one: team OpenAI key',
      slug: 'crud-one',
      description: 'the key of the team',
      secret_key: 'api_key',
      tags: { team: 'search' },
    });
    assert.equal(created.slug, 'crud-one');
    assert.equal(created.object, 'secret-reference');
    await createReference({ name: 'Crud two', slug: 'crud-two', tags: { team: 'search' } });
    await createReference({ name: 'Crud three', slug: 'crud-three', tags: { team: 'ads' } });

    const byId = await api('GET', `/v1/secret-references/${created.id}`);
    assert.equal(byId.status, 200, byId.text);
    const detail = byId.body as Record<string, unknown>;
    assert.deepEqual(
      { ...detail, created_at: undefined, last_updated_at: undefined },
      {
        id: created.id,
        organisation_id: h.organisationId,
        name: 'Crud one: team OpenAI key',
        slug: 'crud-one',
        description: 'the key of the team',
        manager_type: 'hashicorp_vault',
        secret_uri: 'vault://secret/team/openai',
        secret_path: 'secret/team/openai',
        secret_key: 'api_key',
        allow_all_workspaces: true,
        allowed_workspaces: [],
        tags: { team: 'search' },
        status: 'ACTIVE',
        created_by: (detail as { created_by: string }).created_by,
        created_at: undefined,
        last_updated_at: undefined,
        auth_config: { vault_auth_type: 'token', vault_addr: managerUrl, vault_token: 'hvs.****89' },
        secret_value: null,
        object: 'secret-reference',
      },
    );
    const bySlug = await api('GET', '/v1/secret-references/crud-one');
    assert.deepEqual(bySlug.body, byId.body);

    const pageOne = await api('GET', '/v1/secret-references?page_size=2&current_page=0&search=crud');
    const pageTwo = await api('GET', '/v1/secret-references?page_size=2&current_page=1&search=CRUD');
    assert.equal(pageOne.status, 200, pageOne.text);
    const one = pageOne.body as { object: string; total: number; data: Array<Record<string, unknown>> };
    const two = pageTwo.body as typeof one;
    assert.equal(one.object, 'list');
    assert.equal(one.total, 3);
    assert.deepEqual(
      [...one.data, ...two.data].map((item) => item.slug),
      ['crud-one', 'crud-two', 'crud-three'],
    );
    assert.deepEqual(Object.keys(one.data[0]!).sort(), [
      'created_at',
      'id',
      'last_updated_at',
      'manager_type',
      'name',
      'object',
      'secret_uri',
      'slug',
      'status',
    ]);
    const tagged = await api('GET', `/v1/secret-references?tags=${encodeURIComponent('{"team":"search"}')}`);
    assert.deepEqual(
      (tagged.body as typeof one).data.map((item) => item.slug),
      ['crud-one', 'crud-two'],
    );
    const aws = await api('GET', '/v1/secret-references?manager_type=aws_sm&search=crud');
    assert.equal((aws.body as typeof one).total, 0);

    const updated = await api('PUT', '/v1/secret-references/crud-one', {
      name: 'Renamed',
      secret_path: 'secret/team/many',
      secret_key: null,
      tags: null,
    });
    assert.equal(updated.status, 200, updated.text);
    const changed = updated.body as Record<string, unknown>;
    assert.equal(changed.name, 'Renamed');
    assert.equal(changed.secret_path, 'secret/team/many');
    assert.equal(changed.secret_key, null);
    assert.equal(changed.tags, null);
    assert.equal(changed.description, 'the key of the team');
    assert.equal(changed.slug, 'crud-one');

    const duplicate = await api('POST', '/v1/secret-references', {
      name: 'again',
      slug: 'crud-two',
      manager_type: 'hashicorp_vault',
      auth_config: vaultToken(),
      secret_path: 'secret/x/y',
    });
    assert.equal(duplicate.status, 409, duplicate.text);

    assert.equal((await api('DELETE', `/v1/secret-references/${created.id}`)).status, 200);
    assert.equal((await api('GET', '/v1/secret-references/crud-one')).status, 404);
    assert.equal((await api('DELETE', '/v1/secret-references/crud-one')).status, 404);
  });

  test('every secret of an auth config is stored encrypted and only ever answered masked', async () => {
    const aws = await createReference({
      name: 'masked aws',
      manager_type: 'aws_sm',
      auth_config: { ...awsAccessKey(), aws_session_token: 'aws-session-token-never-shown-01234' },
      secret_path: 'prod/plain',
    });
    const approle = await createReference({
      name: 'masked approle',
      auth_config: {
        vault_auth_type: 'approle',
        vault_addr: managerUrl,
        vault_role_id: APPROLE.roleId,
        vault_secret_id: APPROLE.secretId,
      },
    });
    const azure = await createReference({
      name: 'masked azure',
      manager_type: 'azure_kv',
      auth_config: azureEntra(),
      secret_path: 'openai-key',
    });
    const token = await createReference({ name: 'masked token' });
    for (const { id } of [aws, approle, azure, token]) {
      await api('GET', `/v1/secret-references/${id}`);
      await api('PUT', `/v1/secret-references/${id}`, { description: 'changed' });
    }
    await api('GET', '/v1/secret-references?page_size=100');
    const awsShown = (await api('GET', `/v1/secret-references/${aws.id}`)).body as { auth_config: object };
    assert.deepEqual(awsShown.auth_config, {
      aws_auth_type: 'accessKey',
      aws_access_key_id: AWS.accessKeyId,
      aws_secret_access_key: 'aws-****89',
      aws_session_token: 'aws-****34',
      aws_region: AWS.region,
      aws_endpoint: `${managerUrl}/aws/`,
    });
    const azureShown = (await api('GET', `/v1/secret-references/${azure.id}`)).body as {
      auth_config: Record<string, string>;
    };
    assert.equal(azureShown.auth_config.azure_entra_client_secret, 'azur****23');

    const secrets = [...CREDENTIALS, 'aws-session-token-never-shown-01234'];
    for (const answer of answers) for (const secret of secrets) assert.ok(!answer.includes(secret), answer);
    const rows = (await h
      .db('admin')
      .query(`SELECT auth_config::text AS config FROM admin.secret_references`)) as Array<{ config: string }>;
    for (const { config } of rows) for (const secret of secrets) assert.ok(!config.includes(secret), config);
  });

  test('auth_config given on update is merged with the stored one, and another auth kind replaces it', async () => {
    const ref = await createReference({ name: 'merged' });
    const merged = await api('PUT', `/v1/secret-references/${ref.id}`, {
      auth_config: { vault_namespace: 'team-a' },
    });
    assert.equal(merged.status, 200, merged.text);
    assert.deepEqual((merged.body as { auth_config: object }).auth_config, {
      vault_auth_type: 'token',
      vault_addr: managerUrl,
      vault_token: 'hvs.****89',
      vault_namespace: 'team-a',
    });
    const replaced = await api('PUT', `/v1/secret-references/${ref.id}`, {
      auth_config: {
        vault_auth_type: 'approle',
        vault_addr: managerUrl,
        vault_role_id: APPROLE.roleId,
        vault_secret_id: APPROLE.secretId,
      },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(Object.keys((replaced.body as { auth_config: object }).auth_config).sort(), [
      'vault_addr',
      'vault_auth_type',
      'vault_role_id',
      'vault_secret_id',
    ]);
    const incomplete = await api('PUT', `/v1/secret-references/${ref.id}`, {
      auth_config: { vault_auth_type: 'token', vault_addr: managerUrl },
    });
    assert.equal(incomplete.status, 400, incomplete.text);
    assert.equal((incomplete.body as { error: { param: string } }).error.param, 'auth_config.vault_token');
  });

  test('allow_all_workspaces true and allowed_workspaces are exclusive (400); workspaces are checked', async () => {
    const both = await api('POST', '/v1/secret-references', {
      name: 'both',
      manager_type: 'hashicorp_vault',
      auth_config: vaultToken(),
      secret_path: 'secret/a/b',
      allow_all_workspaces: true,
      allowed_workspaces: [h.workspaceId],
    });
    assert.equal(both.status, 400, both.text);
    assert.equal((both.body as { error: { param: string } }).error.param, 'allowed_workspaces');

    const ref = await createReference({ name: 'one workspace', allowed_workspaces: ['elsewhere'] });
    const shown = (await api('GET', `/v1/secret-references/${ref.id}`)).body as Record<string, unknown>;
    assert.equal(shown.allow_all_workspaces, false);
    assert.deepEqual(shown.allowed_workspaces, [otherWorkspaceId]);
    const bothOnUpdate = await api('PUT', `/v1/secret-references/${ref.id}`, {
      allow_all_workspaces: true,
      allowed_workspaces: ['elsewhere'],
    });
    assert.equal(bothOnUpdate.status, 400, bothOnUpdate.text);
    const opened = await api('PUT', `/v1/secret-references/${ref.id}`, { allow_all_workspaces: true });
    assert.deepEqual(
      [
        (opened.body as Record<string, unknown>).allow_all_workspaces,
        (opened.body as Record<string, unknown>).allowed_workspaces,
      ],
      [true, []],
    );
    const unknown = await api('POST', '/v1/secret-references', {
      name: 'nowhere',
      manager_type: 'hashicorp_vault',
      auth_config: vaultToken(),
      secret_path: 'secret/a/b',
      allowed_workspaces: ['no-such-workspace'],
    });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal((unknown.body as { error: { param: string } }).error.param, 'allowed_workspaces[0]');
  });

  test('auth kinds that need the host cloud identity are answered 501, malformed ones 400', async () => {
    const ambient: Array<[string, Record<string, unknown>]> = [
      [
        'aws_sm',
        { aws_auth_type: 'assumedRole', aws_role_arn: 'arn:aws:iam::1:role/r', aws_region: 'us-east-1' },
      ],
      ['aws_sm', { aws_auth_type: 'serviceRole', aws_region: 'us-east-1' }],
      ['azure_kv', { azure_auth_mode: 'managed', azure_vault_url: 'https://kv.vault.azure.net' }],
      ['azure_kv', { azure_auth_mode: 'default', azure_vault_url: 'https://kv.vault.azure.net' }],
      ['hashicorp_vault', { vault_auth_type: 'kubernetes', vault_addr: managerUrl, vault_role: 'gateway' }],
    ];
    for (const [manager_type, auth_config] of ambient) {
      const res = await api('POST', '/v1/secret-references', {
        name: 'ambient',
        manager_type,
        auth_config,
        secret_path: 'secret/a/b',
      });
      assert.equal(res.status, 501, res.text);
      assert.match((res.body as { error: { message: string } }).error.message, /host's own/);
    }
    const wrongFamily = await api('POST', '/v1/secret-references', {
      name: 'wrong family',
      manager_type: 'aws_sm',
      auth_config: vaultToken(),
      secret_path: 'prod/plain',
    });
    assert.equal(wrongFamily.status, 400, wrongFamily.text);
    const extra = await api('POST', '/v1/secret-references', {
      name: 'extra field',
      manager_type: 'hashicorp_vault',
      auth_config: { ...vaultToken(), surprise: 1 },
      secret_path: 'secret/a/b',
    });
    assert.equal(extra.status, 400, extra.text);
  });

  test('manager addresses pass the unsafe-host check', async () => {
    const refused = [
      'http://10.0.0.5:8200',
      'http://169.254.169.254',
      'http://internal.example.com',
      'http://nowhere.example.com',
    ];
    for (const vault_addr of refused) {
      const res = await api('POST', '/v1/secret-references', {
        name: 'unsafe',
        manager_type: 'hashicorp_vault',
        auth_config: { ...vaultToken(), vault_addr },
        secret_path: 'secret/a/b',
      });
      assert.equal(res.status, 400, res.text);
      const error = (res.body as { error: { param: string; code: string } }).error;
      assert.deepEqual([error.param, error.code], ['auth_config.vault_addr', 'unsafe_custom_host']);
    }
    const azure = await api('POST', '/v1/secret-references', {
      name: 'unsafe azure',
      manager_type: 'azure_kv',
      auth_config: { ...azureEntra(), azure_authority_host: 'http://10.0.0.9' },
      secret_path: 'openai-key',
    });
    assert.equal(azure.status, 400, azure.text);
    const ok = await api('POST', '/v1/secret-references', {
      name: 'public vault',
      manager_type: 'hashicorp_vault',
      auth_config: { ...vaultToken(), vault_addr: 'https://vault.example.com' },
      secret_path: 'secret/a/b',
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test("another organisation's key sees 404 and cannot map the reference; keys without the scopes are refused", async () => {
    const ref = await createReference({ name: 'tenancy', slug: 'tenancy' });
    for (const path of [`/v1/secret-references/${ref.id}`, '/v1/secret-references/tenancy']) {
      assert.equal((await api('GET', path, undefined, otherAdminKey)).status, 404);
      assert.equal((await api('PUT', path, { name: 'x' }, otherAdminKey)).status, 404);
      assert.equal((await api('DELETE', path, undefined, otherAdminKey)).status, 404);
    }
    const listed = await api('GET', '/v1/secret-references?page_size=100', undefined, otherAdminKey);
    assert.equal((listed.body as { total: number }).total, 0);
    const mapped = await createIntegration(
      {
        name: 'other org',
        slug: 'other-org-mapped',
        secret_mappings: [{ target_field: 'key', secret_reference_id: ref.id }],
      },
      otherAdminKey,
    );
    assert.equal(mapped.status, 404, mapped.text);
    assert.equal(
      (mapped.body as { error: { param: string } }).error.param,
      'secret_mappings[0].secret_reference_id',
    );

    assert.equal((await api('GET', '/v1/secret-references', undefined, unscopedAdminKey)).status, 403);
    assert.equal(
      (await api('GET', `/v1/secret-references/${ref.id}`, undefined, h.workspaceKey)).status,
      403,
    );
    const created = await api(
      'POST',
      '/v1/secret-references',
      { name: 'x', manager_type: 'hashicorp_vault', auth_config: vaultToken(), secret_path: 'secret/a/b' },
      h.workspaceKey,
    );
    assert.equal(created.status, 403, created.text);
  });
});

describe('secret mappings of integrations', () => {
  test('mappings are checked: target fields of the kind, each target once, the reference found and open', async () => {
    const ref = await createReference({
      name: 'mapping checks',
      slug: 'mapping-checks',
      secret_key: 'api_key',
    });
    const restricted = await createReference({
      name: 'restricted',
      slug: 'restricted',
      allowed_workspaces: ['elsewhere'],
    });
    const cases: Array<[unknown[], number, string, Record<string, unknown>?]> = [
      [
        [{ target_field: 'configurations.aws_region', secret_reference_id: ref.id }],
        400,
        'secret_mappings[0].target_field',
      ],
      [
        [{ target_field: 'configurations.custom_host', secret_reference_id: ref.id }],
        400,
        'secret_mappings[0].target_field',
      ],
      [[{ target_field: 'password', secret_reference_id: ref.id }], 400, 'secret_mappings[0].target_field'],
      [
        [
          { target_field: 'key', secret_reference_id: ref.id },
          { target_field: 'key', secret_reference_id: 'mapping-checks' },
        ],
        400,
        'secret_mappings[1].target_field',
      ],
      [
        [{ target_field: 'key', secret_reference_id: 'no-such-reference' }],
        404,
        'secret_mappings[0].secret_reference_id',
      ],
      [
        [{ target_field: 'key', secret_reference_id: ref.id, value_format: 'yaml' }],
        400,
        'secret_mappings[0].value_format',
      ],
      // An integration of every workspace needs a reference open to every workspace.
      [
        [{ target_field: 'key', secret_reference_id: 'restricted' }],
        403,
        'secret_mappings[0].secret_reference_id',
      ],
      // A workspace's integration needs a reference open to that workspace.
      [
        [{ target_field: 'key', secret_reference_id: restricted.id }],
        403,
        'secret_mappings[0].secret_reference_id',
        { workspace_id: h.workspaceId },
      ],
    ];
    for (const [i, [secret_mappings, status, param, extra]] of cases.entries()) {
      const res = await createIntegration({
        name: 'checked',
        slug: `checked-${i}`,
        secret_mappings,
        ...extra,
      });
      assert.equal(res.status, status, `${i}: ${res.text}`);
      assert.equal((res.body as { error: { param: string } }).error.param, param, `${i}: ${res.text}`);
    }
    const plugin = await api('POST', '/v1/integrations', {
      name: 'plugin',
      slug: 'plugin-mapped',
      plugin_provider_id: 'my-plugin',
      credentials: { token: 'x' },
      secret_mappings: [{ target_field: 'key', secret_reference_id: ref.id }],
    });
    assert.equal(plugin.status, 400, plugin.text);
    const elsewhere = await createIntegration({
      name: 'elsewhere',
      slug: 'elsewhere-mapped',
      workspace_id: otherWorkspaceId,
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'restricted' }],
    });
    assert.equal(elsewhere.status, 200, elsewhere.text);
  });

  test('a mapped key (Vault, string and json, secret_key picked) reaches the gateway, and the integration shows only that it is mapped', async () => {
    const picked = await createReference({
      name: 'vault picked',
      slug: 'vault-picked',
      secret_path: 'secret/team/many',
      secret_key: 'primary',
    });
    const created = await createIntegration({
      name: 'vault mapped',
      slug: 'vault-mapped',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'vault-picked' }],
    });
    assert.equal(created.status, 200, created.text);
    const { integration } = await credentials('vault-mapped');
    assert.equal(integration?.apiKey, 'sk-vault-primary-00000000');

    const shown = await api('GET', '/v1/integrations/vault-mapped');
    assert.equal(shown.status, 200, shown.text);
    const detail = shown.body as Record<string, unknown>;
    assert.deepEqual(detail.secret_mappings, [
      {
        target_field: 'key',
        secret_reference_id: picked.id,
        secret_key: null,
        value_format: null,
        json_pointer: null,
      },
    ]);
    assert.equal(detail.masked_key, null);
    assert.ok(!shown.text.includes('sk-vault-primary'), shown.text);

    // The mapping's secret_key overrides the reference's; json parses the value.
    const updated = await api('PUT', '/v1/integrations/vault-mapped', {
      secret_mappings: [
        { target_field: 'key', secret_reference_id: picked.id, secret_key: 'quoted', value_format: 'json' },
      ],
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(
      (updated.body as { secret_mappings: Array<{ value_format: string }> }).secret_mappings[0]!.value_format,
      'json',
    );
    assert.equal((await credentials('vault-mapped')).integration?.apiKey, 'sk-vault-quoted-0000000');

    // A Vault secret of one field needs no secret_key; the mapping replaces a stored key.
    await createReference({ name: 'vault single', slug: 'vault-single', secret_path: 'secret/team/openai' });
    const withKey = await createIntegration({
      name: 'stored and mapped',
      slug: 'stored-and-mapped',
      key: 'sk-stored-key-0000000000',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'vault-single', value_format: 'string' }],
    });
    assert.equal(withKey.status, 200, withKey.text);
    assert.equal((await credentials('stored-and-mapped')).integration?.apiKey, 'sk-from-vault-000000000000');
  });

  test('AWS Secrets Manager (SigV4), AppRole and Azure Key Vault secrets reach the gateway', async () => {
    await createReference({
      name: 'aws json',
      slug: 'aws-json',
      manager_type: 'aws_sm',
      auth_config: awsAccessKey(),
      secret_path: 'prod/openai',
      secret_key: 'api_key',
    });
    await createReference({
      name: 'aws bedrock',
      slug: 'aws-bedrock',
      manager_type: 'aws_sm',
      auth_config: awsAccessKey(),
      secret_path: 'prod/bedrock-secret',
    });
    await createReference({
      name: 'approle',
      slug: 'approle',
      auth_config: {
        vault_auth_type: 'approle',
        vault_addr: managerUrl,
        vault_role_id: APPROLE.roleId,
        vault_secret_id: APPROLE.secretId,
      },
      secret_path: 'secret/team/openai',
    });
    await createReference({
      name: 'azure',
      slug: 'azure',
      manager_type: 'azure_kv',
      auth_config: azureEntra(),
      secret_path: 'openai-key',
    });
    const before = seen.length;
    for (const [slug, ref] of [
      ['aws-openai', 'aws-json'],
      ['approle-openai', 'approle'],
      ['azure-openai', 'azure'],
    ]) {
      const res = await createIntegration({
        name: slug,
        slug,
        secret_mappings: [{ target_field: 'key', secret_reference_id: ref }],
      });
      assert.equal(res.status, 200, res.text);
    }
    const bedrock = await createIntegration({
      name: 'bedrock',
      slug: 'bedrock-mapped',
      ai_provider_id: 'bedrock',
      configurations: { aws_region: 'us-east-1', aws_access_key_id: 'AKIABEDROCKKEY000001' },
      secret_mappings: [
        { target_field: 'configurations.aws_secret_access_key', secret_reference_id: 'aws-bedrock' },
      ],
    });
    assert.equal(bedrock.status, 200, bedrock.text);

    assert.equal((await credentials('aws-openai')).integration?.apiKey, 'sk-from-aws-json-000000000');
    assert.equal((await credentials('approle-openai')).integration?.apiKey, 'sk-from-vault-000000000000');
    assert.equal((await credentials('azure-openai')).integration?.apiKey, 'sk-from-azure-0000000000000');
    const { integration } = await credentials('bedrock-mapped');
    assert.deepEqual(integration?.settings, {
      aws_region: 'us-east-1',
      aws_access_key_id: 'AKIABEDROCKKEY000001',
      aws_secret_access_key: 'bedrock-secret-access-key-from-aws',
    });

    const calls = seen.slice(before).map((call) => `${call.method} ${call.path.split('?')[0]}`);
    assert.deepEqual(calls.sort(), [
      'GET /secrets/openai-key',
      'GET /v1/secret/data/team/openai',
      'POST /aws/',
      'POST /aws/',
      `POST /${AZURE.tenant}/oauth2/v2.0/token`,
      'POST /v1/auth/approle/login',
    ]);
    const aws = seen.slice(before).find((call) => call.path === '/aws/')!;
    assert.match(String(aws.headers.authorization), AUTHORIZATION);
    assert.equal(aws.headers['x-amz-target'], 'secretsmanager.GetSecretValue');
    const azureRead = seen.slice(before).find((call) => call.path.startsWith('/secrets/'))!;
    assert.equal(azureRead.headers.authorization, `Bearer ${AZURE.accessToken}`);
    const vaultRead = seen.slice(before).find((call) => call.path.startsWith('/v1/secret/'))!;
    assert.equal(vaultRead.headers['x-vault-token'], VAULT_TOKEN);

    // Fetched secrets are kept briefly: asking again calls no manager.
    const fetchedBefore = seen.length;
    await credentials('aws-openai');
    await credentials('azure-openai');
    assert.equal(seen.length, fetchedBefore);
  });

  test('a changed reference is fetched anew', async () => {
    await createReference({ name: 'rotating', slug: 'rotating', secret_path: 'secret/team/openai' });
    await createIntegration({
      name: 'rotating',
      slug: 'rotating-mapped',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'rotating' }],
    });
    assert.equal((await credentials('rotating-mapped')).integration?.apiKey, 'sk-from-vault-000000000000');
    const updated = await api('PUT', '/v1/secret-references/rotating', {
      secret_path: 'secret/team/many',
      secret_key: 'primary',
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await credentials('rotating-mapped')).integration?.apiKey, 'sk-vault-primary-00000000');
  });

  test('a manager refusal, bad JSON, a missing field or a closed workspace fail the credentials with a clear error', async () => {
    await createReference({ name: 'bad json', slug: 'bad-json', secret_path: 'secret/team/bad-json' });
    await createReference({ name: 'object json', slug: 'object-json', secret_path: 'secret/team/object' });
    await createReference({
      name: 'wrong token',
      slug: 'wrong-token',
      auth_config: { ...vaultToken(), vault_token: 'hvs.not-the-token-000000' },
    });
    await createReference({
      name: 'no field',
      slug: 'no-field',
      secret_path: 'secret/team/openai',
      secret_key: 'missing',
    });
    await createReference({
      name: 'aws missing',
      slug: 'aws-missing',
      manager_type: 'aws_sm',
      auth_config: awsAccessKey(),
      secret_path: 'prod/absent',
    });
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['bad-json', { value_format: 'json' }, /'bad-json'.*not valid JSON/],
      ['object-json', { value_format: 'json' }, /'object-json'.*JSON object, and 'key' takes text/],
      ['wrong-token', {}, /'wrong-token'.*Vault answered 403 \(permission denied\)/],
      ['no-field', {}, /'no-field'.*has no field 'missing'/],
      ['aws-missing', {}, /'aws-missing'.*AWS Secrets Manager answered 400 \(ResourceNotFoundException\)/],
    ];
    for (const [ref, mapping, message] of cases) {
      const res = await createIntegration({
        name: ref,
        slug: `failing-${ref}`,
        secret_mappings: [{ target_field: 'key', secret_reference_id: ref, ...mapping }],
      });
      assert.equal(res.status, 200, res.text);
      const err = await credentialsFailure(`failing-${ref}`);
      assert.equal(err.status, 422, err.message);
      assert.match(err.message, message);
      assert.ok(!err.message.includes('not json {'));
    }

    // The reference is restricted after the mapping was made: the workspace asking is refused.
    await createReference({ name: 'closing', slug: 'closing', secret_path: 'secret/team/openai' });
    await createIntegration({
      name: 'closing',
      slug: 'closing-mapped',
      secret_mappings: [{ target_field: 'key', secret_reference_id: 'closing' }],
    });
    assert.ok((await credentials('closing-mapped')).integration);
    await api('PUT', '/v1/secret-references/closing', { allowed_workspaces: ['elsewhere'] });
    const closed = await credentialsFailure('closing-mapped');
    assert.equal(closed.status, 403, closed.message);
    assert.ok((await credentials('closing-mapped', otherWorkspaceId)).integration);
  });

  test('a reference cannot be deleted while an integration maps it (409 naming it)', async () => {
    const ref = await createReference({ name: 'in use', slug: 'in-use' });
    for (const slug of ['uses-one', 'uses-two']) {
      const res = await createIntegration({
        name: slug,
        slug,
        secret_mappings: [{ target_field: 'key', secret_reference_id: 'in-use' }],
      });
      assert.equal(res.status, 200, res.text);
    }
    const refused = await api('DELETE', '/v1/secret-references/in-use');
    assert.equal(refused.status, 409, refused.text);
    assert.match((refused.body as { error: { message: string } }).error.message, /'uses-one', 'uses-two'/);
    assert.equal((await api('PUT', '/v1/integrations/uses-one', { secret_mappings: [] })).status, 200);
    assert.equal((await api('DELETE', '/v1/integrations/uses-two')).status, 200);
    assert.equal((await api('DELETE', `/v1/secret-references/${ref.id}`)).status, 200);
  });

  test('no answer ever held a manager credential or a fetched secret', () => {
    const fetched = [
      'sk-from-aws',
      'sk-from-vault',
      'sk-from-azure',
      'sk-vault-primary',
      'bedrock-secret-access-key-from-aws',
    ];
    for (const answer of answers) {
      for (const secret of [...CREDENTIALS, ...fetched]) assert.ok(!answer.includes(secret), answer);
    }
  });
});
