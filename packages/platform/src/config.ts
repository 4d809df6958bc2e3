import { z } from 'zod';

/** Thrown at start-up when the environment does not satisfy a service's schema. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment once, at start-up. A bad or missing variable is named in the
 * error so an operator can fix it without reading code.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.output<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`,
    );
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

const blankToUndefined = (value: unknown) => (value === '' ? undefined : value);

export const env = {
  string: (fallback?: string) =>
    fallback === undefined
      ? z.preprocess(blankToUndefined, z.string())
      : z.preprocess(blankToUndefined, z.string().default(fallback)),
  optionalString: () => z.preprocess(blankToUndefined, z.string().optional()),
  port: (fallback: number) =>
    z.preprocess(blankToUndefined, z.coerce.number().int().min(0).max(65535).default(fallback)),
  int: (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
    z.preprocess(blankToUndefined, z.coerce.number().int().min(min).max(max).default(fallback)),
  bool: (fallback: boolean) =>
    z.preprocess(
      blankToUndefined,
      z
        .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'expected true or false' })
        .default(fallback ? 'true' : 'false')
        .transform((v) => ['true', '1', 'yes', 'on'].includes(v)),
    ),
  list: () =>
    z.preprocess(
      blankToUndefined,
      z
        .string()
        .default('')
        .transform((v) =>
          v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
    ),
  url: () => z.preprocess(blankToUndefined, z.url()),
  /** A size as body-parser reads it (`512kb`, `25mb`): one it cannot read would lift the limit altogether. */
  size: (fallback: string) =>
    z.preprocess(
      blankToUndefined,
      z
        .string()
        .regex(/^\s*\d+(?:\.\d+)?\s*(?:b|kb|mb|gb)?\s*$/i, 'expected a size such as 512kb or 25mb')
        .default(fallback),
    ),
  logLevel: () =>
    z.preprocess(blankToUndefined, z.enum(['error', 'warn', 'info', 'http', 'debug']).default('info')),
};

/**
 * Bounds of the HTTP server each process runs (see `ServerLimits`). Node refuses a header bound
 * longer than the request bound, so `listen` caps the first at the second.
 */
export const httpServerEnv = {
  HTTP_HEADERS_TIMEOUT_MS: env.int(10_000, 1, 600_000),
  HTTP_REQUEST_TIMEOUT_MS: env.int(60_000, 1, 3_600_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: env.int(65_000, 1, 600_000),
  HTTP_MAX_CONNECTIONS: env.int(10_000, 1, 1_000_000),
};

/** Deadlines of the calls a process makes to its database and to other services. */
export const callDeadlineEnv = {
  GRPC_DEADLINE_MS: env.int(5_000, 1, 600_000),
  DB_QUERY_TIMEOUT_MS: env.int(15_000, 1, 3_600_000),
  DB_CONNECT_TIMEOUT_MS: env.int(5_000, 1, 600_000),
};
export type CallDeadlines = z.output<z.ZodObject<typeof callDeadlineEnv>>;
/** The call deadlines' defaults, for what runs without the settings (tests, tools). */
export const callDeadlineDefaults: CallDeadlines = loadConfig(z.object(callDeadlineEnv), {});

/**
 * Largest request body of each family of routes outside the data plane (larger: 413); the
 * gateway's own is MAX_REQUEST_BODY.
 */
export const bodyLimitEnv = {
  /** Management APIs: integrations, workspaces, keys, configs, members, organisation settings. */
  MAX_MANAGEMENT_REQUEST_BODY: env.size('1mb'),
  /** The OAuth protocol and consent endpoints: a registration holds at most 10 URIs of 2048 characters. */
  MAX_OAUTH_REQUEST_BODY: env.size('32kb'),
  /** The SCIM protocol: a group's whole member list may come in one request. */
  MAX_SCIM_REQUEST_BODY: env.size('4mb'),
};
export interface BodyLimits {
  management: string;
  oauth: string;
  scim: string;
}
export function bodyLimitsFrom(config: z.output<z.ZodObject<typeof bodyLimitEnv>>): BodyLimits {
  return {
    management: config.MAX_MANAGEMENT_REQUEST_BODY,
    oauth: config.MAX_OAUTH_REQUEST_BODY,
    scim: config.MAX_SCIM_REQUEST_BODY,
  };
}

/** Settings every service process reads. */
export const baseEnvSchema = z.object({
  NODE_ENV: env.string('development'),
  LOG_LEVEL: env.logLevel(),
  HOST: env.string('0.0.0.0'),
  PORT: env.port(8080),
  SHUTDOWN_GRACE_MS: env.int(10_000, 0, 600_000),
  GRPC_AUTH_TOKEN: env.optionalString(),
  GRPC_TLS_CA_FILE: env.optionalString(),
  GRPC_TLS_CERT_FILE: env.optionalString(),
  GRPC_TLS_KEY_FILE: env.optionalString(),
  /** Express's `trust proxy` setting: which proxies' X-Forwarded-For names the client (see createHttpApp). */
  TRUST_PROXY: env.optionalString(),
  ...httpServerEnv,
  ...callDeadlineEnv,
});
export type BaseEnv = z.output<typeof baseEnvSchema>;
