// `@switchyard/core`: errors, configuration, request context, logging, crypto, metrics, lifecycle,
// input validation, naming and the small caches every other package uses.
export {
  baseEnvSchema,
  bodyLimitEnv,
  type BodyLimits,
  bodyLimitsFrom,
  callDeadlineDefaults,
  callDeadlineEnv,
  type CallDeadlines,
  ConfigError,
  corsEnv,
  env,
  httpServerEnv,
  listenEnv,
  loadConfig,
  sharedEnv,
  encryptionKeyMeta,
  tracingEnv,
  type TracingConfig,
} from './config.ts';
export { requestContext } from './context.ts';
export { randomToken, safeEqual, SecretBox, sha256Hex } from './crypto.ts';
export {
  AppError,
  BadRequest,
  Conflict,
  type ErrorBody,
  Forbidden,
  GuardrailDenied,
  InternalError,
  NotFound,
  NotImplemented,
  PayloadTooLarge,
  postgresErrorCode,
  RequestTimeout,
  ServiceUnavailable,
  toAppError,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  UpstreamError,
} from './errors.ts';
export { HEADER_TOKEN, headerNameProblem } from './headers.ts';
export { Lifecycle } from './lifecycle.ts';
export { createLogger, type Logger, maskSecret } from './logger.ts';
export {
  counterOnce,
  createMetrics,
  histogramOnce,
  labelRoute,
  labelledRoute,
  statusClass,
  type Metrics,
} from './metrics.ts';
export { camelCase, type CamelCase, camelKeys, type CamelKeys } from './naming.ts';
export { RemoteCache, type RemoteCacheOptions } from './remote-cache.ts';
export {
  activeTraceFields,
  type Attributes,
  bindToContext,
  type Context,
  extractTraceContext,
  failSpan,
  flushTraces,
  injectTraceContext,
  requestTraceId,
  runInContext,
  type Span,
  SpanKind,
  SpanStatusCode,
  startSpan,
  startTracing,
  traceIdOf,
  traceIdOfTraceparent,
  tracer,
  tracingConfigFrom,
  type Tracing,
  tracingEnabled,
  withRequestId,
  withTraceHeaders,
} from './tracing.ts';
export {
  assertStorableInput,
  httpUrl,
  listBody,
  pageQuery,
  type PageQuery,
  paramPath,
  parseInput,
  parsePage,
} from './validation.ts';
