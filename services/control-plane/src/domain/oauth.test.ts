import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '@switchyard/core';
import { oauthEnvSchema, redirectUriProblem, s256, withQuery } from './oauth.ts';

describe('redirect URIs a client may register', () => {
  test('https anywhere, http only on loopback hosts', () => {
    for (const uri of [
      'https://app.example.com/callback',
      'https://app.example.com:8443/cb?tenant=1',
      'http://127.0.0.1:3000/callback',
      'http://[::1]:8080/cb',
      'http://localhost/cb',
    ]) {
      assert.equal(redirectUriProblem(uri, []), null, uri);
    }
  });

  test('refused: relative, other schemes, http elsewhere, fragments, user information, odd characters, too long', () => {
    const refused: Array<[string, RegExp]> = [
      ['/callback', /absolute/],
      ['app.example.com/cb', /absolute/],
      ['https:app.example.com/cb', /absolute/],
      ['ftp://files.example.com/cb', /https/],
      ['javascript://x/%0Aalert(1)', /https/],
      ['com.example.app://cb', /https/],
      ['http://app.example.com/cb', /https/],
      ['http://127.0.0.2/cb', /https/],
      ['http://localhost.evil.example/cb', /https/],
      ['https://app.example.com/cb#frag', /fragment/],
      ['https://app.example.com/cb#', /fragment/],
      ['https://user:pass@app.example.com/cb', /user information/],
      ['https://@app.example.com/cb', /user information/],
      ['https://app.example.com/c b', /printable/],
      ['https://app.exa\nmple.com/cb', /printable/],
      [`https://app.example.com/${'a'.repeat(2049)}`, /2048/],
      ['', /empty/],
    ];
    for (const [uri, why] of refused) {
      const problem = redirectUriProblem(uri, []);
      assert.ok(problem && why.test(problem), `${JSON.stringify(uri)}: ${problem}`);
    }
  });

  test('with an allow-list, every host must be on it (subdomains included), loopback too', () => {
    const allow = ['example.com', 'tools.internal'];
    assert.equal(redirectUriProblem('https://example.com/cb', allow), null);
    assert.equal(redirectUriProblem('https://app.EXAMPLE.com/cb', allow), null);
    assert.equal(redirectUriProblem('https://a.b.tools.internal/cb', allow), null);
    for (const uri of [
      'https://evil-example.com/cb',
      'https://example.com.evil.net/cb',
      'http://127.0.0.1/cb',
    ]) {
      assert.match(redirectUriProblem(uri, allow) ?? '', /allow-list/, uri);
    }
  });

  test('OAUTH_ISSUER loses a trailing slash; OAUTH_REDIRECT_URI_ALLOWLIST is a comma-separated list', () => {
    const settings = loadConfig(oauthEnvSchema, {
      OAUTH_ISSUER: 'https://switchyard.example.com/',
      OAUTH_REDIRECT_URI_ALLOWLIST: 'Example.com, tools.internal',
    });
    assert.equal(settings.OAUTH_ISSUER, 'https://switchyard.example.com');
    assert.deepEqual(settings.OAUTH_REDIRECT_URI_ALLOWLIST, ['example.com', 'tools.internal']);
    assert.throws(() => loadConfig(oauthEnvSchema, { OAUTH_ISSUER: 'ftp://x' }), /OAUTH_ISSUER/);
  });
});

describe('helpers', () => {
  test('S256 is the base64url SHA-256 of the verifier (RFC 7636 appendix B)', () => {
    assert.equal(
      s256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'),
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  test('parameters are added to the registered URI as it is, keeping its query', () => {
    assert.equal(
      withQuery('https://a.example/cb', { code: 'c', state: 's' }),
      'https://a.example/cb?code=c&state=s',
    );
    assert.equal(
      withQuery('https://a.example/cb?x=1', { code: 'c', state: undefined }),
      'https://a.example/cb?x=1&code=c',
    );
    assert.equal(withQuery('https://a.example', { state: 'a b&c' }), 'https://a.example?state=a+b%26c');
  });
});
