import { defineProvider } from './descriptor.ts';

export const openAi = defineProvider({
  id: 'openai',
  name: 'OpenAI',
  family: 'openai',
  authKinds: ['bearer'],
  env: { apiKey: 'OPENAI_API_KEY', baseUrl: 'OPENAI_BASE_URL' },
  defaultBaseUrl: 'https://api.openai.com/v1',
  prices: {
    'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
    'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
    'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
    'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
    'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
    'gpt-4-turbo': { input: 10, output: 30 },
    'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
    o1: { input: 15, output: 60, cachedInput: 7.5 },
    'o1-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
    'o3-mini': { input: 1.1, output: 4.4, cachedInput: 0.55 },
    'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
    'text-embedding-3-small': { input: 0.02, output: 0 },
    'text-embedding-3-large': { input: 0.13, output: 0 },
  },
});
