import { setTimeout as sleep } from 'node:timers/promises';

export interface RequestOptions {
  /** An API key, sent as `Authorization: Bearer`. */
  key?: string;
  /** Serialised as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Per-request bound; the default keeps a hung service from hanging the suite. */
  timeoutMs?: number;
}

/** Response bodies are whatever JSON the service sent; tests assert on their fields. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResponse<T = Json> {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: T;
  text: string;
}

export async function httpRequest<T = Json>(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: body as T, text };
}

/**
 * Polls `attempt` until it returns a value other than undefined, or fails after timeoutMs
 * with `describe()` (the last state seen) in the message.
 */
export async function eventually<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; describe?: () => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const detail = [
        lastError ? `last error: ${lastError instanceof Error ? lastError.message : String(lastError)}` : '',
        options.describe?.() ?? '',
      ]
        .filter(Boolean)
        .join('\n');
      throw new Error(
        `Timed out after ${options.timeoutMs} ms waiting for ${what}${detail ? `\n${detail}` : ''}`,
      );
    }
    await sleep(options.intervalMs ?? 250);
  }
}
