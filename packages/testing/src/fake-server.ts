import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What every fake upstream has: its address, what it received, and how to stop it. */
export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1 that records each request (with its whole body) before
 * handing it to the fake's handler; a handler that throws ends the connection.
 */
export async function startFakeServer<S extends FakeServer>(
  handle: (req: IncomingMessage, res: ServerResponse, body: string, state: S) => Promise<void>,
  port = 0,
): Promise<S> {
  const state = { url: '', requests: [], aborted: 0, close: async () => {} } as FakeServer as S;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      handle(req, res, body, state).catch(() => res.destroy());
    });
  });
  Object.assign(state, await listenOnLoopback(server, port));
  return state;
}

/** Starts a test server on 127.0.0.1 (any free port unless `port`); answers its base URL and how to stop it, open connections and all. */
export async function listenOnLoopback(
  server: Server,
  port = 0,
): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
