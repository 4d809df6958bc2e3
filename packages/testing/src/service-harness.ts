import {
  SecretBox,
  createLogger,
  createMetrics,
  randomToken,
  startTracing,
  tracingConfigFrom,
  type Logger,
  type Metrics,
} from '@switchyard/core';
import { type CorsOptions, createHttpApp, listen } from '@switchyard/http';
import type { Resolver } from '@switchyard/rules';
import {
  MemoryEventBus,
  MemoryKeyValueStore,
  startEmbeddedPostgres,
  type PostgresConnector,
} from '@switchyard/adapters';
import {
  assembleInProcess,
  createClients,
  type ClientName,
  type InProcessServices,
  type Clients,
  type GrpcSecurity,
  type RegisteredMethod,
  type ServiceDefinition,
  type ServiceInstance,
  type ServiceName,
} from '@switchyard/runtime';

type DataSource = InProcessServices['databases'] extends Map<unknown, infer D> ? D : never;

export interface ServiceHarnessOptions {
  /** In dependency order, as the launcher lists them: a service's gRPC peers come before it. */
  services: ServiceDefinition[];
  /**
   * What the services read from their environment, on top of a generated SWITCHYARD_ENCRYPTION_KEY
   * and TRUSTED_CUSTOM_HOSTS=127.0.0.1.
   */
  env?: Record<string, string | undefined>;
  /** The admin key bootstrap stores; without it bootstrap generates one. */
  adminKey?: string;
  /** Bootstrap the first organisation when control-plane is present (default true). */
  bootstrap?: boolean;
  /**
   * Turn the bootstrapped organisation's block_inline_config off when admin is present
   * (default true); false leaves it at the default for an organisation created today: on.
   */
  allowInlineConfig?: boolean;
  /** gRPC addresses for clients whose service is not in `services`, e.g. a stand-in the test controls. */
  clientAddresses?: Partial<Record<ClientName, string>>;
  /** Express's `trust proxy` setting for the one HTTP entry point (as TRUST_PROXY gives it). */
  trustProxy?: string;
  /** CORS for the one HTTP entry point (as CORS_ALLOWED_ORIGINS and CORS_MAX_AGE_SECONDS give it). */
  cors?: CorsOptions;
  /**
   * Resolves the host names tenants choose (custom hosts), so that tests never use real DNS.
   * Without it the system resolver is used.
   */
  resolve?: Resolver;
  /** Service logs; silent unless asked for. */
  logLevel?: 'silent' | 'error' | 'warn' | 'info' | 'debug';
}

/** Response bodies in tests are read field by field, so they are loosely typed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyBody = any;

export interface HarnessResponse<T = AnyBody> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  body: T;
  text: string;
}

export interface HarnessRequest {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string | undefined;
  /** Serialised as the JSON body. */
  json?: unknown;
  /** Sent as is (takes precedence over json). */
  body?: string | Buffer;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ServiceHarness {
  /** The one HTTP entry point, routing by path prefix like the ingress and the launcher. */
  url: string;
  adminKey: string;
  workspaceKey: string;
  organisationId: string;
  workspaceId: string;
  /** The embedded Postgres every service's data source connects to (one schema each). */
  postgres: PostgresConnector;
  /** What the services were given as their environment. */
  env: Record<string, string>;
  bus: MemoryEventBus;
  kv: MemoryKeyValueStore;
  /** The process's metrics, which GET /metrics serves (every service's series, and the HTTP ones). */
  metrics: Metrics;
  /** The shared secret each service's gRPC token is derived from. */
  security: GrpcSecurity;
  databases: Partial<Record<ServiceName, DataSource>>;
  db(service: ServiceName): DataSource;
  instance<T extends ServiceInstance = ServiceInstance>(service: ServiceName): T;
  grpcAddress(service: ServiceName): string;
  /** What a service's gRPC server serves, and to which calling services. */
  grpcMethods(service: ServiceName): readonly RegisteredMethod[];
  /**
   * A gRPC client as `caller` uses it (by default a service that calls every method of that
   * client), closed with the harness.
   */
  client<N extends ClientName>(name: N, caller?: ServiceName): NonNullable<Clients[N]>;
  request<T = AnyBody>(method: string, path: string, options?: HarnessRequest): Promise<HarnessResponse<T>>;
  close(): Promise<void>;
}

interface BootstrapCapable extends ServiceInstance {
  bootstrap(options: { adminKey?: string | undefined; withWorkspaceKey: boolean }): Promise<{
    organisation: { id: string };
    workspace: { id: string } | null;
    adminKey?: string | undefined;
    workspaceKey?: string | undefined;
  }>;
}

/**
 * The service a harness client speaks as unless a test says otherwise: one that may call
 * every method of that client (admin for IdentityService, the gateway for the rest).
 */
const defaultCallers: Partial<Record<ClientName, ServiceName>> = { identity: 'admin' };

function quietLogger(name: string, level: ServiceHarnessOptions['logLevel']): Logger {
  const logger = createLogger(name, level === 'silent' || !level ? 'error' : level);
  if (level === 'silent' || !level) logger.silent = true;
  return logger;
}

/**
 * Starts the chosen services the way the all-in-one launcher does: embedded Postgres with
 * each service's migrations, an in-process bus and key-value store, every gRPC server on
 * loopback behind a shared secret, clients wired to them (each speaking as its service),
 * and one HTTP server on 127.0.0.1 that routes by path. When control-plane is among them,
 * the first organisation is bootstrapped with a workspace key.
 */
export async function startServiceHarness(options: ServiceHarnessOptions): Promise<ServiceHarness> {
  const closers: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) {
      try {
        await closer();
      } catch {
        // Keep closing the rest.
      }
    }
  };
  try {
    return await start(options, closers, close);
  } catch (err) {
    await close();
    throw err;
  }
}

async function start(
  options: ServiceHarnessOptions,
  closers: Array<() => Promise<void> | void>,
  close: () => Promise<void>,
): Promise<ServiceHarness> {
  const logger = quietLogger('harness', options.logLevel);
  const needsDatabase = options.services.some((d) => d.database);
  const postgres = needsDatabase ? await startEmbeddedPostgres() : undefined;
  if (postgres) closers.push(() => postgres.close());
  const bus = new MemoryEventBus({ retainAll: true });
  const kv = new MemoryKeyValueStore();
  closers.push(() => kv.close());
  const security: GrpcSecurity = { authToken: randomToken(24) };
  const env: Record<string, string> = {
    SWITCHYARD_ENCRYPTION_KEY: SecretBox.generateKey(),
    // The fake upstreams listen on 127.0.0.1; a test of the unsafe-host check sets its own list.
    TRUSTED_CUSTOM_HOSTS: '127.0.0.1',
  };
  for (const [name, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[name] = value;
  // Traced as all-in-one is when the environment names an OTLP endpoint; stopped last.
  const tracing = await startTracing(tracingConfigFrom(env), 'harness', logger);
  closers.unshift(() => tracing.shutdown());

  // One registry for the process, as all-in-one has: GET /metrics shows every service's series.
  const metrics = createMetrics();
  const services = await assembleInProcess({
    definitions: options.services,
    postgres: postgres?.connector,
    bus,
    kv,
    env,
    security,
    metrics,
    loggerFor: (service) => quietLogger(service, options.logLevel),
    onStop: (_name, closer) => closers.push(closer),
    clientAddresses: options.clientAddresses,
    resolve: options.resolve,
  });
  closers.push(() => bus.close());
  const { instances, grpcAddresses, grpcMethods, addressOf } = services;
  const databases = Object.fromEntries(services.databases) as Partial<Record<ServiceName, DataSource>>;

  let identity:
    { adminKey: string; workspaceKey: string; organisationId: string; workspaceId: string } | undefined;
  const controlPlane = instances.get('control-plane') as BootstrapCapable | undefined;
  if (controlPlane?.bootstrap && options.bootstrap !== false) {
    const result = await controlPlane.bootstrap({ adminKey: options.adminKey, withWorkspaceKey: true });
    identity = {
      adminKey: options.adminKey ?? result.adminKey ?? '',
      workspaceKey: result.workspaceKey ?? '',
      organisationId: result.organisation.id,
      workspaceId: result.workspace?.id ?? '',
    };
  }
  await services.start();

  const app = createHttpApp({
    service: 'harness',
    logger,
    metrics,
    readiness: {},
    routers: [{ router: services.router }],
    trustProxy: options.trustProxy,
    cors: options.cors,
  });
  const http = await listen(app, '127.0.0.1', 0);
  closers.push(async () => {
    const closed = http.close();
    http.server.closeAllConnections();
    await closed;
  });
  const url = `http://127.0.0.1:${http.port}`;
  // Organisations created today block inline provider choices by default; most tests choose
  // providers inline, so the harness organisation allows it unless a test asks otherwise.
  if (identity && instances.has('admin') && options.allowInlineConfig !== false) {
    const res = await fetch(`${url}/v1/admin/organisation/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${identity.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ block_inline_config: false }),
    });
    if (!res.ok) throw new Error(`could not allow inline config: ${res.status} ${await res.text()}`);
  }

  const extraClients = new Map<string, unknown>();
  const bootstrapped = <K extends keyof NonNullable<typeof identity>>(field: K) => {
    if (!identity) throw new Error(`${String(field)}: this harness bootstrapped no organisation`);
    return identity[field];
  };

  return {
    url,
    get postgres() {
      if (!postgres) throw new Error('no service in this harness has a database');
      return postgres.connector;
    },
    get adminKey() {
      return bootstrapped('adminKey');
    },
    get workspaceKey() {
      return bootstrapped('workspaceKey');
    },
    get organisationId() {
      return bootstrapped('organisationId');
    },
    get workspaceId() {
      return bootstrapped('workspaceId');
    },
    env,
    bus,
    kv,
    metrics,
    security,
    databases,
    db(service) {
      const db = databases[service];
      if (!db) throw new Error(`${service} has no database in this harness`);
      return db;
    },
    instance<T extends ServiceInstance>(service: ServiceName) {
      const instance = instances.get(service);
      if (!instance) throw new Error(`${service} is not among the harness services`);
      return instance as T;
    },
    grpcAddress(service) {
      const address = grpcAddresses.get(service);
      if (!address) throw new Error(`${service} serves no gRPC in this harness`);
      return address;
    },
    grpcMethods(service) {
      const methods = grpcMethods.get(service);
      if (!methods) throw new Error(`${service} serves no gRPC in this harness`);
      return methods;
    },
    client<N extends ClientName>(name: N, caller: ServiceName = defaultCallers[name] ?? 'gateway') {
      let client = extraClients.get(`${name} as ${caller}`);
      if (!client) {
        const set = createClients([name], addressOf, security, caller);
        closers.push(() => set.close());
        client = set.clients[name];
        extraClients.set(`${name} as ${caller}`, client);
      }
      return client as NonNullable<Clients[N]>;
    },
    request: (method, path, requestOptions) => httpRequest(url, method, path, requestOptions),
    close,
  };
}

async function httpRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: HarnessRequest = {},
): Promise<HarnessResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined = options.body;
  if (body === undefined && options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body, signal: options.signal });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Polls until `probe` returns something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 5_000, intervalMs = 10, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
