// Deployments end to end: a deployment made and read through admin's HTTP API (operation 6),
// a gateway process running as it, and the deployment's auth settings deciding which requests
// that gateway accepts; an integration deleted with operation 7.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  signingKey,
  signJwt,
  startFakeIdentityProvider,
  type FakeIdentityProvider,
} from '@switchyard/testing';
import {
  createServiceKey,
  eventually,
  startStack,
  type ApiResponse,
  type Json,
  type Stack,
} from './harness/index.ts';

const JWT_ISSUER = 'https://idp.deployments.e2e.test';
const JWT_AUDIENCE = 'switchyard-e2e';
const jwtKey = signingKey('e2e-deployments-rsa');
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PASSWORD = 'deployer-password-7f3a9c';

let stack: Stack;
let idp: FakeIdentityProvider;
let organisationId: string;
const workspaces: Record<'alpha' | 'beta', { id: string; slug: string; key: string }> = {} as never;

const chat = (key: string) =>
  stack.request('POST', '/v1/chat/completions', {
    key,
    body: { model: '@e2e-mock/mock-model', messages: [{ role: 'user', content: 'which deployment?' }] },
  });

const token = (subject: string, workspace?: string) =>
  signJwt(jwtKey, {
    sub: subject,
    iss: JWT_ISSUER,
    aud: JWT_AUDIENCE,
    exp: Math.floor(Date.now() / 1000) + 300,
    ...(workspace ? { workspace } : {}),
    scope: 'completions.write',
  });

function refusedWith(response: ApiResponse, status: number, code: string | null): void {
  assert.equal(response.status, status, response.text);
  assert.deepEqual(Object.keys(response.body as object), ['error']);
  assert.equal((response.body as Json).error.code, code, response.text);
}

before(async () => {
  idp = await startFakeIdentityProvider([jwtKey]);
  stack = await startStack({
    upstreamKey: 'sk-unused',
    serviceEnv: {
      gateway: {
        JWT_JWKS_URIS: idp.jwksUrl,
        JWT_ORGANISATION: 'default',
        JWT_ISSUER,
        JWT_AUDIENCE,
      },
    },
  });
  for (const slug of ['alpha', 'beta'] as const) {
    const workspace = await stack.request('POST', '/v2/workspaces', {
      key: stack.adminKey,
      body: { name: `Workspace ${slug}`, slug },
    });
    assert.equal(workspace.status, 200, workspace.text);
    organisationId = workspace.body.organisation_id;
    const { key } = await createServiceKey(stack, workspace.body.id, `${slug} service`);
    workspaces[slug] = { id: workspace.body.id, slug, key };
  }
  const mock = await stack.request('POST', '/admin/v2/integrations', {
    key: stack.adminKey,
    body: { name: 'Mock', slug: 'e2e-mock', ai_provider_id: 'mock' },
  });
  assert.equal(mock.status, 200, mock.text);
});

after(async () => {
  await stack?.stop();
  await idp?.close();
});

test('operation 6: a deployment created through admin is read back by id as the deployment object, every field at its type', async () => {
  const created = await stack.request('POST', '/admin/v2/deployments', {
    key: stack.adminKey,
    body: {
      name: 'EU edge',
      slug: 'eu-edge',
      type: 'non_production',
      tags: { region: 'eu-west-1', team: 'platform' },
      deployment_config: { replicas: 3 },
      auth_settings: {
        gateway_base_url: 'https://gateway.eu.example.com/v1',
        workspaces_allowed: ['alpha'],
        jwt_subs_allowed: ['svc-alpha'],
        jwt_sub_workspace_mapping: { 'svc-alpha': 'alpha' },
      },
      credentials: { username: 'deployer', password: PASSWORD },
      client_auth: 'mtls',
    },
  });
  assert.equal(created.status, 200, created.text);
  assert.ok(!created.text.includes(PASSWORD), 'the password is never shown');
  const { id, created_by, created_at, last_updated_at } = created.body;
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.match(created_at, ISO_UTC);
  assert.match(last_updated_at, ISO_UTC);
  assert.equal(typeof created_by, 'string');

  const read = await stack.request('GET', `/admin/v2/deployments/${id}`, { key: stack.adminKey });
  assert.equal(read.status, 200, read.text);
  assert.deepEqual(read.body, {
    id,
    object: 'deployment',
    name: 'EU edge',
    slug: 'eu-edge',
    type: 'non_production',
    status: 'active',
    is_default: 0,
    connection_status: 'unknown',
    created_by,
    created_at,
    last_updated_at,
    last_synced_at: null,
    last_resynced_at: null,
    tags: { region: 'eu-west-1', team: 'platform' },
    auth_settings: {
      gateway_base_url: 'https://gateway.eu.example.com/v1',
      mcp_gateway_base_url: null,
      private_link_endpoint: null,
      use_private_link_proxy: 0,
      is_dataservice_hosted: 0,
      is_playground_proxy_allowed: 0,
      disable_vendor_gateway: 0,
      allow_all_workspaces: 0,
      workspaces_allowed: ['alpha'],
      jwt_subs_allowed: ['svc-alpha'],
      jwt_sub_workspace_mapping: { 'svc-alpha': 'alpha' },
    },
    deployment_config: { replicas: 3 },
    workspaces: [],
    credentials: { username: 'deployer', password: read.body.credentials.password },
    client_auth: 'mtls',
    version: null,
    features: null,
    instances: [],
  });
  assert.match(read.body.credentials.password, /\*{4}/);
  assert.ok(!read.text.includes(PASSWORD), 'the password is shown masked');
  const bySlug = await stack.request('GET', '/admin/v2/deployments/eu-edge', { key: stack.adminKey });
  assert.deepEqual(bySlug.body, read.body);
});

test("a gateway running as the deployment reports to it, and serves only the workspaces and JWT subjects the deployment's auth settings admit", async () => {
  const { alpha, beta } = workspaces;
  assert.equal((await chat(beta.key)).status, 200, 'without a deployment the gateway serves every workspace');

  await stack.stopService('gateway');
  await stack.startService('gateway', {
    DEPLOYMENT: 'eu-edge',
    DEPLOYMENT_ORGANISATION: organisationId,
    DEPLOYMENT_HEARTBEAT_SECONDS: '1',
  });

  const served = await chat(alpha.key);
  assert.equal(served.status, 200, served.text);
  refusedWith(await chat(beta.key), 403, 'workspace_not_served');
  // The subject allowed acts in the workspace the deployment maps it to.
  assert.equal((await chat(token('svc-alpha'))).status, 200);
  refusedWith(await chat(token('svc-beta', 'beta')), 401, 'invalid_api_key');

  const read = await stack.request('GET', '/admin/v2/deployments/eu-edge', { key: stack.adminKey });
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.connection_status, 'healthy');
  assert.match(read.body.last_synced_at, ISO_UTC);
  assert.equal(read.body.version, '2.18.0');
  assert.deepEqual(read.body.features, { block_inline_config: true, mcp_tool_rate_limits: true });
  assert.equal(read.body.instances.length, 1);
  assert.equal(read.body.last_resynced_at, null);

  const changed = await stack.request('PUT', '/admin/v2/deployments/eu-edge', {
    key: stack.adminKey,
    body: {
      auth_settings: {
        workspaces_allowed: ['alpha', 'beta'],
        jwt_subs_allowed: ['svc-alpha', 'svc-beta'],
      },
    },
  });
  assert.equal(changed.status, 200, changed.text);
  await eventually(
    "the gateway to take up the deployment's new settings",
    async () => ((await chat(beta.key)).status === 200 ? true : undefined),
    { timeoutMs: 15_000, intervalMs: 250 },
  );
  assert.equal((await chat(token('svc-beta', 'beta'))).status, 200);
  // The gateway took up the changed settings: the deployment says when.
  const resynced = await stack.request('GET', '/admin/v2/deployments/eu-edge', { key: stack.adminKey });
  assert.match(resynced.body.last_resynced_at, ISO_UTC);
  assert.ok(resynced.body.last_resynced_at >= changed.body.last_updated_at);

  const narrowed = await stack.request('PUT', '/admin/v2/deployments/eu-edge', {
    key: stack.adminKey,
    body: { auth_settings: { workspaces_allowed: ['beta'], jwt_subs_allowed: ['svc-beta'] } },
  });
  assert.equal(narrowed.status, 200, narrowed.text);
  await eventually(
    'the gateway to stop serving workspace alpha',
    async () => ((await chat(alpha.key)).status === 403 ? true : undefined),
    { timeoutMs: 15_000, intervalMs: 250 },
  );
  refusedWith(await chat(token('svc-alpha')), 401, 'invalid_api_key');
  assert.equal((await chat(beta.key)).status, 200);
});

test('operation 7: deleting an integration answers an empty JSON object, and it can no longer be read or called', async () => {
  const { beta } = workspaces;
  const deleted = await stack.request('DELETE', '/admin/v2/integrations/e2e-mock', { key: stack.adminKey });
  assert.equal(deleted.status, 200, deleted.text);
  assert.match(deleted.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(deleted.body, {});

  const read = await stack.request('GET', '/admin/v2/integrations/e2e-mock', { key: stack.adminKey });
  refusedWith(read, 404, read.body.error?.code ?? null);
  const again = await stack.request('DELETE', '/admin/v2/integrations/e2e-mock', { key: stack.adminKey });
  assert.equal(again.status, 404, again.text);
  await eventually(
    'the gateway to drop the deleted integration',
    async () => {
      const call = await chat(beta.key);
      return call.status >= 400 && call.status < 500 ? call : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 250 },
  );
});
