// `@switchyard/core/testing`: the test helpers other packages' tests use (a captured logger, the
// environment of a test's backing services, a TCP relay to cut connections, waiting helpers, a
// stand-in OpenTelemetry collector).
export { type CapturedLogger, captureLogger, settleLogs } from './logger.ts';
export { TcpRelay } from './relay.ts';
export { requireServiceEnv, uniqueSuffix } from './services.ts';
export { deferred, eventually, sleep, timed } from './wait.ts';
export {
  type OtlpReceiver,
  type ReceivedSpan,
  type SpanAttribute,
  startOtlpReceiver,
} from './otlp-receiver.ts';
