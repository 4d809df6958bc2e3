import { z } from 'zod';

/*
 * The wire form both kinds of integration (MCP and agent) share: names, slugs, the workspace a
 * new one belongs to, the list query and the workspace access body's switches.
 */

export const integrationName = z.string().trim().min(1).max(255);
export const integrationDescription = z.string().max(500).nullable();
export const integrationSlug = z
  .string()
  .min(3)
  .max(50)
  .regex(/^[a-zA-Z0-9_-]+$/, 'letters, digits, "_" and "-" only');

/** A workspace id or slug; null or '' asks for an organisation-level integration (an organisation admin key's alone). */
export const workspaceReference = z
  .string()
  .max(255)
  .nullable()
  .transform((value) => (value === '' ? null : value));

export const listIntegrationsQuery = z.object({
  organisation_id: z.string().min(1).max(255).optional(),
  workspace_id: z.string().min(1).max(255).optional(),
  type: z.enum(['workspace', 'organisation', 'all']).optional(),
  search: z.string().max(255).optional(),
});

/** The workspace access body's fields beside `workspaces`. */
export const workspaceAccessSwitches = {
  global_workspace_access: z
    .strictObject({ enabled: z.boolean() })
    .nullable()
    .optional()
    .meta({ description: 'Whether every workspace without a setting of its own may use the integration.' }),
  override_existing_workspace_access: z.boolean().default(false).meta({
    description: 'With `global_workspace_access`: drop every per-workspace setting first.',
  }),
};
