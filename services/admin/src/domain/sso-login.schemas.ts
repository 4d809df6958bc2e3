import { z } from 'zod';
import type { CamelKeys } from '@switchyard/core';
import { ssoClientId } from './sso.schemas.ts';

/** Only a path on this origin: no scheme, no host, no `//` or `/\` that browsers read as one. */
const samePath = z
  .string()
  .max(2048)
  .refine((value) => {
    // eslint-disable-next-line no-control-regex
    if (!value.startsWith('/') || value.startsWith('//') || /[\\\x00-\x1f\x7f]/.test(value)) return false;
    try {
      return new URL(value, 'http://origin.invalid').host === 'origin.invalid';
    } catch {
      return false;
    }
  }, 'a relative path on this origin, such as /dashboard');

export const ssoLoginQuery = z.object({
  email: z.email().max(320),
  sso_client_id: ssoClientId.optional(),
  redirect_to: samePath.default('/'),
});

export const ssoCallbackQuery = z.object({
  state: z.string().min(1).max(512),
  code: z.string().min(1).max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
});

export type SsoLoginQuery = CamelKeys<z.output<typeof ssoLoginQuery>>;
export type SsoCallbackQuery = CamelKeys<z.output<typeof ssoCallbackQuery>>;
