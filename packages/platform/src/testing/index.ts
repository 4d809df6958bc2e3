// `@switchyard/platform/testing`: the test helpers other packages' tests use. Platform's own
// tests import the modules beside this one directly.
export { captureLogger, settleLogs } from './logger.ts';
export { requireServiceEnv, uniqueSuffix } from './services.ts';
