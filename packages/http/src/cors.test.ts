import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from 'express';
import {
  baseEnvSchema,
  ConfigError,
  createMetrics,
  loadConfig,
  sharedEnv,
  Unauthorized,
} from '@switchyard/core';
import { captureLogger } from '@switchyard/core/testing';
import { corsOptionsFrom, type CorsOptions } from './cors.ts';
import { createHttpApp, jsonBody, listen } from './http.ts';

const APP = 'https://app.example.com';
const KEY = 'Bearer good-key';

/**
 * Routes behind a key check that refuses every request without the key, OPTIONS included,
 * and a 1kb body limit: a preflight that reached them would be a 401 or a 413.
 */
function keyedRouter(): Router {
  const router = Router();
  router.use((req, _res, next) => {
    next(req.headers.authorization === KEY ? undefined : new Unauthorized());
  });
  router.use(jsonBody('1kb'));
  router.get('/v1/things', (_req, res) => {
    res.setHeader('x-vendor-trace-id', 'trace-1');
    res.json({ things: [] });
  });
  router.post('/v1/things', (req, res) => {
    res.status(201).json({ created: req.body });
  });
  return router;
}

async function serve(cors?: CorsOptions): Promise<{ url: string; close(): Promise<void> }> {
  const app = createHttpApp({
    service: 'cors-test',
    logger: captureLogger('cors-test').logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ router: keyedRouter() }],
    cors,
  });
  const server = await listen(app, '127.0.0.1', 0);
  return { url: `http://127.0.0.1:${server.port}`, close: server.close };
}

function corsHeaders(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith('access-control-')));
}

function preflight(
  url: string,
  origin: string,
  requestHeaders?: string,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(url, {
    ...init,
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      ...(requestHeaders === undefined ? {} : { 'access-control-request-headers': requestHeaders }),
    },
  });
}

/** The CORS settings as a gateway process reads them (every process's, and its header prefix). */
const settings = (env: Record<string, string>): CorsOptions =>
  corsOptionsFrom(loadConfig(baseEnvSchema.extend({ HEADER_PREFIX: sharedEnv.HEADER_PREFIX }), env));

describe('CORS off (the default)', () => {
  let server: { url: string; close(): Promise<void> };
  before(async () => {
    server = await serve(settings({}));
  });
  after(() => server.close());

  test('a request with an Origin gets no CORS headers and no Vary', async () => {
    const res = await fetch(`${server.url}/v1/things`, { headers: { origin: APP, authorization: KEY } });
    assert.equal(res.status, 200);
    assert.deepEqual(corsHeaders(res), {});
    assert.equal(res.headers.get('vary'), null);
  });

  test('a preflight goes to the routes as any OPTIONS request does', async () => {
    const res = await preflight(`${server.url}/v1/things`, APP, 'authorization');
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'authentication_error');
    assert.deepEqual(corsHeaders(res), {});
  });

  test('no origins at all is CORS off too', async () => {
    const off = await serve({ allowedOrigins: [], maxAgeSeconds: 600, headerPrefix: 'x-vendor-' });
    try {
      const res = await preflight(`${off.url}/v1/things`, APP, 'authorization');
      assert.equal(res.status, 401);
      assert.deepEqual(corsHeaders(res), {});
    } finally {
      await off.close();
    }
  });
});

describe('CORS with allowed origins', () => {
  let server: { url: string; close(): Promise<void> };
  before(async () => {
    server = await serve(
      settings({ CORS_ALLOWED_ORIGINS: `${APP}, http://localhost:3000`, CORS_MAX_AGE_SECONDS: '300' }),
    );
  });
  after(() => server.close());

  test('an allowed origin gets its origin back, credentials, Vary and the readable headers', async () => {
    const res = await fetch(`${server.url}/v1/things`, { headers: { origin: APP, authorization: KEY } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { things: [] });
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(res.headers.get('vary'), 'Origin');
    const exposed = res.headers.get('access-control-expose-headers')!.split(', ');
    for (const name of [
      'x-request-id',
      'retry-after',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-reset-tokens',
      'x-vendor-trace-id',
      'x-vendor-cache-status',
      'x-vendor-retry-attempt-count',
      'mcp-session-id',
      'www-authenticate',
    ]) {
      assert.ok(exposed.includes(name), `${name} is exposed`);
    }
    assert.ok(!exposed.includes('*'), 'no wildcard beside credentials');
  });

  test('each listed origin is answered with itself', async () => {
    const res = await fetch(`${server.url}/v1/things`, {
      headers: { origin: 'http://localhost:3000', authorization: KEY },
    });
    assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:3000');
  });

  test('a refusal to an allowed origin carries the headers too, so the page can read the error', async () => {
    const res = await fetch(`${server.url}/v1/things`, { headers: { origin: APP } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.ok(res.headers.get('access-control-expose-headers')!.includes('x-request-id'));
  });

  test('an origin not in the list gets no CORS headers and is served as usual', async () => {
    for (const origin of [
      'https://evil.example.com',
      'https://app.example.com:8443',
      'http://app.example.com',
    ]) {
      const res = await fetch(`${server.url}/v1/things`, { headers: { origin, authorization: KEY } });
      assert.equal(res.status, 200, origin);
      assert.deepEqual(await res.json(), { things: [] });
      assert.deepEqual(corsHeaders(res), {}, origin);
      assert.equal(res.headers.get('vary'), 'Origin', 'the answer depends on Origin');
    }
  });

  test('a request without an Origin gets no CORS headers', async () => {
    const res = await fetch(`${server.url}/v1/things`, { headers: { authorization: KEY } });
    assert.equal(res.status, 200);
    assert.deepEqual(corsHeaders(res), {});
  });

  test('a preflight is answered 204 without a key, with the methods, headers and max age', async () => {
    const res = await preflight(
      `${server.url}/v1/things`,
      APP,
      'authorization,content-type,x-stainless-os,X-Vendor-Provider',
    );
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assert.deepEqual(corsHeaders(res), {
      'access-control-allow-origin': APP,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
      'access-control-allow-headers': 'authorization, content-type, x-stainless-os, x-vendor-provider',
      'access-control-max-age': '300',
    });
    assert.match(
      res.headers.get('vary')!,
      /^Origin, Access-Control-Request-Method, Access-Control-Request-Headers$/,
    );
    assert.ok(res.headers.get('x-request-id'), 'the preflight has a request id like any request');
  });

  test('a preflight is answered before any body is read or checked', async () => {
    const res = await preflight(`${server.url}/v1/things`, APP, 'content-type', {
      body: JSON.stringify({ pad: 'x'.repeat(4096) }),
    });
    assert.equal(res.status, 204);
  });

  test('a preflight for a path no route has is answered too', async () => {
    const res = await preflight(`${server.url}/v1/elsewhere/deep`, APP, 'authorization');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
  });

  test('a requested header that is not a header name is not echoed: the fixed list is answered', async () => {
    const res = await preflight(`${server.url}/v1/things`, APP, 'authorization, x-bad header, content-type');
    assert.equal(res.status, 204);
    const allowed = res.headers.get('access-control-allow-headers')!.split(', ');
    assert.ok(!allowed.some((name) => name.includes('bad')), 'the bad name is not echoed');
    for (const name of [
      'authorization',
      'content-type',
      'x-vendor-api-key',
      'x-vendor-provider',
      'x-vendor-config',
      'x-vendor-trace-id',
      'openai-organization',
      'openai-project',
      'openai-beta',
      'x-stainless-lang',
      'x-stainless-package-version',
      'x-stainless-retry-count',
      'x-stainless-timeout',
      'mcp-session-id',
      'mcp-protocol-version',
      'last-event-id',
    ]) {
      assert.ok(allowed.includes(name), `${name} is allowed`);
    }
  });

  test('a preflight that names no headers gets the fixed list', async () => {
    const res = await preflight(`${server.url}/v1/things`, APP);
    assert.equal(res.status, 204);
    assert.ok(res.headers.get('access-control-allow-headers')!.split(', ').includes('authorization'));
  });

  test('a preflight from an origin not in the list goes to the routes as usual', async () => {
    const res = await preflight(`${server.url}/v1/things`, 'https://evil.example.com', 'authorization');
    assert.equal(res.status, 401);
    assert.deepEqual(corsHeaders(res), {});
  });

  test('an OPTIONS request that is not a preflight goes to the routes', async () => {
    const res = await fetch(`${server.url}/v1/things`, { method: 'OPTIONS', headers: { origin: APP } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.equal(res.headers.get('access-control-allow-methods'), null);
  });

  test('the actual request after a preflight is served and readable', async () => {
    const res = await fetch(`${server.url}/v1/things`, {
      method: 'POST',
      headers: { origin: APP, authorization: KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a' }),
    });
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { created: { name: 'a' } });
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
  });
});

describe('CORS with any origin', () => {
  let server: { url: string; close(): Promise<void> };
  before(async () => {
    server = await serve(settings({ CORS_ALLOWED_ORIGINS: '*', HEADER_PREFIX: 'x-portkey-' }));
  });
  after(() => server.close());

  test('any origin gets `*` and no credentials', async () => {
    const res = await fetch(`${server.url}/v1/things`, {
      headers: { origin: 'https://anyone.example', authorization: KEY },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    const exposed = res.headers.get('access-control-expose-headers')!.split(', ');
    assert.equal(exposed[0], '*');
    assert.ok(exposed.includes('x-request-id'));
  });

  test('a preflight is answered with `*`, no credentials, and the default max age', async () => {
    const res = await preflight(`${server.url}/v1/things`, 'https://anyone.example', 'authorization');
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    assert.equal(res.headers.get('access-control-allow-headers'), 'authorization');
    assert.equal(res.headers.get('access-control-max-age'), '600');
  });

  test("the fixed list names the gateway's headers under the configured prefix", async () => {
    const res = await preflight(`${server.url}/v1/things`, 'https://anyone.example', 'a;b');
    const allowed = res.headers.get('access-control-allow-headers')!.split(', ');
    assert.ok(allowed.includes('x-portkey-provider'));
    assert.ok(allowed.includes('x-portkey-api-key'));
    assert.ok(!allowed.includes('x-vendor-provider'));
  });
});

describe('CORS settings', () => {
  function refusal(env: Record<string, string>): string {
    try {
      loadConfig(baseEnvSchema, env);
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.message;
    }
    assert.fail(`accepted ${JSON.stringify(env)}`);
  }

  test('are off with a max age of 600 seconds by default', () => {
    const config = loadConfig(baseEnvSchema, {});
    assert.deepEqual(config.CORS_ALLOWED_ORIGINS, []);
    assert.equal(config.CORS_MAX_AGE_SECONDS, 600);
  });

  test('origins are read as browsers send them', () => {
    const config = loadConfig(baseEnvSchema, {
      CORS_ALLOWED_ORIGINS:
        'https://App.Example.com:443, http://localhost:3000,http://[::1]:8080, https://app.example.com',
    });
    assert.deepEqual(config.CORS_ALLOWED_ORIGINS, [APP, 'http://localhost:3000', 'http://[::1]:8080']);
  });

  test('an entry that is not an origin is refused at start-up, naming the variable and the entry', () => {
    for (const entry of [
      'https://app.example.com/',
      'https://app.example.com/app',
      'app.example.com',
      'ftp://app.example.com',
      'https://*.example.com',
      'https://user@app.example.com',
      'https://app.example.com?x=1',
      'https://app.example.com:99999',
      'null',
    ]) {
      const message = refusal({ CORS_ALLOWED_ORIGINS: `http://localhost:3000,${entry}` });
      assert.match(message, /^Invalid configuration: CORS_ALLOWED_ORIGINS: /, entry);
      assert.ok(message.includes(`'${entry}' is not an origin`), message);
    }
  });

  test('`*` is refused beside other origins', () => {
    assert.match(
      refusal({ CORS_ALLOWED_ORIGINS: `*,${APP}` }),
      /CORS_ALLOWED_ORIGINS: '\*' allows every origin and must be the only entry/,
    );
  });

  test('a max age outside 0 to 86400 seconds is refused', () => {
    assert.match(refusal({ CORS_MAX_AGE_SECONDS: '86401' }), /CORS_MAX_AGE_SECONDS: /);
    assert.match(refusal({ CORS_MAX_AGE_SECONDS: '-1' }), /CORS_MAX_AGE_SECONDS: /);
    assert.match(refusal({ CORS_MAX_AGE_SECONDS: 'ten' }), /CORS_MAX_AGE_SECONDS: /);
    assert.equal(loadConfig(baseEnvSchema, { CORS_MAX_AGE_SECONDS: '0' }).CORS_MAX_AGE_SECONDS, 0);
  });
});
