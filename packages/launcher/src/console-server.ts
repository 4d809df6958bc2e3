import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import {
  Lifecycle,
  baseEnvSchema,
  createLogger,
  createMetrics,
  httpServerEnv,
  listenEnv,
  loadConfig,
} from '@switchyard/core';
import { createHttpApp, listen, serveConsole, serverLimitsFrom } from '@switchyard/http';
import { serviceForPath } from '@switchyard/runtime';
import { consoleDirEnv, defaultConsoleDir } from './console-dir.ts';

/** What `switchyard console` reads from its environment (the configuration table lists it). */
export const consoleSettings = z.object({
  ...listenEnv('0.0.0.0', 8080),
  LOG_LEVEL: baseEnvSchema.shape.LOG_LEVEL,
  CONSOLE_DIR: consoleDirEnv,
  SHUTDOWN_GRACE_MS: baseEnvSchema.shape.SHUTDOWN_GRACE_MS,
  TRUST_PROXY: baseEnvSchema.shape.TRUST_PROXY,
  ...httpServerEnv,
});

export interface ConsoleServer {
  port: number;
  close: () => Promise<void>;
}

/**
 * Serves the console's static files only (the APIs are other services, behind the same ingress),
 * with /healthz, /readyz (ready once the built files are there) and /metrics.
 */
export async function startConsoleServer(
  processEnv: NodeJS.ProcessEnv = process.env,
  lifecycle?: Lifecycle,
): Promise<ConsoleServer> {
  const config = loadConfig(consoleSettings, processEnv);
  const dir = resolve(config.CONSOLE_DIR ?? defaultConsoleDir());
  const logger = createLogger('console', config.LOG_LEVEL);
  // serveConsole reads index.html once, at start: the process is ready only if it was there.
  const indexFile = join(dir, 'index.html');
  const built = existsSync(indexFile);
  if (!built) logger.warn('the console is not built: its index.html is missing', { dir });
  const app = createHttpApp({
    service: 'console',
    logger,
    metrics: createMetrics(),
    readiness: {
      files: async () => {
        if (!built) throw new Error(`the console is not built: ${indexFile} is missing`);
      },
    },
    isStopping: () => lifecycle?.isStopping ?? false,
    // A path of a service's API (the ingress sends those elsewhere) gets the JSON 404, never the app.
    routers: [{ router: serveConsole(dir, { isApiPath: (path) => serviceForPath(path) !== undefined }) }],
    trustProxy: config.TRUST_PROXY,
  });
  const http = await listen(app, config.HOST, config.PORT, serverLimitsFrom(config));
  logger.info('serving the console', { dir, host: config.HOST, port: http.port });
  return { port: http.port, close: http.close };
}

/** `switchyard console`: the server above until SIGTERM or SIGINT, then a graceful stop. */
export async function runConsole(processEnv: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(consoleSettings, processEnv);
  const lifecycle = new Lifecycle(createLogger('console', config.LOG_LEVEL), config.SHUTDOWN_GRACE_MS);
  lifecycle.handleSignals();
  const server = await startConsoleServer(processEnv, lifecycle);
  lifecycle.onStop('http server', server.close);
}
