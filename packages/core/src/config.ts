import { z } from 'zod';
import { SecretBox } from './crypto.ts';

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
  /** A fraction from 0 to 1, such as a sampling ratio. */
  ratio: (fallback: number) =>
    z.preprocess(blankToUndefined, z.coerce.number().min(0).max(1).default(fallback)),
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
  HTTP_HEADERS_TIMEOUT_MS: env.int(10_000, 1, 600_000).meta({
    description: "a request's line and headers must arrive within this (else 408)",
  }),
  HTTP_REQUEST_TIMEOUT_MS: env.int(60_000, 1, 3_600_000).meta({
    description:
      'the whole request, body included, must arrive within this (else 408 and the connection is closed); a response under way, such as a stream, is not cut',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: env.int(65_000, 1, 600_000).meta({
    description:
      'an idle keep-alive connection closes after this; keep it above the idle timeout of a load balancer in front',
  }),
  HTTP_MAX_CONNECTIONS: env.int(10_000, 1, 1_000_000).meta({
    description:
      'open connections per process; one past it gets 503 (`too_many_connections`, `retry-after: 1`) and is closed',
  }),
};

/**
 * An origin as a browser sends it in `Origin` (scheme, host, port unless the default), from an
 * operator's entry: http or https, a host, an optional port, and nothing after them.
 */
function originOf(entry: string): string | undefined {
  if (!/^https?:\/\/[^/?#@*\s]+$/i.test(entry)) return undefined;
  try {
    return new URL(entry).origin;
  } catch {
    return undefined;
  }
}

/** Which browser pages may call a process's HTTP API (see createHttpApp's `cors`). */
export const corsEnv = {
  CORS_ALLOWED_ORIGINS: env
    .list()
    .transform((entries, ctx) => {
      if (entries.includes('*') && entries.length > 1) {
        ctx.addIssue({ code: 'custom', message: "'*' allows every origin and must be the only entry" });
        return z.NEVER;
      }
      if (entries[0] === '*') return entries;
      const origins: string[] = [];
      for (const entry of entries) {
        const origin = originOf(entry);
        if (origin === undefined) {
          ctx.addIssue({
            code: 'custom',
            message: `'${entry}' is not an origin: expected http or https, a host and an optional port, and no path, not even '/' (such as https://app.example.com)`,
          });
        } else if (!origins.includes(origin)) origins.push(origin);
      }
      return origins;
    })
    .meta({
      description:
        'comma-separated origins of the browser pages that may call the HTTP API, credentials allowed (`https://app.example.com`: a port only when not the default, no path), or `*` for any page, without credentials. Unset: no CORS headers, so browsers keep cross-origin answers from pages. Preflights from these origins are answered 204 before authentication (`Access-Control-Max-Age`: CORS_MAX_AGE_SECONDS)',
    }),
  CORS_MAX_AGE_SECONDS: env.int(600, 0, 86_400).meta({
    description: 'how long a browser may reuse the answer to a CORS preflight (`Access-Control-Max-Age`)',
  }),
};

/**
 * `name=value` pairs separated by commas, as OTEL_EXPORTER_OTLP_HEADERS gives them (values
 * may be percent-encoded).
 */
function headerPairs(text: string, ctx: z.core.$RefinementCtx): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const name = at > 0 ? pair.slice(0, at).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      ctx.addIssue({ code: 'custom', message: `'${pair.trim()}' is not a name=value pair` });
      continue;
    }
    try {
      headers[name.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      ctx.addIssue({ code: 'custom', message: `the value of '${name}' is not valid percent-encoding` });
    }
  }
  return headers;
}

/** Traces each process sends (see docs/tracing.md): off unless an OTLP endpoint is set. */
export const tracingEnv = {
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .preprocess(blankToUndefined, z.url({ protocol: /^https?$/ }).optional())
    .meta({
      description:
        'base URL of an OpenTelemetry collector speaking OTLP over HTTP (`http://otel-collector:4318`); spans go to `<it>/v1/traces` as JSON. Unset: tracing is off (no spans, no `traceparent` passed on)',
    }),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .preprocess(blankToUndefined, z.string().default(''))
    .transform(headerPairs)
    .meta({
      description:
        "headers sent with every export, as comma-separated `name=value` pairs (values percent-encoded), such as a vendor's API key",
    }),
  OTEL_SERVICE_NAME: env.optionalString().meta({
    description:
      "the spans' `service.name`; unset: `switchyard-` and the process (`switchyard-gateway`, `switchyard-all-in-one`, ...)",
  }),
  TRACE_SAMPLE_RATIO: env.ratio(1).meta({
    description:
      "share of the traces begun here that are recorded and exported, from 0 to 1; a request with a `traceparent` follows its caller's sampling decision",
  }),
};
export type TracingConfig = z.output<z.ZodObject<typeof tracingEnv>>;

/** Deadlines of the calls a process makes to its database and to other services. */
export const callDeadlineEnv = {
  GRPC_DEADLINE_MS: env.int(5_000, 1, 600_000).meta({
    description: 'deadline of each call between services that names none of its own (past it: 503)',
  }),
  DB_QUERY_TIMEOUT_MS: env.int(15_000, 1, 3_600_000).meta({
    description:
      "longest a query may run (Postgres `statement_timeout`, and the client's own bound just after it); past it: 503 `database_timeout`. Migrations run without it",
  }),
  DB_CONNECT_TIMEOUT_MS: env.int(5_000, 1, 600_000).meta({
    description: 'longest the wait for a database connection may take (past it: 503 `database_timeout`)',
  }),
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
  MAX_MANAGEMENT_REQUEST_BODY: env.size('1mb').meta({
    description: 'largest request body of the management APIs (larger: 413)',
  }),
  /** The OAuth protocol and consent endpoints: a registration holds at most 10 URIs of 2048 characters. */
  MAX_OAUTH_REQUEST_BODY: env.size('32kb').meta({
    description: 'largest request body of the OAuth protocol and consent endpoints (larger: 413)',
  }),
  /** The SCIM protocol: a group's whole member list may come in one request. */
  MAX_SCIM_REQUEST_BODY: env.size('4mb').meta({
    description: 'largest request body of SCIM provisioning (larger: 413)',
  }),
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

/** The address of the HTTP server a process runs: all-in-one's defaults differ from the services'. */
export function listenEnv(host: string, port: number) {
  return {
    HOST: env.string(host).meta({ description: 'HTTP bind address' }),
    PORT: env.port(port).meta({
      description: 'HTTP port (`/healthz`, `/readyz`, `/metrics` and the routes)',
    }),
  };
}

/**
 * Settings that several schemas read, defined once so that their defaults and descriptions
 * agree wherever they are read.
 */
export const sharedEnv = {
  HEADER_PREFIX: env.string('x-vendor-').meta({
    description: 'request header prefix, so clients of gateways with another prefix work unchanged',
  }),
  /**
   * Custom hosts (inline in the gateway, saved in integrations) and SSO identity providers on
   * these hosts may be on private or loopback addresses.
   */
  TRUSTED_CUSTOM_HOSTS: env.list().meta({
    description:
      'comma-separated hosts (subdomains included) exempt from the unsafe-host check for custom hosts, inline (gateway) and saved in integrations (admin, and the gateway when it connects), and SSO identity providers (admin). Helm gives admin both `config.gateway.trustedCustomHosts` and `config.admin.trustedIdentityProviderHosts`; all-in-one trusts the hosts of the `*_BASE_URL` integrations it creates',
  }),
  /** Read by control-plane (the servers' URLs it lists) and the gateway (the resource tokens are for). */
  MCP_GATEWAY_BASE_URL: env
    .optionalString()
    .pipe(
      z
        .url({ protocol: /^https?$/ })
        .transform((v) => v.replace(/\/+$/, ''))
        .optional(),
    )
    .meta({
      description:
        "the base of the MCP servers' URLs at the gateway (`<base>/mcp/<slug>`) as clients reach it, e.g. `https://gateway.example.com`: listed by control-plane, and the resource OAuth tokens for a server are issued for; unset: the request's origin",
    }),
  /** Read by control-plane (its authorization server) and the gateway (its protected-resource metadata). */
  OAUTH_ISSUER: env
    .optionalString()
    .pipe(
      z
        .url({ protocol: /^https?$/ })
        .refine((v) => !v.includes('?') && !v.includes('#'), { error: 'no query or fragment' })
        .transform((v) => v.replace(/\/+$/, ''))
        .optional(),
    )
    .meta({
      description:
        "the OAuth issuer, the base of the authorization server's endpoint URLs in its metadata and the server MCP servers' protected-resource metadata names, e.g. `https://switchyard.example.com`; unset: the request's origin",
    }),
  DATABASE_URL: env.url().meta({ description: 'PostgreSQL connection URL' }),
  SWITCHYARD_ENCRYPTION_KEY: env
    .string()
    .refine((v) => {
      try {
        new SecretBox(v);
        return true;
      } catch {
        return false;
      }
    }, 'must be 32 bytes, base64 or hex')
    .meta(encryptionKeyMeta()),
};

/** SWITCHYARD_ENCRYPTION_KEY's description: all-in-one reads the variable too. */
export function encryptionKeyMeta() {
  return {
    description:
      '32 bytes, base64 or hex: encrypts secrets at rest (provider credentials in admin, the headers of webhook guardrail checks in control-plane) and signs log export download links (log-export); the same key in all three. All-in-one, when it is unset, generates one once into its data folder',
  };
}

const grpcTls = {
  description:
    'mutual TLS between services when all three are set; a certificate whose Common Name is the service proves it',
};

/** Settings every service process reads. */
export const baseEnvSchema = z.object({
  NODE_ENV: env.string('development').meta({
    description:
      "the environment's name as Node libraries read it (`production` in the container image and the Helm chart); Switchyard's own code does not act on it",
  }),
  LOG_LEVEL: env.logLevel().meta({
    description:
      '`error`, `warn`, `info`, `http` or `debug`; JSON lines with request and trace ids, secrets masked',
  }),
  ...listenEnv('0.0.0.0', 8080),
  SHUTDOWN_GRACE_MS: env.int(10_000, 0, 600_000).meta({
    description:
      'on SIGTERM: stop accepting, drain in-flight requests, flush Kafka, close pools, each step bounded by this',
  }),
  GRPC_AUTH_TOKEN: env.optionalString().meta({
    description:
      'shared secret each service derives its gRPC token from (see "Calls between services" in docs/architecture.md; health checks exempt)',
  }),
  GRPC_TLS_CA_FILE: env.optionalString().meta(grpcTls),
  GRPC_TLS_CERT_FILE: env.optionalString().meta(grpcTls),
  GRPC_TLS_KEY_FILE: env.optionalString().meta(grpcTls),
  /** Express's `trust proxy` setting: which proxies' X-Forwarded-For names the client (see createHttpApp). */
  TRUST_PROXY: env.optionalString().meta({
    description:
      "Express's `trust proxy` setting for the proxies in front: `true`, a hop count, or comma-separated addresses and subnets such as `loopback`, `10.0.0.0/8`; only their `X-Forwarded-For` then names the client (the audit log's client IP). Unset or `false`: no proxy is trusted",
  }),
  ...httpServerEnv,
  ...corsEnv,
  ...callDeadlineEnv,
  ...tracingEnv,
});
export type BaseEnv = z.output<typeof baseEnvSchema>;
