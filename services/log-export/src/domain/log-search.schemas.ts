import { z } from 'zod';

/*
 * The wire form of the logs API's input (snake_case, as the API spells it): the filters of
 * `GET /v1/logs` and the custom logs of `POST /v1/logs`, in the reference's `CustomLog` shape.
 */

/** Most logs a page holds, and how many when not said. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
/** How many alternatives one comma list, and how many `metadata.<key>` filters, a query may hold. */
export const MAX_ALTERNATIVES = 20;
export const MAX_METADATA_FILTERS = 10;
/** The longest metadata key, as the gateway's metadata header takes them. */
export const MAX_METADATA_KEY = 128;
/** The longest trace id the gateway takes in its trace-id header. */
export const MAX_TRACE_ID = 1024;

/** `metadata.<key>`: a filter on one metadata key, which may hold dots itself. */
export const METADATA_PARAMETER = /^metadata\.(.+)$/;

const id = z.guid('a UUID').transform((value) => value.toLowerCase());
const instant = z.iso
  .datetime({ offset: true, message: 'an ISO 8601 timestamp, e.g. 2026-01-31T12:00:00Z' })
  .transform((value) => new Date(value));
const amount = z
  .string()
  .regex(/^\d{1,12}(?:\.\d{1,12})?$/, 'a number, 0 or more')
  .transform(Number);
const milliseconds = z
  .string()
  .regex(/^\d{1,9}$/, 'a whole number of milliseconds, 0 or more')
  .transform(Number);

/** A comma-separated list of what `item` takes; a bad item names the parameter, not its place in the list. */
export function commaList<T>(item: z.ZodType<T, string>, what: string) {
  return z.string().transform((value, ctx) => {
    const parts = value.split(',').map((part) => part.trim());
    if (parts.length > MAX_ALTERNATIVES) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_ALTERNATIVES} ${what}` });
      return z.NEVER;
    }
    const items: T[] = [];
    for (const part of parts) {
      const parsed = item.safeParse(part);
      if (!parsed.success) {
        ctx.addIssue({
          code: 'custom',
          message: `'${part.slice(0, 64)}' is not ${parsed.error.issues[0]!.message}`,
        });
        return z.NEVER;
      }
      items.push(parsed.data);
    }
    return items;
  });
}

/** `429` (one status) or `4xx` (a class), as an inclusive range. */
export const statusItem = z
  .string()
  .regex(/^(?:[1-5]\d\d|[1-5]xx)$/i, 'a status code or class, e.g. 429 or 5xx')
  .transform((value) => {
    if (/xx$/i.test(value)) {
      const base = Number(value[0]) * 100;
      return { min: base, max: base + 99 };
    }
    return { min: Number(value), max: Number(value) };
  });

export const name = z.string().min(1, 'a name').max(256, 'a name of at most 256 characters');

export const cacheStatus = z
  .string()
  .transform((value) => value.toUpperCase())
  .pipe(z.enum(['HIT', 'MISS', 'REFRESH', 'DISABLED'], 'HIT, MISS, REFRESH or DISABLED'));

export const guardrailAction = z
  .string()
  .transform((value) => value.toLowerCase())
  .pipe(z.enum(['allow', 'warn', 'redact', 'deny'], 'allow, warn, redact or deny'));

export const policyDecision = z
  .string()
  .transform((value) => value.toLowerCase())
  .pipe(
    z.enum(
      ['allowed', 'denied', 'exhausted', 'skipped', 'failed_open', 'failed_closed'],
      'allowed, denied, exhausted, skipped, failed_open or failed_closed',
    ),
  );

const KNOWN_PARAMETERS = [
  'start_time',
  'end_time',
  'status',
  'model',
  'provider',
  'trace_id',
  'api_key_id',
  'user',
  'workspace_id',
  'cost_min',
  'cost_max',
  'latency_min',
  'latency_max',
  'cache_status',
  'guardrail_action',
  'policy_decision',
  'mcp_server',
  'tool_name',
  'prompt_id',
  'config',
  'limit',
  'cursor',
] as const;

/**
 * `GET /v1/logs` filters; each given narrows the list, alternatives within one are
 * comma-separated. Unknown parameters are refused: a misspelt filter must not quietly answer
 * every log. `metadata.<key>=<value>` filters on one metadata key (any number of them, all
 * holding).
 */
export const listLogsQuery = z
  .object({
    start_time: instant.optional().meta({
      description: 'Logs from this instant on (ISO 8601); 24 hours before end_time when not given.',
    }),
    end_time: instant.optional().meta({
      description:
        'Logs before this instant (ISO 8601); now when not given. At most 31 days after start_time.',
    }),
    status: commaList(statusItem, 'statuses').optional().meta({
      description: 'Status codes or classes, comma-separated: `200,429`, `4xx,5xx`.',
    }),
    model: commaList(name, 'models').optional().meta({ description: 'Models, comma-separated.' }),
    provider: commaList(name, 'providers').optional().meta({ description: 'Providers, comma-separated.' }),
    trace_id: z
      .string()
      .min(1)
      .max(MAX_TRACE_ID)
      .optional()
      .meta({ description: 'The trace id of the requests.' }),
    api_key_id: id.optional().meta({ description: 'The API key that made the requests.' }),
    user: z.string().min(1).max(1024).optional().meta({
      description: "The user a request was made for: its metadata's `_user`.",
    }),
    workspace_id: id.optional().meta({
      description:
        "Organisation admin keys: one workspace's logs only. A workspace key sees its own workspace's.",
    }),
    cost_min: amount.optional().meta({ description: 'Logs that cost at least this much.' }),
    cost_max: amount.optional().meta({ description: 'Logs that cost at most this much.' }),
    latency_min: milliseconds
      .optional()
      .meta({ description: 'Logs whose request took at least this many ms.' }),
    latency_max: milliseconds
      .optional()
      .meta({ description: 'Logs whose request took at most this many ms.' }),
    cache_status: commaList(cacheStatus, 'cache statuses').optional().meta({
      description: 'Cache statuses, comma-separated: HIT, MISS, REFRESH, DISABLED.',
    }),
    guardrail_action: commaList(guardrailAction, 'actions').optional().meta({
      description: 'Logs on which a guardrail ended with one of these actions: allow, warn, redact, deny.',
    }),
    policy_decision: commaList(policyDecision, 'decisions').optional().meta({
      description:
        'What rate and usage limits decided: allowed, denied, exhausted, skipped, failed_open, failed_closed.',
    }),
    mcp_server: commaList(name, 'MCP servers').optional().meta({
      description: 'MCP tool calls to these MCP servers (by slug), comma-separated.',
    }),
    tool_name: commaList(name, 'tools').optional().meta({
      description: 'MCP tool calls of these tools, comma-separated.',
    }),
    prompt_id: commaList(name, 'prompts').optional().meta({
      description: 'Prompt completions of these saved prompts (by id or slug), comma-separated.',
    }),
    config: commaList(name, 'configs').optional().meta({
      description: 'Requests run with these saved configs (by slug), comma-separated.',
    }),
    limit: z
      .string()
      .regex(/^\d{1,3}$/, `a whole number from 1 to ${MAX_PAGE_SIZE}`)
      .transform(Number)
      .pipe(z.int().min(1).max(MAX_PAGE_SIZE))
      .optional()
      .meta({
        description: `How many logs a page holds, 1 to ${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when not given.`,
      }),
    cursor: z.string().min(1).max(2048).optional().meta({
      description: "The previous page's next_cursor, with the same filters, for the page after it.",
    }),
  })
  .catchall(z.string().max(1024, 'at most 1024 characters'))
  .superRefine((query, ctx) => {
    let metadataFilters = 0;
    for (const key of Object.keys(query)) {
      if ((KNOWN_PARAMETERS as readonly string[]).includes(key)) continue;
      const metadataKey = METADATA_PARAMETER.exec(key)?.[1];
      if (metadataKey === undefined) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'not a filter of the logs list' });
      } else if (metadataKey.length > MAX_METADATA_KEY) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `a metadata key of at most ${MAX_METADATA_KEY} characters`,
        });
      } else if (++metadataFilters > MAX_METADATA_FILTERS) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `at most ${MAX_METADATA_FILTERS} metadata filters`,
        });
      }
    }
    if (query.cost_min !== undefined && query.cost_max !== undefined && query.cost_min > query.cost_max) {
      ctx.addIssue({ code: 'custom', path: ['cost_max'], message: 'must not be less than cost_min' });
    }
    if (
      query.latency_min !== undefined &&
      query.latency_max !== undefined &&
      query.latency_min > query.latency_max
    ) {
      ctx.addIssue({ code: 'custom', path: ['latency_max'], message: 'must not be less than latency_min' });
    }
  });

export type ListLogsQuery = z.output<typeof listLogsQuery>;

/* Custom logs: requests a client made to a provider itself, logged as the gateway logs its own. */

/** How many custom logs one POST may carry. */
export const MAX_CUSTOM_LOGS = 100;
/** The most of a request or response body kept, as JSON text: as much as the gateway keeps of its own. */
export const MAX_CUSTOM_BODY_BYTES = 400_000;
const MAX_METADATA_KEYS = 64;

const headers = z
  .record(z.string().max(256), z.string().max(8192))
  .optional()
  .meta({ description: 'Not stored: headers carry credentials.' });

/** Any JSON the client sent or received, at most MAX_CUSTOM_BODY_BYTES as JSON text. */
const body = z
  .unknown()
  .refine((value) => value !== undefined, { error: 'required' })
  .refine((value) => Buffer.byteLength(JSON.stringify(value) ?? '') <= MAX_CUSTOM_BODY_BYTES, {
    error: `at most ${MAX_CUSTOM_BODY_BYTES} bytes as JSON`,
  });

const customLog = z.strictObject({
  request: z.strictObject({
    url: z
      .url({ protocol: /^https?$/, error: 'an http(s) URL' })
      .max(2048)
      .meta({ description: 'The URL the request went to; stored without its query string.' }),
    method: z
      .string()
      .regex(/^[A-Za-z]{1,16}$/, 'an HTTP method')
      .transform((value) => value.toUpperCase())
      .optional()
      .meta({ description: 'POST when not given.' }),
    headers,
    body: body.meta({ description: 'The request body: JSON, usually an object.' }),
  }),
  response: z.strictObject({
    status: z.int().min(100).max(599).optional().meta({ description: '200 when not given.' }),
    headers,
    body: body.meta({ description: 'The response body: JSON, usually an object.' }),
    response_time: z.int().min(0).max(2_147_483_647).optional().meta({
      description: 'How long the request took, in ms; 0 when not given.',
    }),
  }),
  metadata: z
    .record(z.string().min(1).max(MAX_METADATA_KEY), z.string().max(1024, 'at most 1024 characters'))
    .refine((object) => Object.keys(object).length <= MAX_METADATA_KEYS, {
      error: `at most ${MAX_METADATA_KEYS} keys`,
    })
    .optional()
    .meta({
      description:
        "Strings. trace_id, span_id, parent_span_id and span_name are kept as the log's trace; `_user` names the user.",
    }),
});

/** One custom log, or up to MAX_CUSTOM_LOGS of them. */
export const createCustomLogsBody = z.union([customLog, z.array(customLog).min(1).max(MAX_CUSTOM_LOGS)]);

export type CustomLogInput = z.output<typeof customLog>;

/** What `POST /v1/logs` answers. */
export const customLogsResponse = z.object({
  status: z.literal('success'),
  message: z.string(),
  log_ids: z.array(z.string()).meta({ description: 'The ids of the logs, in request order.' }),
});
