import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import {
  Lifecycle,
  SecretBox,
  baseEnvSchema,
  callDeadlineEnv,
  corsEnv,
  createLogger,
  createMetrics,
  encryptionKeyMeta,
  env,
  httpServerEnv,
  listenEnv,
  loadConfig,
  randomToken,
  sharedEnv,
  startTracing,
  tracingEnv,
  type Logger,
} from '@switchyard/core';
import { corsOptionsFrom, createHttpApp, listen, serveConsole, serverLimitsFrom } from '@switchyard/http';
import {
  EventJournal,
  MemoryEventBus,
  MemoryKeyValueStore,
  startEmbeddedPostgres,
} from '@switchyard/adapters';
import { assembleInProcess, serviceForPath } from '@switchyard/runtime';
import { seedEnvSchema, seededBaseUrlHosts, type Admin } from '@switchyard/admin';
import { bootstrapEnvSchema, type ControlPlane } from '@switchyard/control-plane';
import { allServices } from './services.ts';
import { consoleDirEnv, defaultConsoleDir } from './console-dir.ts';
import { printWelcome } from './welcome.ts';

const configSchema = z.object({
  ...listenEnv('127.0.0.1', 8787),
  LOG_LEVEL: baseEnvSchema.shape.LOG_LEVEL,
  SWITCHYARD_DATA_DIR: env
    .string('.data/switchyard')
    .meta({ description: 'where all-in-one keeps its state' }),
  SWITCHYARD_ADMIN_KEY: bootstrapEnvSchema.shape.SWITCHYARD_ADMIN_KEY,
  SWITCHYARD_ENCRYPTION_KEY: env.optionalString().meta(encryptionKeyMeta()),
  CONSOLE_DIR: consoleDirEnv,
  SHUTDOWN_GRACE_MS: baseEnvSchema.shape.SHUTDOWN_GRACE_MS,
  EMBEDDED_DB_TRANSACTION_TIMEOUT_MS: env.int(5_000, 100, 600_000).meta({
    description:
      'longest one connection may hold the embedded database inside a transaction; past it the transaction is rolled back and the request answered 503 (`database_timeout`)',
  }),
  EMBEDDED_DB_WAIT_TIMEOUT_MS: env.int(15_000, 100, 600_000).meta({
    description:
      'longest a statement may wait for the embedded database (it serves one statement or transaction at a time); past it: 503 (`database_timeout`)',
  }),
  HEADER_PREFIX: sharedEnv.HEADER_PREFIX,
  TRUST_PROXY: baseEnvSchema.shape.TRUST_PROXY,
  ...httpServerEnv,
  ...corsEnv,
  ...callDeadlineEnv,
  ...tracingEnv,
});

/**
 * Every setting all-in-one acts on: its own, then those of the services it runs (a variable
 * both read is shown as all-in-one reads it: it hands the services the encryption key it
 * generates), then the provider keys it seeds integrations from. The configuration table lists
 * them (scripts/config-table.ts).
 */
export const allInOneSettings: z.ZodObject = (() => {
  const shape: Record<string, z.ZodType> = {};
  for (const schema of [configSchema, ...allServices.flatMap((s) => s.settings ?? []), seedEnvSchema]) {
    for (const [name, field] of Object.entries(schema.shape)) shape[name] ??= field;
  }
  return z.object(shape);
})();

/** A path of a service's API: never answered with the console's index.html. */
const isApiPath = (path: string) => serviceForPath(path) !== undefined;

/** The encryption key for secrets at rest: from the environment, else created once in the data folder. */
function encryptionKey(dataDir: string, fromEnv: string | undefined): string {
  if (fromEnv) return fromEnv;
  const file = join(dataDir, 'encryption.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const key = SecretBox.generateKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}

/** Events of acknowledged writes outlive the process: those not yet consumed are delivered on the next start. */
function openEventJournal(path: string, logger: Logger): EventJournal {
  const journal = EventJournal.open(path, {
    onError: (err) => logger.error('could not write the event journal', { path, error: String(err) }),
  });
  if (journal.skippedBytes > 0) {
    logger.warn('dropped the end of the event journal that a crash cut short', {
      path,
      bytes: journal.skippedBytes,
    });
  }
  return journal;
}

/**
 * Every service in one process, each behind its own gRPC server on loopback, on embedded
 * stand-ins: PGlite for Postgres, an in-process bus for Kafka (journaled in the data folder),
 * memory for Redis.
 */
export async function runAllInOne(processEnv = process.env): Promise<void> {
  const config = loadConfig(configSchema, processEnv);
  const dataDir = resolve(config.SWITCHYARD_DATA_DIR);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const logger = createLogger('all-in-one', config.LOG_LEVEL);
  const metrics = createMetrics();
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_GRACE_MS);
  lifecycle.handleSignals();
  // Stopped last, so that the spans of the requests drained on the way out are exported.
  const tracing = await startTracing(config, 'all-in-one', logger);
  lifecycle.onStop('tracing', () => tracing.shutdown());

  const postgres = await startEmbeddedPostgres({
    dataDir: join(dataDir, 'postgres'),
    transactionTimeoutMs: config.EMBEDDED_DB_TRANSACTION_TIMEOUT_MS,
    waitTimeoutMs: config.EMBEDDED_DB_WAIT_TIMEOUT_MS,
  });
  lifecycle.onStop('embedded postgres', () => postgres.close());
  const bus = new MemoryEventBus({ journal: openEventJournal(join(dataDir, 'events.journal'), logger) });
  const kv = new MemoryKeyValueStore();
  lifecycle.onStop('memory store', () => kv.close());
  const security = { authToken: randomToken(24) };
  const serviceEnv = {
    ...processEnv,
    SWITCHYARD_ENCRYPTION_KEY: encryptionKey(dataDir, config.SWITCHYARD_ENCRYPTION_KEY),
    // Log exports are kept in the data folder unless said otherwise.
    EXPORT_DIR: processEnv.EXPORT_DIR || join(dataDir, 'exports'),
    TRUSTED_CUSTOM_HOSTS: [processEnv.TRUSTED_CUSTOM_HOSTS, ...seededBaseUrlHosts(processEnv)]
      .filter(Boolean)
      .join(','),
  };

  const services = await assembleInProcess({
    definitions: allServices,
    postgres: postgres.connector,
    bus,
    kv,
    env: serviceEnv,
    security,
    metrics,
    loggerFor: (service) => createLogger(service, config.LOG_LEVEL),
    onStop: (name, close) => lifecycle.onStop(name, close),
    deadlines: config,
  });
  lifecycle.onStop('event bus', () => bus.close());

  const controlPlane = services.instances.get('control-plane') as ControlPlane;
  const bootstrap = await controlPlane.bootstrap({
    adminKey: config.SWITCHYARD_ADMIN_KEY,
    withWorkspaceKey: true,
  });
  const admin = services.instances.get('admin') as Admin;
  await admin.ensureMockIntegration(bootstrap.organisation.id);
  const seeded = await admin.seedIntegrationsFromEnvironment(bootstrap.organisation.id);
  await services.start();

  const app = createHttpApp({
    service: 'all-in-one',
    logger,
    metrics,
    readiness: services.readiness,
    isStopping: () => lifecycle.isStopping,
    routers: [
      { router: services.router },
      // Every path no service takes (the routing table's last route): the console.
      { router: serveConsole(config.CONSOLE_DIR ?? defaultConsoleDir(), { isApiPath }) },
    ],
    trustProxy: config.TRUST_PROXY,
    cors: corsOptionsFrom(config),
  });
  const http = await listen(app, config.HOST, config.PORT, serverLimitsFrom(config));
  lifecycle.onStop('event bus flush', () => bus.flush(config.SHUTDOWN_GRACE_MS));
  lifecycle.onStop('http server', http.close);
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  printWelcome({
    consoleUrl: `http://${host.includes(':') ? `[${host}]` : host}:${http.port}/`,
    baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`,
    dataDir,
    bootstrap,
    seededIntegrations: seeded,
    adminKeyFromEnv: Boolean(config.SWITCHYARD_ADMIN_KEY),
    headerPrefix: config.HEADER_PREFIX,
  });
}
