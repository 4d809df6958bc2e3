import { z } from 'zod';
import { EXPORT_FIELDS, type ExportField } from '@switchyard/rules';
import {
  cacheStatus,
  commaList,
  guardrailAction,
  MAX_ALTERNATIVES,
  MAX_METADATA_FILTERS,
  MAX_METADATA_KEY,
  MAX_TRACE_ID,
  name,
  policyDecision,
  statusItem,
} from './log-search.schemas.ts';

/*
 * The wire form of log exports (snake_case, as the API spells it). The filters and field names
 * are those existing clients of log exports send; the filters the logs list has beyond them
 * (provider, API key, cache status, guardrail action, policy decision, latency) are here too.
 */

/** The longest description an export keeps. */
const MAX_DESCRIPTION = 1024;

const uuid = z.guid('a UUID').transform((value) => value.toLowerCase());

/** An ISO 8601 instant, or a day (`2026-01-31`, its start in UTC). */
const instant = z
  .union(
    [z.iso.datetime({ offset: true }), z.iso.date()],
    'an ISO 8601 timestamp or date, e.g. 2026-01-31T12:00:00Z or 2026-01-31',
  )
  .transform((value) => new Date(value.length === 10 ? `${value}T00:00:00Z` : value));

const count = z.int('a whole number').min(0, 'at least 0').max(Number.MAX_SAFE_INTEGER);
const amount = z.number('a number').min(0, 'at least 0').max(1e12);

/** Alternatives: a comma-separated string, as the logs list takes them, or a list of strings. */
function alternatives<T>(item: z.ZodType<T, string>, what: string) {
  return z.union(
    [
      z
        .array(item)
        .min(1, `at least one of the ${what}`)
        .max(MAX_ALTERNATIVES, `at most ${MAX_ALTERNATIVES} ${what}`),
      commaList(item, what),
    ],
    `${what}: a comma-separated string or a list of strings`,
  );
}

/** `openai__gpt-4o`: a provider and a model, as existing clients pair them. */
const providerModel = z
  .string()
  .regex(/^[^_\s][^\s]*?__\S+$/, 'provider__model, e.g. openai__gpt-4o')
  .transform((value) => {
    const at = value.indexOf('__');
    return { provider: value.slice(0, at), model: value.slice(at + 2) };
  });

/** Which request logs an export holds; each filter given narrows them, alternatives within one are comma-separated. */
export const exportFilters = z
  .strictObject({
    time_of_generation_min: instant.optional().meta({ description: 'Logs from this instant or day on.' }),
    time_of_generation_max: instant
      .optional()
      .meta({ description: 'Logs before this instant or day; when the export starts, when not given.' }),
    total_units_min: count.optional().meta({ description: 'Logs of at least this many tokens in all.' }),
    total_units_max: count.optional(),
    prompt_token_min: count.optional(),
    prompt_token_max: count.optional(),
    completion_token_min: count.optional(),
    completion_token_max: count.optional(),
    cost_min: amount.optional(),
    cost_max: amount.optional(),
    response_time_min: count
      .optional()
      .meta({ description: 'Logs whose request took at least this many ms.' }),
    response_time_max: count.optional(),
    ai_model: alternatives(name, 'models').optional().meta({ description: 'Models.' }),
    ai_org: alternatives(name, 'providers').optional().meta({ description: 'Providers.' }),
    ai_org_model: alternatives(providerModel, 'provider__model pairs')
      .optional()
      .meta({ description: 'Provider and model pairs: `openai__gpt-4o, anthropic__claude-sonnet-4-5`.' }),
    status_code: z
      .union([z.int().min(100).max(599).transform(String), z.string()])
      .pipe(commaList(statusItem, 'statuses'))
      .optional()
      .meta({ description: 'Status codes or classes: `200,429`, `4xx,5xx`.' }),
    metadata: z
      .record(z.string().min(1).max(MAX_METADATA_KEY), z.string().max(1024, 'at most 1024 characters'))
      .refine((object) => Object.keys(object).length <= MAX_METADATA_FILTERS, {
        error: `at most ${MAX_METADATA_FILTERS} keys`,
      })
      .optional()
      .meta({ description: 'Logs whose metadata holds every one of these string values.' }),
    weighted_feedback_min: z.number().min(-10).max(10).optional().meta({
      description:
        "Logs whose trace's feedback, weighted by weight, averages at least this; logs without feedback are left out.",
    }),
    weighted_feedback_max: z.number().min(-10).max(10).optional(),
    virtual_keys: alternatives(name, 'integrations')
      .optional()
      .meta({ description: 'The slugs of the integrations (provider keys) the requests used.' }),
    configs: alternatives(name, 'configs')
      .optional()
      .meta({ description: 'The slugs of the configs applied.' }),
    trace_id: z.string().min(1).max(MAX_TRACE_ID).optional(),
    api_key_id: uuid.optional().meta({ description: 'The API key that made the requests.' }),
    cache_status: alternatives(cacheStatus, 'cache statuses').optional(),
    guardrail_action: alternatives(guardrailAction, 'actions').optional(),
    policy_decision: alternatives(policyDecision, 'decisions').optional(),
  })
  .superRefine((filters, ctx) => {
    const pairs = [
      ['time_of_generation_min', 'time_of_generation_max'],
      ['total_units_min', 'total_units_max'],
      ['prompt_token_min', 'prompt_token_max'],
      ['completion_token_min', 'completion_token_max'],
      ['cost_min', 'cost_max'],
      ['response_time_min', 'response_time_max'],
      ['weighted_feedback_min', 'weighted_feedback_max'],
    ] as const;
    for (const [min, max] of pairs) {
      const low = filters[min];
      const high = filters[max];
      if (low !== undefined && high !== undefined && Number(low) > Number(high)) {
        ctx.addIssue({ code: 'custom', path: [max], message: `must not be less than ${min}` });
      }
    }
  });

export type ExportFilters = z.output<typeof exportFilters>;

const field = z.enum(EXPORT_FIELDS, `one of: ${EXPORT_FIELDS.join(', ')}`);

/** The fields each exported log holds, in this order; each at most once. */
const requestedData = z
  .array(field)
  .min(1, 'at least one field')
  .max(EXPORT_FIELDS.length)
  .refine((fields) => new Set(fields).size === fields.length, { error: 'each field at most once' })
  .meta({ description: 'The fields each exported log holds, in this order.' });

const description = z.string().max(MAX_DESCRIPTION, `at most ${MAX_DESCRIPTION} characters`);

export const createExportBody = z.strictObject({
  workspace_id: uuid.optional().meta({
    description:
      "The workspace whose logs are exported; a workspace key's own when not given. An organisation admin key naming none exports every workspace's.",
  }),
  filters: exportFilters,
  requested_data: requestedData,
  description: description.optional(),
});

/** A change to an export that is not running: what is given replaces what it had. */
export const updateExportBody = z.strictObject({
  workspace_id: uuid.optional().meta({ description: 'Must be the workspace the export belongs to.' }),
  filters: exportFilters.optional(),
  requested_data: requestedData.optional(),
  description: description.optional(),
});

export const listExportsQuery = z.strictObject({
  workspace_id: uuid.optional().meta({ description: "One workspace's exports (organisation admin keys)." }),
  current_page: z.string().optional(),
  page_size: z.string().optional(),
});

export const fieldRestrictionsQuery = z.strictObject({
  workspace_id: uuid.optional().meta({ description: "The workspace; a workspace key's own when not given." }),
});

/** What create and update answer: the export and how many logs it holds now. */
export const exportTotalResponse = z.object({
  id: z.string(),
  total: z.int().meta({ description: 'How many logs the filters match now.' }),
  object: z.literal('export'),
});

export const exportTaskResponse = z.object({ message: z.string(), object: z.literal('export') });

export type CreateExportInput = z.output<typeof createExportBody>;
export type UpdateExportInput = z.output<typeof updateExportBody>;
export type { ExportField };
