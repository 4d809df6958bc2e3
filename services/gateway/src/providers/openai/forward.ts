import type { Dispatcher } from 'undici';
import { upstreamErrorFrom, upstreamRequest } from '../../upstream/http-client.ts';
import type { ForwardCall, ForwardResponse, ProviderTarget } from '../types.ts';

/**
 * Content headers passed on as they are; hop-by-hop and upstream-internal ones are dropped. The
 * provider's request id and rate-limit headers are passed as on chat completions
 * (http/provider-headers.ts), from `upstreamHeaders`.
 */
const PASSED_ON = ['content-type', 'content-disposition', 'openai-processing-ms'];

/** Forwards one OpenAI-format operation to the provider's URL for it, with its credentials. */
export function forwardOpenAiFormat(
  dispatcher: Dispatcher,
  provider: string,
  url: (call: ForwardCall) => string,
  credentials: (target: ProviderTarget) => Record<string, string>,
) {
  return async (call: ForwardCall): Promise<ForwardResponse> => {
    const { 'content-type': _json, ...auth } = credentials(call.target);
    const response = await upstreamRequest(dispatcher, {
      url: url(call),
      method: call.method as 'GET' | 'POST' | 'DELETE',
      headers: { ...call.headers, ...auth },
      body: call.body,
      signal: call.signal,
      timeoutMs: call.timeoutMs,
      provider,
    });
    if (response.statusCode >= 400) throw await upstreamErrorFrom(provider, response);
    const headers: Record<string, string> = {};
    for (const name of PASSED_ON) {
      const value = response.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    return { status: response.statusCode, headers, body: response.body, upstreamHeaders: response.headers };
  };
}
