import type { Dispatcher } from 'undici';
import { upstreamErrorFrom, upstreamRequest } from '../../upstream/http-client.ts';
import type { ForwardCall, ForwardResponse, ProviderTarget } from '../types.ts';

/** Response headers worth passing on; hop-by-hop and upstream-internal ones are dropped. */
const PASSED_ON = [
  'content-type',
  'content-disposition',
  'retry-after',
  'openai-processing-ms',
  'x-request-id',
];

/** Forwards one OpenAI-format operation to `<base>/<path>` with the provider's credentials. */
export function forwardOpenAiFormat(
  dispatcher: Dispatcher,
  provider: string,
  base: (target: ProviderTarget) => string,
  credentials: (target: ProviderTarget) => Record<string, string>,
) {
  return async (call: ForwardCall): Promise<ForwardResponse> => {
    const { 'content-type': _json, ...auth } = credentials(call.target);
    const response = await upstreamRequest(dispatcher, {
      url: `${base(call.target)}${call.path}`,
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
      if (typeof value === 'string') headers[name === 'x-request-id' ? `upstream-request-id` : name] = value;
    }
    return { status: response.statusCode, headers, body: response.body };
  };
}
