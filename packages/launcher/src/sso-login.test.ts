import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { adminService } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import type { ServiceDefinition } from '@switchyard/runtime';
import {
  startFakeOidcProvider,
  startServiceHarness,
  type FakeOidcProvider,
  type ServiceHarness,
} from '@switchyard/testing';

let h: ServiceHarness;
let idp: FakeOidcProvider;
const SECRET = 'sso-client-secret-0123456789abcdef';
const clientKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const clientPublicJwk = { ...clientKeys.publicKey.export({ format: 'jwk' }), kid: 'client-1', use: 'sig' };
const clientPrivateJwk = clientKeys.privateKey.export({ format: 'jwk' });

before(async () => {
  idp = await startFakeOidcProvider([
    { clientId: 'basic-client', method: 'client_secret_basic', clientSecret: SECRET },
    { clientId: 'post-client', method: 'client_secret_post', clientSecret: SECRET },
    { clientId: 'jwt-client', method: 'private_key_jwt', publicJwk: clientPublicJwk },
  ]);
  h = await startServiceHarness({
    services: [controlPlane, adminService] as ServiceDefinition[],
    env: { TRUSTED_CUSTOM_HOSTS: '127.0.0.1' },
  });
  const claim = await h.request('POST', '/v1/admin/organisation/email-domains', {
    key: h.adminKey,
    json: { domain: 'acme.test' },
  });
  assert.equal(claim.status, 200, claim.text);
});
after(async () => {
  await h?.close();
  await idp?.close();
});

async function connect(clientId: string, json: Record<string, unknown>) {
  const res = await h.request('PUT', `/v1/admin/organisation/sso/${clientId}`, {
    key: h.adminKey,
    json: { issuer: idp.issuer, ...json },
  });
  assert.equal(res.status, 200, res.text);
}

/** Only this connection is enabled. */
async function only(clientId: string, json: Record<string, unknown>) {
  for (const other of ['basic-client', 'post-client', 'jwt-client'].filter((c) => c !== clientId)) {
    await h.request('DELETE', `/v1/admin/organisation/sso/${other}`, { key: h.adminKey });
  }
  await connect(clientId, json);
}

const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, { redirect: 'manual', headers });

async function bodyOf(res: Response) {
  return (await res.json()) as { error: { message: string; code: string | null; type: string } };
}

/** Starts a login; answers the redirect to the identity provider. */
async function startLogin(query: Record<string, string>) {
  const res = await get(`${h.url}/v1/auth/sso/login?${new URLSearchParams(query)}`);
  return res;
}

/** The browser at the identity provider: signs in, comes back with the code. */
async function throughIdp(login: Response): Promise<string> {
  assert.equal(login.status, 302, await login.clone().text());
  const atIdp = await get(login.headers.get('location')!);
  assert.equal(atIdp.status, 302);
  return atIdp.headers.get('location')!;
}

/** A whole login: the callback's answer. */
async function login(query: Record<string, string> = { email: idp.user.email }) {
  const callback = await throughIdp(await startLogin(query));
  return get(callback);
}

function sessionCookie(res: Response): string {
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('sy_session='));
  assert.ok(cookie, `a session cookie: ${res.headers.getSetCookie().join('; ')}`);
  assert.match(cookie, /HttpOnly/i);
  assert.match(cookie, /SameSite=Lax/i);
  return cookie.split(';')[0]!;
}

async function self(cookie: string) {
  const res = await get(`${h.url}/v1/auth/self`, { cookie });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('SSO login (OIDC authorization code with PKCE)', () => {
  test('the login redirects to the identity provider with code, PKCE S256, state, nonce and the OIDC scopes', async () => {
    await only('basic-client', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' });
    const res = await startLogin({ email: idp.user.email });
    assert.equal(res.status, 302);
    const location = new URL(res.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, `${idp.url}/authorize`);
    const p = location.searchParams;
    assert.equal(p.get('response_type'), 'code');
    assert.equal(p.get('client_id'), 'basic-client');
    assert.equal(p.get('scope'), 'openid email profile');
    assert.equal(p.get('code_challenge_method'), 'S256');
    assert.match(p.get('code_challenge')!, /^[\w-]{43}$/);
    assert.ok(p.get('state') && p.get('nonce'));
    assert.equal(p.get('redirect_uri'), `${h.url}/v1/auth/sso/callback`);
  });

  for (const [clientId, settings] of [
    ['basic-client', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' }],
    ['post-client', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_post' }],
    [
      'jwt-client',
      {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [clientPublicJwk] },
        private_key: clientPrivateJwk,
      },
    ],
  ] as const) {
    test(`${settings.token_endpoint_auth_method}: the first login provisions the person and the cookie authenticates them`, async () => {
      await only(clientId, settings);
      idp.user = {
        sub: `sub-${clientId}`,
        email: `${clientId}@acme.test`,
        given_name: 'Ada',
        family_name: 'L',
      };
      const refusals = idp.tokenRefusals.length;
      const res = await login({ email: idp.user.email, redirect_to: '/dashboard?tab=keys' });
      assert.equal(res.status, 302, await res.clone().text());
      assert.equal(idp.tokenRefusals.length, refusals, idp.tokenRefusals.join(', '));
      assert.equal(res.headers.get('location'), '/dashboard?tab=keys');
      const me = await self(sessionCookie(res));
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.auth_method, 'session');
      assert.equal(me.body.subject, `${clientId}@acme.test`);
      assert.equal(me.body.organisation_id, h.organisationId);
      const users = await h.request('GET', `/v1/admin/users?email=${clientId}@acme.test`, {
        key: h.adminKey,
      });
      assert.equal(users.status, 200, users.text);
      assert.equal(users.body.data.length, 1, users.text);
      assert.equal(users.body.data[0].role, 'member');
    });
  }

  test('private_key_jwt with a key the identity provider does not hold is refused there: a 502, no session', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const otherPublic = { ...other.publicKey.export({ format: 'jwk' }), kid: 'other' };
    await only('jwt-client', {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [otherPublic] },
      private_key: other.privateKey.export({ format: 'jwk' }),
    });
    const res = await login();
    assert.equal(res.status, 502);
    assert.equal((await bodyOf(res)).error.code, 'sso_token_exchange_failed');
    assert.equal(res.headers.getSetCookie().length, 0);
    assert.match(idp.tokenRefusals.at(-1)!, /client_assertion signature/);
  });

  test('a client secret the identity provider does not know: 502, never a 500', async () => {
    await only('basic-client', {
      client_secret: 'wrong-secret',
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const res = await login();
    assert.equal(res.status, 502);
    assert.equal((await bodyOf(res)).error.code, 'sso_token_exchange_failed');
  });

  test('a private key whose public half is not in jwks is refused when the connection is saved', async () => {
    const res = await h.request('PUT', '/v1/admin/organisation/sso/jwt-client', {
      key: h.adminKey,
      json: {
        issuer: idp.issuer,
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [clientPublicJwk] },
        private_key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
      },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'private_key');
  });

  test('sso_client_id chooses among several connections; without it the login asks for one', async () => {
    await connect('basic-client', {
      client_secret: SECRET,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    await connect('post-client', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_post' });
    const ambiguous = await startLogin({ email: idp.user.email });
    assert.equal(ambiguous.status, 400);
    assert.equal((await bodyOf(ambiguous)).error.code, 'sso_client_id_required');
    const chosen = await startLogin({ email: idp.user.email, sso_client_id: 'post-client' });
    assert.equal(new URL(chosen.headers.get('location')!).searchParams.get('client_id'), 'post-client');
    const res = await get(await throughIdp(chosen));
    assert.equal(res.status, 302, await res.clone().text());
    sessionCookie(res);
  });

  test('an email of a domain no organisation claims: 400', async () => {
    const res = await startLogin({ email: 'someone@elsewhere.test' });
    assert.equal(res.status, 400);
    const body = await bodyOf(res);
    assert.equal(body.error.code, 'email_domain_not_claimed');
    assert.equal(body.error.type, 'invalid_request_error');
  });

  test('a callback replayed with the same state is refused', async () => {
    await only('basic-client', { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' });
    const callback = await throughIdp(await startLogin({ email: idp.user.email }));
    const first = await get(callback);
    assert.equal(first.status, 302, await first.clone().text());
    const replay = await get(callback);
    assert.equal(replay.status, 400);
    assert.equal((await bodyOf(replay)).error.code, 'sso_state_invalid');
    const unknown = await get(`${h.url}/v1/auth/sso/callback?state=made-up&code=x`);
    assert.equal(unknown.status, 400);
  });

  for (const [what, overrides, needle] of [
    ['a wrong nonce', { nonce: 'not-this-login' }, /nonce/],
    ['another issuer', { iss: 'https://evil.example' }, /issuer/],
    ['another audience', { aud: 'someone-else' }, /not for this client/],
    ['an expired id_token', { exp: Math.floor(Date.now() / 1000) - 3600 }, /expired/],
  ] as const) {
    test(`${what} in the id_token: 401, no session`, async () => {
      idp.idTokenOverrides = overrides;
      try {
        const res = await login();
        assert.equal(res.status, 401);
        const body = await bodyOf(res);
        assert.equal(body.error.code, 'sso_id_token_invalid');
        assert.match(body.error.message, needle);
        assert.equal(res.headers.getSetCookie().length, 0);
      } finally {
        idp.idTokenOverrides = {};
      }
    });
  }

  test('the identity provider denies the login: 403 sso_access_denied', async () => {
    idp.authorizeError = 'access_denied';
    try {
      const res = await login();
      assert.equal(res.status, 403);
      assert.equal((await bodyOf(res)).error.code, 'sso_access_denied');
    } finally {
      idp.authorizeError = undefined;
    }
  });

  test('redirect_to must be a path on this origin: other origins are refused', async () => {
    for (const target of [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
      'dashboard',
    ]) {
      const res = await startLogin({ email: idp.user.email, redirect_to: target });
      assert.equal(res.status, 400, target);
      assert.equal((await bodyOf(res)).error.type, 'invalid_request_error', target);
    }
    const res = await login({ email: idp.user.email });
    assert.equal(res.headers.get('location'), '/');
  });

  test('disable_auto_provision_user: a newcomer is refused with 403, a member still signs in', async () => {
    await only('basic-client', {
      client_secret: SECRET,
      token_endpoint_auth_method: 'client_secret_basic',
      disable_auto_provision_user: true,
    });
    idp.user = { sub: 'newcomer', email: 'newcomer@acme.test' };
    const refused = await login({ email: idp.user.email });
    assert.equal(refused.status, 403);
    assert.equal((await bodyOf(refused)).error.code, 'sso_user_not_provisioned');
    const users = await h.request('GET', '/v1/admin/users?email=newcomer@acme.test', { key: h.adminKey });
    assert.equal(users.body.data.length, 0, users.text);

    idp.user = { sub: 'sub-basic-client', email: 'basic-client@acme.test' };
    const member = await login({ email: idp.user.email });
    assert.equal(member.status, 302, await member.clone().text());
    assert.equal((await self(sessionCookie(member))).status, 200);
  });

  test('the identity provider on a loopback address is refused unless trusted', async () => {
    const untrusted = await startServiceHarness({
      services: [controlPlane, adminService] as ServiceDefinition[],
      env: { TRUSTED_CUSTOM_HOSTS: '' },
    });
    try {
      await untrusted.request('POST', '/v1/admin/organisation/email-domains', {
        key: untrusted.adminKey,
        json: { domain: 'acme.test' },
      });
      const put = await untrusted.request('PUT', '/v1/admin/organisation/sso/basic-client', {
        key: untrusted.adminKey,
        json: { issuer: idp.issuer, client_secret: SECRET },
      });
      assert.equal(put.status, 200, put.text);
      const res = await get(`${untrusted.url}/v1/auth/sso/login?email=ada@acme.test`);
      assert.equal(res.status, 422);
      assert.equal((await bodyOf(res)).error.code, 'sso_idp_refused');
    } finally {
      await untrusted.close();
    }
  });
});
