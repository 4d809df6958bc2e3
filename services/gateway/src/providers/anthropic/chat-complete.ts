import type { Dispatcher } from 'undici';
import { readUpstreamJson, upstreamErrorFrom, upstreamRequest } from '../../upstream/http-client.ts';
import { jsonResponse, readServerSentEvents, streamResponse, translatedStream } from '../openai-format.ts';
import type { ChatCall, ChatProvider, ForwardResponse, MessagesCall, ProviderResponse } from '../types.ts';
import { headers, messagesUrl, passThroughHeaders } from './api.ts';
import { toMessagesRequest } from './chat-request.ts';
import { fromMessage } from './chat-response.ts';
import { chunksFromEvents } from './chat-stream.ts';
import type { Message } from './wire.ts';

const ID = 'anthropic';

/**
 * Anthropic's Messages API: translated to and from the chat completions format, and a Messages
 * request passed through as it came.
 */
export function anthropicProvider(dispatcher: Dispatcher): ChatProvider {
  return {
    id: ID,
    async chatCompletions(call: ChatCall): Promise<ProviderResponse> {
      const request = toMessagesRequest(call.body);
      const response = await upstreamRequest(dispatcher, {
        url: messagesUrl(call.target),
        method: 'POST',
        headers: headers(call.target),
        body: JSON.stringify(request),
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        provider: ID,
      });
      // 429 and 529 (overloaded) keep their retry-after.
      if (response.statusCode >= 400) throw await upstreamErrorFrom(ID, response);
      const created = Math.floor(Date.now() / 1000);
      if (request.stream) {
        const chunks = chunksFromEvents(readServerSentEvents(response.body), {
          created,
          includeUsage: call.body.stream_options?.include_usage === true,
        });
        return {
          ...streamResponse(translatedStream(ID, chunks, call.signal)),
          upstreamHeaders: response.headers,
        };
      }
      return {
        ...jsonResponse(fromMessage(await readUpstreamJson<Message>(ID, response), created)),
        upstreamHeaders: response.headers,
      };
    },
    async messages(call: MessagesCall): Promise<ForwardResponse> {
      const response = await upstreamRequest(dispatcher, {
        url: messagesUrl(call.target),
        method: 'POST',
        headers: passThroughHeaders(call.target, call.version, call.beta),
        body: call.body,
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        provider: ID,
      });
      const contentType = response.headers['content-type'];
      return {
        status: response.statusCode,
        headers: typeof contentType === 'string' ? { 'content-type': contentType } : {},
        body: response.body,
        upstreamHeaders: response.headers,
      };
    },
  };
}
