import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServiceHarness, type HarnessResponse, type ServiceHarness } from '@switchyard/testing';
import { controlPlane } from '../service.ts';

let h: ServiceHarness;

before(async () => {
  h = await startServiceHarness({ services: [controlPlane] });
});
after(() => h.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

/** An OAuth error as RFC 6749 §5.2 shapes it, never cached. */
function assertOAuthError(res: HarnessResponse, status: number, error: string, what: string): void {
  assert.equal(res.status, status, `${what}: ${res.text}`);
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'error_description'], what);
  assert.equal(res.body.error, error, what);
  assert.equal(typeof res.body.error_description, 'string', what);
  assert.equal(res.headers.get('cache-control'), 'no-store', what);
}

const clientCount = async () =>
  Number((await h.db('control-plane').query('SELECT count(*) AS n FROM control_plane.oauth_clients'))[0].n);

/** Arrays nested `depth` levels; 10 000 levels fit the endpoints' 32 KB body limit. */
const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('the public OAuth endpoints refuse bad input with a 4xx in the OAuth error shape', () => {
  for (const endpoint of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
    test(`${endpoint}: NUL bytes, lone surrogates, deep JSON, wrong types and repeated parameters`, async () => {
      const cases: Array<[string, Record<string, string>, number, string]> = [
        ['grant_type=refresh_token&client_id=a%00b&token=t&refresh_token=r', FORM, 400, 'invalid_request'],
        [
          '{"grant_type":"refresh_token","client_id":"a\\u0000b","token":"t","refresh_token":"r"}',
          JSON_TYPE,
          400,
          'invalid_request',
        ],
        [
          '{"grant_type":"refresh_token","client_id":"\\ud800","token":"t","refresh_token":"r"}',
          JSON_TYPE,
          400,
          'invalid_request',
        ],
        ['{"client_id":"c","token":"\\udfff"}', JSON_TYPE, 400, 'invalid_request'],
        [`{"client_id":"c","token":${deep(10_000)}}`, JSON_TYPE, 400, 'invalid_request'],
        ['{"client_id":"c","token":5,"grant_type":5}', JSON_TYPE, 400, 'invalid_request'],
        ['{"client_id":["c"],"token":"t","grant_type":"refresh_token"}', JSON_TYPE, 400, 'invalid_request'],
        ['client_id=c&client_id=d&token=t&grant_type=refresh_token', FORM, 400, 'invalid_request'],
        ['[1,2]', JSON_TYPE, 400, 'invalid_request'],
        ['{"client_id":', JSON_TYPE, 400, 'invalid_request'],
        [`client_id=c&token=${'x'.repeat(40_000)}`, FORM, 413, 'invalid_request'],
      ];
      for (const [body, headers, status, error] of cases) {
        const res = await h.request('POST', endpoint, { body, headers });
        assertOAuthError(res, status, error, `${endpoint} ${body.slice(0, 80)}`);
      }
    });
  }

  test('/oauth/token: a huge but allowed client_id is an unknown client, not a fault', async () => {
    const res = await h.request('POST', '/oauth/token', {
      body: `grant_type=refresh_token&refresh_token=r&client_id=${'c'.repeat(30_000)}`,
      headers: FORM,
    });
    assertOAuthError(res, 401, 'invalid_client', 'huge client_id');
  });

  test('/oauth/register: bad metadata is invalid_client_metadata or invalid_redirect_uri, and registers nothing', async () => {
    const before = await clientCount();
    const uri = 'https://app.example.com/callback';
    const cases: Array<[string, number, string]> = [
      [`{"redirect_uris":["${uri}"],"client_name":"a\\u0000b"}`, 400, 'invalid_client_metadata'],
      [`{"redirect_uris":["${uri}"],"client_name":"\\ud800"}`, 400, 'invalid_client_metadata'],
      [`{"redirect_uris":["${uri}"],"\\u0000":"x"}`, 400, 'invalid_client_metadata'],
      [`{"redirect_uris":["${uri}"],"extra":${deep(10_000)}}`, 400, 'invalid_client_metadata'],
      [`{"redirect_uris":["${uri}"],"client_name":{"a":1}}`, 400, 'invalid_client_metadata'],
      [`{"redirect_uris":["${uri}"],"scope":["a"]}`, 400, 'invalid_client_metadata'],
      [`{"redirect_uris":["${uri}"],"client_name":"${'n'.repeat(5_000)}"}`, 400, 'invalid_client_metadata'],
      ['{"redirect_uris":"https://app.example.com/callback"}', 400, 'invalid_redirect_uri'],
      ['{"redirect_uris":[5]}', 400, 'invalid_redirect_uri'],
      ['{"redirect_uris":["https://[::1"]}', 400, 'invalid_redirect_uri'],
      ['{"redirect_uris":["https://app.example.com/\\u0000"]}', 400, 'invalid_client_metadata'],
      ['{"redirect_uris":["not a url"]}', 400, 'invalid_redirect_uri'],
    ];
    for (const [body, status, error] of cases) {
      const res = await h.request('POST', '/oauth/register', { body, headers: JSON_TYPE });
      assertOAuthError(res, status, error, body.slice(0, 80));
    }
    const form = await h.request('POST', '/oauth/register', {
      body: `redirect_uris=${encodeURIComponent(uri)}`,
      headers: FORM,
    });
    assertOAuthError(form, 400, 'invalid_client_metadata', 'a form body');
    assert.equal(await clientCount(), before, 'no client was registered');

    const registered = await h.request('POST', '/oauth/register', {
      json: { redirect_uris: [uri], client_name: 'Näme 👋' },
    });
    assert.equal(registered.status, 201, registered.text);
    assert.equal(registered.body.client_name, 'Näme 👋', 'text that can be stored comes back as sent');
    assert.equal(await clientCount(), before + 1);
  });
});
