// The five services as separate processes on real PostgreSQL, Redis and Kafka, isolated per
// run by a fresh database, a topic prefix and fresh secrets.
import { randomBytes } from 'node:crypto';
import { writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serviceForPath, type ServiceName } from '@switchyard/runtime';
import { startFakeOpenAi, type FakeOpenAi } from '@switchyard/testing';
import { createRunDatabase, type RunDatabase } from './database.ts';
import { ensureDependencies, type DependencyUrls } from './deps.ts';
import { httpRequest, type ApiResponse, type Json, type RequestOptions } from './http.ts';
import { KafkaProbe } from './kafka.ts';
import { logDir, runCli, ServiceProcess } from './processes.ts';

/** Start order: each service's gRPC peers come before it. */
export const serviceOrder: ServiceName[] = ['control-plane', 'policy', 'admin', 'log-export', 'gateway'];

const READY_TIMEOUT_MS = 60_000;

export interface StackOptions {
  /** The key the fake OpenAI upstream insists on. */
  upstreamKey: string;
  /** Extra environment for every service process. */
  env?: Record<string, string>;
  /**
   * Extra environment for the processes of one service, over `env` (say, the gateway's
   * EVENT_SPILL_DIR: one process per spill folder, so a service with one replica only).
   */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /**
   * Processes per service (1 unless named). Replicas share the database, Kafka and Redis;
   * their clients reach every replica of a gRPC peer (a comma-separated address list).
   */
  replicas?: Partial<Record<ServiceName, number>>;
}

export interface StackRequestOptions extends RequestOptions {
  /** Overrides the routing table, e.g. for `/readyz` of one particular service. */
  service?: ServiceName;
}

export interface Stack {
  runId: string;
  topicPrefix: string;
  adminKey: string;
  dependencies: DependencyUrls;
  database: RunDatabase;
  kafka: KafkaProbe;
  upstream: FakeOpenAi;
  /** Base URL of one service's HTTP server (its first replica). */
  url(service: ServiceName): string;
  /** Base URLs of every replica of a service, in replica order. */
  urls(service: ServiceName): string[];
  /** A call against the platform as if through the ingress: the path picks the service. */
  request<T = Json>(method: string, path: string, options?: StackRequestOptions): Promise<ApiResponse<T>>;
  /** One process of a service: its first replica unless another is named (0-based). */
  process(service: ServiceName, replica?: number): ServiceProcess;
  /** Stops one service (SIGTERM, then SIGKILL); every replica of it. */
  stopService(service: ServiceName): Promise<void>;
  /**
   * Starts a stopped service again on the same ports and waits until it is ready; `env`
   * changes its settings from then on (an empty value removes one).
   */
  startService(service: ServiceName, env?: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

/** Ports free on 127.0.0.1 right now, one per `count`. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const address = server.address();
      if (!address || typeof address !== 'object') throw new Error('could not allocate a port');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/**
 * Only the basics of the parent environment reach the services, so that whatever Switchyard
 * settings, proxies or debugger flags the caller's shell holds cannot change what is tested.
 */
function baseEnvironment(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'CI'];
  const env: NodeJS.ProcessEnv = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  env.NO_PROXY = '127.0.0.1,localhost';
  return env;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const dependencies = await ensureDependencies();
  const runId = randomBytes(4).toString('hex');
  const topicPrefix = `e2e-${runId}.`;
  const adminKey = `sy-e2e-admin-${randomBytes(24).toString('base64url')}`;
  const cleanups: Array<() => Promise<void>> = [];
  const cleanUp = async () => {
    const errors: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0)
      throw new AggregateError(errors, `stack clean-up failed: ${errors.map(String).join('; ')}`);
  };

  try {
    const database = await createRunDatabase(dependencies.databaseUrl);
    cleanups.push(() => database.drop());
    const kafka = new KafkaProbe(dependencies.kafkaBrokers, topicPrefix);
    cleanups.push(() => kafka.deleteRunTopics().catch(() => undefined));
    const upstream = await startFakeOpenAi({ apiKey: options.upstreamKey });
    cleanups.push(() => upstream.close());

    const count = (service: ServiceName) => Math.max(1, options.replicas?.[service] ?? 1);
    // Replica 0 of a service is named after it; the others get a number (gateway-2, …).
    const instances = serviceOrder.flatMap((service) =>
      Array.from({ length: count(service) }, (_, replica) => ({
        service,
        replica,
        name: replica === 0 ? service : `${service}-${replica + 1}`,
      })),
    );
    mkdirSync(logDir, { recursive: true });
    for (const name of ['migrate', ...instances.map((i) => i.name)]) {
      writeFileSync(join(logDir, `${name}.log`), '');
    }

    const ports = await freePorts(instances.length * 2);
    const httpPorts = new Map<ServiceName, number[]>(serviceOrder.map((s) => [s, []]));
    const grpcPorts = new Map<ServiceName, number[]>(serviceOrder.map((s) => [s, []]));
    instances.forEach((instance, i) => {
      httpPorts.get(instance.service)!.push(ports[i * 2]!);
      grpcPorts.get(instance.service)!.push(ports[i * 2 + 1]!);
    });
    const grpcAddresses = (service: ServiceName) =>
      grpcPorts
        .get(service)!
        .map((port) => `127.0.0.1:${port}`)
        .join(',');
    const shared: NodeJS.ProcessEnv = {
      ...baseEnvironment(),
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '5000',
      HOST: '127.0.0.1',
      GRPC_HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      KAFKA_BROKERS: dependencies.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: topicPrefix,
      REDIS_URL: dependencies.redisUrl,
      GRPC_AUTH_TOKEN: randomBytes(24).toString('base64url'),
      SWITCHYARD_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      SWITCHYARD_ADMIN_KEY: adminKey,
      CONTROL_PLANE_GRPC_ADDRESS: grpcAddresses('control-plane'),
      ADMIN_GRPC_ADDRESS: grpcAddresses('admin'),
      POLICY_GRPC_ADDRESS: grpcAddresses('policy'),
      // The fake upstream the saved integrations point at listens on loopback.
      TRUSTED_CUSTOM_HOSTS: '127.0.0.1',
      ...options.env,
    };

    await runCli('migrate', ['migrate'], shared, 120_000);

    const processes = new Map<ServiceName, ServiceProcess[]>(serviceOrder.map((s) => [s, []]));
    for (const { service, replica, name } of instances) {
      processes.get(service)!.push(
        new ServiceProcess(name, [service], {
          ...shared,
          ...options.serviceEnv?.[service],
          PORT: String(httpPorts.get(service)![replica]),
          GRPC_PORT: String(grpcPorts.get(service)![replica]),
        }),
      );
    }
    const replicasOf = (service: ServiceName) => processes.get(service)!;
    // The gateways first (they flush their buffered events), then the rest together.
    cleanups.push(async () => {
      await Promise.all(replicasOf('gateway').map((child) => child.stop()));
      await Promise.all(instances.map(({ service, replica }) => replicasOf(service)[replica]!.stop()));
    });

    const urls = (service: ServiceName) => httpPorts.get(service)!.map((port) => `http://127.0.0.1:${port}`);
    const url = (service: ServiceName) => urls(service)[0]!;

    const waitUntilReady = async (service: ServiceName, replica: number) => {
      const child = replicasOf(service)[replica]!;
      const base = urls(service)[replica]!;
      const deadline = Date.now() + READY_TIMEOUT_MS;
      let last = 'no answer yet';
      for (;;) {
        if (!child.isRunning) {
          await sleep(200); // let the last output arrive
          throw new Error(
            `${child.name} exited (${child.describeExit()}) before GET /readyz returned 200; last /readyz: ${last}\n` +
              `--- ${child.name} output (full log: .data/e2e-logs/${child.name}.log) ---\n${child.tail()}`,
          );
        }
        try {
          const response = await httpRequest(base, 'GET', '/readyz', { timeoutMs: 5_000 });
          if (response.status === 200) return;
          last = `${response.status} ${response.text}`;
        } catch (err) {
          last = (err as Error).message;
        }
        if (Date.now() >= deadline) {
          throw new Error(
            `${child.name} was not ready within ${READY_TIMEOUT_MS} ms; last /readyz: ${last}\n` +
              `--- ${child.name} output (full log: .data/e2e-logs/${child.name}.log) ---\n${child.tail()}`,
          );
        }
        await sleep(250);
      }
    };

    const startService = async (service: ServiceName, env: Record<string, string> = {}) => {
      for (const child of replicasOf(service)) {
        child.setEnvironment(env);
        child.start();
      }
      await Promise.all(replicasOf(service).map((_, replica) => waitUntilReady(service, replica)));
    };

    for (const service of serviceOrder) await startService(service);

    const request = <T = Json>(method: string, path: string, requestOptions: StackRequestOptions = {}) => {
      const service = requestOptions.service ?? serviceForPath(path.split('?')[0]!);
      if (!service) throw new Error(`No service serves ${path} (see helm/switchyard/files/routes.json)`);
      return httpRequest<T>(url(service), method, path, requestOptions);
    };

    // A ready control-plane has already bootstrapped the organisation for SWITCHYARD_ADMIN_KEY.
    const adminCheck = await request('GET', '/v2/workspaces', { key: adminKey });
    if (adminCheck.status !== 200) {
      throw new Error(`control-plane is ready but rejects SWITCHYARD_ADMIN_KEY (HTTP ${adminCheck.status})`);
    }

    return {
      runId,
      topicPrefix,
      adminKey,
      dependencies,
      database,
      kafka,
      upstream,
      url,
      urls,
      request,
      process: (service, replica = 0) => {
        const child = replicasOf(service)[replica];
        if (!child) throw new Error(`${service} has no replica ${replica}`);
        return child;
      },
      stopService: async (service) => {
        await Promise.all(replicasOf(service).map((child) => child.stop()));
      },
      startService,
      stop: cleanUp,
    };
  } catch (err) {
    await cleanUp().catch(() => undefined);
    throw err;
  }
}
