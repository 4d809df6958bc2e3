import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Request, RequestHandler, Response } from 'express';
import { createLogger, createMetrics } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { controlPlane } from '@switchyard/control-plane';
import { systemHttpToken } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { SECRET_SETTINGS } from '../domain/integration.schemas.ts';
import { adminService } from '../service.ts';
import { SYSTEM_CALLER_HEADER, systemOrCallerAuthentication } from './system-auth.ts';

/** Provider details with include_configurations=true: for system authentication only. */

const GRPC_AUTH_TOKEN = 'provider-details-shared-secret';
let h: ServiceHarness;
/** Admin's own HTTP server, as a standalone admin serves it. */
let admin: { url: string; close: () => Promise<void> };
/** Every kind of API key: organisation admin and service keys, workspace service and user keys. */
let keys: Record<string, string>;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService], env: { GRPC_AUTH_TOKEN } });
  const logger = createLogger('admin', 'error');
  logger.silent = true;
  const app = createHttpApp({
    service: 'admin',
    logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ router: h.instance('admin').router! }],
  });
  const server = await listen(app, '127.0.0.1', 0);
  admin = {
    url: `http://127.0.0.1:${server.port}`,
    close: async () => {
      const closed = server.close();
      server.server.closeAllConnections();
      await closed;
    },
  };
  const organisationService = await h.request('POST', '/v2/api-keys/organisation/service', {
    key: h.adminKey,
    json: { name: 'Reader', scopes: ['integrations.read', 'integrations.list'] },
  });
  assert.equal(organisationService.status, 200, organisationService.text);
  const user = await h.request('POST', '/v1/admin/users', {
    key: h.adminKey,
    json: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper', role: 'member' },
  });
  assert.equal(user.status, 200, user.text);
  const joined = await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
    key: h.adminKey,
    json: { users: [{ id: user.body.id, role: 'admin' }] },
  });
  assert.equal(joined.status, 200, joined.text);
  const workspaceUser = await h.request('POST', '/v2/api-keys/workspace/user', {
    key: h.adminKey,
    json: { name: 'Grace', workspace_id: h.workspaceId, user_id: user.body.id },
  });
  assert.equal(workspaceUser.status, 200, workspaceUser.text);
  keys = {
    'organisation admin': h.adminKey,
    'organisation service': organisationService.body.key,
    'workspace service': h.workspaceKey,
    'workspace user': workspaceUser.body.key,
  };
});
after(async () => {
  await admin?.close();
  await h?.close();
});

async function get(path: string, headers: Record<string, string>) {
  const res = await fetch(`${admin.url}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

const system = (service: string, token = systemHttpToken(GRPC_AUTH_TOKEN, service as 'gateway')) => ({
  authorization: `Bearer ${token}`,
  [SYSTEM_CALLER_HEADER]: service,
});

const paths = () => [
  `/v1/providers/details?include_configurations=true&organisation_id=${h.organisationId}`,
  `/v1/providers/details/bedrock?include_configurations=true&organisation_id=${h.organisationId}`,
];

interface Field {
  name: string;
  secret: boolean;
  description: string;
}

describe('provider details with include_configurations', () => {
  test('every kind of API key is refused with a 403', async () => {
    for (const [kind, key] of Object.entries(keys)) {
      for (const path of paths()) {
        const res = await get(path, { authorization: `Bearer ${key}` });
        assert.equal(res.status, 403, `${kind} ${path}: ${res.text}`);
        assert.equal(res.body.error.code, 'system_auth_required');
        // Without the flag the same key reads them.
        const plain = await get(path.replace(/include_configurations=true&organisation_id=[^&]+/, ''), {
          authorization: `Bearer ${key}`,
        });
        assert.equal(plain.status, 200, `${kind} ${path}: ${plain.text}`);
      }
    }
  });

  test("a service's system token is accepted: each kind with its configuration fields, the secret ones marked", async () => {
    const res = await get(paths()[0]!, system('gateway'));
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length > 1);
    const secretNames = new Set<string>();
    for (const detail of res.body.data as Array<{ id: string; configurations: Field[] }>) {
      for (const field of detail.configurations) {
        // A field is described, never given a value.
        assert.deepEqual(Object.keys(field).sort(), ['description', 'name', 'secret'], detail.id);
        if (field.secret) secretNames.add(field.name);
        if ((SECRET_SETTINGS as readonly string[]).includes(field.name) || field.name === 'key')
          assert.equal(field.secret, true, `${detail.id}.${field.name} is not marked secret`);
      }
    }
    for (const name of SECRET_SETTINGS) assert.ok(secretNames.has(name), `${name} is listed by no kind`);
    assert.ok(secretNames.has('aws_secret_access_key') && secretNames.has('aws_session_token'));

    const one = await get(paths()[1]!, system('log-export'));
    assert.equal(one.status, 200, one.text);
    const bedrock = new Map((one.body.configurations as Field[]).map((f) => [f.name, f.secret]));
    assert.equal(bedrock.get('aws_secret_access_key'), true);
    assert.equal(bedrock.get('aws_session_token'), true);
    assert.equal(bedrock.get('aws_region'), false);
  });

  test("with an organisation named, each kind lists that organisation's integrations, every secret masked", async () => {
    const secrets = {
      aws_secret_access_key: 'aws-secret-never-shown-0123456789',
      aws_session_token: 'aws-session-never-shown-0123456789',
      azure_entra_client_secret: 'entra-secret-never-shown-0123456789',
      header: 'header-value-never-shown-0123456789',
    };
    const made = [
      {
        name: 'Bedrock',
        slug: 'system-bedrock',
        ai_provider_id: 'bedrock',
        configurations: {
          aws_region: 'eu-west-1',
          aws_access_key_id: 'AKIASYSTEMDETAILS000',
          aws_secret_access_key: secrets.aws_secret_access_key,
          aws_session_token: secrets.aws_session_token,
        },
      },
      {
        name: 'Azure',
        slug: 'system-azure',
        ai_provider_id: 'azure-openai',
        configurations: {
          resource_name: 'my-resource',
          azure_auth_mode: 'entra',
          azure_entra_tenant_id: 'contoso.onmicrosoft.com',
          azure_entra_client_id: 'client-id-1',
          azure_entra_client_secret: secrets.azure_entra_client_secret,
          headers: { 'x-team': secrets.header },
        },
      },
    ];
    for (const body of made) {
      const res = await h.request('POST', '/admin/v2/integrations', { key: h.adminKey, json: body });
      assert.equal(res.status, 200, res.text);
    }
    const res = await get(paths()[0]!, system('gateway'));
    assert.equal(res.status, 200, res.text);
    for (const secret of Object.values(secrets)) assert.ok(!res.text.includes(secret), 'a secret is shown');
    const byKind = new Map(
      (
        res.body.data as Array<{
          id: string;
          integrations: Array<{ slug: string; configurations: Record<string, unknown> }>;
        }>
      ).map((detail) => [detail.id, detail.integrations]),
    );
    const [bedrock] = byKind.get('bedrock')!;
    assert.equal(bedrock?.slug, 'system-bedrock');
    assert.deepEqual(bedrock?.configurations, {
      aws_region: 'eu-west-1',
      aws_access_key_id: 'AKIASYSTEMDETAILS000',
      masked_aws_secret_access_key: '****',
      masked_aws_session_token: '****',
    });
    const [azure] = byKind.get('azure-openai')!;
    assert.equal(azure?.configurations.masked_azure_entra_client_secret, '****');
    assert.equal(azure?.configurations.azure_entra_tenant_id, 'contoso.onmicrosoft.com');
    assert.deepEqual(azure?.configurations.headers, { 'x-team': '****' });
    assert.deepEqual(byKind.get('anthropic'), []);

    const one = await get(paths()[1]!, system('gateway'));
    assert.deepEqual(
      one.body.integrations.map((i: { slug: string }) => i.slug),
      ['system-bedrock'],
    );
    // Another organisation's id answers its own integrations: none of these.
    const other = await get(
      `/v1/providers/details/bedrock?include_configurations=true&organisation_id=00000000-0000-4000-8000-000000000000`,
      system('gateway'),
    );
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.body.integrations, []);
    const unnamed = await get('/v1/providers/details?include_configurations=true', system('gateway'));
    assert.equal(unnamed.status, 400, unnamed.text);
    assert.equal(unnamed.body.error.param, 'organisation_id');
  });

  test("a wrong token, the gRPC token, another service's token or an unknown service is a 401", async () => {
    const grpcToken = createHmac('sha256', GRPC_AUTH_TOKEN).update('gateway').digest('base64url');
    const refused: Array<Record<string, string>> = [
      system('gateway', 'not-the-token'),
      system('gateway', grpcToken),
      system('gateway', systemHttpToken(GRPC_AUTH_TOKEN, 'policy')),
      system('gateway', systemHttpToken('another-secret', 'gateway')),
      { ...system('gateway'), [SYSTEM_CALLER_HEADER]: 'billing' },
      { [SYSTEM_CALLER_HEADER]: 'gateway' },
      // An API key does not become a system one by naming a service.
      { authorization: `Bearer ${h.adminKey}`, [SYSTEM_CALLER_HEADER]: 'admin' },
    ];
    for (const headers of refused) {
      for (const path of paths()) {
        const res = await get(path, headers);
        assert.equal(res.status, 401, `${JSON.stringify(headers)}: ${res.text}`);
      }
    }
  });

  test('a system token opens no other route', async () => {
    const res = await get('/v1/integrations', system('gateway'));
    assert.equal(res.status, 401, res.text);
  });

  test('with GRPC_AUTH_TOKEN unset no request is a system one', async () => {
    const passed: unknown[] = [];
    const authentication: RequestHandler = (_req, _res, next) => next();
    const handler = systemOrCallerAuthentication(authentication, undefined, ['integrations.list']);
    const req = {
      method: 'GET',
      headers: {
        authorization: `Bearer ${systemHttpToken('', 'gateway')}`,
        [SYSTEM_CALLER_HEADER]: 'gateway',
      },
    } as unknown as Request;
    handler(req, {} as Response, (err?: unknown) => passed.push(err));
    assert.equal(passed.length, 1);
    assert.equal((passed[0] as { status?: number }).status, 401);
    assert.equal(req.principal, undefined);
  });
});
