import { defineProvider } from './descriptor.ts';

/** Deterministic answers with no upstream and no account: a first request works out of the box. */
export const mock = defineProvider({
  id: 'mock',
  name: 'Mock provider',
  family: 'mock',
  authKinds: ['none'],
  env: {},
  defaultBaseUrl: undefined,
  prices: { mock: { input: 0, output: 0 } },
});
