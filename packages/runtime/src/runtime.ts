import { setFlagsFromString } from 'node:v8';
import type { RequestHandler, Router } from 'express';
import { auditTrail } from '@switchyard/access';
import { serviceAuditSink } from './audit.ts';
import type { DataSource, EntitySchema, MigrationInterface } from 'typeorm';
import { z } from 'zod';
import { admin, batches, configs, guardrails, identity, mcp, policy, prompts } from '@switchyard/proto';
import {
  checkDataSource,
  createDataSource,
  type EventBus,
  KafkaEventBus,
  type KeyValueStore,
  migrate,
  RedisKeyValueStore,
} from '@switchyard/adapters';
import {
  baseEnvSchema,
  callDeadlineDefaults,
  createLogger,
  createMetrics,
  env,
  Lifecycle,
  loadConfig,
  type Logger,
  type Metrics,
  sharedEnv,
  startTracing,
} from '@switchyard/core';
import {
  checkCallerIdentity,
  createGrpcClient,
  checkGrpcHealth,
  GrpcServer,
  type AnyService,
  type GrpcClientOptions,
  type GrpcSecurity,
  type ServiceClient,
} from './grpc.ts';
import {
  corsOptionsFrom,
  createHttpApp,
  listen,
  type ReadinessCheck,
  serverLimitsFrom,
} from '@switchyard/http';
import { serveDescription, type OpenApiDocument } from './openapi.ts';
import type { DeclaredRoute, ScopedRouter } from './scoped-router.ts';
import type { ServiceName } from './routes.ts';
import type { Resolver } from '@switchyard/rules';

export interface Clients {
  identity: ServiceClient<typeof identity.IdentityService>;
  ssoSessions: ServiceClient<typeof identity.SsoSessionService>;
  integrations: ServiceClient<typeof admin.IntegrationService>;
  organisationSettings: ServiceClient<typeof admin.OrganisationSettingsService>;
  deployments: ServiceClient<typeof admin.DeploymentService>;
  configs: ServiceClient<typeof configs.ConfigService>;
  policy: ServiceClient<typeof policy.PolicyService>;
  usageLedger: ServiceClient<typeof policy.UsageLedgerService>;
  policyDirectory: ServiceClient<typeof policy.PolicyDirectoryService>;
  guardrailDirectory: ServiceClient<typeof guardrails.GuardrailDirectoryService>;
  mcpDirectory: ServiceClient<typeof mcp.McpDirectoryService>;
  promptDirectory: ServiceClient<typeof prompts.PromptDirectoryService>;
  batchRecords: ServiceClient<typeof batches.BatchRecordService>;
  secretReferences: ServiceClient<typeof admin.SecretReferenceService>;
}
export type ClientName = keyof Clients;

/** Which service serves each client, and the variable holding its address in distributed mode. */
export const clientTargets: Record<ClientName, { service: ServiceName; addressVariable: string }> = {
  identity: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  ssoSessions: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  integrations: { service: 'admin', addressVariable: 'ADMIN_GRPC_ADDRESS' },
  organisationSettings: { service: 'admin', addressVariable: 'ADMIN_GRPC_ADDRESS' },
  deployments: { service: 'admin', addressVariable: 'ADMIN_GRPC_ADDRESS' },
  configs: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  policy: { service: 'policy', addressVariable: 'POLICY_GRPC_ADDRESS' },
  usageLedger: { service: 'policy', addressVariable: 'POLICY_GRPC_ADDRESS' },
  policyDirectory: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  guardrailDirectory: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  mcpDirectory: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  promptDirectory: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  batchRecords: { service: 'control-plane', addressVariable: 'CONTROL_PLANE_GRPC_ADDRESS' },
  secretReferences: { service: 'admin', addressVariable: 'ADMIN_GRPC_ADDRESS' },
};

const clientServices = {
  identity: identity.IdentityService,
  ssoSessions: identity.SsoSessionService,
  integrations: admin.IntegrationService,
  organisationSettings: admin.OrganisationSettingsService,
  deployments: admin.DeploymentService,
  configs: configs.ConfigService,
  policy: policy.PolicyService,
  usageLedger: policy.UsageLedgerService,
  policyDirectory: policy.PolicyDirectoryService,
  guardrailDirectory: guardrails.GuardrailDirectoryService,
  mcpDirectory: mcp.McpDirectoryService,
  promptDirectory: prompts.PromptDirectoryService,
  batchRecords: batches.BatchRecordService,
  secretReferences: admin.SecretReferenceService,
} as const;

export interface ServiceDeps {
  logger: Logger;
  metrics: Metrics;
  env: NodeJS.ProcessEnv;
  db?: DataSource;
  bus?: EventBus;
  kv?: KeyValueStore;
  clients: Partial<Clients>;
  /** How host names a tenant chose are resolved: the system's resolver unless a test injects one. */
  resolve?: Resolver;
}

export interface ServiceInstance {
  router?: Router;
  /** Every HTTP route the router serves, with the scope each needs (see ScopedRouter). */
  routes?: DeclaredRoute[];
  grpc?: (server: GrpcServer) => void;
  readiness?: Record<string, ReadinessCheck>;
  /** Runs after the servers listen, e.g. to start consumers. */
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

/**
 * Hands the management writes a service's routes serve to its audit sink (see `auditWrite`);
 * none for a service that serves none.
 */
export function auditTrailFor(
  service: ServiceName,
  instance: ServiceInstance,
  bus: EventBus | undefined,
  logger: Logger,
): RequestHandler | undefined {
  const sink = serviceAuditSink(service, instance.routes, bus, logger);
  return sink ? auditTrail(sink) : undefined;
}

/** A service instance's router and the routes it declares. */
export function serveScoped(router: ScopedRouter): Pick<ServiceInstance, 'router' | 'routes'> {
  return { router: router.router, routes: router.routes() };
}

export interface DatabaseNeeds {
  schema: string;
  entities: EntitySchema[];
  migrations: Array<new () => MigrationInterface>;
}

/** What a service needs and how to build it; runners supply real or embedded adapters. */
export interface ServiceDefinition<I extends ServiceInstance = ServiceInstance> {
  name: ServiceName;
  database?: DatabaseNeeds;
  bus?: boolean;
  /**
   * Dependencies the service serves on without (Kafka: events wait in the buffer; Redis: a
   * best-effort cache; a gRPC peer whose absence it has a failure mode for): their outage
   * neither blocks start-up nor makes the service unready.
   */
  toleratesOutageOf?: Array<'bus' | 'kv' | ClientName>;
  kv?: boolean;
  clients?: ClientName[];
  /** False: log lines do not pick up the request they were written for on their own (see HttpAppOptions). */
  requestLogContext?: boolean;
  /**
   * V8 flags the service sets when it runs as its own process, before it builds anything (not
   * in all-in-one, where the other services share the process). Only flags V8 reads when it
   * starts a piece of work (a compilation, say) belong here; start-up settings of the heap go
   * on node's command line.
   */
  v8Flags?: string[];
  /**
   * The settings `create` acts on, beyond those of the runner that starts it (see
   * standaloneSettings): the configuration table lists them (scripts/config-table.ts).
   */
  settings?: z.ZodObject;
  /**
   * The HTTP routes `create`'s router serves, from the same router built on dependencies that
   * are only described (see `describedOnly`): no database, bus or client is needed. The OpenAPI
   * description (docs/openapi.json) is made from them; a test holds them to the served ones.
   */
  describeRoutes?(): DeclaredRoute[];
  create(deps: ServiceDeps): Promise<I>;
}

/** Sets a service's own V8 flags (see ServiceDefinition.v8Flags). */
export function applyV8Flags(definition: Pick<ServiceDefinition, 'v8Flags'>): void {
  for (const flag of definition.v8Flags ?? []) setFlagsFromString(flag);
}

/**
 * A dependency a router is built on only to list its routes (`describeRoutes`): an object or a
 * middleware function, any use of which (a call, reading a property other than what every
 * function has, such as its name) throws, naming it.
 */
export function describedOnly<T extends object>(what: string): T {
  const refuse = (): never => {
    throw new Error(`${what} is only described here: the routes were listed, not served`);
  };
  const stub = function describedOnly() {};
  return new Proxy(stub, {
    get: (target, key) => (key in Function.prototype || key in target ? Reflect.get(target, key) : refuse()),
    apply: refuse,
    construct: refuse,
    set: refuse,
  }) as unknown as T;
}

export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`service wiring error: ${what} was not provided`);
  return value;
}

export function grpcSecurityFrom(config: {
  GRPC_AUTH_TOKEN?: string | undefined;
  GRPC_TLS_CA_FILE?: string | undefined;
  GRPC_TLS_CERT_FILE?: string | undefined;
  GRPC_TLS_KEY_FILE?: string | undefined;
}): GrpcSecurity {
  const { GRPC_TLS_CA_FILE: caFile, GRPC_TLS_CERT_FILE: certFile, GRPC_TLS_KEY_FILE: keyFile } = config;
  return {
    authToken: config.GRPC_AUTH_TOKEN,
    tls: caFile && certFile && keyFile ? { caFile, certFile, keyFile } : undefined,
  };
}

/**
 * A client whose server's address is known only once something else has started (in one
 * process, a service assembled after this one): it dials on its first call.
 */
function deferredClient<S extends AnyService>(
  service: S,
  options: () => GrpcClientOptions,
): ServiceClient<S> {
  let client: ServiceClient<S> | undefined;
  const dial = () => (client ??= createGrpcClient(service, options()));
  const deferred: Record<string, unknown> = {
    close: () => client?.close(),
    waitForReady: (timeoutMs: number) => dial().waitForReady(timeoutMs),
  };
  for (const method of service.methods) {
    deferred[method.localName] = (...args: unknown[]) =>
      (dial() as unknown as Record<string, (...a: unknown[]) => unknown>)[method.localName]!(...args);
  }
  return deferred as ServiceClient<S>;
}

/**
 * The clients `caller` uses, each call proving that it comes from `caller` and carrying a
 * deadline: `deadlineMs` unless the call names its own. A client whose address is not known
 * yet (`addressOf` answers undefined) asks again on its first call. Readiness checks each
 * peer's health, except peers named in `tolerated`.
 */
export function createClients(
  names: ClientName[],
  addressOf: (name: ClientName) => string | undefined,
  security: GrpcSecurity,
  caller: ServiceName,
  deadlineMs: number = callDeadlineDefaults.GRPC_DEADLINE_MS,
  tolerated: readonly string[] = [],
): { clients: Partial<Clients>; readiness: Record<string, ReadinessCheck>; close(): void } {
  if (names.length > 0) checkCallerIdentity(security, caller);
  const clients: Record<string, { close(): void }> = {};
  const readiness: Record<string, ReadinessCheck> = {};
  for (const name of names) {
    const target = clientTargets[name].service;
    const optionsAt = (address: string) => ({
      address,
      target,
      security,
      caller,
      defaultDeadlineMs: deadlineMs,
    });
    const known = addressOf(name);
    const service = clientServices[name] as AnyService;
    const address = () => {
      const found = known ?? addressOf(name);
      if (!found) throw new Error(`no gRPC server for the ${name} client: ${target} is not running here`);
      return found;
    };
    clients[name] = (
      known === undefined
        ? deferredClient(service, () => optionsAt(address()))
        : createGrpcClient(service, optionsAt(known))
    ) as { close(): void };
    if (!tolerated.includes(name)) readiness[target] = () => checkGrpcHealth(optionsAt(address()));
  }
  return {
    clients: clients as Partial<Clients>,
    readiness,
    close: () => Object.values(clients).forEach((c) => c.close()),
  };
}

function standaloneSchema(definition: ServiceDefinition) {
  // Optional where the service has no use for it; the description stays.
  const required = (needed: boolean | undefined, schema: z.ZodType) =>
    needed ? schema : schema.optional().meta(schema.meta() ?? {});
  // Several clients share a server's address: it is required when any client of the service needs it.
  const clientAddresses = Object.fromEntries(
    Object.values(clientTargets).map(({ service, addressVariable }) => [
      addressVariable,
      required(
        definition.clients?.some((name) => clientTargets[name].addressVariable === addressVariable),
        env.string().meta({
          description: `\`host:port\` of ${service}'s gRPC server; replicas as a comma-separated list of IP \`host:port\`s or a \`dns:///name:port\` target, called round-robin`,
        }),
      ),
    ]),
  );
  return baseEnvSchema.extend({
    DATABASE_URL: required(!!definition.database, sharedEnv.DATABASE_URL),
    DB_POOL_SIZE: env.int(12, 1, 500).meta({ description: 'connections per process' }),
    MIGRATE_ON_START: env
      .bool(false)
      .meta({ description: 'apply migrations at start (the Helm chart uses a Job instead)' }),
    KAFKA_BROKERS: (definition.bus
      ? env.list().refine((l) => l.length > 0, 'at least one broker')
      : env.list()
    ).meta({ description: 'comma-separated `host:port` list' }),
    KAFKA_CLIENT_ID: env
      .string(`switchyard-${definition.name}`)
      .meta({ description: 'the client id the process gives the Kafka brokers' }),
    KAFKA_TOPIC_PREFIX: env
      .string('')
      .meta({ description: 'prepended to every topic and consumer group, to share a cluster' }),
    KAFKA_TOPIC_PARTITIONS: env.int(6, 1, 1_000).meta({
      description:
        'partitions of the topics a process creates (topics that exist are left as they are); the replicas of a consumer share them, so more replicas than partitions sit idle',
    }),
    EVENT_BUFFER_MAX_EVENTS: env.int(100_000, 1, 10_000_000).meta({
      description:
        'events a process holds in memory while Kafka is away, before spilling them (EVENT_SPILL_DIR) or dropping them',
    }),
    EVENT_SPILL_DIR: env.optionalString().meta({
      description:
        'folder where events go, in order, instead of being dropped, once the in-memory buffer (EVENT_BUFFER_MAX_EVENTS) is full while Kafka is away; sent when Kafka is back, also by the next process if this one is killed. Unset: they are dropped. One process per folder',
    }),
    EVENT_SPILL_MAX_BYTES: env.int(1024 * 1024 * 1024, 1).meta({
      description: 'bytes of events the spill folder holds at most; events past it are dropped',
    }),
    REDIS_URL: required(
      definition.kv,
      env.url().meta({
        description:
          "Redis connection URL (the gateway's response cache; it serves on, uncached, while Redis is away)",
      }),
    ),
    GRPC_HOST: env.string('0.0.0.0').meta({ description: 'gRPC bind address' }),
    GRPC_PORT: env.port(50051).meta({ description: 'gRPC port' }),
    ...clientAddresses,
  });
}

/**
 * Every setting a service's own process acts on: the runner's (less those it validates but
 * the service has no use for: a service without a database never uses DB_POOL_SIZE, say), then
 * the service's own. The configuration table lists them (scripts/config-table.ts).
 */
export function standaloneSettings(definition: ServiceDefinition): z.ZodObject {
  // The services other services call are the ones with a gRPC server.
  const servesGrpc = Object.values(clientTargets).some((target) => target.service === definition.name);
  const clients = definition.clients ?? [];
  const addresses = Object.values(clientTargets).map((target) => target.addressVariable);
  const usedAddresses = clients.map((name) => clientTargets[name].addressVariable);
  const unused = new Set([
    ...(definition.database
      ? []
      : ['DATABASE_URL', 'DB_POOL_SIZE', 'MIGRATE_ON_START', 'DB_QUERY_TIMEOUT_MS', 'DB_CONNECT_TIMEOUT_MS']),
    ...(definition.bus
      ? []
      : [
          'KAFKA_BROKERS',
          'KAFKA_CLIENT_ID',
          'KAFKA_TOPIC_PREFIX',
          'KAFKA_TOPIC_PARTITIONS',
          'EVENT_BUFFER_MAX_EVENTS',
          'EVENT_SPILL_DIR',
          'EVENT_SPILL_MAX_BYTES',
        ]),
    ...(definition.kv ? [] : ['REDIS_URL']),
    ...(servesGrpc ? [] : ['GRPC_HOST', 'GRPC_PORT']),
    ...(clients.length > 0 ? [] : ['GRPC_DEADLINE_MS']),
    ...(servesGrpc || clients.length > 0
      ? []
      : ['GRPC_AUTH_TOKEN', 'GRPC_TLS_CA_FILE', 'GRPC_TLS_CERT_FILE', 'GRPC_TLS_KEY_FILE']),
    ...addresses.filter((variable) => !usedAddresses.includes(variable)),
  ]);
  const read = Object.entries(standaloneSchema(definition).shape).filter(([name]) => !unused.has(name));
  return z.object(Object.fromEntries(read)).extend(definition.settings?.shape ?? {});
}

type HttpRouters = Parameters<typeof createHttpApp>[0]['routers'];

/** What the launcher tells a service run as its own process besides its definition. */
export interface StandaloneOptions {
  /**
   * Makes the whole ingress's OpenAPI description (docs/openapi.json), which `GET /openapi.json`
   * then answers in place of the service's own; made once, on the first request. The launcher
   * gives it to the service the routing table sends `/openapi.json` to.
   */
  ingressDescription?: () => OpenApiDocument;
}

/**
 * The HTTP routers of a service run as its own process, in order: the ingress's description
 * when it answers it, the audit trail of its management writes, its own router.
 */
export function standaloneRouters(
  definition: Pick<ServiceDefinition, 'name'>,
  instance: ServiceInstance,
  bus: EventBus | undefined,
  logger: Logger,
  options: StandaloneOptions = {},
): HttpRouters {
  if (!instance.router) return [];
  const routers: HttpRouters = [];
  const { ingressDescription } = options;
  if (ingressDescription) routers.push({ router: serveDescription(ingressDescription) });
  const audit = auditTrailFor(definition.name, instance, bus, logger);
  if (audit) routers.push({ router: audit });
  routers.push({ router: instance.router });
  return routers;
}

/** Runs one service as its own process on real Postgres, Kafka and Redis. */
export async function runStandalone(
  definition: ServiceDefinition,
  processEnv = process.env,
  options: StandaloneOptions = {},
): Promise<void> {
  applyV8Flags(definition);
  const config = loadConfig(standaloneSchema(definition), processEnv) as Record<string, unknown> &
    z.output<typeof baseEnvSchema> & {
      DATABASE_URL?: string;
      DB_POOL_SIZE: number;
      MIGRATE_ON_START: boolean;
      KAFKA_BROKERS: string[];
      KAFKA_CLIENT_ID: string;
      KAFKA_TOPIC_PREFIX: string;
      KAFKA_TOPIC_PARTITIONS: number;
      EVENT_BUFFER_MAX_EVENTS: number;
      EVENT_SPILL_DIR?: string;
      EVENT_SPILL_MAX_BYTES: number;
      REDIS_URL?: string;
      GRPC_HOST: string;
      GRPC_PORT: number;
    };
  const logger = createLogger(definition.name, config.LOG_LEVEL);
  const metrics = createMetrics();
  const lifecycle = new Lifecycle(logger, config.SHUTDOWN_GRACE_MS);
  lifecycle.handleSignals();
  // Stopped last, so that the spans of the requests drained on the way out are exported.
  const tracing = await startTracing(config, definition.name, logger);
  lifecycle.onStop('tracing', () => tracing.shutdown());
  const security = grpcSecurityFrom(config);
  const readiness: Record<string, ReadinessCheck> = {};

  let db: DataSource | undefined;
  if (definition.database && config.DATABASE_URL) {
    const database = definition.database;
    const dataSource = createDataSource({
      url: config.DATABASE_URL,
      poolSize: config.DB_POOL_SIZE,
      queryTimeoutMs: config.DB_QUERY_TIMEOUT_MS,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      logger,
      ...database,
    });
    db = dataSource;
    if (config.MIGRATE_ON_START) await migrate(dataSource, database.schema, logger);
    else await dataSource.initialize();
    lifecycle.onStop('database', () => dataSource.destroy());
    readiness.database = () => checkDataSource(dataSource);
  }
  let bus: EventBus | undefined;
  if (definition.bus) {
    const kafka = new KafkaEventBus({
      brokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      topicPrefix: config.KAFKA_TOPIC_PREFIX,
      topicPartitions: config.KAFKA_TOPIC_PARTITIONS,
      logger,
      maxBuffered: config.EVENT_BUFFER_MAX_EVENTS,
      spill: config.EVENT_SPILL_DIR
        ? { dir: config.EVENT_SPILL_DIR, maxBytes: config.EVENT_SPILL_MAX_BYTES }
        : undefined,
    });
    bus = kafka;
    lifecycle.onStop('kafka', () => kafka.close(config.SHUTDOWN_GRACE_MS));
    if (!definition.toleratesOutageOf?.includes('bus')) readiness.kafka = () => kafka.check();
  }
  let kv: KeyValueStore | undefined;
  if (definition.kv && config.REDIS_URL) {
    const redis = new RedisKeyValueStore(config.REDIS_URL, logger);
    kv = redis;
    lifecycle.onStop('redis', () => redis.close());
    if (definition.toleratesOutageOf?.includes('kv')) {
      redis
        .connect()
        .catch((err: unknown) => logger.warn('redis unavailable at start-up', { error: String(err) }));
    } else {
      await redis.connect();
      readiness.redis = () => redis.check();
    }
  }
  const clientSet = createClients(
    definition.clients ?? [],
    (name) => String(config[clientTargets[name].addressVariable]),
    security,
    definition.name,
    config.GRPC_DEADLINE_MS,
    definition.toleratesOutageOf,
  );
  lifecycle.onStop('grpc clients', () => clientSet.close());
  Object.assign(readiness, clientSet.readiness);

  const instance = await definition.create({
    logger,
    metrics,
    env: processEnv,
    db,
    bus,
    kv,
    clients: clientSet.clients,
  });
  lifecycle.onStop('service', () => instance.stop?.());
  Object.assign(readiness, instance.readiness);

  if (instance.grpc) {
    const grpcServer = new GrpcServer({ logger, security });
    instance.grpc(grpcServer);
    const port = await grpcServer.listen(config.GRPC_HOST, config.GRPC_PORT);
    lifecycle.onStop('grpc server', () => grpcServer.close());
    logger.info('grpc listening', { host: config.GRPC_HOST, port });
  }
  // Consumers and start-up work run before HTTP accepts traffic, so "ready" means ready.
  await instance.start?.();
  const app = createHttpApp({
    service: definition.name,
    logger,
    metrics,
    readiness,
    routers: standaloneRouters(definition, instance, bus, logger, options),
    isStopping: () => lifecycle.isStopping,
    trustProxy: config.TRUST_PROXY,
    // The services that read HEADER_PREFIX validate it themselves; CORS allows their headers under it.
    cors: corsOptionsFrom({
      ...config,
      ...loadConfig(z.object({ HEADER_PREFIX: sharedEnv.HEADER_PREFIX }), processEnv),
    }),
    requestLogContext: definition.requestLogContext,
  });
  const http = await listen(app, config.HOST, config.PORT, serverLimitsFrom(config));
  lifecycle.onStop('http server', http.close);
  logger.info('http listening', { host: config.HOST, port: http.port });
}

const migrateEnvSchema = baseEnvSchema.extend({ DATABASE_URL: sharedEnv.DATABASE_URL });

/** What `migrate` acts on of the settings it validates: the configuration table lists them. */
export const migrateSettings = migrateEnvSchema.pick({
  LOG_LEVEL: true,
  DATABASE_URL: true,
  DB_CONNECT_TIMEOUT_MS: true,
});

/** Applies every service's migrations to DATABASE_URL, then returns (the Helm pre-install Job). */
export async function runMigrations(
  definitions: ServiceDefinition[],
  processEnv = process.env,
): Promise<void> {
  const config = loadConfig(migrateEnvSchema, processEnv);
  const logger = createLogger('migrate', config.LOG_LEVEL);
  for (const definition of definitions) {
    if (!definition.database) continue;
    const dataSource = createDataSource({
      url: config.DATABASE_URL,
      poolSize: 1,
      // A migration may legitimately run long (an index on a large table, say).
      queryTimeoutMs: null,
      connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
      logger,
      ...definition.database,
    });
    try {
      await migrate(dataSource, definition.database.schema, logger);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
    }
  }
  logger.info('migrations complete');
}
