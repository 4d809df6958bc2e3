import type { Dispatcher } from 'undici';
import { ServiceUnavailable, UpstreamError } from '@switchyard/core';
import { usesBearerToken, type ProviderTokenSource } from '../../upstream/provider-tokens.ts';
import { openAiProvider } from '../openai/chat-complete.ts';
import { forwardOpenAiFormat } from '../openai/forward.ts';
import type { ChatCall, ChatProvider, ForwardCall, ProviderTarget } from '../types.ts';
import { PROVIDER, azureEndpoint, forwardUrl, headers } from './api.ts';

/**
 * Azure OpenAI speaks OpenAI's wire format at a deployment URL with an `api-key` header: the
 * body, streams and errors (a prompt blocked by the content filter is a 400 with
 * `code: content_filter`) pass through as the OpenAI adapter forwards them. An integration
 * whose provider_auth_type is oauthClientCredentials or wif, or whose azure_auth_mode is entra,
 * sends an Entra bearer token from `tokens` instead; a token Azure refuses (401) is dropped,
 * so the next request fetches anew. The other OpenAI operations (embeddings, files, batches,
 * ...) are forwarded to their Azure paths (api.ts forwardUrl) with the same credentials.
 */
export function azureOpenAiProvider(dispatcher: Dispatcher, tokens?: ProviderTokenSource): ChatProvider {
  const keyed = openAiProvider(dispatcher, PROVIDER, azureEndpoint);
  const forwardKeyed = forwardOpenAiFormat(
    dispatcher,
    PROVIDER,
    (call) => forwardUrl(call.target, call.path, call.model),
    headers,
  );
  /** The call made with the integration's key, or with an Entra token where it uses one. */
  async function authorised<C extends { target: ProviderTarget }, R>(call: C, send: (call: C) => Promise<R>) {
    if (!usesBearerToken(call.target)) return send(call);
    if (!tokens) {
      throw new ServiceUnavailable('This gateway cannot fetch provider tokens.', {
        code: 'provider_token_unavailable',
      });
    }
    const accessToken = await tokens.token(call.target);
    try {
      return await send({ ...call, target: { ...call.target, accessToken } });
    } catch (err) {
      if (err instanceof UpstreamError && err.status === 401) tokens.forget(call.target);
      throw err;
    }
  }
  return {
    ...keyed,
    chatCompletions: (call: ChatCall) => authorised(call, keyed.chatCompletions),
    forward: (call: ForwardCall) => authorised(call, forwardKeyed),
  };
}
