import { z } from 'zod';
import { providerIds } from '../domain/providers.ts';

const slug = z.string().regex(/^[a-zA-Z0-9_-]{1,63}$/, 'letters, digits, - and _, up to 63 characters');

const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a valid HTTP header name');

export const createIntegrationBody = z.object({
  name: z.string().trim().min(1).max(255),
  slug: slug.optional(),
  ai_provider_id: z.enum(providerIds),
  key: z.string().min(1).max(8192).optional(),
  description: z.string().max(1024).optional(),
  workspace_id: z.uuid().optional(),
  configurations: z
    .object({
      custom_host: z.url({ protocol: /^https?$/, message: 'an http(s) URL' }).optional(),
      api_version: z.string().max(64).optional(),
      headers: z.record(headerName, z.string().max(8192)).optional(),
    })
    .default({}),
});

export const slugParam = slug;
