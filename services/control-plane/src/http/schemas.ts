import { z } from 'zod';
import { isUuid } from '../store/ids.ts';

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
      })
      .optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, description or defaults',
  });

/** Query of `GET /v2/workspaces/:id`; what each format shows is described in domain/workspace-names.ts. */
export const getWorkspaceQuery = z.object({
  name_format: z.enum(['display', 'plain']).default('display'),
});

export const apiKeyPathParams = z.object({
  type: z.enum(['organisation', 'workspace']),
  'sub-type': z.enum(['service', 'user']),
});

export const createApiKeyBody = z.object({
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1024).optional(),
  workspace_id: z.string().min(1).max(255).optional(),
  user_id: z.uuid().optional(),
  scopes: z.array(z.string().min(1).max(128)).max(256).default([]),
  expires_at: z.iso
    .datetime({ offset: true })
    .transform((v) => new Date(v))
    .optional(),
});

const MAX_LISTED_IDS = 100;

/** Page parameters are read by parsePage. `ids` narrows the list to those keys: comma-separated UUIDs. */
export const listApiKeysQuery = z.object({
  ids: z
    .string()
    .min(1, 'give at least one id')
    .transform((value, ctx) => {
      const ids = value.split(',').map((id) => id.trim());
      if (ids.length > MAX_LISTED_IDS) {
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_LISTED_IDS} ids` });
        return z.NEVER;
      }
      const malformed = ids.find((id) => !isUuid(id));
      if (malformed !== undefined) {
        ctx.addIssue({ code: 'custom', message: `'${malformed.slice(0, 64)}' is not a UUID` });
        return z.NEVER;
      }
      return [...new Set(ids.map((id) => id.toLowerCase()))];
    })
    .optional(),
});
