// A small typed bridge between protobuf-es service descriptors and @grpc/grpc-js: typed
// handlers on the server, typed promise clients, deadlines, keep-alive, retries for methods
// the proto marks idempotent, the standard health service, and service-to-service auth.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type DescMethod,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import { MethodOptions_IdempotencyLevel as Idempotency } from '@bufbuild/protobuf/wkt';
import { health } from '@switchyard/proto';
import {
  AppError,
  BadRequest,
  Conflict,
  Forbidden,
  GuardrailDenied,
  InternalError,
  NotFound,
  NotImplemented,
  PayloadTooLarge,
  RequestTimeout,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  toAppError,
} from './errors.ts';
import { safeEqual } from './crypto.ts';
import type { Logger } from './logger.ts';

type UnaryMethod = { methodKind: 'unary'; input: DescMessage; output: DescMessage };
type AnyService = DescService & { method: Record<string, unknown> };

type MethodsOf<S extends AnyService> = S['method'];

export interface CallContext {
  metadata: grpc.Metadata;
  deadline: grpc.Deadline;
}

/** Handler map for a service: one async function per unary method. */
export type ServiceHandlers<S extends AnyService> = {
  [K in keyof MethodsOf<S>]: MethodsOf<S>[K] extends UnaryMethod
    ? (
        request: MessageShape<MethodsOf<S>[K]['input']>,
        context: CallContext,
      ) => Promise<MessageInitShape<MethodsOf<S>[K]['output']>>
    : never;
};

export interface CallOptions {
  deadlineMs?: number;
  signal?: AbortSignal;
}

/** Promise client for a service: one function per unary method. */
export type ServiceClient<S extends AnyService> = {
  [K in keyof MethodsOf<S>]: MethodsOf<S>[K] extends UnaryMethod
    ? (
        request: MessageInitShape<MethodsOf<S>[K]['input']>,
        options?: CallOptions,
      ) => Promise<MessageShape<MethodsOf<S>[K]['output']>>
    : never;
} & { close(): void; waitForReady(timeoutMs: number): Promise<void> };

export interface GrpcSecurity {
  /** Shared bearer token every call must carry; health checks are exempt. */
  authToken?: string;
  tls?: { caFile: string; certFile: string; keyFile: string };
}

const AUTH_METADATA = 'authorization';
const HTTP_STATUS_METADATA = 'x-switchyard-http-status';
const ERROR_PARAM_METADATA = 'x-switchyard-error-param';
const ERROR_CODE_METADATA = 'x-switchyard-error-code';

function methodPath(service: DescService, method: DescMethod): string {
  return `/${service.typeName}/${method.name}`;
}

function serializer(schema: DescMessage) {
  return (message: MessageShape<DescMessage>) => Buffer.from(toBinary(schema, message));
}

function deserializer(schema: DescMessage) {
  return (bytes: Buffer) => fromBinary(schema, bytes);
}

function grpcDefinition(service: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: methodPath(service, method),
      requestStream: method.methodKind === 'client_streaming' || method.methodKind === 'bidi_streaming',
      responseStream: method.methodKind === 'server_streaming' || method.methodKind === 'bidi_streaming',
      requestSerialize: serializer(method.input),
      requestDeserialize: deserializer(method.input),
      responseSerialize: serializer(method.output),
      responseDeserialize: deserializer(method.output),
    } as grpc.MethodDefinition<unknown, unknown>;
  }
  return definition;
}

const statusByHttp: Array<[number, grpc.status]> = [
  [400, grpc.status.INVALID_ARGUMENT],
  [401, grpc.status.UNAUTHENTICATED],
  [403, grpc.status.PERMISSION_DENIED],
  [404, grpc.status.NOT_FOUND],
  [408, grpc.status.DEADLINE_EXCEEDED],
  [409, grpc.status.ALREADY_EXISTS],
  [422, grpc.status.FAILED_PRECONDITION],
  [429, grpc.status.RESOURCE_EXHAUSTED],
  [501, grpc.status.UNIMPLEMENTED],
  [503, grpc.status.UNAVAILABLE],
];

/** The one translation from the error vocabulary to a gRPC status. */
export function toGrpcError(err: unknown): Partial<grpc.StatusObject> {
  const appError = toAppError(err);
  const code = statusByHttp.find(([status]) => status === appError.status)?.[1] ?? grpc.status.INTERNAL;
  const metadata = new grpc.Metadata();
  metadata.set(HTTP_STATUS_METADATA, String(appError.status));
  if (appError.param) metadata.set(ERROR_PARAM_METADATA, appError.param);
  if (appError.code) metadata.set(ERROR_CODE_METADATA, appError.code);
  const retryAfter = appError.headers['retry-after'];
  if (retryAfter) metadata.set('retry-after', retryAfter);
  // Only unexpected faults hide their message; deliberate errors (501, 503, ...) keep theirs.
  const details = appError instanceof InternalError ? 'Internal error.' : appError.message;
  return { code, details, metadata };
}

/** The one translation from a gRPC failure back to the error vocabulary. */
export function fromGrpcError(err: grpc.ServiceError, target: string): AppError {
  const meta = err.metadata;
  const single = (key: string) => {
    const v = meta?.get(key)[0];
    return typeof v === 'string' ? v : undefined;
  };
  const options = { param: single(ERROR_PARAM_METADATA), code: single(ERROR_CODE_METADATA), cause: err };
  const message = err.details || err.message;
  switch (err.code) {
    case grpc.status.INVALID_ARGUMENT:
      return new BadRequest(message, options);
    case grpc.status.UNAUTHENTICATED:
      return single(HTTP_STATUS_METADATA) === '401'
        ? new Unauthorized(message, options)
        : new ServiceUnavailable(`${target} refused this service's credentials.`, { cause: err });
    case grpc.status.PERMISSION_DENIED:
      return new Forbidden(message, options);
    case grpc.status.NOT_FOUND:
      return new NotFound(message, options);
    case grpc.status.ALREADY_EXISTS:
      return new Conflict(message, options);
    case grpc.status.RESOURCE_EXHAUSTED:
      return new TooManyRequests(message, Number(single('retry-after') ?? 1), options);
    case grpc.status.DEADLINE_EXCEEDED:
      return single(HTTP_STATUS_METADATA) === '408'
        ? new RequestTimeout(message, options)
        : new ServiceUnavailable(`${target} did not answer in time.`, { cause: err });
    case grpc.status.UNAVAILABLE:
    case grpc.status.CANCELLED:
      return new ServiceUnavailable(`${target} is unavailable.`, { cause: err });
    case grpc.status.UNIMPLEMENTED:
      return new NotImplemented(message, options);
    case grpc.status.FAILED_PRECONDITION:
      return new UnprocessableEntity(message, options);
    default:
      // Client errors without a gRPC code of their own travel as INTERNAL with their HTTP status.
      switch (single(HTTP_STATUS_METADATA)) {
        case '413':
          return new PayloadTooLarge(message, options);
        case '446':
          return new GuardrailDenied(message, options);
      }
      return new InternalError(`${target} failed.`, { cause: err });
  }
}

function serverCredentials(security: GrpcSecurity): grpc.ServerCredentials {
  if (!security.tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(
    readFileSync(security.tls.caFile),
    [{ private_key: readFileSync(security.tls.keyFile), cert_chain: readFileSync(security.tls.certFile) }],
    true,
  );
}

function channelCredentials(security: GrpcSecurity): grpc.ChannelCredentials {
  if (!security.tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(
    readFileSync(security.tls.caFile),
    readFileSync(security.tls.keyFile),
    readFileSync(security.tls.certFile),
  );
}

export interface GrpcServerOptions {
  logger: Logger;
  security: GrpcSecurity;
}

type HealthStatus = health.HealthCheckResponse_ServingStatus;

/** A gRPC server with the standard health service and token checks built in. */
export class GrpcServer {
  private readonly server = new grpc.Server({
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
  });
  private readonly statuses = new Map<string, HealthStatus>([
    ['', health.HealthCheckResponse_ServingStatus.SERVING],
  ]);
  private readonly watchers = new Set<{
    service: string;
    call: grpc.ServerWritableStream<unknown, unknown>;
  }>();

  constructor(private readonly options: GrpcServerOptions) {
    this.addHealthService();
  }

  add<S extends AnyService>(service: S, handlers: ServiceHandlers<S>): this {
    const implementation: grpc.UntypedServiceImplementation = {};
    for (const method of service.methods) {
      const handler = (handlers as Record<string, unknown>)[method.localName] as
        ((req: unknown, ctx: CallContext) => Promise<MessageInitShape<DescMessage>>) | undefined;
      if (method.methodKind !== 'unary' || !handler) {
        throw new Error(`${service.typeName}.${method.name}: only unary handlers are supported`);
      }
      implementation[method.localName] = (
        call: grpc.ServerUnaryCall<unknown, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        if (!this.authorised(call.metadata)) {
          callback({ code: grpc.status.UNAUTHENTICATED, details: 'Missing or invalid service token.' });
          return;
        }
        handler(call.request, { metadata: call.metadata, deadline: call.getDeadline() }).then(
          (response) => callback(null, create(method.output, response)),
          (err: unknown) => {
            if (!(err instanceof AppError) || err.status >= 500) {
              this.options.logger.error('grpc handler failed', { method: method.name, error: err });
            }
            callback(toGrpcError(err));
          },
        );
      };
    }
    this.server.addService(grpcDefinition(service), implementation);
    this.statuses.set(service.typeName, health.HealthCheckResponse_ServingStatus.SERVING);
    return this;
  }

  async listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(`${host}:${port}`, serverCredentials(this.options.security), (err, bound) =>
        err ? reject(err) : resolve(bound),
      );
    });
  }

  setServing(serving: boolean): void {
    const status = serving
      ? health.HealthCheckResponse_ServingStatus.SERVING
      : health.HealthCheckResponse_ServingStatus.NOT_SERVING;
    for (const name of this.statuses.keys()) this.statuses.set(name, status);
    for (const watcher of this.watchers) watcher.call.write(this.healthOf(watcher.service));
  }

  /** Reports NOT_SERVING, then waits for in-flight calls before closing. */
  async close(): Promise<void> {
    this.setServing(false);
    for (const watcher of this.watchers) watcher.call.end();
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }

  private authorised(metadata: grpc.Metadata): boolean {
    const token = this.options.security.authToken;
    if (!token) return true;
    const presented = metadata.get(AUTH_METADATA)[0];
    return typeof presented === 'string' && safeEqual(presented, `Bearer ${token}`);
  }

  private healthOf(service: string) {
    const status = this.statuses.get(service) ?? health.HealthCheckResponse_ServingStatus.SERVICE_UNKNOWN;
    return create(health.HealthCheckResponseSchema, { status });
  }

  private addHealthService(): void {
    const definition = grpcDefinition(health.Health);
    this.server.addService(definition, {
      check: (
        call: grpc.ServerUnaryCall<health.HealthCheckRequest, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        if (!this.statuses.has(call.request.service)) {
          callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
          return;
        }
        callback(null, this.healthOf(call.request.service));
      },
      watch: (call: grpc.ServerWritableStream<health.HealthCheckRequest, unknown>) => {
        const watcher = {
          service: call.request.service,
          call: call as grpc.ServerWritableStream<unknown, unknown>,
        };
        this.watchers.add(watcher);
        call.write(this.healthOf(call.request.service));
        call.on('cancelled', () => this.watchers.delete(watcher));
      },
    });
  }
}

export interface GrpcClientOptions {
  /** host:port */
  address: string;
  /** Used in error messages, e.g. "control-plane". */
  target: string;
  security: GrpcSecurity;
  defaultDeadlineMs?: number;
}

function retryServiceConfig(service: DescService): string {
  const idempotent = service.methods.filter(
    (m) => m.idempotency === Idempotency.NO_SIDE_EFFECTS || m.idempotency === Idempotency.IDEMPOTENT,
  );
  if (idempotent.length === 0) return JSON.stringify({});
  return JSON.stringify({
    methodConfig: [
      {
        name: idempotent.map((m) => ({ service: service.typeName, method: m.name })),
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: '0.05s',
          maxBackoff: '0.5s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  });
}

/** A typed promise client; idempotent methods are retried on UNAVAILABLE. */
export function createGrpcClient<S extends AnyService>(
  service: S,
  options: GrpcClientOptions,
): ServiceClient<S> {
  const client = new grpc.Client(options.address, channelCredentials(options.security), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.service_config': retryServiceConfig(service),
    'grpc.enable_retries': 1,
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
  });
  const token = options.security.authToken;
  const result: Record<string, unknown> = {
    close: () => client.close(),
    waitForReady: (timeoutMs: number) =>
      new Promise<void>((resolve, reject) =>
        client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve())),
      ),
  };
  for (const method of service.methods) {
    if (method.methodKind !== 'unary') continue;
    const serialize = serializer(method.input);
    const deserialize = deserializer(method.output);
    const path = methodPath(service, method);
    result[method.localName] = (request: MessageInitShape<DescMessage>, callOptions: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        if (token) metadata.set(AUTH_METADATA, `Bearer ${token}`);
        const deadlineMs = callOptions.deadlineMs ?? options.defaultDeadlineMs ?? 5_000;
        const call = client.makeUnaryRequest(
          path,
          serialize,
          deserialize,
          create(method.input, request),
          metadata,
          { deadline: Date.now() + deadlineMs },
          (err, response) => (err ? reject(fromGrpcError(err, options.target)) : resolve(response)),
        );
        callOptions.signal?.addEventListener('abort', () => call.cancel(), { once: true });
      });
  }
  return result as ServiceClient<S>;
}

/** Asks a server's standard health service; used by readiness checks. */
export async function checkGrpcHealth(options: GrpcClientOptions, serviceName = ''): Promise<void> {
  const client = createGrpcClient(health.Health, options);
  try {
    const response = await client.check({ service: serviceName }, { deadlineMs: 1_500 });
    if (response.status !== health.HealthCheckResponse_ServingStatus.SERVING) {
      throw new Error(`${options.target} is not serving`);
    }
  } finally {
    client.close();
  }
}
