import { z } from 'zod';
import { httpUrl, type CamelKeys } from '@switchyard/core';

/**
 * The deployment bodies as the API takes them (snake_case, as sent): the one definition of what
 * a deployment's create and update take. Unknown fields are refused, flags are the integers 0
 * and 1, and every list and map is bounded.
 */

/** How many entries each list or map of a deployment holds at most. */
export const MAX_ENTRIES = 1000;
/** How many tags a deployment holds at most. */
export const MAX_TAGS = 64;
/** How many workspaces a deployment names at most (each is looked up in the directory). */
export const MAX_WORKSPACES = 100;

/** A deployment's slug, as the body names it. */
export const deploymentSlug = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,50}$/, 'letters, digits, - and _, up to 50 characters')
  .refine((slug) => !isUuid(slug), 'not a UUID: the path names a deployment by its id or its slug');

/** The path's deployment: its id, or the slug of a live one. */
export const deploymentRef = z.string().regex(/^[a-zA-Z0-9_-]{1,50}$/, 'a deployment id or slug');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a deployment reference is an id rather than a slug. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const flag = z.union([z.literal(0), z.literal(1)], { message: 'the integer 0 or 1' });
const text = z.string().min(1).max(255);
const bounded = <T extends z.ZodType>(item: T, max = MAX_ENTRIES) =>
  z.array(item).max(max, `at most ${max} items`);
const map = (max: number) =>
  z
    .record(text, z.string().max(1024))
    .refine((value) => Object.keys(value).length <= max, `at most ${max} entries`);

const authSettings = z.strictObject({
  gateway_base_url: httpUrl().nullable().optional(),
  mcp_gateway_base_url: httpUrl().nullable().optional(),
  private_link_endpoint: httpUrl().nullable().optional(),
  use_private_link_proxy: flag.optional(),
  is_dataservice_hosted: flag.optional(),
  is_playground_proxy_allowed: flag.optional(),
  disable_vendor_gateway: flag.optional(),
  allow_all_workspaces: flag.optional(),
  workspaces_allowed: bounded(text).optional(),
  jwt_subs_allowed: bounded(text).optional(),
  jwt_sub_workspace_mapping: map(MAX_ENTRIES).optional(),
});

const workspaceRef = z.strictObject({ id: z.uuid(), slug: text });

const credentials = z.strictObject({
  username: text,
  password: z.string().min(1).max(1024),
});

const fields = {
  name: z.string().trim().min(1).max(255),
  slug: deploymentSlug,
  type: z.enum(['production', 'non_production']),
  is_default: flag,
  tags: map(MAX_TAGS),
  auth_settings: authSettings,
  deployment_config: z.record(z.string(), z.unknown()),
  workspaces: bounded(workspaceRef, MAX_WORKSPACES).refine(
    (list) => new Set(list.map((workspace) => workspace.id)).size === list.length,
    'each workspace once',
  ),
  credentials: credentials.nullable(),
  client_auth: z.string().max(1024).nullable(),
};

export const createDeploymentBody = z.strictObject({
  ...fields,
  slug: fields.slug.optional(),
  type: fields.type.default('production'),
  is_default: fields.is_default.default(0),
  tags: fields.tags.default({}),
  auth_settings: fields.auth_settings.default({}),
  deployment_config: fields.deployment_config.default({}),
  workspaces: fields.workspaces.default([]),
  credentials: fields.credentials.optional(),
  client_auth: fields.client_auth.optional(),
});

/**
 * Every field but the id and what the service keeps itself. A field left out is kept;
 * `auth_settings` given replaces the settings it names and keeps the others. `status` may only
 * stay `active`: a deployment is archived by deleting it.
 */
export const updateDeploymentBody = z.strictObject({
  name: fields.name.optional(),
  slug: fields.slug.optional(),
  type: fields.type.optional(),
  status: z
    .literal('active', { message: "only 'active': a deployment is archived by deleting it" })
    .optional(),
  is_default: fields.is_default.optional(),
  tags: fields.tags.optional(),
  auth_settings: fields.auth_settings.optional(),
  deployment_config: fields.deployment_config.optional(),
  workspaces: fields.workspaces.optional(),
  credentials: fields.credentials.optional(),
  client_auth: fields.client_auth.optional(),
});

export const listDeploymentsQuery = z.strictObject({
  status: z.enum(['active', 'archived']).default('active').meta({
    description: 'Archived (deleted) deployments are listed only when asked for.',
  }),
  type: fields.type.optional(),
  current_page: z.string().optional(),
  page_size: z.string().optional(),
});

export type CreateDeploymentInput = CamelKeys<z.output<typeof createDeploymentBody>>;
export type UpdateDeploymentInput = CamelKeys<z.output<typeof updateDeploymentBody>>;
export type AuthSettingsInput = z.output<typeof authSettings>;
