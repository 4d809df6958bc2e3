import { z } from 'zod';
import type { CamelKeys } from '@switchyard/core';
import { DATA_PLANE_SCOPES } from '@switchyard/access';
import { EXPORT_FIELDS, isExportField } from '@switchyard/rules';

/** A field left out keeps its choice; null drops it, so that the default applies again. */
const setting = z.boolean({ error: 'must be true, false or null' }).nullable().optional();

/** 1 to 365 days; `weekly` and `monthly` are stored as 7 and 30. */
const rotationPeriod = z
  .union([z.int().min(1).max(365), z.enum(['weekly', 'monthly'])], {
    error: 'must be a number of days from 1 to 365, weekly, monthly or null',
  })
  .transform((value) => (value === 'weekly' ? 7 : value === 'monthly' ? 30 : value));

/** Fields of request logs that log exports may not hold: each a known field, each once. */
const exportSettings = z.strictObject({
  deniedFields: z
    .array(
      z.string().refine(isExportField, {
        error: (issue) => `'${String(issue.input)}' is not an exportable field`,
      }),
    )
    .max(EXPORT_FIELDS.length)
    .superRefine((fields, ctx) => {
      // A repeated field is refused rather than merged: the list is then exactly what is stored.
      const seen = new Set<string>();
      fields.forEach((field, index) => {
        if (seen.has(field))
          ctx.addIssue({ code: 'custom', message: `'${field}' is listed twice`, path: [index] });
        seen.add(field);
      });
    }),
});

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
  /** Sections of a workspace's security_settings that workspaces may set for themselves. */
  workspace_security_settings_override: z
    .array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a section name: lower-case letters, digits and _'))
    .max(32)
    .nullable()
    .optional(),
  export_settings: exportSettings.nullable().optional(),
});

/** null drops a choice, so that the default applies again; undefined leaves it as it is. */
export type OrganisationSettingsUpdate = CamelKeys<z.output<typeof updateOrganisationSettingsBody>>;
