/**
 * The ingress of `pnpm bench:console`: one origin for the browser, as the Helm chart's ingress
 * gives one (helm/switchyard/files/routes.json): a path of a service's API goes to that service,
 * any other path to the console server (`switchyard console`, which serves the static files
 * only). A plain pass-through: method, path, headers and body as they came, the answer as it is.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { serviceForPath, type ServiceName } from '../../../packages/runtime/src/routes.ts';

export interface Ingress {
  url: string;
  close(): Promise<void>;
}

/** Where the ingress sends a request's path: the service's base URL, else the console's. */
export function upstreamFor(
  pathWithQuery: string,
  serviceUrl: (service: ServiceName) => string,
  consoleUrl: string,
): string {
  const service = serviceForPath(pathWithQuery.split('?')[0]!);
  return service ? serviceUrl(service) : consoleUrl;
}

/** How long the ingress waits for an upstream's answer to start. */
const UPSTREAM_TIMEOUT_MS = 60_000;

export async function startIngress(
  serviceUrl: (service: ServiceName) => string,
  consoleUrl: string,
): Promise<Ingress> {
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const target = new URL(req.url ?? '/', upstreamFor(req.url ?? '/', serviceUrl, consoleUrl));
    const upstream = request(
      target,
      { method: req.method, headers: req.headers, timeout: UPSTREAM_TIMEOUT_MS },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error(`no answer within ${UPSTREAM_TIMEOUT_MS} ms`)));
    upstream.on('error', (err) => {
      if (res.headersSent) res.destroy(err);
      else {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `ingress: ${err.message}`, type: 'bad_gateway' } }));
      }
    });
    req.pipe(upstream);
  };
  const server: Server = createServer(forward);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('the ingress has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
