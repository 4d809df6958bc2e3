/**
 * The console's only way to the gateway: the public HTTP APIs on this origin, authenticated by
 * the signed-in API key (Authorization: Bearer) or by the browser session cookie (sy_session).
 * Every failure is an ApiError carrying the API's one error shape.
 */

const KEY_STORAGE = 'switchyard.console.key';

export interface ApiErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
    this.name = 'ApiError';
  }
  get param(): string | null {
    return this.body.param;
  }
  get code(): string | null {
    return this.body.code;
  }
}

export type Query = Record<string, string | number | boolean | null | undefined | readonly string[]>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The API key the console signed in with (kept for this browser tab only), or null for a session. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}
export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

/** `path` with the query's defined values (arrays comma-joined), as the APIs read them. */
export function withQuery(path: string, query: Query | undefined): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/** The raw response of a call (for downloads and streams); throws ApiError on a non-2xx status. */
export async function apiFetch(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const key = storedKey();
  if (key) headers.authorization = `Bearer ${key}`;
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let res: Response;
  try {
    res = await fetch(withQuery(path, options.query), {
      method,
      headers,
      body,
      credentials: 'same-origin',
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, {
      message: 'The gateway could not be reached. Check that it is running and try again.',
      type: 'network_error',
      param: null,
      code: 'network_error',
    });
  }
  if (!res.ok) throw new ApiError(res.status, await errorBody(res));
  return res;
}

async function errorBody(res: Response): Promise<ApiErrorBody> {
  const text = await res.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: Partial<ApiErrorBody> | string };
    if (parsed.error && typeof parsed.error === 'object' && typeof parsed.error.message === 'string') {
      return {
        message: parsed.error.message,
        type: parsed.error.type ?? 'error',
        param: parsed.error.param ?? null,
        code: parsed.error.code ?? null,
      };
    }
    if (typeof parsed.error === 'string')
      return { message: parsed.error, type: 'error', param: null, code: null };
  } catch {
    // not JSON: fall through
  }
  return {
    message: text.slice(0, 500) || `${res.status} ${res.statusText}`,
    type: 'error',
    param: null,
    code: null,
  };
}

/** A JSON call; the parsed answer (undefined for an empty one). */
export async function api<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const res = await apiFetch(method, path, options);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T = unknown>(path: string, query?: Query, signal?: AbortSignal) =>
  api<T>('GET', path, { query, signal });
export const post = <T = unknown>(path: string, body?: unknown, query?: Query) =>
  api<T>('POST', path, { body, query });
export const put = <T = unknown>(path: string, body?: unknown, query?: Query) =>
  api<T>('PUT', path, { body, query });
export const del = <T = unknown>(path: string, query?: Query) => api<T>('DELETE', path, { query });
