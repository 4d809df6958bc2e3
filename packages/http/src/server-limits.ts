import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { z } from 'zod';
import {
  AppError,
  BadRequest,
  httpServerEnv,
  loadConfig,
  PayloadTooLarge,
  RequestTimeout,
  ServiceUnavailable,
} from '@switchyard/core';

/** Bounds of an HTTP server: how long a request may take to arrive, and how many connections it holds. */
export interface ServerLimits {
  /** The request line and headers must arrive within this (else 408). */
  headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (else 408); a response under way is not cut. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections past this many get a 503 and are closed. */
  maxConnections: number;
}

export function serverLimitsFrom(config: z.output<z.ZodObject<typeof httpServerEnv>>): ServerLimits {
  return {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: config.HTTP_MAX_CONNECTIONS,
  };
}

/** The HTTP_* settings' defaults. */
export const defaultServerLimits: ServerLimits = serverLimitsFrom(loadConfig(z.object(httpServerEnv), {}));

/** How long a connection answered with an error stays open for the client to read the answer and close. */
const LINGER_MS = 2_000;

const ANSWERED = Symbol('switchyard.answered');
type ServerSocket = Duplex & {
  [ANSWERED]?: boolean;
  /** The response Node is writing on this connection (Node's own name; its default clientError handling reads it too). */
  _httpMessage?: ServerResponse | null;
};

/**
 * A node:http server within `limits`. Node's own request timeout covers the arrival of the
 * request alone (the parser stops counting once the message is complete), so a long stream is
 * not cut by it; what Node refuses before the app runs (oversized headers, bytes that are not
 * HTTP, a request that does not arrive in time) and connections past the cap are answered in
 * the JSON error shape instead of Node's bare status lines or silent drops.
 */
export function createLimitedServer(
  limits: ServerLimits,
  options: Pick<ServerOptions, 'IncomingMessage' | 'ServerResponse'>,
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  const server = createServer(
    {
      ...options,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout,
      requestTimeout: limits.requestTimeoutMs,
      // Node checks both bounds on this interval (by default every 30 s, far past a bound of seconds).
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
    },
    (req, res) => {
      // A connection refused at the cap may still send a request: it has had its answer.
      if (!(req.socket as ServerSocket)[ANSWERED]) listener(req, res);
    },
  );
  server.on('clientError', answerClientError);
  capConnections(server, limits.maxConnections);
  return server;
}

function answerClientError(err: Error & { code?: string; reason?: unknown }, socket: ServerSocket): void {
  // Node reports each further chunk of a connection it gave up on; the first answer stands.
  if (socket[ANSWERED]) return;
  if (socket._httpMessage?.headersSent) {
    // A response under way (a stream, say) is not cut because the rest of the request is slow.
    if (err.code !== 'ERR_HTTP_REQUEST_TIMEOUT') socket.destroy();
    return;
  }
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  answerAndClose(socket, clientErrorFor(err));
}

function clientErrorFor(err: { code?: string; reason?: unknown }): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(431, 'invalid_request_error', 'Request headers are too large.', {
        code: 'headers_too_large',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeout('The request did not arrive in time.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new PayloadTooLarge('Request chunk extensions are too large.');
    default:
      return new BadRequest(
        typeof err.reason === 'string' && err.reason
          ? `The request is not valid HTTP: ${err.reason}.`
          : 'The request is not valid HTTP.',
        { code: 'invalid_http' },
      );
  }
}

/** Counts open connections; one past `max` gets a 503 with `retry-after` and is closed. */
function capConnections(server: Server, max: number): void {
  let open = 0;
  const closed = () => {
    open--;
  };
  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      answerAndClose(
        socket,
        new ServiceUnavailable('The server has too many open connections; try again shortly.', {
          code: 'too_many_connections',
          headers: { 'retry-after': '1' },
        }),
      );
      return;
    }
    open++;
    socket.once('close', closed);
  });
}

/**
 * Writes `error` as a whole HTTP response straight to the socket (there is no request or
 * response object here) and ends it. The socket is destroyed only after a grace period:
 * closing it at once, with the client still sending, could reset the connection and discard
 * the answer before the client reads it.
 */
function answerAndClose(socket: ServerSocket, error: AppError): void {
  socket[ANSWERED] = true;
  const body = JSON.stringify(error.toBody());
  let head =
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n` +
    `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n';
  for (const [name, value] of Object.entries(error.headers)) head += `${name}: ${value}\r\n`;
  socket.end(`${head}\r\n${body}`);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
