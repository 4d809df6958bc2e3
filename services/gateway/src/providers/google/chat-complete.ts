import type { Dispatcher } from 'undici';
import { readUpstreamJson, upstreamRequest, withUpstreamHeaders } from '../../upstream/http-client.ts';
import { jsonResponse, readServerSentEvents, streamResponse, translatedStream } from '../openai-format.ts';
import type { ChatCall, ChatProvider, ProviderResponse } from '../types.ts';
import { generateUrl, headers } from './api.ts';
import { toGenerateContentRequest } from './chat-request.ts';
import { fromGenerateContent, geminiError, newToolCallId, type TranslationContext } from './chat-response.ts';
import { chunksFromEvents } from './chat-stream.ts';
import type { GenerateContentResponse } from './wire.ts';

const ID = 'google';

/** The Gemini API (`generateContent`), translated to and from the chat completions format. */
export function googleProvider(dispatcher: Dispatcher): ChatProvider {
  return {
    id: ID,
    async chatCompletions(call: ChatCall): Promise<ProviderResponse> {
      const stream = call.body.stream === true;
      const response = await upstreamRequest(dispatcher, {
        url: generateUrl(call.target, call.body.model, stream),
        method: 'POST',
        headers: headers(call.target),
        body: JSON.stringify(toGenerateContentRequest(call.body)),
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        provider: ID,
      });
      if (response.statusCode >= 400) {
        const text = await response.body.text();
        const retryAfter = response.headers['retry-after'];
        throw withUpstreamHeaders(
          geminiError(
            response.statusCode,
            parseJson(text) ?? text,
            typeof retryAfter === 'string' ? retryAfter : undefined,
          ),
          response.headers,
        );
      }
      const context: TranslationContext = {
        created: Math.floor(Date.now() / 1000),
        model: call.body.model,
        newToolCallId,
      };
      if (stream) {
        const chunks = chunksFromEvents(readServerSentEvents(response.body), {
          ...context,
          includeUsage: call.body.stream_options?.include_usage === true,
        });
        return {
          ...streamResponse(translatedStream(ID, chunks, call.signal)),
          upstreamHeaders: response.headers,
        };
      }
      return {
        ...jsonResponse(
          fromGenerateContent(await readUpstreamJson<GenerateContentResponse>(ID, response), context),
        ),
        upstreamHeaders: response.headers,
      };
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
