import { providerDescriptor } from '@switchyard/rules';
import type { ProviderTarget } from '../types.ts';

export const ANTHROPIC_BASE_URL = providerDescriptor('anthropic').defaultBaseUrl;
export const ANTHROPIC_VERSION = '2023-06-01';

export function messagesUrl(target: ProviderTarget): string {
  return `${(target.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '')}/messages`;
}

/** The integration's own headers may add `anthropic-beta` flags or pin another `anthropic-version`. */
export function headers(target: ProviderTarget): Record<string, string> {
  return {
    'anthropic-version': ANTHROPIC_VERSION,
    ...target.headers,
    'content-type': 'application/json',
    ...(target.apiKey ? { 'x-api-key': target.apiKey } : {}),
  };
}
