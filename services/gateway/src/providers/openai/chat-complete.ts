import type { Dispatcher } from 'undici';
import { upstreamErrorFrom, upstreamRequest } from '../../upstream/http-client.ts';
import type { ChatCall, ChatProvider, ProviderResponse } from '../types.ts';
import { baseUrl, headers } from './api.ts';

/**
 * OpenAI and every OpenAI-compatible host: the request needs no translation, so the
 * client's bytes are forwarded as they are and streams are piped chunk by chunk.
 */
export function openAiProvider(dispatcher: Dispatcher, id = 'openai'): ChatProvider {
  return {
    id,
    async chatCompletions(call: ChatCall): Promise<ProviderResponse> {
      const response = await upstreamRequest(dispatcher, {
        url: `${baseUrl(call.target)}/chat/completions`,
        method: 'POST',
        headers: headers(call.target),
        body: call.rawBody ?? JSON.stringify(call.body),
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        provider: id,
      });
      const contentType = String(response.headers['content-type'] ?? 'application/json');
      if (response.statusCode >= 400) {
        throw await upstreamErrorFrom(id, response);
      }
      if (call.body.stream && contentType.includes('text/event-stream')) {
        return { kind: 'stream', status: response.statusCode, body: response.body, contentType };
      }
      return {
        kind: 'json',
        status: response.statusCode,
        body: Buffer.from(await response.body.arrayBuffer()),
        contentType,
      };
    },
  };
}
