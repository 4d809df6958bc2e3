import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Router } from 'express';
import {
  AppError,
  assertStorableInput,
  BadRequest,
  labelledRoute,
  bindToContext,
  errorClass,
  extractTraceContext,
  failSpan,
  InternalError,
  type Logger,
  type Metrics,
  NotFound,
  PayloadTooLarge,
  requestContext,
  statusClass,
  runInContext,
  type Span,
  SpanKind,
  startSpan,
  toAppError,
  traceIdOf,
  tracingEnabled,
  withRequestId,
} from '@switchyard/core';
import { corsMiddleware, type CorsOptions } from './cors.ts';
import { createLimitedServer, defaultServerLimits, type ServerLimits } from './server-limits.ts';

export type ReadinessCheck = () => Promise<void>;

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  metrics: Metrics;
  readiness: Record<string, ReadinessCheck>;
  /** Mounted in order, after health endpoints. */
  routers: Array<{ prefix?: string; router: Router | RequestHandler }>;
  isStopping?: () => boolean;
  /**
   * Express's `trust proxy` setting, as TRUST_PROXY gives it: `true`, a hop count, or a
   * comma-separated list of addresses, subnets or `loopback`/`linklocal`/`uniquelocal`. Only
   * then does X-Forwarded-For decide the client address (`req.ip`); by default nothing is trusted.
   */
  trustProxy?: string | undefined;
  /**
   * Whether log lines written while serving a request carry its id on their own (through
   * AsyncLocalStorage; default true). On Node 20 that puts a hook on every promise the process
   * makes, so the gateway turns it off and names the request in its request-scope log lines.
   */
  requestLogContext?: boolean;
  /** Which browser pages may call the routes (see corsMiddleware); unset or no origins: no CORS. */
  cors?: CorsOptions | undefined;
}

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Refuses a body that is not UTF-8: decoding would turn its bad bytes into U+FFFD, so what was
 * stored and answered would not be what was sent.
 */
export function assertUtf8Body(bytes: Uint8Array): void {
  if (!isUtf8(bytes)) {
    throw new BadRequest('Request body is not valid UTF-8.', { code: 'invalid_text' });
  }
}

/** body-parser's `verify` hook: only a UTF-8 body is checked as UTF-8. */
function verifyUtf8(_req: IncomingMessage, _res: ServerResponse, bytes: Buffer, encoding: string): void {
  if (encoding === 'utf-8' || encoding === 'utf8') assertUtf8Body(bytes);
}

/** A body parser whose result must then pass `assertStorableInput` before the route sees it. */
function storableBody(parse: RequestHandler): RequestHandler {
  return (req, res, next) =>
    parse(req, res, (err?: unknown) => {
      if (err !== undefined) {
        next(err);
        return;
      }
      try {
        assertStorableInput(req.body);
      } catch (refused) {
        next(refused);
        return;
      }
      next();
    });
}

/**
 * Reads and validates a JSON body; malformed JSON becomes a 400, oversize a 413, and text no
 * store can hold or nesting deeper than MAX_INPUT_DEPTH a 400 naming the field.
 */
export function jsonBody(limit = '10mb'): RequestHandler {
  return storableBody(
    express.json({ limit, type: ['application/json', 'application/*+json'], verify: verifyUtf8 }),
  );
}

/**
 * Reads a form-encoded body (`application/x-www-form-urlencoded`, as OAuth clients send) into
 * an object of strings, a repeated name giving an array; checked as `jsonBody` checks JSON.
 */
export function formBody(limit: string, parameterLimit: number): RequestHandler {
  return storableBody(express.urlencoded({ extended: false, limit, parameterLimit }));
}

/**
 * Refuses path parameters and query values holding text no store can hold. Only a
 * percent-encoded URL can carry such text (HTTP refuses a raw NUL), so any other costs one scan.
 */
export const storableUrlText: RequestHandler = (req, _res, next) => {
  if (req.originalUrl.includes('%')) {
    assertWellEncodedQuery(req.originalUrl);
    for (const [name, value] of Object.entries(req.params ?? {})) assertStorableInput(value, 'path', name);
    assertStorableInput(req.query, 'query');
  }
  next();
};

/**
 * The query parser turns an escape that is not UTF-8 (`%FF`) or not an escape at all (`%zz`)
 * into other text; such a query is refused rather than read as something the client never sent.
 */
function assertWellEncodedQuery(url: string): void {
  const start = url.indexOf('?');
  if (start < 0) return;
  for (const part of url.slice(start + 1).split('&')) {
    try {
      decodeURIComponent(part);
    } catch {
      const name = part.split('=', 1)[0]!;
      throw new BadRequest(`Query parameter '${name}' is not valid percent-encoded UTF-8.`, {
        param: name,
        code: 'invalid_text',
      });
    }
  }
}

/**
 * Every request gets an id the server chose: it keys the request's log, so a client must
 * not be able to pick it (and collide with, or suppress, another request's log).
 */
export function requestIdMiddleware(logContext = true): RequestHandler {
  if (!logContext) {
    return (_req, res, next) => {
      res.setHeader(REQUEST_ID_HEADER, randomUUID());
      next();
    };
  }
  return (_req, res, next) => {
    const requestId = randomUUID();
    res.setHeader(REQUEST_ID_HEADER, requestId);
    requestContext.run({ requestId }, next);
  };
}

/**
 * Answers every error in the one error shape, and logs it by whose fault it is: a refusal of
 * the client's request (4xx) at info and a feature not built (501) at warn, both without a
 * stack; a server failure (5xx) at error, with the stack when it was unexpected.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const appError = translateFrameworkError(err) ?? toAppError(err);
    const { status } = appError;
    const fields = {
      ...requestFields(res),
      method: req.method,
      path: req.path,
      status,
      code: appError.code ?? appError.type,
    };
    if (status >= 500 && status !== 501) {
      const unexpected = appError instanceof InternalError;
      if ((res as Traced)[SPAN]) {
        (res as Traced)[ERROR_TYPE] = unexpected ? errorClass(err) : (appError.code ?? appError.type);
      }
      logger.error('request failed', { ...fields, error: unexpected ? err : appError.message });
    } else if (status === 501) {
      logger.warn('request not implemented', { ...fields, error: appError.message });
    } else {
      logger.info('request refused', { ...fields, error: appError.message });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
    res.status(appError.status).json(appError.toBody());
  };
}

/** An unexpected error's class, as a span's `error.type` names it. */
/** The request id the server gave a request and, when it is traced, its W3C trace id: every access and error line carries them. */
function requestFields(res: ServerResponse): { request_id: string; w3c_trace_id?: string } {
  const requestId = String(res.getHeader(REQUEST_ID_HEADER) ?? '');
  const traceId = traceIdOf((res as Traced)[SPAN]);
  return traceId === undefined ? { request_id: requestId } : { request_id: requestId, w3c_trace_id: traceId };
}

/** body-parser errors carry a `type`; map them onto the error vocabulary. */
function translateFrameworkError(err: unknown): AppError | undefined {
  if (!err || typeof err !== 'object' || err instanceof AppError) return undefined;
  const e = err as { type?: string; status?: number; message?: string };
  switch (e.type) {
    case 'entity.parse.failed':
      return new BadRequest(`Request body is not valid JSON: ${e.message ?? ''}`.trim(), {
        code: 'invalid_json',
      });
    case 'entity.too.large':
      return new PayloadTooLarge('Request body is too large.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new BadRequest('Unsupported request body encoding.');
    case 'request.aborted':
      return new BadRequest('Request was aborted by the client.');
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return new AppError(e.status, 'invalid_request_error', e.message ?? 'Bad request.');
  }
  return undefined;
}

const STARTED = Symbol('switchyard.started');
type Timed = ServerResponse & { [STARTED]?: number; req: IncomingMessage & { route?: { path?: unknown } } };

const SPAN = Symbol('switchyard.span');
/** What failed, for the span of a request answered with a server error (see errorMiddleware). */
const ERROR_TYPE = Symbol('switchyard.error-type');
type Traced = ServerResponse & {
  [SPAN]?: Span;
  [ERROR_TYPE]?: string;
  req: IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };
};

/** Ends a request's server span once its response is done or its connection closed. */
function endServerSpan(this: Traced): void {
  const span = this[SPAN];
  if (!span) return;
  const req = this.req;
  const routePath = req.route?.path;
  if (typeof routePath === 'string') {
    const route = `${req.baseUrl ?? ''}${routePath}`;
    span.setAttribute('http.route', route);
    span.updateName(`${req.method} ${route}`);
  }
  span.setAttribute('http.response.status_code', this.statusCode);
  if (this.statusCode >= 500 && this.statusCode !== 501) {
    failSpan(span, this[ERROR_TYPE] ?? String(this.statusCode));
  }
  span.end();
}

/**
 * A server span per request while tracing is on (see docs/tracing.md), the child of the
 * caller's `traceparent` when it sent one: what the request does (calls to other services,
 * to providers) is traced under it, and log lines written for it carry its request id.
 */
export function traceRequests(): RequestHandler {
  return (req, res, next) => {
    if (!tracingEnabled()) {
      next();
      return;
    }
    const requestId = String(res.getHeader(REQUEST_ID_HEADER) ?? '');
    const { span, context } = startSpan(
      req.method,
      SpanKind.SERVER,
      {
        'http.request.method': req.method,
        'url.path': req.path,
        'switchyard.request_id': requestId,
      },
      extractTraceContext(req.headers),
    );
    const traced = withRequestId(context, requestId);
    (res as Traced)[SPAN] = span;
    res.once('close', endServerSpan);
    bindToContext(traced, req);
    bindToContext(traced, res);
    runInContext(traced, next);
  };
}

/**
 * Request duration and count per service, method, route (pattern) and status class, the count
 * by status too, and an access log line at level `http`. One shared `finish` listener and one
 * label object per label set: no closures or label objects made per request. The route is the
 * router's pattern, else the template the handler named (labelRoute), else `unmatched`.
 */
function accessMetrics(options: HttpAppOptions): RequestHandler {
  const { metrics, logger, service } = options;
  const durationLabels = new Map<
    string,
    { service: string; method: string; route: string; status_class: string }
  >();
  const countLabels = new Map<
    string,
    { service: string; method: string; route: string; status: string; status_class: string }
  >();
  // The level is set when the logger is made; winston's own check builds arrays on every call.
  const logsRequests = logger.isLevelEnabled('http');
  function onFinish(this: Timed): void {
    const seconds = (performance.now() - (this[STARTED] ?? 0)) / 1000;
    const req = this.req;
    const method = req.method ?? '';
    const routePath = req.route?.path;
    const route = typeof routePath === 'string' ? routePath : (labelledRoute(this) ?? 'unmatched');
    const status = this.statusCode;
    const key = `${method} ${route} ${status}`;
    let counted = countLabels.get(key);
    if (!counted) {
      const labels = { service, method, route, status: String(status), status_class: statusClass(status) };
      countLabels.set(key, (counted = labels));
    }
    const durationKey = `${method} ${route} ${counted.status_class}`;
    let labels = durationLabels.get(durationKey);
    if (!labels) {
      durationLabels.set(
        durationKey,
        (labels = { service, method, route, status_class: counted.status_class }),
      );
    }
    metrics.httpDuration.observe(labels, seconds);
    metrics.httpRequests.inc(counted);
    if (logsRequests) {
      logger.http('request', {
        ...requestFields(this),
        method,
        path: (req as { path?: string }).path,
        status,
        duration_ms: Math.round(seconds * 1000),
      });
    }
  }
  return (_req, res, next) => {
    (res as Timed)[STARTED] = performance.now();
    res.on('finish', onFinish);
    next();
  };
}

/** TRUST_PROXY as express takes it; unset or `false` trusts no proxy. */
export function trustProxySetting(value: string | undefined): boolean | number | string {
  const text = value?.trim() ?? '';
  if (text === '' || text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  return text;
}

/** Health, readiness, metrics, request ids, access metrics, CORS, routers, one error handler. */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.set('trust proxy', trustProxySetting(options.trustProxy));
  app.use(requestIdMiddleware(options.requestLogContext ?? true));
  app.use(traceRequests());
  app.use(accessMetrics(options));
  const cors = options.cors && corsMiddleware(options.cors);
  if (cors) app.use(cors);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (options.isStopping?.()) {
      res.status(503).json({ status: 'stopping' });
      return;
    }
    const results = await checkReadiness(options.readiness);
    res
      .status(results.ok ? 200 : 503)
      .json({ status: results.ok ? 'ready' : 'not_ready', checks: results.checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', options.metrics.registry.contentType);
    res.send(await options.metrics.registry.metrics());
  });
  for (const { prefix, router } of options.routers) {
    if (prefix) app.use(prefix, router);
    else app.use(router);
  }
  app.use((req, _res, next) => next(new NotFound(`No route for ${req.method} ${req.path}.`)));
  app.use(errorMiddleware(options.logger));
  return app;
}

export async function checkReadiness(
  checks: Record<string, ReadinessCheck>,
): Promise<{ ok: boolean; checks: Record<string, string> }> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check(), 2000, `${name} readiness check timed out`);
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, err instanceof Error ? err.message : String(err)] as const;
      }
    }),
  );
  return { ok: entries.every(([, v]) => v === 'ok'), checks: Object.fromEntries(entries) };
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Request and response classes whose instances are born with the app's own request and response
 * prototypes. Express moves every request and response onto those prototypes before routing
 * (`Object.setPrototypeOf`); V8 gives an object whose prototype changes a fresh hidden class, so
 * every request had its own shape and every property access on it, in Node's HTTP code and in
 * each middleware, fell back to slow megamorphic lookups. Created on the right prototype, the
 * move is a no-op and all requests share one shape (a gateway request costs about 40% less CPU).
 */
export function serverClasses(app: Express): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  function Request(this: IncomingMessage, socket: Socket): void {
    Reflect.apply(IncomingMessage, this, [socket]);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, req: IncomingMessage, options?: object): void {
    Reflect.apply(ServerResponse, this, [req, options]);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}

/**
 * Listens within `limits` (see createLimitedServer) and returns a close() that stops accepting,
 * lets in-flight requests finish, then ends idle sockets.
 */
export async function listen(
  app: Express | ((req: IncomingMessage, res: ServerResponse) => void),
  host: string,
  port: number,
  limits: ServerLimits = defaultServerLimits,
): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const classes = 'request' in app && 'response' in app ? serverClasses(app) : {};
  const server = createLimitedServer(limits, classes, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  return {
    server,
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        // A keep-alive connection busy now turns idle once its response is done; end it
        // then rather than at the keep-alive timeout.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
