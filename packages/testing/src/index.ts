export * from './fake-anthropic.ts';
export * from './fake-azure-openai.ts';
export * from './fake-bedrock.ts';
export * from './fake-gemini.ts';
export * from './fake-openai.ts';
export * from './fake-mcp.ts';
export * from './fake-structured.ts';
export * from './service-harness.ts';
export * from './fake-identity-provider.ts';
export * from './fake-oidc-provider.ts';
export { listenOnLoopback } from './fake-server.ts';
export {
  type OtlpReceiver,
  type ReceivedSpan,
  type SpanAttribute,
  startOtlpReceiver,
} from '@switchyard/core/testing';
export * from './all-in-one-process.ts';
