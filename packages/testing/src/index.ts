export * from './fake-openai.ts';
