import { z } from 'zod';

/**
 * The wire form of workspace requests (snake_case, as the API spells them): the one definition
 * of what the routes accept and of the domain inputs derived from them (see workspace.service.ts).
 */

const workspaceName = z.string().trim().min(1).max(255);
const workspaceDescription = z.string().max(1024);

export const createWorkspaceBody = z.strictObject({
  name: workspaceName,
  slug: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _, up to 63 characters')
    .optional(),
  description: workspaceDescription.optional(),
});

/** The slug cannot change: keys, logs and configs name the workspace by it. */
export const updateWorkspaceBody = z
  .strictObject({
    name: workspaceName.optional(),
    description: workspaceDescription.nullable().optional(),
    defaults: z
      .strictObject({
        /** A config of this workspace by id or slug; null clears the default. */
        user_api_key_config: z.string().min(1).max(255).nullable().optional(),
        /** A config of this workspace by id or slug for every key without a default of its own; null clears it. */
        config: z.string().min(1).max(255).nullable().optional(),
      })
      .optional(),
    settings: z
      .strictObject({
        /** Overrides the organisation's user_api_key_auto_create; null follows it again. */
        user_api_key_auto_create: z.boolean({ error: 'must be true, false or null' }).nullable().optional(),
      })
      .optional(),
    /**
     * Sections of the workspace's own security settings; each must be one the organisation
     * lets workspaces override (checked by the service). A section set to null is dropped.
     */
    security_settings: z
      .record(
        z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a section name: lower-case letters, digits and _'),
        z
          .union([z.record(z.string(), z.unknown()), z.boolean(), z.number(), z.string().max(1024)])
          .nullable(),
      )
      .refine((sections) => Object.keys(sections).length <= 32, { error: 'at most 32 sections' })
      .refine((sections) => JSON.stringify(sections).length <= 16_384, { error: 'at most 16 KB' })
      .optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, description, defaults, settings or security_settings',
  });

/**
 * Body of `DELETE /v2/workspaces/:id`, optional as a whole. `name`, when given, must be the
 * workspace's name: a confirmation that the right workspace goes. `force_delete` is taken as
 * the reference names it; nothing blocks a delete today, so it changes nothing.
 */
export const deleteWorkspaceBody = z.strictObject({
  name: workspaceName.optional(),
  force_delete: z.boolean({ error: 'must be true or false' }).optional(),
});

/** Query of `GET /v2/workspaces/:id`; what each format shows is described in domain/workspace-names.ts. */
export const getWorkspaceQuery = z.object({
  name_format: z.enum(['display', 'plain']).default('display'),
});
