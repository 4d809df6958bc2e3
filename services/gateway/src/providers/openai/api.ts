import { providerDescriptor } from '@switchyard/rules';
import type { ChatCall, ProviderTarget } from '../types.ts';

export const OPENAI_BASE_URL = providerDescriptor('openai').defaultBaseUrl;

export function baseUrl(target: ProviderTarget): string {
  return (target.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, '');
}

export function headers(target: ProviderTarget): Record<string, string> {
  return {
    ...target.headers,
    'content-type': 'application/json',
    ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
  };
}

/** Where an OpenAI-format request goes and what it carries: hosts that speak the format differ only here. */
export interface OpenAiEndpoint {
  url(call: ChatCall): string;
  headers(target: ProviderTarget): Record<string, string>;
  /** The bytes to send; by default the client's own, else the parsed body re-serialised. */
  body?(call: ChatCall): Buffer | string;
  /** The `/v1` root for other operations; hosts without one support chat completions only. */
  baseUrl?(target: ProviderTarget): string;
}

export const openAiEndpoint: OpenAiEndpoint = {
  url: (call) => `${baseUrl(call.target)}/chat/completions`,
  headers,
  baseUrl,
};
