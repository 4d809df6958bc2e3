import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { scopesForKind } from '@switchyard/access';
import { Topics } from '@switchyard/adapters';
import { controlPlane } from '@switchyard/control-plane';
import {
  SsoScopes1763700000015,
  seedOrganisation,
  type SeededOrganisation,
} from '@switchyard/control-plane/testing';
import { startServiceHarness, type HarnessResponse, type ServiceHarness } from '@switchyard/testing';
import { adminService } from '../service.ts';

const SSO = '/v1/admin/organisation/sso';
const DOMAINS = '/v1/admin/organisation/email-domains';
const SECRET = 'oidc-client-secret-that-must-never-show-0123456789';

let h: ServiceHarness;
let rival: SeededOrganisation;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane, adminService] });
  rival = await seedOrganisation(h.db('control-plane').manager, 'sso-rival');
});
after(() => h.close());

const ecKeys = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const publicJwk = () => ({ ...ecKeys().publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig' });

const connection = (extra: Record<string, unknown> = {}) => ({
  issuer: 'https://idp.example.com',
  client_secret: SECRET,
  token_endpoint_auth_method: 'client_secret_basic',
  ...extra,
});

const put = (clientId: string, json: unknown, key = h.adminKey) =>
  h.request('PUT', `${SSO}/${encodeURIComponent(clientId)}`, { key, json });

function assertBadParam(res: HarnessResponse, status: number, param: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.param, param, res.text);
}

describe('SSO connections', () => {
  test('created with defaults, listed and read; the secret only masked', async () => {
    const created = await put('client-a', connection());
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(
      { ...created.body, created_at: undefined, last_updated_at: undefined },
      {
        object: 'sso_connection',
        type: 'oidc',
        client_id: 'client-a',
        enabled: true,
        issuer: 'https://idp.example.com',
        token_endpoint_auth_method: 'client_secret_basic',
        masked_client_secret: 'oidc****89',
        jwks: null,
        scopes: ['openid', 'email', 'profile'],
        disable_auto_provision_user: false,
        created_at: undefined,
        last_updated_at: undefined,
      },
    );
    const read = await h.request('GET', `${SSO}/client-a`, { key: h.adminKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.masked_client_secret, 'oidc****89');
    const list = await h.request('GET', SSO, { key: h.adminKey });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.data.map((c: { client_id: string }) => c.client_id),
      ['client-a'],
    );
    for (const res of [created, read, list]) assert.ok(!res.text.includes(SECRET.slice(4, -2)), res.text);
  });

  test('the client secret is encrypted in the database', async () => {
    const [row] = (await h
      .db('admin')
      .query(
        `SELECT encrypted_client_secret FROM admin.sso_connections WHERE client_id = 'client-a'`,
      )) as Array<{
      encrypted_client_secret: string;
    }>;
    assert.ok(row!.encrypted_client_secret.startsWith('v1.'));
    assert.ok(!row!.encrypted_client_secret.includes(SECRET));
    const dump = JSON.stringify(await h.db('admin').query(`SELECT * FROM admin.sso_connections`));
    assert.ok(!dump.includes(SECRET));
  });

  test('updated in place: a secret left out is kept, other fields replaced', async () => {
    const updated = await put('client-a', {
      issuer: 'https://login.example.com/tenant',
      token_endpoint_auth_method: 'client_secret_post',
      enabled: false,
      scopes: ['openid', 'email'],
      disable_auto_provision_user: true,
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.masked_client_secret, 'oidc****89');
    assert.equal(updated.body.issuer, 'https://login.example.com/tenant');
    assert.equal(updated.body.enabled, false);
    assert.equal(updated.body.disable_auto_provision_user, true);
    assert.deepEqual(updated.body.scopes, ['openid', 'email']);
    const list = await h.request('GET', SSO, { key: h.adminKey });
    assert.equal(list.body.total, 1);
  });

  test('several connections, each with its own client_id; deleted one by one', async () => {
    const second = await put('client-b', {
      issuer: 'https://other.example.com',
      token_endpoint_auth_method: 'none',
    });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.masked_client_secret, null);
    const list = await h.request('GET', SSO, { key: h.adminKey });
    assert.deepEqual(
      list.body.data.map((c: { client_id: string }) => c.client_id),
      ['client-a', 'client-b'],
    );
    const deleted = await h.request('DELETE', `${SSO}/client-b`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await h.request('GET', `${SSO}/client-b`, { key: h.adminKey })).status, 404);
    assert.equal((await h.request('DELETE', `${SSO}/client-b`, { key: h.adminKey })).status, 404);
  });

  test('validation: a 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [connection({ issuer: 'http://idp.example.com' }), 'issuer'],
      [connection({ issuer: 'https://idp.example.com/?x=1' }), 'issuer'],
      // Not URLs `new URL()` can parse: refused as such, not a fault.
      [connection({ issuer: 'https://[::1' }), 'issuer'],
      [connection({ issuer: 'not a url' }), 'issuer'],
      [connection({ issuer: 'https://' }), 'issuer'],
      [connection({ issuer: undefined }), 'issuer'],
      [connection({ token_endpoint_auth_method: 'client_secret_jwt' }), 'token_endpoint_auth_method'],
      [connection({ enabled: 'yes' }), 'enabled'],
      [connection({ disable_auto_provision_user: 1 }), 'disable_auto_provision_user'],
      [connection({ scopes: ['email'] }), 'scopes'],
      [connection({ scopes: ['openid', 'a b'] }), 'scopes[1]'],
      [connection({ client_id: 'another' }), 'client_id'],
      [connection({ unknown: 1 }), 'unknown'],
      // A secret method needs a secret when none is stored yet.
      [
        { issuer: 'https://idp.example.com', token_endpoint_auth_method: 'client_secret_post' },
        'client_secret',
      ],
      [
        { issuer: 'https://idp.example.com', token_endpoint_auth_method: 'none', client_secret: SECRET },
        'client_secret',
      ],
    ];
    for (const [body, param] of cases) assertBadParam(await put('client-new', body), 400, param);
    assertBadParam(await put('has space', connection()), 400, 'client_id');
    assert.equal((await h.request('GET', `${SSO}/client-new`, { key: h.adminKey })).status, 404);
  });

  test('private_key_jwt: jwks required, public keys only; jwks refused with other methods', async () => {
    const pkj = (jwks: unknown) => ({
      issuer: 'https://idp.example.com',
      token_endpoint_auth_method: 'private_key_jwt',
      ...(jwks === undefined ? {} : { jwks }),
    });
    assertBadParam(await put('client-jwt', pkj(undefined)), 400, 'jwks');
    const { privateKey } = ecKeys();
    const privateJwk = privateKey.export({ format: 'jwk' });
    assertBadParam(await put('client-jwt', pkj({ keys: [privateJwk] })), 400, 'jwks.keys[0]');
    const rsaPrivate = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      format: 'jwk',
    });
    assertBadParam(await put('client-jwt', pkj({ keys: [publicJwk(), rsaPrivate] })), 400, 'jwks.keys[1]');
    assertBadParam(
      await put('client-jwt', pkj({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] })),
      400,
      'jwks.keys[0]',
    );
    assertBadParam(
      await put('client-jwt', pkj({ keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] })),
      400,
      'jwks.keys[0]',
    );
    assertBadParam(await put('client-jwt', pkj({ keys: [] })), 400, 'jwks.keys');
    assertBadParam(await put('client-jwt', pkj([publicJwk()])), 400, 'jwks');
    assertBadParam(
      await put('client-jwt', { ...pkj({ keys: [publicJwk()] }), client_secret: SECRET }),
      400,
      'client_secret',
    );
    assertBadParam(await put('client-jwt', connection({ jwks: { keys: [publicJwk()] } })), 400, 'jwks');

    const jwk = publicJwk();
    const created = await put('client-jwt', pkj({ keys: [jwk] }));
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.body.jwks, { keys: [jwk] });
    assert.equal(created.body.masked_client_secret, null);
    const rsaPublic = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    assert.equal((await put('client-jwt', pkj({ keys: [jwk, rsaPublic] }))).status, 200);
  });

  test('switching a secret method to one without a secret drops the stored secret', async () => {
    assert.equal((await put('client-switch', connection())).status, 200);
    const switched = await put('client-switch', {
      issuer: 'https://idp.example.com',
      token_endpoint_auth_method: 'none',
    });
    assert.equal(switched.status, 200, switched.text);
    assert.equal(switched.body.masked_client_secret, null);
    const [row] = (await h
      .db('admin')
      .query(
        `SELECT encrypted_client_secret FROM admin.sso_connections WHERE client_id = 'client-switch'`,
      )) as Array<{
      encrypted_client_secret: string | null;
    }>;
    assert.equal(row!.encrypted_client_secret, null);
    assertBadParam(
      await put('client-switch', {
        issuer: 'https://idp.example.com',
        token_endpoint_auth_method: 'client_secret_basic',
      }),
      400,
      'client_secret',
    );
  });

  test('writes are audited, and no message on the bus carries the secret', async () => {
    const audit = h.bus.log(Topics.audit).map((m) => Buffer.from(m.value).toString('latin1'));
    assert.ok(
      audit.some((entry) => entry.includes('/v1/admin/organisation/sso/:client_id')),
      'the upsert is in the audit log',
    );
    for (const topic of Object.values(Topics)) {
      for (const message of h.bus.log(topic)) {
        assert.ok(!Buffer.from(message.value).includes(SECRET), `${topic} carries the client secret`);
      }
    }
  });
});

describe('email domains', () => {
  const add = (json: unknown, key = h.adminKey) => h.request('POST', DOMAINS, { key, json });

  test('added lower-cased, listed, deleted', async () => {
    const added = await add({ domain: 'Example.COM', allow_subdomains: true });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.domain, 'example.com');
    assert.equal(added.body.allow_subdomains, true);
    assert.equal((await add({ domain: 'xn--bcher-kva.example' })).status, 200);
    const list = await h.request('GET', DOMAINS, { key: h.adminKey });
    assert.deepEqual(
      list.body.data.map((d: { domain: string; allow_subdomains: boolean }) => [
        d.domain,
        d.allow_subdomains,
      ]),
      [
        ['example.com', true],
        ['xn--bcher-kva.example', false],
      ],
    );
    const deleted = await h.request('DELETE', `${DOMAINS}/XN--BCHER-KVA.example`, { key: h.adminKey });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(
      (await h.request('DELETE', `${DOMAINS}/xn--bcher-kva.example`, { key: h.adminKey })).status,
      404,
    );
    assert.equal((await h.request('DELETE', `${DOMAINS}/not a domain`, { key: h.adminKey })).status, 404);
  });

  test('not a DNS name: a 400 naming domain', async () => {
    for (const domain of [
      'localhost',
      'example.com.',
      '192.168.0.1',
      '[::1]',
      '-bad.example.com',
      'bad-.example.com',
      'a..example.com',
      'under_score.example.com',
      `${'a'.repeat(64)}.com`,
      `${'a.'.repeat(127)}com`,
      'bücher.example',
      '',
    ]) {
      assertBadParam(await add({ domain }), 400, 'domain');
    }
    assert.equal((await add({ domain: `${'a'.repeat(63)}.com` })).status, 200);
    assertBadParam(await add({ domain: 'ok.example.org', allow_subdomains: 'yes' }), 400, 'allow_subdomains');
  });

  test('allow_subdomains only on a root domain: a 422 naming it', async () => {
    for (const domain of ['eu.example.org', 'a.b.example.co.uk', 'team.example.com.au']) {
      assertBadParam(await add({ domain, allow_subdomains: true }), 422, 'allow_subdomains');
    }
    for (const domain of ['example.org', 'example.co.uk', 'example.com.au']) {
      const res = await add({ domain, allow_subdomains: true });
      assert.equal(res.status, 200, `${domain}: ${res.text}`);
    }
    assert.equal((await add({ domain: 'eu.example.net', allow_subdomains: false })).status, 200);
    assertBadParam(await add({ domain: 'co.uk' }), 422, 'domain');
  });

  test('a duplicate, or a domain another organisation claims, is a 409', async () => {
    assertBadParam(await add({ domain: 'example.com' }), 409, 'domain');
    const rivalClaims = [
      { domain: 'example.com' },
      { domain: 'sub.example.com' },
      { domain: 'eu.example.net' },
      { domain: 'example.net', allow_subdomains: true },
    ];
    for (const json of rivalClaims) {
      const res = await add(json, rival.adminKey);
      assert.equal(res.status, 409, `${JSON.stringify(json)}: ${res.text}`);
      assert.equal(res.body.error.code, 'domain_claimed');
    }
    // Within one organisation, a subdomain under its own claim is fine.
    assert.equal((await add({ domain: 'eu.example.com' })).status, 200);
    assert.equal((await add({ domain: 'rival.example' }, rival.adminKey)).status, 200);
  });
});

describe('who may', () => {
  test('another organisation sees none of it and gets 404s', async () => {
    const sso = await h.request('GET', SSO, { key: rival.adminKey });
    assert.equal(sso.status, 200, sso.text);
    assert.deepEqual(sso.body.data, []);
    assert.equal((await h.request('GET', `${SSO}/client-a`, { key: rival.adminKey })).status, 404);
    assert.equal((await h.request('DELETE', `${SSO}/client-a`, { key: rival.adminKey })).status, 404);
    const domains = await h.request('GET', DOMAINS, { key: rival.adminKey });
    assert.deepEqual(
      domains.body.data.map((d: { domain: string }) => d.domain),
      ['rival.example'],
    );
    assert.equal((await h.request('DELETE', `${DOMAINS}/example.com`, { key: rival.adminKey })).status, 404);
    // Its own connection of the same client_id is its own: the first organisation's is untouched.
    assert.equal(
      (await put('client-a', connection({ client_secret: 'rival-secret-0000000000' }), rival.adminKey))
        .status,
      200,
    );
    const mine = await h.request('GET', `${SSO}/client-a`, { key: h.adminKey });
    assert.equal(mine.body.masked_client_secret, 'oidc****89');
    assert.equal(mine.body.issuer, 'https://login.example.com/tenant');
    const stillMine = await h.request('GET', DOMAINS, { key: h.adminKey });
    assert.ok(stillMine.body.data.some((d: { domain: string }) => d.domain === 'example.com'));
  });

  test('a workspace key gets 403 on every route', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['GET', SSO],
      ['GET', `${SSO}/client-a`],
      ['PUT', `${SSO}/client-a`, connection()],
      ['DELETE', `${SSO}/client-a`],
      ['GET', DOMAINS],
      ['POST', DOMAINS, { domain: 'workspace.example' }],
      ['DELETE', `${DOMAINS}/example.com`],
    ];
    for (const [method, path, json] of calls) {
      const res = await h.request(method, path, { key: h.workspaceKey, ...(json ? { json } : {}) });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'admin_key_required');
    }
  });
});

describe('the scope migration', () => {
  const NEW_SCOPES = [
    'organisation_sso.read',
    'organisation_sso.update',
    'organisation_email_domains.list',
    'organisation_email_domains.create',
    'organisation_email_domains.delete',
  ];

  test('organisation admin keys that read settings are granted the SSO scopes once; nothing else changes', async () => {
    const manager = h.db('control-plane').manager;
    const seeded = await seedOrganisation(manager, 'sso-migration');
    const older = scopesForKind('organisation_admin').filter((s) => !NEW_SCOPES.includes(s));
    await manager.query(
      `UPDATE control_plane.api_keys SET scopes = $1::jsonb WHERE organisation_id = $2 AND kind = 'organisation_admin'`,
      [JSON.stringify(older), seeded.organisationId],
    );
    assert.equal((await h.request('GET', SSO, { key: seeded.adminKey })).status, 403);
    const narrow = await h.request('POST', '/v2/api-keys/organisation/service', {
      key: h.adminKey,
      json: { name: 'workspaces only', scopes: ['workspaces.list'] },
    });
    assert.equal(narrow.status, 200, narrow.text);
    const scopesOf = async (id: string) =>
      (
        (await manager.query(`SELECT scopes FROM control_plane.api_keys WHERE id = $1`, [id])) as Array<{
          scopes: string[];
        }>
      )[0]!.scopes;
    const [admin] = (await manager.query(
      `SELECT id FROM control_plane.api_keys WHERE organisation_id = $1 AND kind = 'organisation_admin'`,
      [seeded.organisationId],
    )) as Array<{ id: string }>;
    const [workspaceKey] = (await manager.query(
      `SELECT id, scopes FROM control_plane.api_keys WHERE organisation_id = $1 AND kind = 'workspace_service'`,
      [seeded.organisationId],
    )) as Array<{ id: string; scopes: string[] }>;
    const runner = h.db('control-plane').createQueryRunner();
    try {
      await new SsoScopes1763700000015().up(runner);
      await new SsoScopes1763700000015().up(runner);
    } finally {
      await runner.release();
    }
    assert.deepEqual(await scopesOf(admin!.id), [...older, ...NEW_SCOPES], 'granted once');
    assert.deepEqual(await scopesOf(narrow.body.id), ['workspaces.list']);
    assert.deepEqual(await scopesOf(workspaceKey!.id), workspaceKey!.scopes);
  });
});
