// One error vocabulary for every service. Thrown anywhere, translated to the HTTP body in
// http.ts and to gRPC status codes in grpc.ts.

import { isDatabaseUnavailable } from './store/data-source.ts';

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface AppErrorOptions {
  param?: string | null;
  code?: string | null;
  cause?: unknown;
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export class BadRequest extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(400, 'invalid_request_error', message, options);
  }
}

export class Unauthorized extends AppError {
  constructor(message = 'Missing or invalid credentials.', options?: AppErrorOptions) {
    super(401, 'authentication_error', message, { code: 'invalid_api_key', ...options });
  }
}

export class Forbidden extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(403, 'permission_error', message, options);
  }
}

export class NotFound extends AppError {
  constructor(message = 'Not found.', options?: AppErrorOptions) {
    super(404, 'not_found_error', message, options);
  }
}

export class Conflict extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(409, 'conflict_error', message, options);
  }
}

export class PayloadTooLarge extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(413, 'invalid_request_error', message, { code: 'payload_too_large', ...options });
  }
}

export class UnprocessableEntity extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(422, 'invalid_request_error', message, options);
  }
}

export class TooManyRequests extends AppError {
  constructor(message: string, retryAfterSeconds: number, options?: AppErrorOptions) {
    super(429, 'rate_limit_error', message, {
      code: 'rate_limited',
      ...options,
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))), ...options?.headers },
    });
  }
}

export class GuardrailDenied extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(446, 'guardrail_error', message, { code: 'guardrail_denied', ...options });
  }
}

export class RequestTimeout extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(408, 'timeout_error', message, { code: 'request_timeout', ...options });
  }
}

/** The upstream provider answered with an error, or could not be reached. */
export class UpstreamError extends AppError {
  constructor(status: number, message: string, options?: AppErrorOptions) {
    super(status >= 400 && status <= 599 ? status : 502, 'upstream_error', message, options);
  }
}

export class NotImplemented extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(501, 'not_implemented_error', message, { code: 'not_implemented', ...options });
  }
}

export class ServiceUnavailable extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(503, 'service_unavailable_error', message, options);
  }
}

export class InternalError extends AppError {
  constructor(message = 'Internal error.', options?: AppErrorOptions) {
    super(500, 'internal_error', message, options);
  }
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) {
    return new ServiceUnavailable('The database is busy or unavailable; try again shortly.', {
      code: 'database_unavailable',
      cause: err,
      headers: { 'retry-after': '1' },
    });
  }
  return new InternalError('Internal error.', { cause: err });
}
