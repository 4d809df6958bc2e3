// The official MCP TypeScript SDK's OAuth client functions against our authorization server:
// discovery, dynamic registration, authorization with PKCE, consent, token and refresh, with
// an RFC 8707 resource (an MCP server's URL) bound to the tokens.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationFull,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { sha256Hex } from '@switchyard/core';
import { remotePrincipalLookup } from '@switchyard/runtime';
import { startServiceHarness, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';

const REDIRECT = 'http://127.0.0.1:7777/callback';
const RESOURCE = 'https://gateway.example.test/mcp/docs';

let h: ServiceHarness;
let metadata: AuthorizationServerMetadata;
/** A member of the default workspace and their workspace-user key: the user who consents. */
let memberKey: string;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
  const user = await h.request('POST', '/v1/admin/users', {
    key: h.adminKey,
    json: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper', role: 'member' },
  });
  assert.equal(user.status, 200, user.text);
  const joined = await h.request('POST', `/v1/admin/workspaces/${h.workspaceId}/users`, {
    key: h.adminKey,
    json: { users: [{ id: user.body.id, role: 'member' }] },
  });
  assert.equal(joined.status, 200, joined.text);
  const key = await h.request('POST', '/v2/api-keys/workspace/user', {
    key: h.adminKey,
    json: { name: 'Grace', workspace_id: h.workspaceId, user_id: user.body.id },
  });
  assert.equal(key.status, 200, key.text);
  memberKey = key.body.key;
  const discovered = await discoverAuthorizationServerMetadata(h.url);
  assert.ok(discovered, 'the SDK finds the metadata');
  metadata = discovered as AuthorizationServerMetadata;
});
after(() => h?.close());

/** Registers a client as the SDK does (RFC 7591), public unless a method is given. */
function register(method: 'none' | 'client_secret_post' = 'none'): Promise<OAuthClientInformationFull> {
  return registerClient(h.url, {
    metadata,
    clientMetadata: {
      client_name: 'MCP client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: method,
    },
    scope: 'agents.invoke completions.write',
  });
}

/**
 * The SDK builds the authorization URL; the user's browser opens it (here: the consent API
 * with the user's key) and approves. Answers the code, the verifier and what consent showed.
 */
async function authorize(client: OAuthClientInformationFull, resource?: string) {
  const { authorizationUrl, codeVerifier } = await startAuthorization(h.url, {
    metadata,
    clientInformation: client,
    redirectUrl: REDIRECT,
    scope: 'agents.invoke',
    state: 'state-1',
    ...(resource ? { resource: new URL(resource) } : {}),
  });
  assert.equal(authorizationUrl.origin, new URL(h.url).origin);
  const shown = await h.request('GET', `${authorizationUrl.pathname}${authorizationUrl.search}`, {
    key: memberKey,
  });
  assert.equal(shown.status, 200, shown.text);
  const query = Object.fromEntries(authorizationUrl.searchParams);
  const consent = await h.request('POST', '/oauth/postAuthorizeConsent', {
    key: memberKey,
    json: {
      client_id: query.client_id,
      redirect_uri: query.redirect_uri,
      scope: shown.body.scope,
      state: query.state,
      code_challenge: query.code_challenge,
      code_challenge_method: query.code_challenge_method,
      ...(query.resource ? { resource: query.resource } : {}),
      approve: true,
    },
  });
  assert.equal(consent.status, 200, consent.text);
  const back = new URL(consent.body.redirect_to);
  assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
  assert.equal(back.searchParams.get('state'), 'state-1');
  return { code: back.searchParams.get('code')!, codeVerifier, shown: shown.body };
}

const principalOf = (token: string) => remotePrincipalLookup(h.client('identity'))(sha256Hex(token));

async function introspect(token: string) {
  const res = await h.request('POST', '/oauth/introspect', {
    key: h.adminKey,
    body: new URLSearchParams({ token }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

describe('the MCP SDK OAuth client against our authorization server', () => {
  test('metadata has what the SDK reads, agents.invoke among the scopes', () => {
    assert.equal(metadata.issuer, h.url);
    assert.deepEqual(metadata.response_types_supported, ['code']);
    assert.ok(metadata.code_challenge_methods_supported?.includes('S256'));
    assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('none'));
    assert.ok(metadata.grant_types_supported?.includes('refresh_token'));
    assert.ok(metadata.scopes_supported?.includes('agents.invoke'));
    assert.equal(metadata.registration_endpoint, `${h.url}/oauth/register`);
  });

  test('register → authorize with a resource → token → refresh: tokens bound to the resource, with agents.invoke', async () => {
    const client = await register();
    assert.equal(client.token_endpoint_auth_method, 'none');
    assert.equal(client.client_secret, undefined);
    const { code, codeVerifier, shown } = await authorize(client, RESOURCE);
    assert.equal(shown.resource, RESOURCE, 'the consent shows the resource');
    assert.deepEqual(shown.scopes, ['agents.invoke']);

    const tokens = await exchangeAuthorization(h.url, {
      metadata,
      clientInformation: client,
      authorizationCode: code,
      codeVerifier,
      redirectUri: REDIRECT,
      resource: new URL(RESOURCE),
    });
    assert.equal(tokens.scope, 'agents.invoke');
    assert.ok(tokens.refresh_token);
    const principal = await principalOf(tokens.access_token);
    assert.equal(principal?.authMethod, 'oauth');
    assert.equal(principal?.oauthClientId, client.client_id);
    assert.equal(principal?.oauthResource, RESOURCE);
    assert.deepEqual(principal?.scopes, ['agents.invoke']);
    assert.equal(principal?.workspaceId, h.workspaceId);
    const seen = await introspect(tokens.access_token);
    assert.equal(seen.active, true);
    assert.equal(seen.aud, RESOURCE);

    // Another resource at refresh is refused, and uses nothing up.
    await assert.rejects(
      refreshAuthorization(h.url, {
        metadata,
        clientInformation: client,
        refreshToken: tokens.refresh_token,
        resource: new URL('https://gateway.example.test/mcp/other'),
      }),
      InvalidTargetError,
    );
    const refreshed = await refreshAuthorization(h.url, {
      metadata,
      clientInformation: client,
      refreshToken: tokens.refresh_token,
      resource: new URL(RESOURCE),
    });
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.equal((await principalOf(refreshed.access_token))?.oauthResource, RESOURCE);
    // Without a resource, a refresh keeps the one the grant is bound to.
    const again = await refreshAuthorization(h.url, {
      metadata,
      clientInformation: client,
      refreshToken: refreshed.refresh_token!,
    });
    assert.equal((await principalOf(again.access_token))?.oauthResource, RESOURCE);
    assert.equal((await introspect(again.refresh_token!)).aud, RESOURCE);
  });

  test('a token request naming another resource, or none, is invalid_target and leaves the code usable', async () => {
    const client = await register();
    const { code, codeVerifier } = await authorize(client, RESOURCE);
    const exchange = (resource?: string) =>
      exchangeAuthorization(h.url, {
        metadata,
        clientInformation: client,
        authorizationCode: code,
        codeVerifier,
        redirectUri: REDIRECT,
        ...(resource ? { resource: new URL(resource) } : {}),
      });
    await assert.rejects(exchange('https://gateway.example.test/mcp/tickets'), InvalidTargetError);
    await assert.rejects(exchange(), InvalidTargetError);
    const tokens = await exchange(RESOURCE);
    assert.equal((await principalOf(tokens.access_token))?.oauthResource, RESOURCE);
  });

  test('without a resource, tokens work as before; a refresh may then narrow them to one', async () => {
    const client = await register('client_secret_post');
    assert.equal(client.token_endpoint_auth_method, 'client_secret_post');
    assert.ok(client.client_secret);
    const { code, codeVerifier, shown } = await authorize(client);
    assert.equal(shown.resource, null);
    await assert.rejects(
      exchangeAuthorization(h.url, {
        metadata,
        clientInformation: client,
        authorizationCode: code,
        codeVerifier,
        redirectUri: REDIRECT,
        resource: new URL(RESOURCE),
      }),
      InvalidTargetError,
    );
    const tokens = await exchangeAuthorization(h.url, {
      metadata,
      clientInformation: client,
      authorizationCode: code,
      codeVerifier,
      redirectUri: REDIRECT,
    });
    const principal = await principalOf(tokens.access_token);
    assert.equal(principal?.authMethod, 'oauth');
    assert.equal(principal?.oauthResource, undefined);
    assert.deepEqual(principal?.scopes, ['agents.invoke']);
    assert.equal('aud' in (await introspect(tokens.access_token)), false);

    const narrowed = await refreshAuthorization(h.url, {
      metadata,
      clientInformation: client,
      refreshToken: tokens.refresh_token!,
      resource: new URL(RESOURCE),
    });
    assert.equal((await principalOf(narrowed.access_token))?.oauthResource, RESOURCE);
  });

  test('a bad or repeated resource at authorize is a 400 naming it', async () => {
    const client = await register();
    const base = {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    };
    for (const resource of ['/mcp/docs', 'https://gateway.example.test/mcp#frag', 'not a uri']) {
      const res = await h.request('GET', `/oauth/authorize?${new URLSearchParams({ ...base, resource })}`, {
        key: memberKey,
      });
      assert.equal(res.status, 400, `${resource}: ${res.text}`);
      assert.equal(res.body.error.param, 'resource');
      assert.equal(res.body.error.code, 'invalid_target');
    }
    const twice = new URLSearchParams(base);
    twice.append('resource', RESOURCE);
    twice.append('resource', `${RESOURCE}2`);
    const res = await h.request('GET', `/oauth/authorize?${twice}`, { key: memberKey });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.param, 'resource');
  });
});
