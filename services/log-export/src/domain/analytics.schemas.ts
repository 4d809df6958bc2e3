import { z } from 'zod';

const instant = z.iso
  .datetime({ offset: true, message: 'an ISO 8601 timestamp, e.g. 2026-01-31T12:00:00Z' })
  .transform((value) => new Date(value));

/** A comma separated list of up to 100 entries, each checked by `item`. */
function list<T extends z.ZodType<unknown, string>>(item: T, description: string) {
  return z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    )
    .pipe(z.array(item).min(1, 'at least one entry').max(100, 'at most 100 entries'))
    .optional()
    .meta({ description });
}

const text = z.string().max(255, 'at most 255 characters');
const uuid = z.guid('a UUID').transform((value) => value.toLowerCase());

/** A non-negative integer, as query text. */
const count = (description: string) =>
  z
    .string()
    .regex(/^\d{1,12}$/, 'a non-negative integer')
    .transform(Number)
    .optional()
    .meta({ description });

/** A non-negative number, as query text. */
const amount = (description: string) =>
  z
    .string()
    .regex(/^\d{1,12}(\.\d{1,12})?$/, 'a non-negative number')
    .transform(Number)
    .optional()
    .meta({ description });

const metadataFilter = z
  .string()
  .transform((value, ctx) => {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'a JSON object of metadata keys and their string values' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .record(z.string().min(1).max(128), z.string().max(1024), {
        error: 'a JSON object of metadata keys and their string values',
      })
      .refine((value) => Object.keys(value).length <= 20, 'at most 20 keys'),
  )
  .optional()
  .meta({ description: 'Requests whose metadata holds all these pairs, as a JSON object: {"_user":"u1"}.' });

/**
 * What every analytics route takes: the time range (the last 7 days unless given, at most 90
 * days, `time_of_generation_min` included and `time_of_generation_max` not) and the workspace.
 * A workspace key always reads its own workspace.
 */
export const analyticsRangeShape = {
  time_of_generation_min: instant.optional().meta({
    description: 'From this time on, included. Default: 7 days before time_of_generation_max.',
  }),
  time_of_generation_max: instant.optional().meta({
    description: 'Up to this time, not included. Default: now. At most 90 days after time_of_generation_min.',
  }),
  workspace_id: uuid.optional().meta({
    description: "Only this workspace's requests (an organisation admin key); a workspace key reads its own.",
  }),
  workspace_slug: text
    .optional()
    .meta({ description: 'The workspace by its slug, instead of workspace_id.' }),
};

/** The request filters: each a comma separated list unless said. */
export const analyticsFilterShape = {
  ...analyticsRangeShape,
  api_key_ids: list(uuid, 'Requests of these API keys (ids).'),
  provider: list(text, 'Requests to these providers.'),
  model: list(text, 'Requests to these models.'),
  ai_org_model: list(
    text.regex(/^.+__.+$/, "'provider__model'"),
    'Requests to these provider and model pairs, each as provider__model: openai__gpt-4o.',
  ),
  status_code: list(
    z
      .string()
      .regex(/^[1-5]\d\d$/, 'an HTTP status code')
      .transform(Number),
    'Requests answered with these HTTP statuses.',
  ),
  cache_status: list(
    z
      .string()
      .transform((value) => value.toUpperCase())
      .pipe(z.enum(['HIT', 'MISS', 'REFRESH', 'DISABLED'], 'one of HIT, MISS, REFRESH, DISABLED')),
    'Requests with these cache outcomes: HIT, MISS, REFRESH, DISABLED.',
  ),
  metadata: metadataFilter,
  trace_id: list(text, 'Requests of these trace ids.'),
  span_id: list(text, 'Requests of these span ids.'),
  configs: list(text, 'Requests run with these saved configs (slugs).'),
  total_units_min: count('Requests of at least this many tokens.'),
  total_units_max: count('Requests of at most this many tokens.'),
  cost_min: amount('Requests that cost at least this many cents.'),
  cost_max: amount('Requests that cost at most this many cents.'),
  prompt_token_min: count('Requests of at least this many prompt tokens.'),
  prompt_token_max: count('Requests of at most this many prompt tokens.'),
  completion_token_min: count('Requests of at least this many completion tokens.'),
  completion_token_max: count('Requests of at most this many completion tokens.'),
};

/**
 * Graphs and summaries of requests. Unknown parameters are refused: a misspelt filter must not
 * quietly widen the figures (nor one this API does not keep, such as virtual_keys).
 */
export const analyticsQuery = z.strictObject(analyticsFilterShape);

/** Groups: the filters and the page parameters (read by parsePage). */
export const analyticsGroupsQuery = z.strictObject({
  ...analyticsFilterShape,
  current_page: z.string().optional(),
  page_size: z.string().optional(),
});

/** Feedback graphs: feedback holds no request's details, so only the time range and workspace. */
export const analyticsFeedbackQuery = z.strictObject(analyticsRangeShape);

export type AnalyticsQuery = z.output<typeof analyticsQuery>;
export type AnalyticsRangeQuery = z.output<typeof analyticsFeedbackQuery>;

/** A metadata key, as the path names it. */
export const metadataKeyParams = z.object({
  metadataKey: z
    .string()
    .min(1)
    .max(128)
    .regex(/^\P{Cc}+$/u, 'a metadata key'),
});

const timestamp = z.string().meta({ description: 'The start of the data point: an hour or a UTC day.' });

/** A graph: a summary over the range and one data point per hour or day of it. */
export function graphResponse(summary: z.ZodType, point: z.ZodType) {
  return z.object({
    object: z.literal('analytics-graph'),
    summary,
    data_points: z.array(point),
  });
}

export const totalPoint = z.object({ timestamp, total: z.number() });
export const totalAvgPoint = z.object({ timestamp, total: z.number(), avg: z.number() });
export const latencyPoint = z.object({
  timestamp,
  avg: z.number(),
  p50: z.number(),
  p90: z.number(),
  p99: z.number(),
});
