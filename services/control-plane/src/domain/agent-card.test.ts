import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import net from 'node:net';
import { after, afterEach, before, beforeEach, describe, mock, test } from 'node:test';
import { AppError } from '@switchyard/core';
import type { Resolver } from '@switchyard/rules';
import { listenOnLoopback } from '@switchyard/testing';
import { fetchAgentCard, MAX_AGENT_CARD_BYTES, type AgentCardFetchOptions } from './agent-card.ts';

/*
 * The agent card fetch against loopback servers. Loopback is trusted here only, by listing
 * 127.0.0.1 in `trusted` (what TRUSTED_CUSTOM_HOSTS holds); every other name goes through the
 * injected resolver, and a spy on socket connects records every connection attempted.
 */

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Upstream {
  origin: string;
  port: number;
  /** Paths asked for, in order. */
  paths: string[];
  /** `authorization` of each request. */
  auth: Array<string | undefined>;
  connections: number;
  handle: Handler;
  close(): Promise<void>;
}

async function upstream(): Promise<Upstream> {
  const state = { paths: [] as string[], auth: [] as Array<string | undefined>, connections: 0 };
  const self: Partial<Upstream> = {};
  const server = createServer((req, res) => {
    state.paths.push(req.url ?? '');
    state.auth.push(req.headers.authorization);
    self.handle!(req, res);
  });
  server.on('connection', () => state.connections++);
  const listening = await listenOnLoopback(server);
  return Object.assign(self, {
    origin: listening.url,
    port: Number(new URL(listening.url).port),
    paths: state.paths,
    auth: state.auth,
    get connections() {
      return state.connections;
    },
    handle: ((_req, res) => res.writeHead(404).end()) as Handler,
    close: listening.close,
  }) as Upstream;
}

const CARD = { name: 'Travel agent', url: 'https://agents.example.com/a2a', skills: [{ id: 'book' }] };

const json = (res: ServerResponse, body: unknown, status = 200) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/** Serves `body` at one path, 404 elsewhere. */
const only =
  (path: string, body: unknown): Handler =>
  (req, res) =>
    req.url === path ? json(res, body) : res.writeHead(404).end();

let resolverCalls: string[] = [];
/** Public names answer a public address; the rest as the test sets. */
let answers: Record<string, string[] | (() => string[])> = {};
const resolve: Resolver = async (hostname) => {
  resolverCalls.push(hostname);
  const answer = answers[hostname];
  if (answer === undefined) return ['93.184.216.34'];
  return typeof answer === 'function' ? answer() : answer;
};

let connects: string[] = [];
const options = (extra: Partial<AgentCardFetchOptions> = {}): AgentCardFetchOptions => ({
  trusted: ['127.0.0.1'],
  resolve,
  connectTimeoutMs: 2_000,
  timeoutMs: 3_000,
  ...extra,
});

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `an AppError, not ${String(err)}`);
    return err;
  }
  assert.fail('the fetch was not refused');
}

let a: Upstream;
let b: Upstream;
before(async () => {
  a = await upstream();
  b = await upstream();
});
after(async () => {
  await a.close();
  await b.close();
});
beforeEach(() => {
  resolverCalls = [];
  answers = {};
  connects = [];
  a.paths.length = 0;
  a.auth.length = 0;
  b.paths.length = 0;
  b.auth.length = 0;
  // Every socket connect, with the host it was asked for.
  const original = net.Socket.prototype.connect;
  mock.method(net.Socket.prototype, 'connect', function (this: net.Socket, ...args: unknown[]) {
    const first = args[0] as { host?: string } | unknown[] | undefined;
    const opts = (Array.isArray(first) ? first[0] : first) as { host?: string; port?: number } | undefined;
    if (opts && typeof opts === 'object') connects.push(`${opts.host ?? ''}:${opts.port ?? ''}`);
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  });
});
afterEach(() => mock.restoreAll());

describe('discovery', () => {
  test('a valid card at /.well-known/agent-card.json, found from any path of the endpoint', async () => {
    a.handle = only('/.well-known/agent-card.json', CARD);
    const got = await fetchAgentCard(`${a.origin}/some/a2a/path?x=1`, {}, options());
    assert.deepEqual(got.agentCard, CARD);
    assert.equal(got.urlFetched, `${a.origin}/.well-known/agent-card.json`);
    assert.deepEqual(a.paths, ['/.well-known/agent-card.json']);
  });

  test('a card only at /.well-known/agent.json: tried after a 404, and nothing else', async () => {
    a.handle = only('/.well-known/agent.json', CARD);
    const got = await fetchAgentCard(a.origin, {}, options());
    assert.deepEqual(got.agentCard, CARD);
    assert.equal(got.urlFetched, `${a.origin}/.well-known/agent.json`);
    assert.deepEqual(a.paths, ['/.well-known/agent-card.json', '/.well-known/agent.json']);
  });

  test('no card at either path is a 422 naming both; no third path is tried', async () => {
    a.handle = (_req, res) => res.writeHead(404).end();
    const err = await refusal(fetchAgentCard(a.origin, {}, options()));
    assert.equal(err.status, 422);
    assert.equal(err.code, 'agent_card_not_found');
    assert.match(err.message, /agent-card\.json and \/\.well-known\/agent\.json/);
    assert.deepEqual(a.paths, ['/.well-known/agent-card.json', '/.well-known/agent.json']);
  });

  test('an error other than 404/410 at the first path ends discovery', async () => {
    a.handle = (req, res) =>
      req.url === '/.well-known/agent-card.json' ? res.writeHead(500).end('boom') : json(res, CARD);
    const err = await refusal(fetchAgentCard(a.origin, {}, options()));
    assert.equal(err.status, 422);
    assert.equal(err.code, 'agent_card_upstream_status');
    assert.deepEqual(a.paths, ['/.well-known/agent-card.json']);
  });

  test('the headers given are sent to the endpoint', async () => {
    a.handle = only('/.well-known/agent-card.json', CARD);
    await fetchAgentCard(a.origin, { Authorization: 'Bearer agent-secret' }, options());
    assert.deepEqual(a.auth, ['Bearer agent-secret']);
  });
});

describe('the card must be a JSON object with url and name', () => {
  for (const [label, body, code] of [
    ['an array', '[{"url":"u","name":"n"}]', 'agent_card_not_object'],
    ['a string', '"a card"', 'agent_card_not_object'],
    ['null', 'null', 'agent_card_not_object'],
    ['invalid JSON', '{"url": "u", "name":', 'agent_card_invalid_json'],
    ['no url', '{"name":"n"}', 'agent_card_missing_url'],
    ['a non-string url', '{"name":"n","url":42}', 'agent_card_missing_url'],
    ['no name', '{"url":"https://x.example"}', 'agent_card_missing_name'],
  ] as const) {
    test(`${label}: 422 ${code}`, async () => {
      a.handle = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      const err = await refusal(fetchAgentCard(a.origin, {}, options()));
      assert.equal(err.status, 422);
      assert.equal(err.code, code);
      assert.equal(err.toBody().error.param, 'url');
    });
  }
});

/** Serves a body of `total` bytes in 64 KiB chunks, as fast as the client reads; records how much went out. */
function oversized(total: number, withLength: boolean) {
  const seen = { written: 0, finished: false, closed: false };
  const handler: Handler = (_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(withLength ? { 'content-length': String(total) } : {}),
    });
    const chunk = Buffer.alloc(65_536, 0x20);
    res.on('close', () => {
      seen.closed = true;
    });
    const pump = () => {
      while (seen.written < total && !res.destroyed) {
        seen.written += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (seen.written >= total && !res.destroyed) {
        seen.finished = true;
        res.end();
      }
    };
    res.write('{"url":"u","name":"n","pad":"');
    pump();
  };
  return { handler, seen };
}

describe('a card over 1 MB is refused while it streams in', () => {
  const TOTAL = 32 * 1024 * 1024;

  test('with a Content-Length over 1 MB: refused before reading, the connection cut', async () => {
    const { handler, seen } = oversized(TOTAL, true);
    a.handle = handler;
    const err = await refusal(fetchAgentCard(a.origin, {}, options()));
    assert.equal(err.status, 422);
    assert.equal(err.code, 'agent_card_too_large');
    assert.match(err.message, /1048576 bytes/);
    await waitFor(() => seen.closed);
    assert.equal(seen.finished, false);
    assert.ok(seen.written < TOTAL / 2, `the server wrote only ${seen.written} of ${TOTAL} bytes`);
  });

  test('chunked, with no Content-Length: cut once the bytes counted pass 1 MB', async () => {
    const { handler, seen } = oversized(TOTAL, false);
    a.handle = handler;
    const err = await refusal(fetchAgentCard(a.origin, {}, options()));
    assert.equal(err.status, 422);
    assert.equal(err.code, 'agent_card_too_large');
    await waitFor(() => seen.closed);
    assert.equal(seen.finished, false);
    assert.ok(seen.written < TOTAL / 2, `the server wrote only ${seen.written} of ${TOTAL} bytes`);
  });

  test('a card of exactly 1 MB is read', async () => {
    const head = '{"url":"u","name":"n","pad":"';
    const body = head + 'x'.repeat(MAX_AGENT_CARD_BYTES - head.length - 2) + '"}';
    assert.equal(Buffer.byteLength(body), MAX_AGENT_CARD_BYTES);
    a.handle = (_req, res) => res.writeHead(200).end(body);
    const got = await fetchAgentCard(a.origin, {}, options());
    assert.equal(got.agentCard.name, 'n');
  });
});

async function waitFor(condition: () => boolean, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) assert.fail('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('redirects', () => {
  test('to an allowed path: followed, and the card comes from there', async () => {
    a.handle = (req, res) => {
      if (req.url === '/.well-known/agent-card.json')
        res.writeHead(302, { location: '/cards/v2.json' }).end();
      else if (req.url === '/cards/v2.json') json(res, CARD);
      else res.writeHead(404).end();
    };
    const got = await fetchAgentCard(a.origin, {}, options());
    assert.deepEqual(got.agentCard, CARD);
    assert.equal(got.urlFetched, `${a.origin}/cards/v2.json`);
  });

  test("to another origin: followed without the caller's headers", async () => {
    a.handle = (_req, res) => res.writeHead(307, { location: `${b.origin}/card` }).end();
    b.handle = only('/card', CARD);
    await fetchAgentCard(a.origin, { Authorization: 'Bearer agent-secret' }, options());
    assert.deepEqual(a.auth, ['Bearer agent-secret']);
    assert.deepEqual(b.auth, [undefined]);
  });

  for (const [label, target, host] of [
    ['a name resolving to the metadata address', 'http://meta.test:PORT/card', 'meta.test'],
    ['a name resolving to a private address', 'http://intranet.test:PORT/card', 'intranet.test'],
    ['a private address', 'http://10.0.0.1:PORT/card', '10.0.0.1'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data', '169.254.169.254'],
    [
      'a metadata host name',
      'http://metadata.google.internal/computeMetadata/v1',
      'metadata.google.internal',
    ],
    ['another scheme', 'file:///etc/passwd', ''],
  ] as const) {
    test(`to ${label}: refused, never connected`, async () => {
      answers = { 'meta.test': ['169.254.169.254'], 'intranet.test': ['10.0.0.1'] };
      a.handle = (_req, res) =>
        res.writeHead(302, { location: target.replace('PORT', String(b.port)) }).end();
      const err = await refusal(fetchAgentCard(a.origin, {}, options()));
      assert.equal(err.status, 400);
      assert.equal(err.code, 'unsafe_custom_host');
      assert.match(err.message, /a redirect from .* led to a refused URL/);
      assert.deepEqual(a.paths, ['/.well-known/agent-card.json']);
      assert.deepEqual(
        connects.filter((c) => c !== `127.0.0.1:${a.port}`),
        [],
        'nothing but the endpoint itself was connected to',
      );
      assert.equal(b.paths.length, 0);
      if (host.endsWith('.test')) assert.deepEqual(resolverCalls, [host]);
    });
  }

  test('more than 3 redirects: refused', async () => {
    let n = 0;
    a.handle = (_req, res) => res.writeHead(302, { location: `/hop/${++n}` }).end();
    const err = await refusal(fetchAgentCard(a.origin, {}, options()));
    assert.equal(err.status, 422);
    assert.equal(err.code, 'agent_card_too_many_redirects');
    assert.equal(a.paths.length, 4);
  });
});

describe('the unsafe-host check: at save and at connect', () => {
  for (const [label, url, why] of [
    ['a name resolving to a private address', 'http://intranet.test/', /non-public address 10\.1\.2\.3/],
    ['a name resolving to a reserved address', 'http://reserved.test/', /non-public address 240\.0\.0\.1/],
    ['a name resolving to IPv6 loopback', 'http://v6loop.test/', /non-public address ::1/],
    ['a name resolving to an IPv4-mapped loopback', 'http://mapped.test/', /::ffff:127\.0\.0\.1/],
    ['a private address', 'http://192.168.1.10/', /not a public address/],
    ['a reserved address', 'http://240.0.0.1/', /not a public address/],
    ['carrier-grade NAT', 'http://100.64.0.1/', /not a public address/],
    ['IPv4 loopback', 'http://127.0.0.2/', /not a public address/],
    ['IPv6 loopback', 'http://[::1]/', /not a public address/],
    ['IPv6 unique local', 'http://[fd00::1]/', /not a public address/],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/', /not a public address/],
    ['the metadata address', 'http://169.254.169.254/', /not a public address/],
    ['a metadata host name', 'http://metadata.google.internal/', /metadata host/],
    ['an Azure metadata host name', 'http://metadata.azure.com/', /metadata host/],
    ['an ftp: URL', 'ftp://agents.example.com/', /scheme ftp: is not http\(s\)/],
    ['a URL with a fragment', 'https://agents.example.com/#frag', /fragment/],
    ['credentials in the URL', 'https://user:pw@agents.example.com/', /credentials/],
  ] as const) {
    test(`${label}: 400 unsafe_custom_host, no connection`, async () => {
      answers = {
        'intranet.test': ['10.1.2.3'],
        'reserved.test': ['240.0.0.1'],
        'v6loop.test': ['::1'],
        'mapped.test': ['::ffff:127.0.0.1'],
      };
      const err = await refusal(fetchAgentCard(url, {}, options({ trusted: [] })));
      assert.equal(err.status, 400);
      assert.equal(err.code, 'unsafe_custom_host');
      assert.match(err.message, why);
      assert.deepEqual(connects, []);
    });
  }

  test('a name that changes its answer after the check (DNS rebinding) is refused by the connection', async () => {
    let n = 0;
    answers = { 'rebind.test': () => (n++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']) };
    const before = a.connections;
    const err = await refusal(fetchAgentCard(`http://rebind.test:${a.port}/`, {}, options({ trusted: [] })));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'unsafe_custom_host');
    assert.match(err.message, /non-public address 127\.0\.0\.1/);
    assert.deepEqual(resolverCalls, ['rebind.test', 'rebind.test']);
    // The socket asked for the name, its lookup refused the address: no connection was made.
    assert.deepEqual(connects, [`rebind.test:${a.port}`]);
    assert.equal(a.connections, before, 'the loopback server was never connected to');
  });
});

describe('bounded timeouts', () => {
  test('a server that never answers: 504 within the deadline', async () => {
    a.handle = () => undefined;
    const started = Date.now();
    const err = await refusal(fetchAgentCard(a.origin, {}, options({ timeoutMs: 400 })));
    assert.equal(err.status, 504);
    assert.equal(err.code, 'agent_card_timeout');
    assert.ok(Date.now() - started < 2_000, `gave up after ${Date.now() - started} ms`);
  });

  test('a connection that does not open within the connect timeout: 504 naming it', async () => {
    // The name passes the check, then the connection's own lookup never answers.
    let n = 0;
    const hanging: Resolver = async (hostname) =>
      n++ === 0 ? resolve(hostname) : new Promise<string[]>(() => undefined);
    const started = Date.now();
    const err = await refusal(
      fetchAgentCard(
        'http://slow.test/',
        {},
        options({ trusted: [], resolve: hanging, connectTimeoutMs: 200, timeoutMs: 5_000 }),
      ),
    );
    assert.equal(err.status, 504);
    assert.equal(err.code, 'agent_card_timeout');
    assert.match(err.message, /did not open within 200 ms/);
    assert.ok(Date.now() - started < 2_000, `gave up after ${Date.now() - started} ms`);
  });

  test('a slow-loris body is cut at the deadline', async () => {
    const seen = { closed: false };
    a.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"url":"u",');
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => {
        seen.closed = true;
        clearInterval(timer);
      });
    };
    const started = Date.now();
    const err = await refusal(fetchAgentCard(a.origin, {}, options({ timeoutMs: 500 })));
    assert.equal(err.status, 504);
    assert.equal(err.code, 'agent_card_timeout');
    assert.ok(Date.now() - started < 2_000, `gave up after ${Date.now() - started} ms`);
    await waitFor(() => seen.closed);
  });
});
