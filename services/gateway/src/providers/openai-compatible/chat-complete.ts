import { BadRequest } from '@switchyard/core';
import type { Dispatcher } from 'undici';
import { headers, type OpenAiEndpoint } from '../openai/api.ts';
import { openAiProvider } from '../openai/chat-complete.ts';
import type { ChatProvider, ProviderTarget } from '../types.ts';
import { compatibleFamily, type CompatibleProvider } from './family.ts';

export function compatibleBaseUrl(provider: CompatibleProvider, target: ProviderTarget): string {
  const url = target.baseUrl ?? provider.defaultBaseUrl;
  if (!url) {
    throw new BadRequest(
      `The ${provider.id} integration needs a custom_host: ${provider.id} has no default address.`,
      { param: 'custom_host', code: 'provider_setting_missing' },
    );
  }
  return url.replace(/\/+$/, '');
}

export function compatibleEndpoint(provider: CompatibleProvider): OpenAiEndpoint {
  return {
    url: (call) => `${compatibleBaseUrl(provider, call.target)}/chat/completions`,
    headers,
    // The other OpenAI-format operations a host offers (embeddings, models, ...) go to the same root.
    baseUrl: (target) => compatibleBaseUrl(provider, target),
    body(call) {
      const adapted = provider.adaptRequest?.(call.body);
      return adapted ? JSON.stringify(adapted) : (call.rawBody ?? JSON.stringify(call.body));
    },
  };
}

/** The OpenAI pass-through adapter of one member of the family, naming itself in errors. */
export function compatibleProvider(dispatcher: Dispatcher, provider: CompatibleProvider): ChatProvider {
  return openAiProvider(dispatcher, provider.id, compatibleEndpoint(provider));
}

/** One adapter per member of the family. */
export function compatibleProviders(dispatcher: Dispatcher): ChatProvider[] {
  return compatibleFamily.map((provider) => compatibleProvider(dispatcher, provider));
}
