import type { ProviderTarget } from '../types.ts';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

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
