import type { Dispatcher } from 'undici';
import { azureOpenAiProvider } from './azure-openai/chat-complete.ts';
import { bedrockProvider } from './bedrock/chat-complete.ts';
import { anthropicProvider } from './anthropic/chat-complete.ts';
import { googleProvider } from './google/chat-complete.ts';
import { mockProvider } from './mock/chat-complete.ts';
import { compatibleProviders } from './openai-compatible/chat-complete.ts';
import { openAiProvider } from './openai/chat-complete.ts';
import type { ChatProvider } from './types.ts';

/** Every provider adapter the gateway can route to, by the provider id integrations name. */
export function createProviders(dispatcher: Dispatcher): Map<string, ChatProvider> {
  const providers: ChatProvider[] = [
    openAiProvider(dispatcher),
    azureOpenAiProvider(dispatcher),
    bedrockProvider(dispatcher),
    ...compatibleProviders(dispatcher),
    mockProvider(),
    anthropicProvider(dispatcher),
    googleProvider(dispatcher),
  ];
  return new Map(providers.map((p) => [p.id, p]));
}
