import { z } from 'zod';

export const createWorkspaceBody = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _, up to 63 characters')
    .optional(),
  description: z.string().max(1024).optional(),
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
