import type { Readable } from 'node:stream';
import { Agent, EnvHttpProxyAgent, errors, type Dispatcher } from 'undici';
import { RequestTimeout, UpstreamError } from '@switchyard/platform';

/**
 * One pooled, keep-alive dispatcher for every upstream call. When a proxy is configured in
 * the environment (HTTP_PROXY / HTTPS_PROXY) it is used, honouring NO_PROXY.
 */
export function createUpstreamDispatcher(env: NodeJS.ProcessEnv): Dispatcher {
  const options = { keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256, pipelining: 1 };
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
  signal: AbortSignal;
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
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
  } catch (err) {
    if (err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError) {
      throw new RequestTimeout(`${req.provider} did not answer within ${req.timeoutMs} ms.`);
    }
    if (req.signal.aborted) throw err;
    throw new UpstreamError(
      502,
      `${req.provider}: could not reach the upstream (${(err as Error).message}).`,
      {
        code: 'upstream_unreachable',
      },
    );
  }
}

/**
 * The upstream's error, mapped onto the one error shape with the provider named; its
 * `retry-after` is passed on so clients back off as the provider asked.
 */
export async function upstreamErrorFrom(
  provider: string,
  response: Dispatcher.ResponseData,
): Promise<UpstreamError> {
  const status = response.statusCode;
  const body = Buffer.from(await response.body.arrayBuffer());
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
  return new UpstreamError(status, `${provider} error: ${message}`, {
    code: code ?? type ?? 'upstream_error',
    param,
    headers:
      typeof retryAfter === 'string' && /^[\w ,:-]{1,64}$/.test(retryAfter)
        ? { 'retry-after': retryAfter }
        : {},
  });
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
