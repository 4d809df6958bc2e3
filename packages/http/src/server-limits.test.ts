import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { Router } from 'express';
import { createHttpApp, jsonBody, listen } from './http.ts';
import { createMetrics } from '@switchyard/core';
import { defaultServerLimits, type ServerLimits } from './server-limits.ts';
import { captureLogger, eventually, sleep } from '@switchyard/core/testing';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `a whole response head, got ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) };
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection. */
function untilClosed(socket: Socket): Promise<string> {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  return new Promise((resolve) => socket.once('close', () => resolve(text)));
}

/** Sends `data` on a fresh connection and returns the answer the server gave before it closed. */
async function exchange(port: number, data: string): Promise<RawResponse> {
  const socket = await open(port);
  const closed = untilClosed(socket);
  socket.write(data);
  return parseResponse(await closed);
}

/** One request on an open keep-alive connection; resolves with its response once the whole body is in. */
function request(socket: Socket, path: string): Promise<RawResponse> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const response = parseResponse(text);
      if (Buffer.byteLength(response.body) < Number(response.headers['content-length'])) return;
      socket.off('data', onData);
      resolve(response);
    };
    socket.on('data', onData);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  });
}

function assertJsonError(response: RawResponse, status: number, code: string): void {
  assert.equal(response.status, status);
  assert.match(response.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(response.headers.connection, 'close');
  const body = JSON.parse(response.body) as { error: Record<string, unknown> };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(body.error.param, null);
}

async function serve(limits: Partial<ServerLimits>) {
  const router = Router();
  router.post('/echo', jsonBody('1kb'), (req, res) => {
    res.json({ received: req.body as unknown });
  });
  // Writes events until well past the request bound, then ends.
  router.get('/stream', async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const until = Date.now() + 4 * (limits.requestTimeoutMs ?? 0);
    let n = 0;
    while (Date.now() < until) {
      res.write(`data: ${n++}\n\n`);
      await sleep(25);
    }
    res.end('data: [DONE]\n\n');
  });
  const app = createHttpApp({
    service: 'limits-test',
    logger: captureLogger('limits-test').logger,
    metrics: createMetrics(),
    readiness: {},
    routers: [{ router }],
  });
  return listen(app, '127.0.0.1', 0, { ...defaultServerLimits, ...limits });
}

// Bounded, so that a server that never answers fails the test rather than hanging it.
describe("what Node's HTTP parser refuses is answered in the JSON error shape", { timeout: 10_000 }, () => {
  let server: Awaited<ReturnType<typeof serve>>;
  before(async () => {
    server = await serve({ headersTimeoutMs: 300, requestTimeoutMs: 300 });
  });
  after(() => {
    server.server.closeAllConnections();
    return server.close();
  });

  test('oversized headers get 431 headers_too_large', async () => {
    const response = await exchange(
      server.port,
      `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assertJsonError(response, 431, 'headers_too_large');
  });

  test('a header with bytes HTTP does not allow gets 400 invalid_http', async () => {
    const response = await exchange(
      server.port,
      'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Bad: a\x01b\r\n\r\n',
    );
    assertJsonError(response, 400, 'invalid_http');
  });

  test('a malformed request line gets 400 invalid_http', async () => {
    const response = await exchange(server.port, 'GET /healthz NOT-HTTP\r\n\r\n');
    assertJsonError(response, 400, 'invalid_http');
  });

  test('headers that stop arriving get 408 request_timeout', async () => {
    const response = await exchange(server.port, 'GET /healthz HTTP/1.1\r\nHost: local');
    assertJsonError(response, 408, 'request_timeout');
  });

  test('a body that stops arriving gets 408 request_timeout and the connection is closed', async () => {
    const response = await exchange(
      server.port,
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":',
    );
    assertJsonError(response, 408, 'request_timeout');
  });

  test('a whole body within the bound is served', async () => {
    const response = await exchange(
      server.port,
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}',
    );
    assert.equal(response.status, 200);
    assert.deepEqual(JSON.parse(response.body), { received: { a: 1 } });
  });

  test('a streamed response that outlives the request bound is not cut', async () => {
    const response = await exchange(
      server.port,
      'GET /stream HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    assert.equal(response.status, 200);
    assert.match(response.body, /data: \[DONE\]\n\n\r\n0\r\n\r\n$/, 'the stream ends with its last event');
  });
});

describe('connections', { timeout: 10_000 }, () => {
  test('past HTTP_MAX_CONNECTIONS a connection gets 503 with retry-after and is closed; a freed place serves again', async () => {
    const server = await serve({ maxConnections: 2 });
    const sockets: Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const socket = await open(server.port);
        sockets.push(socket);
        assert.equal((await request(socket, '/healthz')).status, 200);
      }
      const refused = await exchange(server.port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      assertJsonError(refused, 503, 'too_many_connections');
      assert.equal(refused.headers['retry-after'], '1');

      sockets.shift()!.destroy();
      // The server sees the freed connection close a moment after the client closes it.
      await eventually(async () => {
        const served = await exchange(
          server.port,
          'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
        );
        assert.equal(served.status, 200);
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });

  test('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const server = await serve({ keepAliveTimeoutMs: 100 });
    try {
      const socket = await open(server.port);
      const closed = new Promise((resolve) => socket.once('close', resolve));
      assert.equal((await request(socket, '/healthz')).status, 200);
      await closed;
    } finally {
      await server.close();
    }
  });
});
