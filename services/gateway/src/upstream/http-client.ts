import type { LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, EnvHttpProxyAgent, errors, type Dispatcher } from 'undici';
import { z } from 'zod';
import { RequestTimeout, UpstreamError, env as setting, withTraceHeaders } from '@switchyard/core';
import type { UpstreamHeaders } from '../providers/types.ts';
import type { CancelSignal } from '../routing/cancellation.ts';
import { NonPublicAddress } from '@switchyard/rules';

const proxyMeta = {
  description:
    'outbound proxy for provider calls (the lower-case `http_proxy`, `https_proxy`, `no_proxy` too); hosts in `NO_PROXY` are reached directly',
};

/** The proxy settings createUpstreamDispatcher reads, for the configuration table. */
export const proxyEnvSchema = z.object({
  HTTP_PROXY: setting.optionalString().meta(proxyMeta),
  HTTPS_PROXY: setting.optionalString().meta(proxyMeta),
  NO_PROXY: setting.optionalString().meta(proxyMeta),
});

/**
 * One pooled, keep-alive dispatcher for upstream calls. When a proxy is configured in the
 * environment (HTTP_PROXY / HTTPS_PROXY) it is used, honouring NO_PROXY. `lookup` resolves the
 * host names of direct connections (through a proxy, the proxy resolves them).
 */
export function createUpstreamDispatcher(env: NodeJS.ProcessEnv, lookup?: LookupFunction): Dispatcher {
  const options = {
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connections: 256,
    pipelining: 1,
    ...(lookup ? { connect: { lookup } } : {}),
  };
  const httpProxy = env.HTTP_PROXY || env.http_proxy;
  const httpsProxy = env.HTTPS_PROXY || env.https_proxy || httpProxy;
  if (!httpProxy && !httpsProxy) return new Agent(options);
  return new EnvHttpProxyAgent({
    ...options,
    httpProxy,
    httpsProxy,
    noProxy: env.NO_PROXY || env.no_proxy || '',
  });
}

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: Buffer | string | Readable;
  signal: CancelSignal;
  timeoutMs: number;
  provider: string;
}

/** Origin and path of each upstream URL seen: the same few URLs serve every request. */
const parsedUrls = new Map<string, { origin: string; path: string }>();

function originAndPath(url: string): { origin: string; path: string } {
  let parsed = parsedUrls.get(url);
  if (parsed === undefined) {
    const { origin, pathname, search } = new URL(url);
    parsed = { origin, path: search ? `${pathname}${search}` : pathname };
    if (parsedUrls.size >= 1_000) parsedUrls.clear();
    parsedUrls.set(url, parsed);
  }
  return parsed;
}

export async function upstreamRequest(
  dispatcher: Dispatcher,
  req: UpstreamRequest,
): Promise<Dispatcher.ResponseData> {
  try {
    // The dispatcher's own request(): undici's top-level request(url) parses the URL anew each time.
    const { origin, path } = originAndPath(req.url);
    return await dispatcher.request({
      origin,
      path,
      method: req.method,
      // With tracing on, the provider is told the trace (the model span's `traceparent`).
      headers: withTraceHeaders(req.headers),
      body: req.body,
      // undici takes any signal with addEventListener, aborted and reason (its types say AbortSignal).
      signal: req.signal as AbortSignal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
  } catch (err) {
    throw failure(err, req);
  }
}

function failure(err: unknown, req: UpstreamRequest): Error {
  if (err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError) {
    return new RequestTimeout(`${req.provider} did not answer within ${req.timeoutMs} ms.`);
  }
  if (req.signal.aborted) return err as Error;
  // Refused before connecting: the caller names the custom host in its 400.
  if (err instanceof NonPublicAddress) return err;
  return new UpstreamError(
    502,
    `${req.provider}: could not reach the upstream (${(err as Error).message}).`,
    {
      code: 'upstream_unreachable',
    },
  );
}

/** A whole upstream answer, read into memory. */
export interface BufferedResponse {
  statusCode: number;
  /** Lower-case names; a repeated header's values joined as undici joins them. */
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/**
 * A request whose answer is wanted whole (a non-streaming completion): the body is gathered
 * chunk by chunk straight from the connection, without the readable stream, promise and
 * async resource that `request()` makes for each call to hand over a body to be read later.
 * Timeouts, the abort signal and errors behave as in `upstreamRequest`.
 */
export function upstreamBuffered(dispatcher: Dispatcher, req: UpstreamRequest): Promise<BufferedResponse> {
  return new Promise((resolve, reject) => {
    const { origin, path } = originAndPath(req.url);
    const chunks: Buffer[] = [];
    let statusCode = 0;
    let headers: Record<string, string | string[]> = {};
    let abort: ((reason?: Error) => void) | undefined;
    let settled = false;
    const onAbort = () => abort?.(req.signal.reason as Error);
    const settle = (err: unknown, response?: BufferedResponse) => {
      if (settled) return;
      settled = true;
      req.signal.removeEventListener('abort', onAbort);
      if (response) resolve(response);
      else reject(failure(err, req));
    };
    if (req.signal.aborted) {
      reject(req.signal.reason);
      return;
    }
    req.signal.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortRequest) {
        abort = abortRequest;
        if (req.signal.aborted) abortRequest(req.signal.reason as Error);
      },
      onHeaders(status, rawHeaders) {
        // 1xx informational answers come before the real one.
        if (status < 200) return true;
        statusCode = status;
        headers = parseRawHeaders(rawHeaders);
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        settle(undefined, {
          statusCode,
          headers,
          body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        });
      },
      onError(err) {
        settle(err);
      },
    };
    try {
      dispatcher.dispatch(
        {
          origin,
          path,
          method: req.method,
          headers: withTraceHeaders(req.headers),
          body: req.body,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.timeoutMs,
        },
        handler,
      );
    } catch (err) {
      settle(err);
    }
  });
}

function parseRawHeaders(raw: Buffer[] | string[] | null | undefined): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (!raw) return headers;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString().toLowerCase();
    const value = raw[i + 1]!.toString();
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else headers[name] = [existing, value];
  }
  return headers;
}

/** The head of the provider's answer that an error was made from (see upstreamHeadersOf). */
const headsOfErrors = new WeakMap<object, UpstreamHeaders>();

/** Records the head of the provider's error answer on the error made from it; returns the error. */
export function withUpstreamHeaders<E extends Error>(error: E, headers: UpstreamHeaders): E {
  headsOfErrors.set(error, headers);
  return error;
}

/** The head of the provider's answer an error was made from; undefined for any other error. */
export function upstreamHeadersOf(error: unknown): UpstreamHeaders | undefined {
  return typeof error === 'object' && error !== null ? headsOfErrors.get(error) : undefined;
}

/**
 * The upstream's error, mapped onto the one error shape with the provider named; its
 * `retry-after` is passed on so clients back off as the provider asked, and its head is kept
 * with it (withUpstreamHeaders).
 */
export async function upstreamErrorFrom(
  provider: string,
  response: Dispatcher.ResponseData | BufferedResponse,
): Promise<UpstreamError> {
  const status = response.statusCode;
  const body = Buffer.isBuffer(response.body)
    ? response.body
    : Buffer.from(await response.body.arrayBuffer());
  const retryAfter = response.headers['retry-after'];
  let message = body.toString('utf8').slice(0, 2_000) || `HTTP ${status}`;
  let type: string | undefined;
  let code: string | null = null;
  let param: string | null = null;
  try {
    const parsed = JSON.parse(message) as {
      error?: { message?: string; type?: string; code?: string; param?: string };
    };
    if (parsed.error?.message) message = parsed.error.message;
    type = parsed.error?.type;
    code = parsed.error?.code ?? null;
    param = parsed.error?.param ?? null;
  } catch {
    // Not JSON: keep the text.
  }
  const error = new UpstreamError(status, `${provider} error: ${message}`, {
    code: code ?? type ?? 'upstream_error',
    param,
    headers:
      typeof retryAfter === 'string' && /^[\w ,:-]{1,64}$/.test(retryAfter)
        ? { 'retry-after': retryAfter }
        : {},
  });
  return withUpstreamHeaders(error, response.headers);
}

/** A successful upstream answer's JSON body; one that is not JSON is a 502 naming the provider. */
export async function readUpstreamJson<T>(provider: string, response: Dispatcher.ResponseData): Promise<T> {
  const text = await response.body.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamError(502, `${provider}: the upstream answered with a body that is not JSON.`, {
      code: 'upstream_invalid_response',
    });
  }
}
