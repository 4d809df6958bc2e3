import { defineProvider } from './descriptor.ts';

export const google = defineProvider({
  id: 'google',
  name: 'Google Gemini',
  family: 'google',
  authKinds: ['x-goog-api-key'],
  env: { apiKey: 'GEMINI_API_KEY' },
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  prices: {
    'gemini-1.5-flash': { input: 0.075, output: 0.3 },
    'gemini-1.5-pro': { input: 1.25, output: 5 },
    'gemini-2.0-flash': { input: 0.1, output: 0.4, cachedInput: 0.025 },
    'gemini-2.5-flash': { input: 0.3, output: 2.5, cachedInput: 0.075 },
    'gemini-2.5-pro': { input: 1.25, output: 10, cachedInput: 0.31 },
  },
});
