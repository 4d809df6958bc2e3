import type { Dispatcher } from 'undici';
import { ServiceUnavailable, UpstreamError } from '@switchyard/core';
import { usesBearerToken, type ProviderTokenSource } from '../../upstream/provider-tokens.ts';
import { openAiProvider } from '../openai/chat-complete.ts';
import type { ChatCall, ChatProvider } from '../types.ts';
import { PROVIDER, azureEndpoint } from './api.ts';

/**
 * Azure OpenAI speaks OpenAI's wire format at a deployment URL with an `api-key` header: the
 * body, streams and errors (a prompt blocked by the content filter is a 400 with
 * `code: content_filter`) pass through as the OpenAI adapter forwards them. An integration
 * whose provider_auth_type is oauthClientCredentials or wif, or whose azure_auth_mode is entra,
 * sends an Entra bearer token from `tokens` instead; a token Azure refuses (401) is dropped,
 * so the next request fetches anew.
 */
export function azureOpenAiProvider(dispatcher: Dispatcher, tokens?: ProviderTokenSource): ChatProvider {
  const keyed = openAiProvider(dispatcher, PROVIDER, azureEndpoint);
  return {
    ...keyed,
    async chatCompletions(call: ChatCall) {
      if (!usesBearerToken(call.target)) return keyed.chatCompletions(call);
      if (!tokens) {
        throw new ServiceUnavailable('This gateway cannot fetch provider tokens.', {
          code: 'provider_token_unavailable',
        });
      }
      const accessToken = await tokens.token(call.target);
      try {
        return await keyed.chatCompletions({ ...call, target: { ...call.target, accessToken } });
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 401) tokens.forget(call.target);
        throw err;
      }
    },
  };
}
