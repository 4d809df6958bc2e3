import type { Dispatcher } from 'undici';
import { upstreamBuffered, upstreamErrorFrom, upstreamRequest } from '../../upstream/http-client.ts';
import type { ChatCall, ChatProvider, ProviderResponse } from '../types.ts';
import { openAiEndpoint, type OpenAiEndpoint } from './api.ts';
import { forwardOpenAiFormat } from './forward.ts';

/**
 * OpenAI and every OpenAI-compatible host: the request needs no translation, so the
 * client's bytes are forwarded as they are and streams are piped chunk by chunk.
 */
export function openAiProvider(
  dispatcher: Dispatcher,
  id = 'openai',
  endpoint: OpenAiEndpoint = openAiEndpoint,
): ChatProvider {
  const base = endpoint.baseUrl;
  return {
    id,
    forward: base
      ? forwardOpenAiFormat(dispatcher, id, (call) => `${base(call.target)}${call.path}`, endpoint.headers)
      : undefined,
    async chatCompletions(call: ChatCall): Promise<ProviderResponse> {
      const request = {
        url: endpoint.url(call),
        method: 'POST' as const,
        headers: endpoint.headers(call.target),
        body: endpoint.body ? endpoint.body(call) : (call.rawBody ?? JSON.stringify(call.body)),
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        provider: id,
      };
      if (!call.body.stream) {
        // The whole answer is wanted: gathered straight from the connection.
        const answer = await upstreamBuffered(dispatcher, request);
        if (answer.statusCode >= 400) throw await upstreamErrorFrom(id, answer);
        return {
          kind: 'json',
          status: answer.statusCode,
          body: answer.body,
          contentType: String(answer.headers['content-type'] ?? 'application/json'),
          upstreamHeaders: answer.headers,
        };
      }
      const response = await upstreamRequest(dispatcher, request);
      const contentType = String(response.headers['content-type'] ?? 'application/json');
      if (response.statusCode >= 400) {
        throw await upstreamErrorFrom(id, response);
      }
      if (call.body.stream && contentType.includes('text/event-stream')) {
        return {
          kind: 'stream',
          status: response.statusCode,
          body: response.body,
          contentType,
          upstreamHeaders: response.headers,
        };
      }
      return {
        kind: 'json',
        status: response.statusCode,
        body: Buffer.from(await response.body.arrayBuffer()),
        contentType,
        upstreamHeaders: response.headers,
      };
    },
  };
}
