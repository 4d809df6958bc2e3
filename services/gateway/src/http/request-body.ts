import type { Request, RequestHandler } from 'express';
import { BadRequest, assertStorableInput } from '@switchyard/core';
import { assertUtf8Body } from '@switchyard/http';

const UNITS: Record<string, number> = {
  b: 1,
  kb: 2 ** 10,
  mb: 2 ** 20,
  gb: 2 ** 30,
  tb: 2 ** 40,
  pb: 2 ** 50,
};

/** A size such as `25mb` in bytes, as body-parser reads it; NaN when it cannot tell. */
export function parseByteLimit(limit: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(limit);
  if (!match) return NaN;
  return Math.floor(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]!);
}

/** The error raw-body gives when the client goes away mid-body (answered as a 400). */
function abortedError(expected: number, received: number): Error {
  return Object.assign(new Error('request aborted'), {
    status: 400,
    statusCode: 400,
    expose: true,
    code: 'ECONNABORTED',
    expected,
    length: expected,
    received,
    type: 'request.aborted',
  });
}

/**
 * Reads a request body into `req.body` as one Buffer, as `express.raw` does, for the common
 * case: a declared `Content-Length` within the limit, no `Content-Encoding`, a content type
 * `accepts` takes. That case needs no decoder, no stream plumbing and no copy of a body that
 * arrived in one chunk. Everything else (compressed or chunked bodies, a declared length over
 * the limit, a body already read) goes to `fallback`, the `express.raw` parser, so that its
 * answers (413, 415, 400) stay exactly as they were.
 */
export function leanBody(
  limit: string,
  fallback: RequestHandler,
  accepts: (req: Request) => boolean = () => true,
): RequestHandler {
  const maxBytes = parseByteLimit(limit);
  return (req, res, next) => {
    const declared = req.headers['content-length'];
    const encoding = req.headers['content-encoding'];
    if (
      declared === undefined ||
      (encoding !== undefined && encoding.toLowerCase() !== 'identity') ||
      req.headers['transfer-encoding'] !== undefined ||
      req.readableEnded ||
      !(Number(declared) <= maxBytes) ||
      !accepts(req)
    ) {
      fallback(req, res, next);
      return;
    }
    const expected = Number(declared);
    if (expected === 0) {
      req.body = Buffer.alloc(0);
      next();
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    };
    const onEnd = () => {
      cleanup();
      // Node's parser delivers exactly Content-Length bytes before `end`.
      req.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
      next();
    };
    const onError = (err: Error) => {
      cleanup();
      next(err);
    };
    const onAborted = () => {
      cleanup();
      next(abortedError(expected, received));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  };
}

/** `application/json` or `application/*+json`, with or without parameters (as `express.raw`'s type list). */
export function hasJsonContentType(req: Request): boolean {
  const type = req.headers['content-type'];
  if (type === undefined) return false;
  const semicolon = type.indexOf(';');
  const mime = (semicolon < 0 ? type : type.slice(0, semicolon)).trim().toLowerCase();
  return JSON_MIME.test(mime);
}

const JSON_MIME = /^application\/(?:json|[\w.!#$%&'*^`|~-]+\+json)$/;

/**
 * A JSON body read by `leanBody` as the object it encodes, checked as the platform's `jsonBody`
 * checks its bodies: UTF-8, no text a store cannot hold, nesting bounded. `text` is the bytes
 * already decoded, when the caller has them.
 */
export function parseJsonObject(raw: Buffer, text?: string): Record<string, unknown> {
  assertUtf8Body(raw);
  let value: unknown;
  try {
    value = JSON.parse(text ?? raw.toString('utf8'));
  } catch (err) {
    throw new BadRequest(`Request body is not valid JSON: ${(err as Error).message}`, {
      code: 'invalid_json',
    });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new BadRequest('Request body must be a JSON object.', { code: 'invalid_json' });
  }
  assertStorableInput(value);
  return value as Record<string, unknown>;
}
