import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Resolver } from '@switchyard/rules';
import { createUpstreamDispatcher } from './http-client.ts';
import { publicAddressLookup } from '@switchyard/rules';
import { MAX_WEBHOOK_ANSWER_BYTES, WebhookClient } from './webhook-client.ts';

// Refusals are decided before any connection: by the URL, or by the injected resolver in the
// connection's own lookup. Only the loopback server below is ever connected to.

let server: Server;
let base = '';
const resolved: string[] = [];
const resolve: Resolver = async (host) => {
  resolved.push(host);
  return host === 'guard.internal.example' ? ['10.1.2.3'] : [];
};
const dispatcher = createUpstreamDispatcher({});
const customHostDispatcher = createUpstreamDispatcher({}, publicAddressLookup(resolve));
const client = (trustedHosts: string[] = ['127.0.0.1']) =>
  new WebhookClient({ dispatcher, customHostDispatcher, trustedHosts });
const post = (url: string, timeoutMs = 2_000) =>
  client().post({ url, headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs });

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/verdict' });
      res.end();
    } else if (req.url === '/huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(MAX_WEBHOOK_ANSWER_BYTES + 1, 0x20));
    } else if (req.url === '/silent') {
      // Never answers.
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"verdict":true}');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
  await Promise.all([dispatcher.close(), customHostDispatcher.close()]);
});

describe('the webhook client', () => {
  test('a trusted host answers its status and body', async () => {
    assert.deepEqual(await post(`${base}/verdict`), { status: 200, body: '{"verdict":true}' });
  });

  test('loopback is refused unless trusted', async () => {
    await assert.rejects(
      client([]).post({ url: `${base}/verdict`, headers: {}, body: '{}', timeoutMs: 1_000 }),
      /the webhook URL is refused: 127\.0\.0\.1 is not a public address/,
    );
  });

  test('private and metadata addresses, credentials and other schemes are refused before connecting', async () => {
    await assert.rejects(post('http://10.0.0.8/check'), /refused: 10\.0\.0\.8 is not a public address/);
    await assert.rejects(
      post('http://169.254.169.254/latest'),
      /refused: 169\.254\.169\.254 is not a public address/,
    );
    await assert.rejects(post('http://metadata.google.internal/x'), /refused: a cloud metadata host/);
    await assert.rejects(post('https://user:pw@guard.example.com/x'), /refused: credentials in the URL/);
    await assert.rejects(post('ftp://guard.example.com/x'), /refused: scheme ftp: is not http\(s\)/);
  });

  test('a name that resolves to a private address is refused at the connection, by the injected resolver', async () => {
    resolved.length = 0;
    await assert.rejects(
      post('http://guard.internal.example/check'),
      /refused: guard\.internal\.example resolves to the non-public address 10\.1\.2\.3/,
    );
    assert.deepEqual(resolved, ['guard.internal.example']);
  });

  test('redirects are not followed: the webhook answered 302', async () => {
    const answer = await post(`${base}/redirect`);
    assert.equal(answer.status, 302);
  });

  test('an answer over 1 MiB is refused', async () => {
    await assert.rejects(post(`${base}/huge`), /answered more than 1048576 bytes/);
  });

  test('a webhook that does not answer is given up after the timeout', async () => {
    await assert.rejects(post(`${base}/silent`, 100), /the webhook did not answer within 100 ms/);
  });
});
