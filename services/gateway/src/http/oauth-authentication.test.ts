import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { adminService, type Admin } from '@switchyard/admin';
import { controlPlane } from '@switchyard/control-plane';
import { seedOrganisation } from '@switchyard/control-plane/testing';
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
  type HarnessResponse,
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
const rsa = signingKey('oauth-rsa');
const REDIRECT = 'https://app.example.com/callback';

let h: ServiceHarness;
let idp: FakeIdentityProvider;
/** A member of the default workspace (role member) and their workspace-user key. */
let member: { id: string; key: string };

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function jwt(extra: Record<string, unknown> = {}): string {
  return signJwt(rsa, {
    sub: 'agent-owner',
    iss: ISSUER,
    aud: 'switchyard',
    exp: Math.floor(Date.now() / 1000) + 300,
    workspace: 'default',
    scope: 'completions.write models.read logs.view',
    ...extra,
  });
}

function form(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  return h.request('POST', path, {
    body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
});

async function register(body: Record<string, unknown>): Promise<HarnessResponse> {
  return h.request('POST', '/oauth/register', { json: body });
}

async function publicClient(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await register({
    client_name: 'Agent',
    redirect_uris: [REDIRECT, 'http://127.0.0.1:7777/cb'],
    grant_types: ['authorization_code', 'refresh_token'],
    ...extra,
  });
  assert.equal(res.status, 201, res.text);
  return res.body.client_id as string;
}

function authorizeQuery(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  return `/oauth/authorize?${q.toString()}`;
}

/** authorize, then approve: the code and state the client gets back on its redirect URI. */
async function codeFor(
  clientId: string,
  challenge: string,
  options: { key?: string; scope?: string; redirectUri?: string } = {},
): Promise<string> {
  const key = options.key ?? member.key;
  const redirectUri = options.redirectUri ?? REDIRECT;
  const shown = await h.request(
    'GET',
    authorizeQuery({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'xyz',
      scope: options.scope,
    }),
    { key },
  );
  assert.equal(shown.status, 200, shown.text);
  const consent = await h.request('POST', '/oauth/postAuthorizeConsent', {
    key,
    json: {
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: shown.body.scope,
      state: 'xyz',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      approve: true,
    },
  });
  assert.equal(consent.status, 200, consent.text);
  const target = new URL(consent.body.redirect_to);
  assert.equal(`${target.origin}${target.pathname}`, redirectUri);
  assert.equal(target.searchParams.get('state'), 'xyz');
  return target.searchParams.get('code')!;
}

function exchange(clientId: string, code: string, verifier: string, extra: Record<string, string> = {}) {
  return form('/oauth/token', {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    ...extra,
  });
}

async function tokensFor(clientId: string, options: { key?: string; scope?: string } = {}) {
  const { verifier, challenge } = pkce();
  const code = await codeFor(clientId, challenge, options);
  const res = await exchange(clientId, code, verifier);
  assert.equal(res.status, 200, res.text);
  return res.body as { access_token: string; refresh_token?: string; scope: string; expires_in: number };
}

const chat = (token: string) =>
  h.request('POST', '/v1/chat/completions', {
    key: token,
    json: { model: '@mock/mock-1', messages: [{ role: 'user', content: 'hello over OAuth' }] },
  });

function assertOAuthError(res: HarnessResponse, status: number, error: string, description?: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'error_description'], res.text);
  assert.equal(res.body.error, error, res.text);
  if (description) assert.match(res.body.error_description, description);
}

before(async () => {
  idp = await startFakeIdentityProvider([rsa]);
  h = await startServiceHarness({
    services,
    env: {
      JWT_JWKS_URIS: idp.jwksUrl,
      JWT_ORGANISATION: 'default',
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: 'switchyard',
    },
  });
  await h.instance<Admin>('admin').ensureMockIntegration(h.organisationId);
  const user = await h.request('POST', '/v1/admin/users', {
    key: h.adminKey,
    json: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', role: 'member' },
  });
  assert.equal(user.status, 200, user.text);
  const joined = await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
    key: h.adminKey,
    json: { users: [{ id: user.body.id, role: 'member' }] },
  });
  assert.equal(joined.status, 200, joined.text);
  const key = await h.request('POST', '/v2/api-keys/workspace/user', {
    key: h.adminKey,
    json: { name: 'Ada', workspace_id: h.workspaceId, user_id: user.body.id },
  });
  assert.equal(key.status, 200, key.text);
  member = { id: user.body.id, key: key.body.key };
});
after(async () => {
  await h?.close();
  await idp?.close();
});

describe('OAuth metadata and registration', () => {
  test('RFC 8414 metadata names every endpoint under the issuer (the request origin without OAUTH_ISSUER)', async () => {
    const res = await h.request('GET', '/.well-known/oauth-authorization-server');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.issuer, h.url);
    assert.equal(res.body.authorization_endpoint, `${h.url}/oauth/authorize`);
    assert.equal(res.body.token_endpoint, `${h.url}/oauth/token`);
    assert.equal(res.body.registration_endpoint, `${h.url}/oauth/register`);
    assert.equal(res.body.revocation_endpoint, `${h.url}/oauth/revoke`);
    assert.equal(res.body.introspection_endpoint, `${h.url}/oauth/introspect`);
    assert.deepEqual(res.body.response_types_supported, ['code']);
    assert.deepEqual(res.body.grant_types_supported, ['authorization_code', 'refresh_token']);
    assert.deepEqual(res.body.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(res.body.token_endpoint_auth_methods_supported, [
      'none',
      'client_secret_post',
      'client_secret_basic',
    ]);
    assert.ok(res.body.scopes_supported.includes('completions.write'));
    assert.ok(!res.body.scopes_supported.includes('workspaces.create'), 'no organisation scope');
  });

  test('each bad redirect_uris value is refused with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'redirect_uris'],
      [[], 'redirect_uris'],
      ['https://app.example.com/cb', 'redirect_uris'],
      [Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`), 'redirect_uris'],
      [[REDIRECT, 'http://app.example.com/cb'], 'redirect_uris[1]'],
      [['/relative/cb'], 'redirect_uris[0]'],
      [['ftp://app.example.com/cb'], 'redirect_uris[0]'],
      [['https://app.example.com/cb#fragment'], 'redirect_uris[0]'],
      [['https://user:secret@app.example.com/cb'], 'redirect_uris[0]'],
      [[`https://app.example.com/${'x'.repeat(2048)}`], 'redirect_uris[0]'],
      [[42], 'redirect_uris[0]'],
    ];
    for (const [redirectUris, field] of cases) {
      const res = await register({ redirect_uris: redirectUris });
      assertOAuthError(res, 400, 'invalid_redirect_uri');
      assert.ok(res.body.error_description.startsWith(`${field}:`), `${field}: ${res.text}`);
    }
    const metadata: Array<[Record<string, unknown>, string]> = [
      [{ token_endpoint_auth_method: 'private_key_jwt' }, 'token_endpoint_auth_method'],
      [{ grant_types: ['implicit'] }, 'grant_types'],
      [{ response_types: ['token'] }, 'response_types'],
      [{ client_name: 'x'.repeat(201) }, 'client_name'],
      [{ scope: 'completions.write workspaces.create' }, 'scope'],
    ];
    for (const [extra, field] of metadata) {
      const res = await register({ redirect_uris: [REDIRECT], ...extra });
      assertOAuthError(res, 400, 'invalid_client_metadata');
      assert.ok(res.body.error_description.startsWith(`${field}:`), res.text);
    }
  });

  test('registration bodies are bounded', async () => {
    const res = await h.request('POST', '/oauth/register', {
      body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(40_000) }),
      headers: { 'content-type': 'application/json' },
    });
    assertOAuthError(res, 413, 'invalid_request');
  });

  test('a confidential client sees its secret once; only its SHA-256 is stored', async () => {
    const res = await register({
      client_name: 'Reporting',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { client_id: clientId, client_secret: secret } = res.body;
    assert.match(secret, /^sy-ocs-/);
    assert.equal(res.body.client_secret_expires_at, 0);
    assert.equal(typeof res.body.client_id_issued_at, 'number');
    assert.deepEqual(res.body.redirect_uris, [REDIRECT]);
    assert.deepEqual(res.body.grant_types, ['authorization_code']);
    assert.equal(res.body.token_endpoint_auth_method, 'client_secret_basic');
    const rows = await h
      .db('control-plane')
      .query(`SELECT * FROM control_plane.oauth_clients WHERE client_id = $1`, [clientId]);
    assert.equal(rows[0].client_secret_hash, sha256(secret));
    assert.ok(!JSON.stringify(rows).includes(secret), 'the secret is stored nowhere in clear');
    // Nothing shows it again: the consent screen names the client only.
    const { challenge } = pkce();
    const shown = await h.request(
      'GET',
      authorizeQuery({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
      { key: member.key },
    );
    assert.equal(shown.status, 200, shown.text);
    assert.ok(!shown.text.includes(secret));
    // A public client gets no secret.
    const open = await register({ redirect_uris: [REDIRECT] });
    assert.equal(open.body.client_secret, undefined);
    assert.equal(open.body.token_endpoint_auth_method, 'none');
  });
});

describe('authorize and consent', () => {
  test('need a user: a JWT or a workspace-user key; service, admin keys and OAuth tokens get 403', async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const path = authorizeQuery({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const { access_token: oauthToken } = await tokensFor(clientId);
    for (const key of [h.workspaceKey, h.adminKey, oauthToken]) {
      const res = await h.request('GET', path, { key });
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.error.code, 'user_required');
      const consent = await h.request('POST', '/oauth/postAuthorizeConsent', {
        key,
        json: { client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, approve: true },
      });
      assert.equal(consent.status, 403, consent.text);
    }
    assert.equal((await h.request('GET', path)).status, 401);
    const shown = await h.request('GET', path, { key: member.key });
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.client.client_name, 'Agent');
    assert.equal(shown.body.redirect_uri, REDIRECT);
    assert.equal(shown.body.user.display_name, 'Ada Lovelace');
    // Without a scope parameter: the model-call scopes the user holds.
    assert.ok(shown.body.scopes.includes('completions.write'));
    assert.ok(!shown.body.scopes.includes('agents.invoke'));
    const byJwt = await h.request('GET', path, { key: jwt() });
    assert.equal(byJwt.status, 200, byJwt.text);
    assert.equal(byJwt.body.user.display_name, 'agent-owner');
  });

  test('every rule of the request is checked, each a plain 400 (never a redirect)', async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const good = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's',
    };
    const cases: Array<[Record<string, string | undefined>, string]> = [
      [{ client_id: 'client-nobody' }, 'client_id'],
      [{ redirect_uri: 'https://evil.example.com/callback' }, 'redirect_uri'],
      [{ redirect_uri: `${REDIRECT}/` }, 'redirect_uri'],
      [{ redirect_uri: undefined }, 'redirect_uri'],
      [{ response_type: 'token' }, 'response_type'],
      [{ code_challenge_method: 'plain' }, 'code_challenge_method'],
      [{ code_challenge_method: undefined }, 'code_challenge_method'],
      [{ code_challenge: undefined }, 'code_challenge'],
      [{ scope: 'completions.write configs.create' }, 'scope'],
      [{ scope: 'workspaces.create' }, 'scope'],
      [{ scope: 'no.such.scope' }, 'scope'],
    ];
    for (const [change, param] of cases) {
      const res = await h.request('GET', authorizeQuery({ ...good, ...change }), { key: member.key });
      assert.equal(res.status, 400, `${JSON.stringify(change)}: ${res.text}`);
      assert.equal(res.body.error.param, param, res.text);
      assert.equal(res.headers.get('location'), null);
    }
  });

  test('consent checks redirect_uri against the registration again; denial redirects with access_denied', async () => {
    const clientId = await publicClient();
    const { challenge } = pkce();
    const body = {
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'completions.write',
      state: 'st 1',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const forged = await h.request('POST', '/oauth/postAuthorizeConsent', {
      key: member.key,
      json: { ...body, redirect_uri: 'https://evil.example.com/callback', approve: true },
    });
    assert.equal(forged.status, 400, forged.text);
    assert.equal(forged.body.error.param, 'redirect_uri');
    assert.equal(forged.body.redirect_to, undefined);
    const plain = await h.request('POST', '/oauth/postAuthorizeConsent', {
      key: member.key,
      json: { ...body, code_challenge_method: 'plain', approve: true },
    });
    assert.equal(plain.status, 400, plain.text);
    const beyond = await h.request('POST', '/oauth/postAuthorizeConsent', {
      key: member.key,
      json: { ...body, scope: 'api_keys.read', approve: true },
    });
    assert.equal(beyond.status, 400, beyond.text);
    const denied = await h.request('POST', '/oauth/postAuthorizeConsent', {
      key: member.key,
      json: { ...body, approve: false },
    });
    assert.equal(denied.status, 200, denied.text);
    assert.equal(denied.body.redirect_to, `${REDIRECT}?error=access_denied&state=st+1`);
  });
});

describe('the token endpoint', () => {
  test('a code becomes tokens once: the access token makes model calls through the gateway, and answers /v1/auth/self', async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await codeFor(clientId, challenge, { scope: 'completions.write models.read' });
    const rows = await h.db('control-plane').query(`SELECT * FROM control_plane.oauth_authorization_codes`);
    assert.ok(!JSON.stringify(rows).includes(code), 'codes are stored hashed');
    const res = await exchange(clientId, code, verifier);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.expires_in, 3600);
    assert.equal(res.body.scope, 'completions.write models.read');
    assert.match(res.body.access_token, /^sy-oat-/);
    assert.match(res.body.refresh_token, /^sy-ort-/);
    const tokens = await h.db('control-plane').query(`SELECT token_hash FROM control_plane.oauth_tokens`);
    assert.ok(!JSON.stringify(tokens).includes(res.body.access_token), 'tokens are stored hashed');

    const completion = await chat(res.body.access_token);
    assert.equal(completion.status, 200, completion.text);
    const self = await h.request('GET', '/v1/auth/self', { key: res.body.access_token });
    assert.equal(self.status, 200, self.text);
    assert.equal(self.body.auth_method, 'oauth');
    assert.equal(self.body.subject, member.id);
    assert.equal(self.body.display_name, 'Ada Lovelace');
    assert.equal(self.body.client_id, clientId);
    assert.deepEqual(self.body.workspace, { id: h.workspaceId, slug: 'default' });
    // Its scopes bound it: no logs.view was granted.
    const logs = await h.request('GET', '/v1/logs/anything', { key: res.body.access_token });
    assert.equal(logs.status, 403);
    assert.equal(logs.body.error.code, 'missing_scope');
  });

  test('the redirect_uri and the PKCE verifier must match; a mismatch does not use the code up', async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await codeFor(clientId, challenge);
    assertOAuthError(
      await exchange(clientId, code, verifier, { redirect_uri: 'http://127.0.0.1:7777/cb' }),
      400,
      'invalid_grant',
      /redirect_uri/,
    );
    assertOAuthError(await exchange(clientId, code, pkce().verifier), 400, 'invalid_grant', /code_verifier/);
    assertOAuthError(await exchange(clientId, code, 'short'), 400, 'invalid_request', /code_verifier/);
    const other = await publicClient();
    assertOAuthError(await exchange(other, code, verifier), 400, 'invalid_grant', /another client/);
    assert.equal((await exchange(clientId, code, verifier)).status, 200);
  });

  test('a code used again is refused, and the tokens issued for it are revoked', async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await codeFor(clientId, challenge);
    const first = await exchange(clientId, code, verifier);
    assert.equal(first.status, 200, first.text);
    assert.equal((await chat(first.body.access_token)).status, 200);
    assertOAuthError(await exchange(clientId, code, verifier), 400, 'invalid_grant', /already used/);
    await eventually(async () => ((await chat(first.body.access_token)).status === 401 ? true : undefined), {
      timeoutMs: 2_000,
    });
    const refreshed = await form('/oauth/token', {
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: first.body.refresh_token,
    });
    assertOAuthError(refreshed, 400, 'invalid_grant');
  });

  test('an expired code is refused', async () => {
    const clientId = await publicClient();
    const { verifier, challenge } = pkce();
    const code = await codeFor(clientId, challenge);
    const [row] = await h.db('control-plane').query(
      `SELECT extract(epoch FROM expires_at - created_at)::float8 AS ttl
           FROM control_plane.oauth_authorization_codes WHERE code_hash = $1`,
      [sha256(code)],
    );
    assert.ok(Math.abs(Number(row.ttl) - 60) < 1, `a code lives 60 s, not ${row.ttl} s`);
    await h
      .db('control-plane')
      .query(
        `UPDATE control_plane.oauth_authorization_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1`,
        [sha256(code)],
      );
    assertOAuthError(await exchange(clientId, code, verifier), 400, 'invalid_grant', /expired/);
  });

  test('refresh tokens rotate; presenting a used one revokes its whole family', async () => {
    const clientId = await publicClient();
    const first = await tokensFor(clientId);
    const second = await form('/oauth/token', {
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: first.refresh_token!,
    });
    assert.equal(second.status, 200, second.text);
    assert.notEqual(second.body.refresh_token, first.refresh_token);
    assert.notEqual(second.body.access_token, first.access_token);
    assert.equal(second.body.scope, first.scope);
    assert.equal((await chat(second.body.access_token)).status, 200);
    // Narrower scope for the access token only; a wider one is refused.
    assertOAuthError(
      await form('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: second.body.refresh_token,
        scope: 'completions.write logs.export',
      }),
      400,
      'invalid_scope',
    );
    // The old refresh token again: reuse. The family (the second pair included) is revoked.
    const replay = await form('/oauth/token', {
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: first.refresh_token!,
    });
    assertOAuthError(replay, 400, 'invalid_grant', /already used/);
    await eventually(async () => ((await chat(second.body.access_token)).status === 401 ? true : undefined), {
      timeoutMs: 2_000,
    });
    assertOAuthError(
      await form('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: second.body.refresh_token,
      }),
      400,
      'invalid_grant',
    );
  });

  test('a client without the refresh_token grant gets no refresh token', async () => {
    const clientId = await publicClient({ grant_types: ['authorization_code'] });
    const tokens = await tokensFor(clientId);
    assert.equal(tokens.refresh_token, undefined);
  });

  test('confidential clients authenticate by their registered method; errors are in the RFC shape', async () => {
    const res = await register({
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_post',
    });
    const { client_id: clientId, client_secret: secret } = res.body;
    const { verifier, challenge } = pkce();
    const code = await codeFor(clientId, challenge);
    assertOAuthError(await exchange(clientId, code, verifier), 401, 'invalid_client');
    assertOAuthError(
      await exchange(clientId, code, verifier, { client_secret: 'wrong' }),
      401,
      'invalid_client',
    );
    const viaBasic = await form(
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(clientId, secret),
    );
    assertOAuthError(viaBasic, 401, 'invalid_client', /client_secret_post/);
    assert.equal((await exchange(clientId, code, verifier, { client_secret: secret })).status, 200);
    assertOAuthError(await form('/oauth/token', { grant_type: 'password' }), 400, 'unsupported_grant_type');
    assertOAuthError(await form('/oauth/token', {}), 400, 'invalid_request', /grant_type/);
    // JSON bodies are accepted too.
    const json = await h.request('POST', '/oauth/token', { json: { grant_type: 'authorization_code' } });
    assertOAuthError(json, 401, 'invalid_client');
  });
});

describe('revocation and introspection', () => {
  test('a revoked access token is refused by the gateway at once; unknown tokens revoke with 200', async () => {
    const clientId = await publicClient();
    const tokens = await tokensFor(clientId);
    // The gateway now holds the token in its key cache.
    assert.equal((await chat(tokens.access_token)).status, 200);
    const revoked = await form('/oauth/revoke', { client_id: clientId, token: tokens.access_token });
    assert.equal(revoked.status, 200, revoked.text);
    const started = Date.now();
    await eventually(async () => ((await chat(tokens.access_token)).status === 401 ? true : undefined), {
      timeoutMs: 2_000,
    });
    assert.ok(Date.now() - started < 2_000);
    const refused = await chat(tokens.access_token);
    assert.equal(refused.body.error.type, 'authentication_error');
    // The refresh token still works; revoking it ends the grant.
    const again = await form('/oauth/token', {
      grant_type: 'refresh_token',
      client_id: clientId,
      refresh_token: tokens.refresh_token!,
    });
    assert.equal(again.status, 200, again.text);
    await form('/oauth/revoke', { client_id: clientId, token: again.body.refresh_token });
    await eventually(async () => ((await chat(again.body.access_token)).status === 401 ? true : undefined), {
      timeoutMs: 2_000,
    });
    for (const token of ['sy-oat-unknown', tokens.access_token]) {
      const res = await form('/oauth/revoke', { client_id: clientId, token });
      assert.equal(res.status, 200, res.text);
    }
    // Another client cannot revoke it.
    const fresh = await tokensFor(clientId);
    const stranger = await publicClient();
    assert.equal(
      (await form('/oauth/revoke', { client_id: stranger, token: fresh.access_token })).status,
      200,
    );
    assert.equal((await chat(fresh.access_token)).status, 200);
  });

  test('introspection: a confidential client sees its own tokens, an admin key its organisation’s, with who consented', async () => {
    const registered = await register({
      client_name: 'Introspecting agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const { client_id: clientId, client_secret: secret } = registered.body;
    const { verifier, challenge } = pkce();
    const code = await codeFor(clientId, challenge, { scope: 'completions.write' });
    const tokens = await form(
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      basic(clientId, secret),
    );
    assert.equal(tokens.status, 200, tokens.text);
    const access = tokens.body.access_token as string;

    const own = await form('/oauth/introspect', { token: access }, basic(clientId, secret));
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.active, true);
    assert.equal(own.body.scope, 'completions.write');
    assert.equal(own.body.client_id, clientId);
    assert.equal(own.body.sub, member.id);
    assert.equal(own.body.display_name, 'Ada Lovelace');
    assert.equal(own.body.token_type, 'Bearer');
    assert.equal(own.body.organisation_id, h.organisationId);
    assert.equal(own.body.workspace_id, h.workspaceId);
    assert.ok(own.body.exp - own.body.iat === 3600);

    const byAdmin = await form(
      '/oauth/introspect',
      { token: access },
      { authorization: `Bearer ${h.adminKey}` },
    );
    assert.equal(byAdmin.body.active, true, byAdmin.text);
    assert.equal(byAdmin.body.display_name, 'Ada Lovelace');

    // A token of someone else's client, another organisation's admin, nonsense: inactive.
    const otherTokens = await tokensFor(await publicClient());
    const other = await form(
      '/oauth/introspect',
      { token: otherTokens.access_token },
      basic(clientId, secret),
    );
    assert.deepEqual(other.body, { active: false });
    const rival = await seedOrganisation(h.db('control-plane').manager, 'oauth-rival');
    const foreign = await form(
      '/oauth/introspect',
      { token: access },
      { authorization: `Bearer ${rival.adminKey}` },
    );
    assert.deepEqual(foreign.body, { active: false });
    assert.deepEqual((await form('/oauth/introspect', { token: 'nope' }, basic(clientId, secret))).body, {
      active: false,
    });

    // Callers that may not introspect.
    assertOAuthError(
      await form('/oauth/introspect', { token: access }, { authorization: `Bearer ${h.workspaceKey}` }),
      403,
      'insufficient_scope',
    );
    assertOAuthError(
      await form('/oauth/introspect', { token: access, client_id: await publicClient() }),
      401,
      'invalid_client',
    );
    assertOAuthError(
      await form('/oauth/introspect', { token: access }, basic(clientId, 'wrong')),
      401,
      'invalid_client',
    );

    await form('/oauth/revoke', { token: access }, basic(clientId, secret));
    assert.deepEqual((await form('/oauth/introspect', { token: access }, basic(clientId, secret))).body, {
      active: false,
    });
  });

  test('a JWT caller consents too: its subject is who the token speaks for', async () => {
    const clientId = await publicClient();
    const tokens = await tokensFor(clientId, { key: jwt(), scope: 'completions.write logs.view' });
    assert.equal((await chat(tokens.access_token)).status, 200);
    const introspected = await form(
      '/oauth/introspect',
      { token: tokens.access_token },
      { authorization: `Bearer ${h.adminKey}` },
    );
    assert.equal(introspected.body.sub, 'agent-owner');
    assert.equal(introspected.body.display_name, 'agent-owner');
    const self = await h.request('GET', '/v1/auth/self', { key: tokens.access_token });
    assert.equal(self.body.subject, 'agent-owner');
  });

  test('a member who leaves the workspace: their tokens are no longer active and cannot be refreshed', async () => {
    const clientId = await publicClient();
    const tokens = await tokensFor(clientId);
    // Used once, so that the gateway holds the token in its cache.
    assert.equal((await chat(tokens.access_token)).status, 200);
    const removed = await h.request('DELETE', `/v1/admin/workspaces/${h.workspaceId}/users/${member.id}`, {
      key: h.adminKey,
    });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await chat(tokens.access_token)).status, 401, 'the gateway dropped it at once');
    const introspected = await form(
      '/oauth/introspect',
      { token: tokens.access_token },
      { authorization: `Bearer ${h.adminKey}` },
    );
    assert.deepEqual(introspected.body, { active: false });
    assertOAuthError(
      await form('/oauth/token', {
        grant_type: 'refresh_token',
        client_id: clientId,
        refresh_token: tokens.refresh_token!,
      }),
      400,
      'invalid_grant',
    );
  });
});
