import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '@switchyard/core';
import { JwksKeySet, jwtEnvSchema, jwtPrincipal, jwtStrategy, tokenScopes } from './jwt-auth.ts';

const ORG = '0a7c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3';

describe('JWKS key sets', () => {
  const jwk = (kid: string | undefined) => ({
    ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
    ...(kid ? { kid } : {}),
  });
  const a1 = jwk('a1');
  const b1 = jwk('b1');

  test('merges the keys of every URI, fetched in parallel; the first URI wins a shared kid', async () => {
    const started: string[] = [];
    const set = new JwksKeySet(['https://a.test/jwks', 'https://b.test/jwks'], {
      fetchJson: async (url) => {
        started.push(url);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return url.includes('a.test') ? { keys: [a1] } : { keys: [b1, { ...jwk('a1') }] };
      },
    });
    const [ka, kb] = await Promise.all([set.key('a1'), set.key('b1')]);
    assert.deepEqual(
      started.sort(),
      ['https://a.test/jwks', 'https://b.test/jwks'],
      'fetched once each, together',
    );
    assert.deepEqual(ka?.export({ format: 'jwk' }), { kty: a1.kty, crv: a1.crv, x: a1.x, y: a1.y });
    assert.ok(kb);
  });

  test('an unknown kid fetches again, at most once per cooldown; a failing URI keeps its last keys', async () => {
    let clock = 0;
    let fetches = 0;
    let published: unknown[] = [a1];
    let failing = false;
    const set = new JwksKeySet(['https://a.test/jwks'], {
      cooldownMs: 1_000,
      ttlMs: 60_000,
      now: () => clock,
      fetchJson: async () => {
        fetches += 1;
        if (failing) throw new Error('down');
        return { keys: published };
      },
    });
    assert.ok(await set.key('a1'));
    assert.equal(fetches, 1);
    published = [a1, b1];
    assert.equal(await set.key('b1'), undefined, 'within the cooldown: no new fetch');
    assert.equal(fetches, 1);
    clock = 1_000;
    assert.ok(await set.key('b1'), 'after it: fetched again, the new key is there');
    assert.equal(fetches, 2);
    failing = true;
    clock = 120_000;
    assert.ok(await set.key('a1'), 'the identity provider is down: the keys it gave last still verify');
  });

  test('private keys, encryption keys and junk are left out; without a kid only a lone key is used', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const set = new JwksKeySet(['https://a.test/jwks'], {
      fetchJson: async () => ({
        keys: [
          { ...privateKey.export({ format: 'jwk' }), kid: 'private' },
          { ...jwk('enc'), use: 'enc' },
          { kty: 'nonsense', kid: 'junk' },
          jwk(undefined),
        ],
      }),
    });
    assert.equal(await set.key('private'), undefined);
    assert.equal(await set.key('enc'), undefined);
    assert.equal(await set.key('junk'), undefined);
    assert.ok(await set.key(undefined));
  });
});

describe('JWT settings and scopes', () => {
  test('JWKS URIs need the organisation; only asymmetric algorithms; the mapping is a JSON object', () => {
    assert.throws(
      () => loadConfig(jwtEnvSchema, { JWT_JWKS_URIS: 'https://idp.example.test/jwks' }),
      ConfigError,
    );
    for (const bad of ['HS256', 'none', 'RS256,HS512']) {
      assert.throws(
        () => loadConfig(jwtEnvSchema, { JWT_ALGORITHMS: bad }),
        (err: Error) => err instanceof ConfigError && /JWT_ALGORITHMS/.test(err.message),
        bad,
      );
    }
    assert.throws(() => loadConfig(jwtEnvSchema, { JWT_SUB_WORKSPACE_MAPPING: '[1]' }), ConfigError);
    assert.throws(
      () => loadConfig(jwtEnvSchema, { JWT_JWKS_URIS: 'file:///etc/keys', JWT_ORGANISATION: ORG }),
      ConfigError,
    );
    const off = loadConfig(jwtEnvSchema, {});
    assert.deepEqual(off.JWT_JWKS_URIS, []);
    assert.deepEqual(off.JWT_ALGORITHMS, ['RS256', 'ES256']);
    assert.equal(
      jwtStrategy(off, async () => null),
      undefined,
    );
  });

  test('a token grants the workspace scopes it names (agents.invoke included), never organisation ones', () => {
    assert.deepEqual(
      tokenScopes({
        scope: 'agents.invoke completions.write configs.create organisation_settings.update nonsense',
      }),
      ['agents.invoke', 'completions.write', 'configs.create'],
    );
    assert.deepEqual(tokenScopes({ scopes: ['files.read', 42, 'files.read'] }), ['files.read']);
  });
});

describe('JWT principals', () => {
  const admission = { subsAllowed: [], subWorkspaceMapping: {}, workspacesAllowed: null };
  const claims = { sub: 'svc-reporting', exp: Math.floor(Date.now() / 1000) + 60, workspace: 'research' };
  const lookup = (defaultConfig: string | null) => async () => ({
    id: '5d0c3a3e-6f3b-4c9a-9d55-0b3c1c2a7e10',
    slug: 'research',
    organisationId: ORG,
    organisationCreatedAt: null,
    defaultConfig,
  });

  test("a token's requests get its workspace's default config, with no metadata, and may name their own", async () => {
    const principal = await jwtPrincipal(claims, ORG, admission, lookup('pc-research'));
    assert.deepEqual(principal?.defaults, { config: 'pc-research', metadata: {}, allowConfigOverride: true });
  });

  test('a workspace without a default config gives its tokens no defaults', async () => {
    const principal = await jwtPrincipal(claims, ORG, admission, lookup(null));
    assert.equal(principal?.workspaceSlug, 'research');
    assert.ok(principal && !('defaults' in principal));
  });
});
