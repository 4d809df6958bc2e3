import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startConsoleServer, type ConsoleServer } from './console-server.ts';

const INDEX =
  '<!doctype html><html><body><div id="root"></div><script src="/assets/index-abc123.js"></script></body></html>';
const SECRET = 'outside-the-console-dir';

/** A raw GET: the path is sent as written (fetch would resolve `..` before sending). */
function rawGet(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe("switchyard console: the console's static files", () => {
  const root = mkdtempSync(join(tmpdir(), 'console-server-'));
  const dir = join(root, 'web', 'console');
  let server: ConsoleServer;

  before(async () => {
    mkdirSync(join(dir, 'assets'), { recursive: true });
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("app")');
    writeFileSync(join(root, 'web', 'package.json'), `{"name":"${SECRET}"}`);
    writeFileSync(join(root, 'secret.txt'), SECRET);
    server = await startConsoleServer({ HOST: '127.0.0.1', PORT: '0', CONSOLE_DIR: dir, LOG_LEVEL: 'error' });
  });
  after(async () => {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('GET / answers the app with its security headers, not cached', async () => {
    const res = await rawGet(server.port, '/', html);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.body, INDEX);
    assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['cache-control'], 'no-cache');
  });

  test('a hashed asset is served with a cache header that never revalidates', async () => {
    const res = await rawGet(server.port, '/assets/index-abc123.js');
    assert.equal(res.status, 200);
    assert.equal(res.body, 'console.log("app")');
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(res.headers['content-type']), /javascript/);
  });

  test('a page of the app (/logs, /logs/abc) answers index.html: the app routes on the client', async () => {
    for (const path of ['/logs', '/logs/abc', '/settings/members?tab=sso']) {
      const res = await rawGet(server.port, path, html);
      assert.equal(res.status, 200, path);
      assert.equal(res.body, INDEX, path);
      assert.match(String(res.headers['content-security-policy']), /script-src 'self'/, path);
    }
  });

  test("an API path or a JSON request gets the API's JSON 404, never the app", async () => {
    for (const [path, headers] of [
      ['/v1/unknown', html],
      ['/v1/logs/nothing-here', html],
      ['/openapi.json', html],
      ['/logs', { accept: 'application/json' }],
      ['/assets/missing-123.js', html],
    ] as const) {
      const res = await rawGet(server.port, path, headers);
      assert.equal(res.status, 404, path);
      assert.match(String(res.headers['content-type']), /^application\/json/, path);
      assert.equal(JSON.parse(res.body).error.type, 'not_found_error', path);
      assert.ok(!res.body.includes('id="root"'), path);
    }
  });

  test('POST / is not the app', async () => {
    const res = await rawGet(server.port, '/', html, 'POST');
    assert.equal(res.status, 404);
    assert.ok(!res.body.includes('id="root"'));
  });

  test('a path that climbs out of the folder never serves a file outside it', async () => {
    for (const path of [
      '/..%2f..%2fsecret.txt',
      '/..%2f..%2fetc/passwd',
      '/../package.json',
      '/assets/../../package.json',
      '/assets/..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/secret.txt',
      '/assets/%2e%2e/%2e%2e/%2e%2e/secret.txt',
      '/..\\..\\secret.txt',
    ]) {
      const res = await rawGet(server.port, path, html);
      assert.ok(!res.body.includes(SECRET), `${path} served a file outside the folder`);
      assert.ok(!res.body.includes('root:'), path);
      assert.notEqual(res.status, 500, path);
    }
  });

  test('/healthz and /readyz answer', async () => {
    assert.equal((await rawGet(server.port, '/healthz')).status, 200);
    const ready = await rawGet(server.port, '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(JSON.parse(ready.body).status, 'ready');
  });
});

describe('switchyard console without a build', () => {
  const dir = mkdtempSync(join(tmpdir(), 'console-missing-'));
  let server: ConsoleServer;
  before(async () => {
    server = await startConsoleServer({ HOST: '127.0.0.1', PORT: '0', CONSOLE_DIR: dir, LOG_LEVEL: 'error' });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a page answers 503 with a message that says how to build, and the process is not ready', async () => {
    for (const path of ['/', '/logs']) {
      const res = await rawGet(server.port, path, html);
      assert.equal(res.status, 503, path);
      assert.match(res.body, /The console is not built/, path);
      assert.match(res.body, /pnpm --filter @switchyard\/console build/, path);
    }
    const api = await rawGet(server.port, '/v1/unknown', html);
    assert.equal(api.status, 404);
    const ready = await rawGet(server.port, '/readyz');
    assert.equal(ready.status, 503);
    assert.match(JSON.parse(ready.body).checks.files, /not built/);
  });
});
