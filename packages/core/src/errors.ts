// One error vocabulary for every service. Thrown anywhere, translated to the HTTP body in
// http.ts and to gRPC status codes in grpc.ts.

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
  /** What some errors add beside `error`, e.g. a guardrail denial's `hook_results`. */
  [detail: string]: unknown;
}

export interface AppErrorOptions {
  param?: string | null;
  code?: string | null;
  cause?: unknown;
  headers?: Record<string, string>;
  /** Fields of the body beside `error` (never `error` itself). */
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;
  readonly details: Record<string, unknown> | undefined;

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
    this.details = options.details;
  }

  toBody(): ErrorBody {
    return {
      ...this.details,
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
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

/** A route that was served once and is removed for good: the message says where to go instead. */
export class Gone extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super(410, 'invalid_request_error', message, { code: 'route_removed', ...options });
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

/** The five-character SQLSTATE of a Postgres error report. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/**
 * The SQLSTATE of a Postgres error, as `pg` raises it (a `DatabaseError`, which carries the
 * report's `severity`) or as TypeORM wraps it (`QueryFailedError.driverError`); undefined for
 * anything else, such as a refused connection.
 */
export function postgresErrorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const driverError = (err as { driverError?: unknown }).driverError;
  const report = (typeof driverError === 'object' && driverError !== null ? driverError : err) as {
    code?: unknown;
    severity?: unknown;
  };
  const { code, severity } = report;
  return typeof code === 'string' && typeof severity === 'string' && SQLSTATE.test(code) ? code : undefined;
}

/**
 * Postgres errors that the values a request sent cause, as the client's error. The messages
 * are ours: the database's name its tables and constraints.
 */
const INPUT_ERRORS: Record<string, (err: unknown) => AppError> = {
  // string_data_right_truncation: a 400, not a 413, since one value is too long for its
  // field; the request as a whole may be small.
  '22001': (cause) =>
    new BadRequest('A value is longer than its field can hold.', { code: 'value_too_long', cause }),
  // numeric_value_out_of_range
  '22003': (cause) =>
    new BadRequest('A number is outside the range its field can hold.', {
      code: 'number_out_of_range',
      cause,
    }),
  // invalid_datetime_format, datetime_field_overflow
  '22007': (cause) => new BadRequest('A date or time is not valid.', { code: 'invalid_parameter', cause }),
  '22008': (cause) => new BadRequest('A date or time is not valid.', { code: 'invalid_parameter', cause }),
  // invalid_text_representation, e.g. a malformed UUID
  '22P02': (cause) =>
    new BadRequest('A value is not in the form its field takes.', { code: 'invalid_parameter', cause }),
  // character_not_in_repertoire (a NUL byte), untranslatable_character
  '22021': (cause) =>
    new BadRequest('Text holds a character that cannot be stored.', { code: 'invalid_text', cause }),
  '22P05': (cause) =>
    new BadRequest('Text holds a character that cannot be stored.', { code: 'invalid_text', cause }),
  // check_violation: like a schema's refinement, a value the field does not allow.
  '23514': (cause) =>
    new BadRequest('A value is not one its field allows.', { code: 'invalid_parameter', cause }),
  '23503': foreignKeyError,
  // unique_violation
  '23505': (cause) => new Conflict('A resource with these values already exists.', { cause }),
  // program_limit_exceeded: a value too large for an index entry.
  '54000': (cause) => new BadRequest('A value is too large to store.', { code: 'value_too_long', cause }),
};

/**
 * foreign_key_violation: on a write that refers to a row, the row does not exist (404); on a
 * delete, other rows still refer to it (409). Postgres tells them apart only in `detail`.
 */
function foreignKeyError(cause: unknown): AppError {
  const report = (cause as { driverError?: { detail?: unknown }; detail?: unknown }) ?? {};
  const detail = report.driverError?.detail ?? report.detail;
  if (typeof detail === 'string' && detail.includes('is not present in table')) {
    return new NotFound('A resource the request refers to does not exist.', { cause });
  }
  return new Conflict('The resource is still referred to by other resources.', { cause });
}

/** An AppError as it is; a database error the request's values caused as a 4xx; anything else a 500. */
/**
 * SQLSTATEs that say the database could not serve the statement now, not that it was wrong:
 * a statement or transaction past its deadline or a wait for the session or a lock past its
 * own (timeouts), connection failures (class 08), shutdown, serialisation and deadlock.
 */
const DATABASE_TIMEOUT = /^(25P04|55P03|57014)$/;
const DATABASE_UNAVAILABLE = /^(08...|25P03|40001|40P01|53300|57P0[123])$/;
/** What `pg` raises itself: no answer to a query or no connection in time, or a connection lost. */
const CLIENT_TIMEOUT =
  /^(Query read timeout|timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/;
const CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error)/;

/**
 * Whether a query failed because the database was slow, busy or away (so trying later may
 * succeed): `timeout`, `unavailable`, or undefined for any other failure.
 */
export function databaseFault(err: unknown): 'timeout' | 'unavailable' | undefined {
  const code = postgresErrorCode(err);
  if (code !== undefined) {
    if (DATABASE_TIMEOUT.test(code)) return 'timeout';
    if (DATABASE_UNAVAILABLE.test(code)) return 'unavailable';
    return undefined;
  }
  if (typeof err !== 'object' || err === null) return undefined;
  // What `pg` raises itself carries no SQLSTATE: TypeORM wraps it, a failed pool checkout arrives as is.
  const cause = (err as { driverError?: unknown }).driverError ?? err;
  if (!(cause instanceof Error)) return undefined;
  if (CLIENT_TIMEOUT.test(cause.message)) return 'timeout';
  if (CONNECTION_LOST.test(cause.message)) return 'unavailable';
  return undefined;
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const fault = databaseFault(err);
  if (fault) {
    return new ServiceUnavailable(
      fault === 'timeout'
        ? 'The database did not answer in time; try again shortly.'
        : 'The database is busy or unavailable; try again shortly.',
      {
        code: fault === 'timeout' ? 'database_timeout' : 'database_unavailable',
        cause: err,
        headers: { 'retry-after': '1' },
      },
    );
  }
  const code = postgresErrorCode(err);
  const inputError = code === undefined ? undefined : INPUT_ERRORS[code];
  if (inputError) return inputError(err);
  return new InternalError('Internal error.', { cause: err });
}
