import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { adminService, type Admin } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { logExportService } from '@switchyard/log-export';
import { policyService } from '@switchyard/policy';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  eventually,
  signingKey,
  signJwt,
  startFakeIdentityProvider,
  startServiceHarness,
  type FakeIdentityProvider,
  type ServiceHarness,
} from '@switchyard/testing';
import { gatewayService } from '../service.ts';

const services = [
  controlPlane,
  policyService,
  adminService,
  logExportService,
  gatewayService,
] as ServiceDefinition[];

const ISSUER = 'https://idp.example.test';
const rsa = signingKey('rsa-1');
const ec = signingKey('ec-1', 'ES256');
const rotated = signingKey('rsa-2');
const rs384 = signingKey('rsa-384', 'RS384');

let h: ServiceHarness;
let idpA: FakeIdentityProvider;
let idpB: FakeIdentityProvider;
let research: { id: string; slug: string };

const now = () => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({
  sub: 'svc-reporting',
  iss: ISSUER,
  aud: 'switchyard',
  exp: now() + 300,
  workspace: 'research',
  scope: 'completions.write logs.view',
  ...extra,
});

const chat = (token: string) =>
  h.request('POST', '/v1/chat/completions', {
    key: token,
    json: { model: '@mock/mock-1', messages: [{ role: 'user', content: 'who am I?' }] },
  });

before(async () => {
  idpA = await startFakeIdentityProvider([rsa, rs384]);
  idpB = await startFakeIdentityProvider([ec]);
  h = await startServiceHarness({
    services,
    env: {
      JWT_JWKS_URIS: `${idpA.jwksUrl},${idpB.jwksUrl}`,
      JWT_ORGANISATION: 'default',
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: 'switchyard',
      JWT_CLOCK_TOLERANCE_SECONDS: '0',
      JWT_JWKS_REFRESH_COOLDOWN_SECONDS: '0',
      JWT_SUBS_ALLOWED: 'svc-reporting,svc-billing,svc-agent',
      JWT_SUB_WORKSPACE_MAPPING: JSON.stringify({ 'svc-billing': 'billing' }),
      JWT_WORKSPACES_ALLOWED: 'research,default',
    },
  });
  await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
  for (const name of ['research', 'billing']) {
    const created = await h.request('POST', '/v2/workspaces', {
      key: h.adminKey,
      json: { name, slug: name },
    });
    assert.equal(created.status, 200, created.text);
    if (name === 'research') research = created.body;
  }
});
after(async () => {
  await h?.close();
  await idpA?.close();
  await idpB?.close();
});

describe('JWT bearer tokens (JWKS of the deployment)', () => {
  test('a token signed by a key of either JWKS makes model calls in its workspace, logged under it', async () => {
    for (const key of [rsa, ec]) {
      const token = signJwt(key, claims());
      const res = await chat(token);
      assert.equal(res.status, 200, res.text);
      const id = res.headers.get('x-request-id')!;
      const log = await eventually(async () => {
        const found = await h.request('GET', `/v1/logs/${id}`, { key: token });
        return found.status === 200 ? found.body : undefined;
      });
      assert.equal(log.workspace_id, research.id);
      // Another workspace's key sees nothing of it.
      assert.equal((await h.request('GET', `/v1/logs/${id}`, { key: h.workspaceKey })).status, 404);
    }
  });

  test('its scopes bound it like a key: a token without logs.view cannot read logs, nor manage anything', async () => {
    const token = signJwt(rsa, claims({ scope: 'completions.write' }));
    assert.equal((await chat(token)).status, 200);
    const logs = await h.request('GET', '/v1/logs/anything', { key: token });
    assert.equal(logs.status, 403);
    assert.equal(logs.body.error.code, 'missing_scope');
    const configs = await h.request('GET', '/v2/configs', { key: token });
    assert.equal(configs.status, 403);
    const admin = await h.request('GET', '/v1/admin/organisation/settings', { key: token });
    assert.equal(admin.status, 403);
    assert.equal(admin.body.error.code, 'admin_key_required');
  });

  test('expired, not yet valid, wrong issuer or audience, without expiry, or tampered: 401', async () => {
    const refused = [
      signJwt(rsa, claims({ exp: now() - 5 })),
      signJwt(rsa, claims({ nbf: now() + 120 })),
      signJwt(rsa, claims({ iss: 'https://elsewhere.example.test' })),
      signJwt(rsa, claims({ aud: 'another-service' })),
      signJwt(rsa, claims({ exp: undefined })),
    ];
    const tampered = signJwt(rsa, claims()).split('.');
    tampered[1] = Buffer.from(JSON.stringify(claims({ workspace: 'default' }))).toString('base64url');
    refused.push(tampered.join('.'));
    for (const token of refused) {
      const res = await chat(token);
      assert.equal(res.status, 401, token);
      assert.equal(res.body.error.type, 'authentication_error');
    }
  });

  test('only allow-listed algorithms: RS384 (not listed), none and HS256 are refused', async () => {
    assert.equal((await chat(signJwt(rs384, claims()))).status, 401);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    assert.equal((await chat(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`)).status, 401);
    assert.equal((await chat(signJwt(rsa, claims(), { alg: 'HS256' }))).status, 401);
  });

  test('a key id no JWKS has makes them be fetched again: a rotated key works at once', async () => {
    const before = idpA.requests.length;
    idpA.keys = [rsa, rs384, rotated];
    assert.equal((await chat(signJwt(rotated, claims()))).status, 200);
    assert.ok(idpA.requests.length > before);
  });

  test('jwt_subs_allowed, jwt_sub_workspace_mapping and workspaces_allowed are honoured', async () => {
    // Not an allowed subject.
    assert.equal((await chat(signJwt(rsa, claims({ sub: 'svc-stranger' })))).status, 401);
    // Mapped to billing, which is not an allowed workspace, whatever the token claims.
    assert.equal(
      (await chat(signJwt(rsa, claims({ sub: 'svc-billing', workspace: 'research' })))).status,
      401,
    );
    // A workspace that is not allowed, one that does not exist, none at all.
    for (const workspace of ['billing', 'nowhere', undefined]) {
      assert.equal((await chat(signJwt(rsa, claims({ workspace })))).status, 401, String(workspace));
    }
    // Allowed by id as well as by slug.
    assert.equal((await chat(signJwt(rsa, claims({ workspace: research.id })))).status, 200);
  });

  test('agents.invoke is granted only when the token names it', async () => {
    const self = async (token: string) => (await h.request('GET', '/v1/models', { key: token })).status;
    assert.equal(await self(signJwt(rsa, claims({ scope: undefined }))), 200, 'no scope claim: model calls');
    assert.equal(await self(signJwt(rsa, claims({ scope: 'agents.invoke' }))), 403);
  });

  test('GET /v1/auth/self answers a JWT with who it is; an API key alone is refused', async () => {
    const token = signJwt(ec, claims());
    const self = await h.request('GET', '/v1/auth/self', { key: token });
    assert.equal(self.status, 200, self.text);
    assert.equal(self.body.auth_method, 'jwt');
    assert.equal(self.body.subject, 'svc-reporting');
    assert.equal(self.body.organisation_id, h.organisationId);
    assert.deepEqual(self.body.workspace, { id: research.id, slug: 'research' });
    assert.deepEqual(self.body.scopes, ['completions.write', 'logs.view']);
    for (const key of [h.adminKey, h.workspaceKey]) {
      const refused = await h.request('GET', '/v1/auth/self', { key });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'session_or_jwt_required');
    }
    assert.equal((await h.request('GET', '/v1/auth/self')).status, 401);
  });

  test('GET /v1/auth/key answers an API key with who it is; a JWT is sent to /v1/auth/self', async () => {
    const admin = await h.request('GET', '/v1/auth/key', { key: h.adminKey });
    assert.equal(admin.status, 200, admin.text);
    assert.equal(admin.body.object, 'auth.key');
    assert.equal(admin.body.type, 'organisation');
    assert.equal(admin.body.organisation_id, h.organisationId);
    assert.equal(admin.body.workspace, null);
    assert.ok(admin.body.scopes.includes('workspaces.create'), 'an admin key holds organisation scopes');
    assert.ok(!JSON.stringify(admin.body).includes(h.adminKey), 'the key itself is never echoed');
    const workspace = await h.request('GET', '/v1/auth/key', { key: h.workspaceKey });
    assert.equal(workspace.status, 200, workspace.text);
    assert.equal(workspace.body.type, 'workspace');
    assert.equal(workspace.body.sub_type, 'service');
    assert.equal(workspace.body.workspace.id, h.workspaceId);
    assert.ok(workspace.body.scopes.includes('completions.write'));
    assert.ok(
      !workspace.body.scopes.includes('workspaces.create'),
      'no organisation scope on a workspace key',
    );
    const jwt = await h.request('GET', '/v1/auth/key', { key: signJwt(ec, claims()) });
    assert.equal(jwt.status, 403);
    assert.equal(jwt.body.error.code, 'api_key_required');
    assert.equal((await h.request('GET', '/v1/auth/key')).status, 401);
  });

  test('a JWT opens a browser session: an HttpOnly cookie that acts like the token, writes only from this origin', async () => {
    const opened = await h.request('POST', '/v1/auth/sessions', { key: signJwt(rsa, claims()) });
    assert.equal(opened.status, 200, opened.text);
    const setCookie = opened.headers.get('set-cookie') ?? '';
    assert.match(setCookie, /^sy_session=sys-[\w-]+;/);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Lax/);
    const cookie = setCookie.split(';')[0]!;
    const secret = cookie.split('=')[1]!;
    const rows = await h.db('control-plane').query('SELECT * FROM control_plane.sessions');
    assert.ok(rows.length >= 1);
    assert.ok(!JSON.stringify(rows).includes(secret), 'only the hash of the secret is stored');

    const withCookie = (method: string, path: string, headers: Record<string, string> = {}) =>
      h.request(method, path, {
        headers: { cookie: `theme=dark; ${cookie}`, ...headers },
        json: method === 'GET' ? undefined : {},
      });
    const self = await withCookie('GET', '/v1/auth/self');
    assert.equal(self.status, 200, self.text);
    assert.equal(self.body.auth_method, 'session');
    assert.equal(self.body.subject, 'svc-reporting');
    assert.deepEqual(self.body.workspace, { id: research.id, slug: 'research' });
    assert.deepEqual(self.body.scopes, ['completions.write', 'logs.view']);

    // A write from another page (no Origin, or another origin) is refused before anything else.
    for (const headers of [{}, { origin: 'https://evil.example.test' }] as Array<Record<string, string>>) {
      const crossSite = await withCookie('POST', '/v2/configs', headers);
      assert.equal(crossSite.status, 403);
      assert.equal(crossSite.body.error.code, 'cross_origin_session');
    }
    // From this origin it gets as far as its scopes allow.
    const sameSite = await withCookie('POST', '/v2/configs', { origin: h.url });
    assert.equal(sameSite.status, 403);
    assert.equal(sameSite.body.error.code, 'missing_scope');

    const byKey = await h.request('POST', '/v1/auth/sessions', { key: h.workspaceKey });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.code, 'jwt_required');

    const closed = await withCookie('DELETE', '/v1/auth/sessions/current', { origin: h.url });
    assert.equal(closed.status, 200, closed.text);
    assert.match(closed.headers.get('set-cookie') ?? '', /sy_session=;/);
    assert.equal((await withCookie('GET', '/v1/auth/self')).status, 401, 'closed at once');
  });

  test('API keys keep working beside tokens', async () => {
    assert.equal((await chat(h.workspaceKey)).status, 200);
  });
});
