import { defineProvider } from './descriptor.ts';

export const anthropic = defineProvider({
  id: 'anthropic',
  name: 'Anthropic',
  family: 'anthropic',
  authKinds: ['x-api-key'],
  env: {
    apiKey: 'ANTHROPIC_API_KEY',
    baseUrl: 'ANTHROPIC_BASE_URL',
    baseUrlNote: ' (as the Anthropic SDK takes it: `/v1` is added when missing)',
    /** ANTHROPIC_BASE_URL follows the Anthropic SDK's convention (the host, without `/v1`). */
    apiRoot(baseUrl: string): string {
      const trimmed = baseUrl.replace(/\/+$/, '');
      return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
    },
  },
  defaultBaseUrl: 'https://api.anthropic.com/v1',
  prices: {
    'claude-3-5-haiku': { input: 0.8, output: 4, cachedInput: 0.08, cacheWriteInput: 1 },
    'claude-3-5-sonnet': { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 },
    'claude-3-7-sonnet': { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 },
    'claude-sonnet-4': { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 },
    'claude-3-opus': { input: 15, output: 75, cachedInput: 1.5, cacheWriteInput: 18.75 },
    'claude-opus-4': { input: 15, output: 75, cachedInput: 1.5, cacheWriteInput: 18.75 },
    'claude-3-haiku': { input: 0.25, output: 1.25, cachedInput: 0.03, cacheWriteInput: 0.3 },
  },
});
