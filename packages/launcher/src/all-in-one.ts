import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Router } from 'express';
import { z } from 'zod';
import {
  GrpcServer,
  Lifecycle,
  MemoryEventBus,
  MemoryKeyValueStore,
  SecretBox,
  checkDataSource,
  createClients,
  createDataSource,
  createHttpApp,
  createLogger,
  createMetrics,
  env,
  listen,
  loadConfig,
  migrate,
  randomToken,
  serviceForPath,
  type ClientName,
  type ReadinessCheck,
  type ServiceInstance,
  type ServiceName,
} from '@switchyard/platform';
import type { Admin } from '@switchyard/admin';
import type { ControlPlane } from '@switchyard/control-plane';
import { allServices } from './services.ts';
import { printWelcome } from './welcome.ts';

const configSchema = z.object({
  HOST: env.string('127.0.0.1'),
  PORT: env.port(8787),
  LOG_LEVEL: env.logLevel(),
  SWITCHYARD_DATA_DIR: env.string('.data/switchyard'),
  SWITCHYARD_ADMIN_KEY: env.optionalString(),
  SWITCHYARD_ENCRYPTION_KEY: env.optionalString(),
  SHUTDOWN_GRACE_MS: env.int(10_000, 0, 600_000),
  HEADER_PREFIX: env.string('x-vendor-'),
});

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

/**
 * Every service in one process, each behind its own gRPC server on loopback, on embedded
 * stand-ins: PGlite for Postgres, an in-process bus for Kafka, memory for Redis.
 */
export async function runAllInOne(processEnv = process.env): Promise<void> {
  const config = loadConfig(configSchema, processEnv);
  const dataDir = resolve(config.SWITCHYARD_DATA_DIR);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const logger = createLogger('all-in-one', config.LOG_LEVEL);
  const metrics = createMetrics();
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_GRACE_MS);
  lifecycle.handleSignals();

  const { startEmbeddedPostgres } = await import('@switchyard/platform');
  const postgres = await startEmbeddedPostgres(join(dataDir, 'postgres'));
  lifecycle.onStop('embedded postgres', () => postgres.close());
  const bus = new MemoryEventBus();
  const kv = new MemoryKeyValueStore();
  lifecycle.onStop('memory store', () => kv.close());
  const security = { authToken: randomToken(24) };
  const serviceEnv = {
    ...processEnv,
    SWITCHYARD_ENCRYPTION_KEY: encryptionKey(dataDir, config.SWITCHYARD_ENCRYPTION_KEY),
  };

  const grpcAddresses = new Map<ServiceName, string>();
  const routers = new Map<ServiceName, Router>();
  const instances = new Map<ServiceName, ServiceInstance>();
  const readiness: Record<string, ReadinessCheck> = {};
  for (const definition of allServices) {
    const serviceLogger = createLogger(definition.name, config.LOG_LEVEL);
    let db;
    if (definition.database) {
      db = createDataSource({
        url: postgres.url,
        poolSize: 4,
        logger: serviceLogger,
        ...definition.database,
      });
      await migrate(db, definition.database.schema, serviceLogger);
      const dataSource = db;
      lifecycle.onStop(`${definition.name} database`, () => dataSource.destroy());
      readiness[`${definition.name}.database`] = () => checkDataSource(dataSource);
    }
    const clientSet = createClients(
      definition.clients ?? [],
      (name: ClientName) => {
        const target = { identity: 'control-plane', integrations: 'admin', policy: 'policy' }[
          name
        ] as ServiceName;
        return grpcAddresses.get(target)!;
      },
      security,
    );
    lifecycle.onStop(`${definition.name} clients`, () => clientSet.close());
    const instance = await definition.create({
      logger: serviceLogger,
      metrics,
      env: serviceEnv,
      db,
      bus: definition.bus ? bus : undefined,
      kv: definition.kv ? kv : undefined,
      clients: clientSet.clients,
    });
    lifecycle.onStop(definition.name, () => instance.stop?.());
    instances.set(definition.name, instance);
    if (instance.router) routers.set(definition.name, instance.router);
    if (instance.grpc) {
      const server = new GrpcServer({ logger: serviceLogger, security });
      instance.grpc(server);
      const port = await server.listen('127.0.0.1', 0);
      grpcAddresses.set(definition.name, `127.0.0.1:${port}`);
      lifecycle.onStop(`${definition.name} grpc`, () => server.close());
    }
    for (const [name, check] of Object.entries(instance.readiness ?? {}))
      readiness[`${definition.name}.${name}`] = check;
  }
  lifecycle.onStop('event bus', () => bus.close());

  const controlPlane = instances.get('control-plane') as ControlPlane;
  const bootstrap = await controlPlane.bootstrap({
    adminKey: config.SWITCHYARD_ADMIN_KEY,
    withWorkspaceKey: true,
  });
  const seeded = await (instances.get('admin') as Admin).seedIntegrationsFromEnvironment(
    bootstrap.organisation.id,
  );
  for (const instance of instances.values()) await instance.start?.();

  const app = createHttpApp({
    service: 'all-in-one',
    logger,
    metrics,
    readiness,
    isStopping: () => lifecycle.isStopping,
    routers: [
      {
        router: (req, res, next) => {
          const service = serviceForPath(req.path);
          const router = service ? routers.get(service) : undefined;
          if (router) router(req, res, next);
          else next();
        },
      },
    ],
  });
  const http = await listen(app, config.HOST, config.PORT);
  lifecycle.onStop('event bus flush', () => bus.flush(config.SHUTDOWN_GRACE_MS));
  lifecycle.onStop('http server', http.close);
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  printWelcome({
    baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`,
    dataDir,
    bootstrap,
    seededIntegrations: seeded,
    adminKeyFromEnv: Boolean(config.SWITCHYARD_ADMIN_KEY),
    headerPrefix: config.HEADER_PREFIX,
  });
}
