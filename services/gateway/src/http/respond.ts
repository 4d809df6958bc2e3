import { once } from 'node:events';
import type { Response } from 'express';
import { LOG_COPY_LIMIT, type Relayed } from '../domain/gateway-request.ts';

/** Sets the response headers a request's handling decided, in the order it decided them. */
export function setHeaders(res: Response, headers: Record<string, string>): void {
  for (const name in headers) res.setHeader(name, headers[name]!);
}

/** Responses the gateway ended itself, unfinished (see dropConnection). */
const dropped = new WeakSet<Response>();

/**
 * Ends a response that cannot be finished (a body that failed after its headers were sent) by
 * dropping the connection: the client sees it cut, not complete. Its closing is then not the
 * client's leaving.
 */
export function dropConnection(res: Response): void {
  dropped.add(res);
  res.destroy();
}

/** Whether the gateway dropped the response's connection itself (dropConnection). */
export function droppedByGateway(res: Response): boolean {
  return dropped.has(res);
}

/** Headers of an event stream, sent at once so the client sees the answer begin. */
export function startStream(res: Response): void {
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();
}

/**
 * Sends a body chunk by chunk as it arrives, with backpressure, and ends the response.
 * Returns a bounded copy (for the log and the cache) and whether it holds the whole body,
 * delivered in full. `onError` is told of a body that fails while the client is still there;
 * `onFirstChunk`, once, of the first chunk as it goes out.
 */
export async function relay(
  res: Response,
  body: AsyncIterable<Uint8Array>,
  onError: (err: unknown) => void,
  onFirstChunk?: () => void,
): Promise<Relayed> {
  const copy: Buffer[] = [];
  let copied = 0;
  let complete = true;
  let first = onFirstChunk;
  try {
    for await (const chunk of body) {
      if (res.destroyed) {
        complete = false;
        break;
      }
      if (first) {
        first();
        first = undefined;
      }
      if (copied < LOG_COPY_LIMIT) copy.push(Buffer.from(chunk));
      else complete = false;
      copied += chunk.length;
      if (!res.write(chunk)) await once(res, 'drain');
    }
  } catch (err) {
    complete = false;
    if (!res.destroyed) onError(err);
  }
  res.end();
  return { copy: Buffer.concat(copy), complete };
}
