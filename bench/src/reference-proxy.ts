/**
 * The benchmark's reference proxy: the least a reverse proxy on Node.js does, in a process of its
 * own. A `node:http` server takes each request's body and sends the same bytes to the fake
 * upstream through undici's `Agent` (the HTTP client the gateway uses, with the gateway's pool
 * settings); the answer goes back as it arrives, chunk by chunk. No authentication, validation,
 * routing, policy check, cache, logging or events. What it adds over calling the upstream
 * directly, measured in the same run on the same CPU, is what Node's HTTP server and client alone
 * cost on this machine: the floor under any gateway built on them.
 *
 * Prints one JSON line with its URL, then serves until it is signalled or its parent goes away
 * (its standard input closes).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';

const upstream = new URL(process.env.BENCH_UPSTREAM_URL ?? '');
if (!/^http:$/.test(upstream.protocol) || !['127.0.0.1', '[::1]', 'localhost'].includes(upstream.hostname))
  throw new Error('BENCH_UPSTREAM_URL must be an http:// loopback URL');
const origin = upstream.origin;
const agent = new Agent({
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: 256,
  pipelining: 1,
});

/** The request headers an upstream needs; everything else (host, connection) is the proxy's own. */
const FORWARDED = ['authorization', 'content-type', 'accept'];

function forward(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const handler: Dispatcher.DispatchHandler = {
    onConnect() {},
    onHeaders(status, rawHeaders) {
      if (status < 200) return true;
      const answer: Record<string, string> = {};
      for (let i = 0; i + 1 < (rawHeaders?.length ?? 0); i += 2) {
        const name = rawHeaders![i]!.toString().toLowerCase();
        if (name === 'content-type' || name === 'content-length' || name === 'cache-control')
          answer[name] = rawHeaders![i + 1]!.toString();
      }
      res.writeHead(status, answer);
      return true;
    },
    onData(chunk) {
      res.write(chunk);
      return true;
    },
    onComplete() {
      res.end();
    },
    onError(err) {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err));
    },
  };
  agent.dispatch({ origin, path: req.url ?? '/', method: 'POST', headers, body }, handler);
}

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => forward(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
if (!address || typeof address === 'string') throw new Error('the reference proxy has no port');

let closing = false;
function close(code: number): void {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(code), 2_000).unref();
  server.close(() => void agent.close().finally(() => process.exit(code)));
  server.closeAllConnections();
}

process.on('SIGTERM', () => close(0));
process.on('SIGINT', () => close(0));
process.stdin.on('end', () => close(0));
process.stdin.on('close', () => close(0));
process.stdin.resume();

process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
