import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from 'express';
import {
  ApiKeyCache,
  apiKeyAuthentication,
  assertOrganisationAdmin,
  requirePrincipal,
  requireWorkspacePrincipal,
  type Principal,
  type PrincipalLookup,
} from './auth.ts';
import { createMetrics, Forbidden, sha256Hex } from '@switchyard/core';
import { createHttpApp, listen } from '@switchyard/http';
import { captureLogger, deferred, sleep } from '@switchyard/core/testing';

function principal(overrides: Partial<Principal> = {}): Principal {
  return {
    apiKeyId: 'key-1',
    organisationId: 'org-1',
    workspaceId: 'ws-1',
    workspaceSlug: 'default',
    kind: 'workspace_service',
    scopes: ['completions'],
    expiresAt: null,
    userId: null,
    name: 'ci key',
    organisationCreatedAt: null,
    ...overrides,
  };
}

/** A lookup over a table of key hashes that records every hash it was asked for. */
function recordingLookup(table: Record<string, Principal | null>): PrincipalLookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hash: string) => {
    calls.push(hash);
    return table[hash] ?? null;
  };
  return Object.assign(lookup, { calls });
}

describe('ApiKeyCache', () => {
  test('looks a key up by the SHA-256 of the presented token', async () => {
    const lookup = recordingLookup({ [sha256Hex('sy-key-1')]: principal() });
    const cache = new ApiKeyCache(lookup);
    assert.deepEqual(await cache.resolve('sy-key-1'), principal());
    assert.deepEqual(lookup.calls, [sha256Hex('sy-key-1')]);
  });

  test('serves a resolved key from memory: repeated calls make one lookup', async () => {
    const lookup = recordingLookup({ [sha256Hex('sy-key-1')]: principal() });
    const cache = new ApiKeyCache(lookup);
    for (let i = 0; i < 5; i++) assert.equal((await cache.resolve('sy-key-1'))?.apiKeyId, 'key-1');
    assert.equal(lookup.calls.length, 1);
  });

  test('concurrent calls for one key share a single lookup', async () => {
    const gate = deferred<Principal | null>();
    let calls = 0;
    const cache = new ApiKeyCache(async () => {
      calls++;
      return gate.promise;
    });
    const pending = Array.from({ length: 10 }, () => cache.resolve('sy-key-1'));
    await sleep(5);
    gate.resolve(principal());
    const results = await Promise.all(pending);
    assert.equal(calls, 1);
    assert.ok(results.every((r) => r?.apiKeyId === 'key-1'));
  });

  test('different keys are looked up separately', async () => {
    const lookup = recordingLookup({
      [sha256Hex('a')]: principal({ apiKeyId: 'a' }),
      [sha256Hex('b')]: principal({ apiKeyId: 'b' }),
    });
    const cache = new ApiKeyCache(lookup);
    assert.equal((await cache.resolve('a'))?.apiKeyId, 'a');
    assert.equal((await cache.resolve('b'))?.apiKeyId, 'b');
    assert.equal(lookup.calls.length, 2);
  });

  test('invalidate(hash) forces a fresh lookup that sees the change', async () => {
    const hash = sha256Hex('sy-key-1');
    const table: Record<string, Principal | null> = { [hash]: principal({ scopes: ['completions'] }) };
    const lookup = recordingLookup(table);
    const cache = new ApiKeyCache(lookup);
    assert.deepEqual((await cache.resolve('sy-key-1'))?.scopes, ['completions']);

    table[hash] = null; // revoked
    assert.notEqual(await cache.resolve('sy-key-1'), null, 'still cached before the invalidation');
    cache.invalidate(hash);
    assert.equal(await cache.resolve('sy-key-1'), null);
    assert.equal(lookup.calls.length, 2);
  });

  test('an invalidation during an in-flight lookup is not undone by that lookup', async () => {
    const hash = sha256Hex('sy-key-1');
    const first = deferred<Principal | null>();
    let calls = 0;
    const cache = new ApiKeyCache(async () => {
      calls++;
      return calls === 1 ? first.promise : null;
    });
    const inflight = cache.resolve('sy-key-1');
    await sleep(5);
    cache.invalidate(hash); // e.g. the key was revoked while control-plane was answering
    first.resolve(principal());
    await inflight;
    assert.equal(await cache.resolve('sy-key-1'), null, 'the revoked key must not be served from the cache');
    assert.equal(calls, 2);
  });

  test('clear() during an in-flight lookup also keeps that lookup out of the cache', async () => {
    const first = deferred<Principal | null>();
    let calls = 0;
    const cache = new ApiKeyCache(async () => {
      calls++;
      return calls === 1 ? first.promise : null;
    });
    const inflight = cache.resolve('sy-key-1');
    await sleep(5);
    cache.clear();
    first.resolve(principal());
    await inflight;
    assert.equal(await cache.resolve('sy-key-1'), null);
    assert.equal(calls, 2);
  });

  test('unknown keys are remembered briefly, then looked up again', async () => {
    const lookup = recordingLookup({});
    const cache = new ApiKeyCache(lookup, { negativeTtlMs: 60 });
    assert.equal(await cache.resolve('nope'), null);
    assert.equal(await cache.resolve('nope'), null);
    assert.equal(lookup.calls.length, 1, 'the second miss is answered from memory');
    await sleep(90);
    assert.equal(await cache.resolve('nope'), null);
    assert.equal(lookup.calls.length, 2, 'a miss is not remembered beyond its TTL');
  });

  test('known keys are looked up again once their TTL has passed', async () => {
    const lookup = recordingLookup({ [sha256Hex('k')]: principal() });
    const cache = new ApiKeyCache(lookup, { ttlMs: 50 });
    await cache.resolve('k');
    await cache.resolve('k');
    assert.equal(lookup.calls.length, 1);
    await sleep(80);
    await cache.resolve('k');
    assert.equal(lookup.calls.length, 2);
  });

  test('an expired principal resolves to null; one that expires later resolves', async () => {
    const lookup = recordingLookup({
      [sha256Hex('old')]: principal({ expiresAt: Date.now() - 1 }),
      [sha256Hex('fresh')]: principal({ expiresAt: Date.now() + 60_000 }),
    });
    const cache = new ApiKeyCache(lookup);
    assert.equal(await cache.resolve('old'), null);
    assert.equal((await cache.resolve('fresh'))?.apiKeyId, 'key-1');
  });

  test('a cached principal resolves to null once its own expiry passes', async () => {
    const lookup = recordingLookup({ [sha256Hex('k')]: principal({ expiresAt: Date.now() + 60 }) });
    const cache = new ApiKeyCache(lookup, { ttlMs: 60_000 });
    assert.notEqual(await cache.resolve('k'), null);
    await sleep(90);
    assert.equal(await cache.resolve('k'), null);
    assert.equal(lookup.calls.length, 1, 'expiry is enforced from the cached entry');
  });

  test('a failing lookup rejects and is not cached', async () => {
    let calls = 0;
    const cache = new ApiKeyCache(async () => {
      calls++;
      if (calls === 1) throw new Error('control-plane unavailable');
      return principal();
    });
    await assert.rejects(cache.resolve('k'), /control-plane unavailable/);
    assert.equal((await cache.resolve('k'))?.apiKeyId, 'key-1');
    assert.equal(calls, 2);
  });

  test('clear() drops every entry', async () => {
    const lookup = recordingLookup({ [sha256Hex('k')]: principal() });
    const cache = new ApiKeyCache(lookup);
    await cache.resolve('k');
    cache.clear();
    await cache.resolve('k');
    assert.equal(lookup.calls.length, 2);
  });

  test('holds at most maxEntries keys, dropping the oldest first', async () => {
    const lookup = recordingLookup({
      [sha256Hex('a')]: principal({ apiKeyId: 'a' }),
      [sha256Hex('b')]: principal({ apiKeyId: 'b' }),
      [sha256Hex('c')]: principal({ apiKeyId: 'c' }),
    });
    const cache = new ApiKeyCache(lookup, { maxEntries: 2 });
    await cache.resolve('a');
    await cache.resolve('b');
    await cache.resolve('c');
    assert.equal(lookup.calls.length, 3);
    await cache.resolve('c');
    await cache.resolve('b');
    assert.equal(lookup.calls.length, 3, 'the two newest keys are still cached');
    await cache.resolve('a');
    assert.equal(lookup.calls.length, 4, 'the oldest key was dropped');
  });
});

describe('apiKeyAuthentication middleware', () => {
  const adminKey = 'sy-admin-0123456789';
  const workspaceKey = 'sy-ws-0123456789';
  const headerKey = 'sy-header-0123456789';
  const lookup = recordingLookup({
    [sha256Hex(adminKey)]: principal({
      apiKeyId: 'admin',
      kind: 'organisation_admin',
      workspaceId: null,
      workspaceSlug: null,
    }),
    [sha256Hex(workspaceKey)]: principal({ apiKeyId: 'ws' }),
    [sha256Hex(headerKey)]: principal({ apiKeyId: 'header' }),
  });
  let failLookups = false;
  let url = '';
  let close: () => Promise<void>;
  let optionsHandled = 0;

  before(async () => {
    const cache = new ApiKeyCache(async (hash) => {
      if (failLookups) throw new Error('identity lookup failed: db password=hunter2');
      return lookup(hash);
    });
    const router = Router();
    router.options('/v1/whoami', (_req, res) => {
      optionsHandled++;
      res.status(204).end();
    });
    router.use(apiKeyAuthentication({ cache, headerPrefix: 'x-vendor-' }));
    router.get('/v1/whoami', (req, res) => {
      res.json({ apiKeyId: requirePrincipal(req).apiKeyId });
    });
    router.get('/v1/workspace-only', (req, res) => {
      res.json({ workspaceId: requireWorkspacePrincipal(req).workspaceId });
    });
    router.get('/v1/admin-only', (req, res) => {
      assertOrganisationAdmin(requirePrincipal(req));
      res.json({ ok: true });
    });
    const app = createHttpApp({
      service: 'auth-test',
      logger: captureLogger().logger,
      metrics: createMetrics(),
      readiness: {},
      routers: [{ router }],
    });
    const server = await listen(app, '127.0.0.1', 0);
    url = `http://127.0.0.1:${server.port}`;
    close = server.close;
  });
  after(() => close());

  async function whoami(headers: Record<string, string>, path = '/v1/whoami') {
    const res = await fetch(url + path, { headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  test('a Bearer key resolves to its principal', async () => {
    assert.deepEqual(await whoami({ authorization: `Bearer ${workspaceKey}` }), {
      status: 200,
      body: { apiKeyId: 'ws' },
    });
  });

  test('the bearer scheme is case-insensitive and surrounding spaces are ignored', async () => {
    assert.equal((await whoami({ authorization: `bearer   ${workspaceKey}  ` })).body.apiKeyId, 'ws');
  });

  test('the <prefix>api-key header takes precedence over Authorization', async () => {
    lookup.calls.length = 0;
    const { status, body } = await whoami({
      'x-vendor-api-key': headerKey,
      authorization: `Bearer ${workspaceKey}`,
    });
    assert.equal(status, 200);
    assert.equal(body.apiKeyId, 'header');
    assert.ok(
      !lookup.calls.includes(sha256Hex(workspaceKey)),
      'the Authorization key was not even looked up',
    );
  });

  test('a missing key is a 401 in the error body shape', async () => {
    const { status, body } = await whoami({});
    assert.equal(status, 401);
    assert.deepEqual(body, {
      error: {
        message: 'Missing or invalid API key.',
        type: 'authentication_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
  });

  test('an unknown key, a non-bearer scheme, an empty bearer and an oversize key are 401', async () => {
    lookup.calls.length = 0;
    assert.equal((await whoami({ authorization: 'Bearer sy-unknown-key' })).status, 401);
    assert.equal(
      (await whoami({ authorization: `Basic ${Buffer.from('u:p').toString('base64')}` })).status,
      401,
    );
    assert.equal((await whoami({ authorization: 'Bearer ' })).status, 401);
    assert.equal((await whoami({ authorization: `Bearer ${'k'.repeat(513)}` })).status, 401);
    assert.deepEqual(
      lookup.calls,
      [sha256Hex('sy-unknown-key')],
      'only the well-formed key reached the lookup',
    );
  });

  test('OPTIONS passes through without a key', async () => {
    const before = optionsHandled;
    const res = await fetch(`${url}/v1/whoami`, { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.equal(optionsHandled, before + 1);
  });

  test('a failing lookup is a generic 500, not a 401 and not the internal message', async () => {
    failLookups = true;
    try {
      const res = await fetch(`${url}/v1/whoami`, {
        headers: { authorization: 'Bearer sy-never-seen-before' },
      });
      assert.equal(res.status, 500);
      const text = await res.text();
      assert.deepEqual(JSON.parse(text), {
        error: { message: 'Internal error.', type: 'internal_error', param: null, code: null },
      });
      assert.ok(!text.includes('hunter2'));
    } finally {
      failLookups = false;
    }
  });

  test('a workspace-only route refuses an organisation admin key with 403 workspace_key_required', async () => {
    const admin = await whoami({ authorization: `Bearer ${adminKey}` }, '/v1/workspace-only');
    assert.equal(admin.status, 403);
    assert.equal((admin.body.error as Record<string, unknown>).code, 'workspace_key_required');
    assert.deepEqual(await whoami({ authorization: `Bearer ${workspaceKey}` }, '/v1/workspace-only'), {
      status: 200,
      body: { workspaceId: 'ws-1' },
    });
  });

  test('an admin-only route refuses a workspace key with 403 admin_key_required', async () => {
    const ws = await whoami({ authorization: `Bearer ${workspaceKey}` }, '/v1/admin-only');
    assert.equal(ws.status, 403);
    assert.equal((ws.body.error as Record<string, unknown>).code, 'admin_key_required');
    assert.equal((await whoami({ authorization: `Bearer ${adminKey}` }, '/v1/admin-only')).status, 200);
  });
});

describe('principal guards', () => {
  test('assertOrganisationAdmin throws Forbidden for workspace keys only', () => {
    assert.throws(() => assertOrganisationAdmin(principal({ kind: 'workspace_user' })), Forbidden);
    assert.doesNotThrow(() => assertOrganisationAdmin(principal({ kind: 'organisation_admin' })));
  });
});
