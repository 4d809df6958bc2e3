// A small typed bridge between protobuf-es service descriptors and @grpc/grpc-js: typed
// handlers on the server, typed promise clients, deadlines, keep-alive, retries for methods
// the proto marks idempotent, the standard health service, and service-to-service auth:
// every method names the services that may call it, and each call proves which one it is.
import { createHmac, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import type { PeerCertificate } from 'node:tls';
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
  ConfigError,
  Conflict,
  extractTraceContext,
  failSpan,
  Forbidden,
  GuardrailDenied,
  injectTraceContext,
  InternalError,
  type Logger,
  NotFound,
  NotImplemented,
  PayloadTooLarge,
  RequestTimeout,
  runInContext,
  safeEqual,
  ServiceUnavailable,
  type Span,
  SpanKind,
  startSpan,
  toAppError,
  TooManyRequests,
  tracingEnabled,
  Unauthorized,
  UnprocessableEntity,
} from '@switchyard/core';
import { isServiceName, serviceNames, type ServiceName } from './routes.ts';

/** gRPC status codes, for callers that tell a refusal from a failure. */
export { status as GrpcStatus } from '@grpc/grpc-js';

type UnaryMethod = { methodKind: 'unary'; input: DescMessage; output: DescMessage };
export type AnyService = DescService & { method: Record<string, unknown> };

type MethodsOf<S extends AnyService> = S['method'];

export interface CallContext {
  metadata: grpc.Metadata;
  deadline: grpc.Deadline;
  /** The calling service, proven by its certificate or its service token. */
  caller: ServiceName;
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

/**
 * For each method of a service, the services that may call it. Every method needs an entry,
 * so a new method cannot be served before someone decides who may use it.
 */
export type CallerRules<S extends AnyService> = {
  readonly [K in keyof MethodsOf<S>]: readonly ServiceName[];
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
  /**
   * Shared secret from which each service's own token is derived (see `callerToken`); calls
   * carry the derived token, never this one. Health checks are exempt.
   */
  authToken?: string;
  /** Mutual TLS; a certificate whose Common Name is a service name proves that service. */
  tls?: { caFile: string; certFile: string; keyFile: string };
}

const AUTH_METADATA = 'authorization';
const CALLER_METADATA = 'x-switchyard-caller';
const HTTP_STATUS_METADATA = 'x-switchyard-http-status';
const ERROR_PARAM_METADATA = 'x-switchyard-error-param';
const ERROR_CODE_METADATA = 'x-switchyard-error-code';

/** The token `service` presents with its calls: HMAC-SHA256 of its name under the shared secret. */
export function callerToken(authToken: string, service: ServiceName): string {
  return createHmac('sha256', authToken).update(service).digest('base64url');
}

/**
 * The token `service` presents as system authentication to another service's HTTP API: derived
 * from the same shared secret as its gRPC token, under a label of its own, so that neither
 * token stands in for the other.
 */
export function systemHttpToken(authToken: string, service: ServiceName): string {
  return createHmac('sha256', authToken).update(`http:${service}`).digest('base64url');
}

/** The service a certificate names by its Common Name, if any. */
function serviceOfPeer(certificate: PeerCertificate | undefined): ServiceName | undefined {
  const commonName: unknown = certificate?.subject?.CN;
  return isServiceName(commonName) ? commonName : undefined;
}

function serviceOfCertificateFile(file: string): ServiceName | undefined {
  const subject = new X509Certificate(readFileSync(file)).subject;
  const commonName = subject
    .split('\n')
    .find((part) => part.startsWith('CN='))
    ?.slice(3);
  return isServiceName(commonName) ? commonName : undefined;
}

/**
 * Fails start-up when `service` could not prove who it is to the servers it calls: its
 * certificate names another service, or names none and there is no token to fall back on.
 */
export function checkCallerIdentity(security: GrpcSecurity, service: ServiceName): void {
  if (!security.tls) return;
  const named = serviceOfCertificateFile(security.tls.certFile);
  if (named && named !== service) {
    throw new ConfigError(
      `GRPC_TLS_CERT_FILE: the certificate names ${named} (CN) but this process runs ${service}`,
    );
  }
  if (!named && !security.authToken) {
    throw new ConfigError(
      `GRPC_TLS_CERT_FILE: the certificate names no service (CN=${serviceNames.join('|')}); ` +
        `issue one per service or set GRPC_AUTH_TOKEN so ${service} can prove who it is`,
    );
  }
}

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
      // A handler's Forbidden carries its HTTP status; a method closed to this service does not.
      return single(HTTP_STATUS_METADATA) === '403'
        ? new Forbidden(message, options)
        : new InternalError(`${target} refused the call: ${message}`, { cause: err });
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

/** How long a client's connection lives before the server asks it to connect again. */
const MAX_CONNECTION_AGE_MS = 5 * 60_000;
/** How long calls under way on such a connection may take to finish. */
const MAX_CONNECTION_AGE_GRACE_MS = 60_000;

export interface GrpcServerOptions {
  logger: Logger;
  security: GrpcSecurity;
  /** How long a client's connection lives before it is asked to connect again (5 minutes). */
  maxConnectionAgeMs?: number;
}

type HealthStatus = health.HealthCheckResponse_ServingStatus;

/** A method this server serves and the services that may call it. */
export interface RegisteredMethod {
  service: DescService;
  method: DescMethod;
  callers: readonly ServiceName[];
}

type CallerProof = { caller: ServiceName } | { refused: string };

/** Checks that `callers` names, for every method of `service` and nothing else, known services. */
function checkCallerRules(service: DescService, callers: Record<string, unknown>): void {
  const methods = new Set(service.methods.map((m) => m.localName));
  for (const key of Object.keys(callers)) {
    if (!methods.has(key)) throw new Error(`${service.typeName}: caller rule for unknown method ${key}`);
  }
  for (const method of service.methods) {
    const allowed = callers[method.localName];
    if (!Array.isArray(allowed) || allowed.length === 0) {
      throw new Error(`${service.typeName}.${method.name}: no calling services declared`);
    }
    const unknown = allowed.filter((name) => !isServiceName(name));
    if (unknown.length > 0) {
      throw new Error(`${service.typeName}.${method.name}: unknown calling service ${unknown.join(', ')}`);
    }
  }
}

/**
 * A gRPC server with the standard health service built in, and one check in front of every
 * other method: the caller proves which service it is, and the method's rules must name it.
 */
export class GrpcServer {
  private readonly server: grpc.Server;
  private readonly statuses = new Map<string, HealthStatus>([
    ['', health.HealthCheckResponse_ServingStatus.SERVING],
  ]);
  private readonly watchers = new Set<{
    service: string;
    call: grpc.ServerWritableStream<unknown, unknown>;
  }>();
  private readonly registered: RegisteredMethod[] = [];
  /** What each service must present with GRPC_AUTH_TOKEN set, computed once rather than per call. */
  private readonly tokens: ReadonlyMap<ServiceName, string>;

  constructor(private readonly options: GrpcServerOptions) {
    this.server = new grpc.Server({
      'grpc.keepalive_time_ms': 60_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      // Clients connect again every few minutes (calls under way finish first), so that behind
      // a Kubernetes Service their calls spread over replicas added since they first connected.
      'grpc.max_connection_age_ms': options.maxConnectionAgeMs ?? MAX_CONNECTION_AGE_MS,
      'grpc.max_connection_age_grace_ms': MAX_CONNECTION_AGE_GRACE_MS,
    });
    const secret = options.security.authToken;
    this.tokens = new Map(
      secret ? serviceNames.map((name) => [name, `Bearer ${callerToken(secret, name)}`] as const) : [],
    );
    this.addHealthService();
  }

  /** Serves `service`; `callers` names, per method, the services that may call it. */
  add<S extends AnyService>(service: S, handlers: ServiceHandlers<S>, callers: CallerRules<S>): this {
    checkCallerRules(service, callers);
    const implementation: grpc.UntypedServiceImplementation = {};
    for (const method of service.methods) {
      const handler = (handlers as Record<string, unknown>)[method.localName] as
        ((req: unknown, ctx: CallContext) => Promise<MessageInitShape<DescMessage>>) | undefined;
      if (method.methodKind !== 'unary' || !handler) {
        throw new Error(`${service.typeName}.${method.name}: only unary handlers are supported`);
      }
      const allowed: readonly ServiceName[] = (callers as Record<string, readonly ServiceName[]>)[
        method.localName
      ]!;
      const name = `${service.typeName}.${method.name}`;
      implementation[method.localName] = (
        call: grpc.ServerUnaryCall<unknown, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        const proof = this.callerOf(call);
        if ('refused' in proof) {
          this.options.logger.warn('grpc call refused', {
            method: name,
            peer: call.getPeer(),
            reason: proof.refused,
          });
          callback({ code: grpc.status.UNAUTHENTICATED, details: proof.refused });
          return;
        }
        const { caller } = proof;
        if (!allowed.includes(caller)) {
          this.options.logger.warn('grpc call denied', { method: name, caller });
          callback({
            code: grpc.status.PERMISSION_DENIED,
            details: `${name} is not open to ${caller} (it serves ${allowed.join(', ')}).`,
          });
          return;
        }
        const traced = tracingEnabled() ? serverSpan(service, method, call.metadata, caller) : undefined;
        const span = traced?.span;
        const handled = () =>
          handler(call.request, { metadata: call.metadata, deadline: call.getDeadline(), caller }).then(
            (response) => {
              if (span) endRpcSpan(span, grpc.status.OK);
              callback(null, create(method.output, response));
            },
            (err: unknown) => {
              if (!(err instanceof AppError) || err.status >= 500) {
                this.options.logger.error('grpc handler failed', { method: method.name, error: err });
              }
              const failure = toGrpcError(err);
              if (span) endRpcSpan(span, failure.code ?? grpc.status.UNKNOWN);
              callback(failure);
            },
          );
        if (traced) runInContext(traced.context, handled);
        else void handled();
      };
    }
    this.server.addService(grpcDefinition(service), implementation);
    this.statuses.set(service.typeName, health.HealthCheckResponse_ServingStatus.SERVING);
    for (const method of service.methods) {
      this.registered.push({
        service,
        method,
        callers: (callers as Record<string, readonly ServiceName[]>)[method.localName]!,
      });
    }
    return this;
  }

  /** Every method served so far (the health service aside), with the services that may call it. */
  methods(): readonly RegisteredMethod[] {
    return this.registered;
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

  /**
   * Which service is calling. A client certificate naming a service proves it outright; else
   * the named caller must present the token derived for it from GRPC_AUTH_TOKEN. With neither
   * TLS nor a token (local development) the named caller is taken at its word.
   */
  private callerOf(call: grpc.ServerUnaryCall<unknown, unknown>): CallerProof {
    const { authToken, tls } = this.options.security;
    const claimed = call.metadata.get(CALLER_METADATA)[0];
    if (claimed !== undefined && !isServiceName(claimed)) {
      return { refused: `${CALLER_METADATA} names no known service.` };
    }
    if (tls) {
      const certified = serviceOfPeer(call.getAuthContext().sslPeerCertificate);
      if (certified) {
        return claimed === undefined || claimed === certified
          ? { caller: certified }
          : {
              refused: `The client certificate names ${certified}, but the call claims to come from ${claimed}.`,
            };
      }
    }
    if (claimed === undefined) return { refused: `The call names no calling service (${CALLER_METADATA}).` };
    if (authToken) {
      const presented = call.metadata.get(AUTH_METADATA)[0];
      const expected = this.tokens.get(claimed)!;
      return typeof presented === 'string' && safeEqual(presented, expected)
        ? { caller: claimed }
        : { refused: `Missing or invalid service token for ${claimed}.` };
    }
    return tls
      ? { refused: 'The client certificate names no service, and no service token is configured.' }
      : { caller: claimed };
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
  /** `host:port`, a comma-separated list of IP `host:port`s, or a gRPC target (`dns:///name:port`); see channelTarget. */
  address: string;
  /** Used in error messages, e.g. "control-plane". */
  target: string;
  security: GrpcSecurity;
  /** The service making the calls; without one, only the health service answers. */
  caller?: ServiceName;
  defaultDeadlineMs?: number;
}

const TARGET_SCHEME = /^(dns|ipv4|ipv6|unix|unix-abstract):/;

/**
 * The gRPC target of a configured address. One `host:port` stays as it is (resolved by DNS);
 * a comma-separated list of IP addresses (`127.0.0.1:7001,127.0.0.1:7002`) becomes an
 * `ipv4:`/`ipv6:` target; a target with a scheme (`dns:///policy-grpc:50051`, which resolves
 * to every pod behind a headless Service) is used as it is. Calls are spread round-robin over
 * whatever the target resolves to, and a replica that stops is skipped.
 */
export function channelTarget(address: string): string {
  const trimmed = address.trim();
  if (TARGET_SCHEME.test(trimmed) || !trimmed.includes(',')) return trimmed;
  const parts = trimmed.split(',').map((part) => part.trim());
  const hosts = parts.map((part) => {
    const bracketed = /^\[([^\]]+)\]:\d+$/.exec(part);
    const host = bracketed ? bracketed[1]! : part.slice(0, part.lastIndexOf(':'));
    if (!/:\d+$/.test(part) || part.lastIndexOf(':') <= 0) {
      throw new ConfigError(
        `gRPC address '${part}' in a list must be an IP address and a port, e.g. 127.0.0.1:7001`,
      );
    }
    return host;
  });
  if (hosts.every((host) => isIPv4(host))) return `ipv4:${parts.join(',')}`;
  if (hosts.every((host) => isIPv6(host))) return `ipv6:${parts.join(',')}`;
  throw new ConfigError(
    `gRPC address list '${trimmed}' must be all IPv4 or all IPv6 addresses with ports; for host names use one dns:/// target`,
  );
}

function clientServiceConfig(service: DescService): string {
  const idempotent = service.methods.filter(
    (m) => m.idempotency === Idempotency.NO_SIDE_EFFECTS || m.idempotency === Idempotency.IDEMPOTENT,
  );
  const loadBalancingConfig = [{ round_robin: {} }];
  if (idempotent.length === 0) return JSON.stringify({ loadBalancingConfig });
  return JSON.stringify({
    loadBalancingConfig,
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
  const client = new grpc.Client(channelTarget(options.address), channelCredentials(options.security), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.service_config': clientServiceConfig(service),
    'grpc.enable_retries': 1,
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
  });
  const identity = new grpc.Metadata();
  if (options.caller) {
    identity.set(CALLER_METADATA, options.caller);
    const token = options.security.authToken;
    if (token) identity.set(AUTH_METADATA, `Bearer ${callerToken(token, options.caller)}`);
  }
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
        const metadata = identity.clone();
        const deadlineMs = callOptions.deadlineMs ?? options.defaultDeadlineMs ?? 5_000;
        const span = tracingEnabled() ? clientSpan(service, method, metadata) : undefined;
        const call = client.makeUnaryRequest(
          path,
          serialize,
          deserialize,
          create(method.input, request),
          metadata,
          { deadline: Date.now() + deadlineMs },
          (err, response) => {
            if (span) endRpcSpan(span, err ? err.code : grpc.status.OK);
            if (err) reject(fromGrpcError(err, options.target));
            else resolve(response);
          },
        );
        callOptions.signal?.addEventListener('abort', () => call.cancel(), { once: true });
      });
  }
  return result as ServiceClient<S>;
}

/** The attributes of a call's span (OpenTelemetry's RPC conventions). */
function rpcAttributes(service: DescService, method: DescMethod) {
  return { 'rpc.system': 'grpc', 'rpc.service': service.typeName, 'rpc.method': method.name };
}

/** Codes that are the server's fault; the others refuse the caller's request. */
const SERVER_FAULTS: readonly grpc.status[] = [
  grpc.status.UNKNOWN,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.INTERNAL,
  grpc.status.UNAVAILABLE,
  grpc.status.DATA_LOSS,
];

/** A span for a call this process makes; its trace context goes with the call in `metadata`. */
function clientSpan(service: DescService, method: DescMethod, metadata: grpc.Metadata): Span {
  const { span, context } = startSpan(
    `${service.typeName}/${method.name}`,
    SpanKind.CLIENT,
    rpcAttributes(service, method),
  );
  injectTraceContext(context, (key, value) => metadata.set(key, value));
  return span;
}

/** A span for a call this server serves, continuing the caller's trace (its `traceparent` metadata). */
function serverSpan(
  service: DescService,
  method: DescMethod,
  metadata: grpc.Metadata,
  caller: ServiceName,
): ReturnType<typeof startSpan> {
  const first = (key: string) => {
    const value = metadata.get(key)[0];
    return typeof value === 'string' ? value : undefined;
  };
  return startSpan(
    `${service.typeName}/${method.name}`,
    SpanKind.SERVER,
    { ...rpcAttributes(service, method), 'switchyard.caller': caller },
    extractTraceContext({ traceparent: first('traceparent'), tracestate: first('tracestate') }),
  );
}

function endRpcSpan(span: Span, code: grpc.status): void {
  span.setAttribute('rpc.grpc.status_code', code);
  if (SERVER_FAULTS.includes(code)) failSpan(span, grpc.status[code] ?? String(code));
  span.end();
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
