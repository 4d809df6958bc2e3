import { z } from 'zod';
import { DATA_PLANE_SCOPES } from '@switchyard/platform';
import { providerIds } from '../domain/providers.ts';

const slug = z.string().regex(/^[a-zA-Z0-9_-]{1,63}$/, 'letters, digits, - and _, up to 63 characters');

const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a valid HTTP header name');

const multiplier = z.number().min(0).max(1000).nullable().optional();

export const pricingAdjustments = z.strictObject({
  multiplier: z
    .strictObject({
      default: multiplier,
      request_token: multiplier,
      response_token: multiplier,
      cache_read_input_token: multiplier,
      cache_write_input_token: multiplier,
      reasoning_token: multiplier,
    })
    .optional(),
});

export const createIntegrationBody = z.object({
  name: z.string().trim().min(1).max(255),
  slug: slug.optional(),
  ai_provider_id: z.enum(providerIds),
  key: z.string().min(1).max(8192).optional(),
  description: z.string().max(1024).optional(),
  workspace_id: z.uuid().optional(),
  pricing_adjustments: pricingAdjustments.nullable().optional(),
  configurations: z
    .object({
      custom_host: z.url({ protocol: /^https?$/, message: 'an http(s) URL' }).optional(),
      headers: z.record(headerName, z.string().max(8192)).optional(),
      api_version: z
        .string()
        .regex(/^[\w.-]{1,64}$/, 'an API version such as 2024-10-21')
        .optional(),
      resource_name: z
        .string()
        .regex(/^[a-zA-Z0-9-]{1,64}$/, 'an Azure resource name')
        .optional(),
      deployment: z
        .string()
        .regex(/^[\w.-]{1,128}$/, 'a deployment name')
        .optional(),
      aws_region: z
        .string()
        .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as us-east-1')
        .optional(),
      aws_access_key_id: z
        .string()
        .regex(/^[A-Z0-9]{16,128}$/, 'an AWS access key id')
        .optional(),
      aws_secret_access_key: z.string().min(1).max(256).optional(),
      aws_session_token: z.string().min(1).max(4096).optional(),
    })
    .default({}),
});

export const slugParam = slug;

/** A field left out keeps its choice; null drops it, so that the default applies again. */
const setting = z.boolean({ error: 'must be true, false or null' }).nullable().optional();

/** 1 to 365 days; `weekly` and `monthly` are stored as 7 and 30. */
const rotationPeriod = z
  .union([z.int().min(1).max(365), z.enum(['weekly', 'monthly'])], {
    error: 'must be a number of days from 1 to 365, weekly, monthly or null',
  })
  .transform((value) => (value === 'weekly' ? 7 : value === 'monthly' ? 30 : value));

export const updateOrganisationSettingsBody = z.strictObject({
  block_inline_config: setting,
  user_api_key_auto_create: setting,
  default_workspace_user_api_key_auto_create: setting,
  /** Limits the data-plane scopes of auto-created keys. */
  user_api_key_auto_create_scopes: z
    .array(
      z.string().refine((scope) => (DATA_PLANE_SCOPES as readonly string[]).includes(scope), {
        error: (issue) => `'${String(issue.input)}' is not a data-plane scope`,
      }),
    )
    .min(1)
    .max(64)
    .nullable()
    .optional(),
  user_api_key_rotation_period: rotationPeriod.nullable().optional(),
});
