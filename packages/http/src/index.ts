// `@switchyard/http`: the HTTP server (express app, JSON bodies, errors, readiness) and its limits.
export {
  assertUtf8Body,
  createHttpApp,
  formBody,
  jsonBody,
  listen,
  type ReadinessCheck,
  REQUEST_ID_HEADER,
  storableUrlText,
} from './http.ts';
export { type CorsOptions, corsOptionsFrom } from './cors.ts';
export { serverLimitsFrom } from './server-limits.ts';
export { serveConsole, type ServeConsoleOptions } from './console.ts';
