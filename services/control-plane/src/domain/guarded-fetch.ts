import http from 'node:http';
import https from 'node:https';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { inspectCustomHost, publicAddressLookup, type Resolver } from '@switchyard/rules';

/*
 * The one way control-plane calls a URL a tenant chose (an MCP upstream, an agent's card): the
 * unsafe-host check on the URL, and, for a host outside TRUSTED_CUSTOM_HOSTS, a connection only
 * to public addresses, checked by the socket's own lookup when it connects.
 */

export interface GuardedFetchOptions {
  /** TRUSTED_CUSTOM_HOSTS: hosts (and their subdomains) reached whatever they resolve to. */
  trusted: readonly string[];
  resolve: Resolver;
  /** The most bytes of one answer read: the body errors (and the connection is cut) past it. */
  maxBytes?: number | undefined;
  /** The error a body past `maxBytes` fails with. */
  tooLarge?: (() => Error) | undefined;
  /** How long the TCP (and TLS) connection may take to open. */
  connectTimeoutMs?: number | undefined;
}

/** A connection refused by the unsafe-host check (the URL, or the address its name resolved to). */
export class UnsafeUpstream extends Error {}

/** The connection did not open within `connectTimeoutMs`. */
export class ConnectTimeout extends Error {
  constructor(ms: number) {
    super(`the connection did not open within ${ms} ms`);
    this.name = 'ConnectTimeout';
  }
}

/** The body of an answer was larger than `maxBytes`. */
export class AnswerTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
    this.name = 'AnswerTooLarge';
  }
}

/**
 * A fetch that connects only where a tenant's URL may lead. Redirects are not followed (a
 * caller that follows one checks its target the same way, by fetching it with this); every
 * request ends by `deadline`. The body streams: bytes are counted as they arrive, and the
 * connection is cut as soon as they pass `maxBytes`.
 */
export function guardedFetch(options: GuardedFetchOptions, deadline: AbortSignal): FetchLike {
  const lookup = publicAddressLookup(options.resolve);
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const tooLarge = options.tooLarge ?? (() => new AnswerTooLarge(maxBytes));
  return async (input, init) => {
    const request = new Request(input, init);
    const inspected = inspectCustomHost(request.url, options.trusted);
    if (inspected.refused !== undefined) throw new UnsafeUpstream(`the URL is refused: ${inspected.refused}`);
    const { url, trusted } = inspected;
    const signal = AbortSignal.any([request.signal, deadline]);
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? undefined
        : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolvePromise, reject) => {
      const req = client.request(
        url,
        { method: request.method, headers, signal, ...(trusted ? {} : { lookup }) },
        (res) => {
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one);
          }
          const status = res.statusCode ?? 502;
          const empty = request.method === 'HEAD' || status === 204 || status === 205 || status === 304;
          if (empty) res.resume();
          const tooLong = !empty && Number(res.headers['content-length']) > maxBytes;
          if (empty || tooLong) {
            // An answer announced larger than the limit is not read at all.
            if (tooLong) res.destroy();
            resolvePromise(
              new Response(
                tooLong ? new ReadableStream({ start: (controller) => controller.error(tooLarge()) }) : null,
                { status, headers: responseHeaders },
              ),
            );
            return;
          }
          resolvePromise(
            new Response(boundedBody(res, maxBytes, tooLarge), { status, headers: responseHeaders }),
          );
        },
      );
      if (options.connectTimeoutMs !== undefined) {
        const ms = options.connectTimeoutMs;
        req.on('socket', (socket) => {
          if (!socket.connecting) return;
          const timer = setTimeout(() => req.destroy(new ConnectTimeout(ms)), ms);
          timer.unref();
          const clear = () => clearTimeout(timer);
          socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', clear);
          socket.once('close', clear);
        });
      }
      req.on('error', (err) => {
        reject(
          err instanceof Error && err.name === 'NonPublicAddress' ? new UnsafeUpstream(err.message) : err,
        );
      });
      req.end(body);
    });
  };
}

/**
 * The body of an answer as a web stream that reads only as fast as its reader (backpressure),
 * counts bytes as they arrive and fails (cutting the connection) once they pass `maxBytes`. A
 * reader that cancels it closes the connection.
 */
function boundedBody(
  res: http.IncomingMessage,
  maxBytes: number,
  tooLarge: () => Error,
): ReadableStream<Uint8Array> {
  let size = 0;
  let done = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const finish = (err?: unknown) => {
          if (done) return;
          done = true;
          if (err === undefined) controller.close();
          else controller.error(err);
        };
        res.on('data', (chunk: Buffer) => {
          if (done) return;
          size += chunk.length;
          if (size > maxBytes) {
            // Stop reading: the rest of the answer is never taken off the socket.
            res.destroy();
            finish(tooLarge());
            return;
          }
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
          if ((controller.desiredSize ?? 1) <= 0) res.pause();
        });
        res.on('end', () => finish());
        res.on('error', (err) => finish(err));
        res.on('close', () => {
          if (!res.complete) finish(new Error('the connection closed before the answer ended'));
        });
        res.pause();
      },
      pull() {
        res.resume();
      },
      cancel() {
        done = true;
        if (!res.complete) res.destroy();
      },
    },
    { highWaterMark: 65_536, size: (chunk) => chunk.byteLength },
  );
}
