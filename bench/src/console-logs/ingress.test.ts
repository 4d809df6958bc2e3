import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startIngress, upstreamFor, type Ingress } from './ingress.ts';

/** A server that answers which it is, the method and the path it was asked. */
async function echo(name: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-from': name });
      res.end(
        JSON.stringify({ name, method: req.method, url: req.url, auth: req.headers.authorization, body }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}` };
}

describe('bench:console ingress', () => {
  it("sends a service's API path to that service, any other path to the console", () => {
    const url = (service: string) => `http://${service}`;
    assert.equal(upstreamFor('/v1/logs?limit=50', url, 'http://console'), 'http://log-export');
    assert.equal(upstreamFor('/v1/auth/key', url, 'http://console'), 'http://control-plane');
    assert.equal(upstreamFor('/logs?model=gpt-4o', url, 'http://console'), 'http://console');
    assert.equal(upstreamFor('/assets/index.js', url, 'http://console'), 'http://console');
  });

  let logExport: { server: Server; url: string };
  let consoleApp: { server: Server; url: string };
  let ingress: Ingress;
  before(async () => {
    logExport = await echo('log-export');
    consoleApp = await echo('console');
    ingress = await startIngress(
      (service) => (service === 'log-export' ? logExport.url : 'http://127.0.0.1:9'),
      consoleApp.url,
    );
  });
  after(async () => {
    await ingress.close();
    for (const s of [logExport, consoleApp]) await new Promise((resolve) => s.server.close(resolve));
  });

  it('passes method, path, headers and body through, and the answer back as it came', async () => {
    const res = await fetch(`${ingress.url}/v1/logs?model=gpt-4o`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test' },
      body: 'hello',
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-from'), 'log-export');
    assert.deepEqual(await res.json(), {
      name: 'log-export',
      method: 'POST',
      url: '/v1/logs?model=gpt-4o',
      auth: 'Bearer sk-test',
      body: 'hello',
    });
    const page = await fetch(`${ingress.url}/logs`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(((await page.json()) as { name: string }).name, 'console');
  });

  it('answers 502 with the error shape when the service cannot be reached', async () => {
    const res = await fetch(`${ingress.url}/v1/auth/key`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { message: string; type: string } };
    assert.equal(body.error.type, 'bad_gateway');
    assert.match(body.error.message, /^ingress: /);
  });
});
