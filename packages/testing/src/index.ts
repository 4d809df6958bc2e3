export * from './fake-openai.ts';
export * from './service-harness.ts';
