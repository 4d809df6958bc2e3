import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, test } from 'node:test';
import { createUpstreamDispatcher, upstreamRequest } from './http-client.ts';
import { NonPublicAddress, publicAddressLookup, type Resolver } from '@switchyard/rules';
import { Cancellation } from '../routing/cancellation.ts';

const dns =
  (table: Record<string, string[]>): Resolver =>
  async (host) =>
    table[host] ?? [];

function lookup(
  resolve: Resolver,
  hostname: string,
  options: { all?: boolean; family?: number } = {},
): Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }> {
  return new Promise((settle) =>
    publicAddressLookup(resolve)(hostname, options, (err, address, family) =>
      settle({ err, address, family }),
    ),
  );
}

describe('the lookup of connections to custom hosts', () => {
  test('hands a name that resolves only to public addresses to the connection', async () => {
    const resolve = dns({ 'llm.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
    const all = await lookup(resolve, 'llm.example.com', { all: true });
    assert.equal(all.err, null);
    assert.deepEqual(all.address, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    const one = await lookup(resolve, 'llm.example.com', { family: 6 });
    assert.equal(one.address, '2606:2800:220:1:248:1893:25c8:1946');
    assert.equal(one.family, 6);
  });

  for (const address of ['10.0.0.5', '127.0.0.1', 'fe80::1', '::ffff:10.0.0.1', '169.254.169.254']) {
    test(`refuses a name that resolves to ${address}, even beside a public address`, async () => {
      const resolve = dns({ 'llm.example.com': ['93.184.216.34', address] });
      const { err } = await lookup(resolve, 'llm.example.com', { all: true });
      assert.ok(err instanceof NonPublicAddress);
      assert.equal(err.address, address);
      assert.equal(err.message, `llm.example.com resolves to the non-public address ${address}`);
    });
  }

  test('a name that does not resolve is a lookup failure, not a refusal', async () => {
    const { err } = await lookup(dns({}), 'nowhere.example.com', { all: true });
    assert.ok(err && !(err instanceof NonPublicAddress));
    assert.equal(err.code, 'ENOTFOUND');
  });
});

describe('the custom-host dispatcher', () => {
  let server: Server;
  let port: number;
  let connections = 0;

  before(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('refuses a name that now resolves to a private address before connecting (DNS rebinding)', async () => {
    // Public when the host was saved; the connection's own lookup now gets the loopback address
    // of a listening server, which must never see a connection.
    const table: Record<string, string[]> = { 'rebind.example.com': ['93.184.216.34'] };
    const dispatcher = createUpstreamDispatcher({}, publicAddressLookup(dns(table)));
    table['rebind.example.com'] = ['127.0.0.1'];
    try {
      await assert.rejects(
        upstreamRequest(dispatcher, {
          url: `http://rebind.example.com:${port}/v1/chat/completions`,
          method: 'POST',
          headers: {},
          body: '{}',
          signal: new Cancellation().signal,
          timeoutMs: 5_000,
          provider: 'openai',
        }),
        (err) => err instanceof NonPublicAddress && err.address === '127.0.0.1',
      );
      assert.equal(connections, 0);
    } finally {
      await dispatcher.close();
    }
  });
});
