import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { upstreamRequest } from '../../upstream/http-client.ts';
import { jsonResponse, streamResponse } from '../openai-format.ts';
import type { ChatCall, ChatProvider, ProviderResponse } from '../types.ts';
import { PROVIDER, bedrockErrorFrom, converseUrl, signedHeaders } from './api.ts';
import { toConverseRequest } from './converse-request.ts';
import { fromConverseResponse } from './converse-response.ts';
import { converseStreamToSse } from './converse-stream.ts';
import type { ConverseResponse } from './converse-types.ts';

/** AWS Bedrock through the Converse API: one request shape for every model family on Bedrock. */
export function bedrockProvider(dispatcher: Dispatcher): ChatProvider {
  return {
    id: PROVIDER,
    async chatCompletions(call: ChatCall): Promise<ProviderResponse> {
      const stream = call.body.stream === true;
      const body = JSON.stringify(toConverseRequest(call.body));
      const url = converseUrl(call.target, call.body.model, stream);
      const response = await upstreamRequest(dispatcher, {
        url: url.href,
        method: 'POST',
        headers: await signedHeaders(call.target, url, body),
        body,
        signal: call.signal,
        timeoutMs: call.timeoutMs,
        provider: PROVIDER,
      });
      if (response.statusCode >= 400) throw await bedrockErrorFrom(response);
      const requestId = response.headers['x-amzn-requestid'];
      const meta = {
        id: `chatcmpl-${typeof requestId === 'string' && requestId ? requestId : randomUUID()}`,
        created: Math.floor(Date.now() / 1000),
        model: call.body.model,
      };
      if (stream) {
        const includeUsage = call.body.stream_options?.include_usage === true;
        return {
          ...streamResponse(converseStreamToSse(response.body, { ...meta, includeUsage })),
          upstreamHeaders: response.headers,
        };
      }
      return {
        ...jsonResponse(fromConverseResponse((await response.body.json()) as ConverseResponse, meta)),
        upstreamHeaders: response.headers,
      };
    },
  };
}
