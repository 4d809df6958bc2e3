import type { Dispatcher } from 'undici';
import { providerRegistry, type ProviderFamily, type RegisteredProvider } from '@switchyard/rules';
import { azureOpenAiProvider } from './azure-openai/chat-complete.ts';
import { bedrockProvider } from './bedrock/chat-complete.ts';
import { anthropicProvider } from './anthropic/chat-complete.ts';
import { googleProvider } from './google/chat-complete.ts';
import { mockProvider } from './mock/chat-complete.ts';
import { compatibleProvider } from './openai-compatible/chat-complete.ts';
import { compatibleMember } from './openai-compatible/family.ts';
import { openAiProvider } from './openai/chat-complete.ts';
import type { ProviderTokenSource } from '../upstream/provider-tokens.ts';
import type { ChatProvider } from './types.ts';

/** Makes the adapter of one registered provider of a family. */
export type AdapterFactory = (
  dispatcher: Dispatcher,
  provider: RegisteredProvider,
  tokens: ProviderTokenSource | undefined,
) => ChatProvider;

/**
 * The adapter of each provider family, one folder each here; the providers themselves (ids,
 * prices, default hosts) are in the registry (packages/rules/src/providers). A family
 * added to the registry without an adapter here does not compile.
 */
export const adapterFamilies: Record<ProviderFamily, AdapterFactory> = {
  openai: (dispatcher) => openAiProvider(dispatcher),
  'azure-openai': (dispatcher, _provider, tokens) => azureOpenAiProvider(dispatcher, tokens),
  anthropic: (dispatcher) => anthropicProvider(dispatcher),
  google: (dispatcher) => googleProvider(dispatcher),
  bedrock: (dispatcher) => bedrockProvider(dispatcher),
  'openai-compatible': (dispatcher, provider) => compatibleProvider(dispatcher, compatibleMember(provider)),
  mock: () => mockProvider(),
};

/**
 * Every provider adapter the gateway can route to, by the provider id integrations name.
 * `tokens` fetches the bearer tokens of integrations that authenticate with one.
 */
export function createProviders(
  dispatcher: Dispatcher,
  tokens?: ProviderTokenSource,
): Map<string, ChatProvider> {
  return new Map(
    providerRegistry.map((provider) => [
      provider.id,
      adapterFamilies[provider.family](dispatcher, provider, tokens),
    ]),
  );
}
