import { anthropic } from './anthropic.ts';
import { azureOpenAi } from './azure-openai.ts';
import { bedrock } from './bedrock.ts';
import type { ProviderDescriptor } from './descriptor.ts';
import { google } from './google.ts';
import { mock } from './mock.ts';
import {
  deepSeek,
  fireworksAi,
  groq,
  mistralAi,
  ollama,
  openAiCompatible,
  openRouter,
  togetherAi,
  vllm,
} from './openai-compatible.ts';
import { openAi } from './openai.ts';

/**
 * Every provider an integration may name, one line each. The gateway's adapters and prices,
 * admin's `ai_provider_id` validation and all-in-one's integrations seeded from the
 * environment all read this list; its order is the order admin lists the ids in and
 * all-in-one seeds in.
 */
export const providerRegistry = [
  openAi,
  azureOpenAi,
  anthropic,
  google,
  bedrock,
  groq,
  mistralAi,
  togetherAi,
  deepSeek,
  fireworksAi,
  openRouter,
  ollama,
  vllm,
  openAiCompatible,
  mock,
] as const satisfies readonly ProviderDescriptor[];

export type RegisteredProvider = (typeof providerRegistry)[number];
export type ProviderId = RegisteredProvider['id'];
/** The adapter families: one gateway adapter (and one fake upstream in the tests) each. */
export type ProviderFamily = RegisteredProvider['family'];

export const providerIds = providerRegistry.map((p) => p.id) as [ProviderId, ...ProviderId[]];

const byId = new Map<string, RegisteredProvider>(providerRegistry.map((p) => [p.id, p]));

/** A registered provider's descriptor. */
export function providerDescriptor<Id extends ProviderId>(id: Id): Extract<RegisteredProvider, { id: Id }>;
export function providerDescriptor(id: string): RegisteredProvider | undefined;
export function providerDescriptor(id: string): RegisteredProvider | undefined {
  return byId.get(id);
}
