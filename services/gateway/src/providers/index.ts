import type { Dispatcher } from 'undici';
import { mockProvider } from './mock/chat-complete.ts';
import { openAiProvider } from './openai/chat-complete.ts';
import type { ChatProvider } from './types.ts';

/** Every provider adapter the gateway can route to, by the provider id integrations name. */
export function createProviders(dispatcher: Dispatcher): Map<string, ChatProvider> {
  const providers: ChatProvider[] = [
    openAiProvider(dispatcher),
    openAiProvider(dispatcher, 'openai-compatible'),
    mockProvider(),
  ];
  return new Map(providers.map((p) => [p.id, p]));
}
