import type { RequestHandler } from 'express';
import type { DataSource } from 'typeorm';
import { attachAuditSink, type AuditSink } from '@switchyard/access';
import { serviceAuditSink } from './audit.ts';
import {
  checkDataSource,
  createDataSource,
  type EventBus,
  type KeyValueStore,
  migrate,
  type PostgresConnector,
} from '@switchyard/adapters';
import { callDeadlineDefaults, type CallDeadlines, type Logger, type Metrics } from '@switchyard/core';
import { GrpcServer, type GrpcSecurity, type RegisteredMethod } from './grpc.ts';
import type { ReadinessCheck } from '@switchyard/http';
import { openApiDocument, serveDescription } from './openapi.ts';
import { serviceForPath, type ServiceName } from './routes.ts';
import {
  clientTargets,
  createClients,
  type ClientName,
  type ServiceDefinition,
  type ServiceInstance,
} from './runtime.ts';
import type { Resolver } from '@switchyard/rules';

export interface InProcessOptions {
  /** In dependency order: a service's gRPC peers come before it. */
  definitions: ServiceDefinition[];
  /** Every service with a database gets its own schema here (migrated on assembly). */
  postgres: PostgresConnector | undefined;
  bus: EventBus;
  kv: KeyValueStore;
  env: NodeJS.ProcessEnv;
  security: GrpcSecurity;
  metrics: Metrics;
  loggerFor(service: ServiceName): Logger;
  /** Registers a shutdown step; steps run in reverse order of registration. */
  onStop(name: string, close: () => Promise<void> | void): void;
  /** gRPC addresses for clients whose service is not assembled here. */
  clientAddresses?: Partial<Record<ClientName, string>>;
  poolSize?: number;
  /** Handed to every service (see ServiceDeps.resolve). */
  resolve?: Resolver;
  /** Deadlines of database queries and gRPC calls (the settings' defaults when absent). */
  deadlines?: CallDeadlines;
}

export interface InProcessServices {
  instances: Map<ServiceName, ServiceInstance>;
  databases: Map<ServiceName, DataSource>;
  grpcAddresses: Map<ServiceName, string>;
  /** What each service's gRPC server serves, and to which calling services. */
  grpcMethods: Map<ServiceName, readonly RegisteredMethod[]>;
  readiness: Record<string, ReadinessCheck>;
  /** Routes each request to its service's router by the shared path-prefix table. */
  router: RequestHandler;
  addressOf(name: ClientName): string;
  /** Runs every service's start-up work, in order. */
  start(): Promise<void>;
}

/**
 * Several services in one process, each behind its own gRPC server on loopback and
 * talking to the others only through it, as they would across pods.
 */
export async function assembleInProcess(options: InProcessOptions): Promise<InProcessServices> {
  const instances = new Map<ServiceName, ServiceInstance>();
  const databases = new Map<ServiceName, DataSource>();
  const grpcAddresses = new Map<ServiceName, string>();
  const grpcMethods = new Map<ServiceName, readonly RegisteredMethod[]>();
  const auditSinks = new Map<ServiceName, AuditSink | undefined>();
  const readiness: Record<string, ReadinessCheck> = {};
  const deadlines = options.deadlines ?? callDeadlineDefaults;
  /** Undefined while the client's service is not assembled yet: its clients dial on first use. */
  const addressOf = (name: ClientName): string | undefined =>
    options.clientAddresses?.[name] ?? grpcAddresses.get(clientTargets[name].service);

  for (const definition of options.definitions) {
    const logger = options.loggerFor(definition.name);
    let db: DataSource | undefined;
    if (definition.database) {
      if (!options.postgres) throw new Error(`${definition.name} needs a database`);
      const dataSource = createDataSource({
        ...options.postgres,
        poolSize: options.poolSize ?? 4,
        queryTimeoutMs: deadlines.DB_QUERY_TIMEOUT_MS,
        connectTimeoutMs: deadlines.DB_CONNECT_TIMEOUT_MS,
        logger,
        ...definition.database,
      });
      options.onStop(`${definition.name} database`, () =>
        dataSource.isInitialized ? dataSource.destroy() : undefined,
      );
      await migrate(dataSource, definition.database.schema, logger);
      databases.set(definition.name, dataSource);
      readiness[`${definition.name}.database`] = () => checkDataSource(dataSource);
      db = dataSource;
    }
    // Each service's clients speak as that service, so the caller rules hold here as across pods.
    const clientSet = createClients(
      definition.clients ?? [],
      addressOf,
      options.security,
      definition.name,
      deadlines.GRPC_DEADLINE_MS,
      definition.toleratesOutageOf,
    );
    options.onStop(`${definition.name} clients`, () => clientSet.close());
    const instance = await definition.create({
      logger,
      metrics: options.metrics,
      env: { ...options.env },
      db,
      bus: definition.bus ? options.bus : undefined,
      kv: definition.kv ? options.kv : undefined,
      clients: clientSet.clients,
      resolve: options.resolve,
    });
    options.onStop(definition.name, () => instance.stop?.());
    instances.set(definition.name, instance);
    if (instance.router) {
      auditSinks.set(
        definition.name,
        serviceAuditSink(definition.name, instance.routes, definition.bus ? options.bus : undefined, logger),
      );
    }
    for (const [name, check] of Object.entries(instance.readiness ?? {})) {
      readiness[`${definition.name}.${name}`] = check;
    }
    if (instance.grpc) {
      const server = new GrpcServer({ logger, security: options.security });
      instance.grpc(server);
      const port = await server.listen('127.0.0.1', 0);
      grpcAddresses.set(definition.name, `127.0.0.1:${port}`);
      grpcMethods.set(definition.name, server.methods());
      options.onStop(`${definition.name} grpc`, () => server.close());
    }
  }

  // The one entry point serves one description: every service's routes, as the ingress's docs/openapi.json.
  const description = serveDescription(() =>
    openApiDocument(
      options.definitions.map(({ name }) => ({ service: name, routes: instances.get(name)?.routes ?? [] })),
      { ingress: true },
    ),
  );
  const route: RequestHandler = (req, res, next) => {
    const service = serviceForPath(req.path);
    const serviceRouter = service ? instances.get(service)?.router : undefined;
    if (serviceRouter) {
      attachAuditSink(req, auditSinks.get(service!));
      serviceRouter(req, res, next);
    } else next();
  };
  const router: RequestHandler = (req, res, next) => description(req, res, () => route(req, res, next));
  return {
    instances,
    databases,
    grpcAddresses,
    grpcMethods,
    readiness,
    router,
    addressOf(name) {
      const address = addressOf(name);
      if (!address)
        throw new Error(
          `no gRPC server for the ${name} client: ${clientTargets[name].service} is not assembled`,
        );
      return address;
    },
    async start() {
      for (const instance of instances.values()) await instance.start?.();
    },
  };
}
