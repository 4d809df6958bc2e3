import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { z } from 'zod';
import { httpUrl, type CamelKeys } from '@switchyard/core';
import { normaliseDomain } from './email-domains.ts';

export const DEFAULT_SSO_SCOPES = ['openid', 'email', 'profile'];

/** An OAuth client_id: printable ASCII, no spaces. */
export const ssoClientId = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'printable ASCII without spaces, up to 255 characters');

/** Members only a private or symmetric JWK holds. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** A public JWK (RSA, EC or OKP) that crypto accepts as a public key, without private members. */
const publicJwk = z.record(z.string(), z.unknown()).superRefine((jwk, ctx) => {
  const secret = PRIVATE_JWK_MEMBERS.find((member) => Object.hasOwn(jwk, member));
  if (secret) {
    ctx.addIssue({ code: 'custom', message: `must be a public key, without the private member '${secret}'` });
    return;
  }
  try {
    createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a public JWK (RSA, EC or OKP) of a valid key' });
  }
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** https; plain http only on loopback (an identity provider on this machine, reachable only when trusted). */
const httpsIssuer = httpUrl('an https URL')
  .max(2048)
  .refine(
    (value) => new URL(value).protocol === 'https:' || LOOPBACK_HOSTS.has(new URL(value).hostname),
    'an https URL',
  )
  .refine((value) => {
    const url = new URL(value);
    return !url.username && !url.password && !url.search && !url.hash;
  }, 'an https URL without credentials, query or fragment');

/** An OAuth scope token (RFC 6749 section 3.3). */
const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/, 'an OAuth scope token');

export const upsertSsoConnectionBody = z.strictObject({
  type: z.literal('oidc').optional(),
  client_id: ssoClientId.optional(),
  enabled: z.boolean().default(true),
  issuer: httpsIssuer,
  client_secret: z.string().min(1).max(4096).optional(),
  token_endpoint_auth_method: z
    .enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'])
    .default('client_secret_basic'),
  jwks: z.strictObject({ keys: z.array(publicJwk).min(1).max(20) }).optional(),
  /** The private key private_key_jwt signs with (a JWK whose public half is in jwks): write-only, encrypted. */
  private_key: z
    .record(z.string(), z.unknown())
    .refine((jwk) => Object.hasOwn(jwk, 'd'), "must be a private JWK (with 'd')")
    .optional(),
  scopes: z
    .array(scopeToken)
    .min(1)
    .max(32)
    .refine((scopes) => scopes.includes('openid'), "must include 'openid'")
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope')
    .default(DEFAULT_SSO_SCOPES),
  disable_auto_provision_user: z.boolean().default(false),
});

/** A domain name, lower-cased. */
const emailDomain = z
  .string()
  .max(300)
  .transform((value, ctx) => {
    const result = normaliseDomain(value);
    if ('error' in result) {
      ctx.addIssue({ code: 'custom', message: result.error });
      return z.NEVER;
    }
    return result.domain;
  });

export const createEmailDomainBody = z.strictObject({
  domain: emailDomain,
  allow_subdomains: z.boolean().default(false),
});

/** The connection as the caller describes it (defaults applied by the schema); `client_id`, when given, must be the path's. */
export type SsoConnectionInput = CamelKeys<z.output<typeof upsertSsoConnectionBody>>;

export type EmailDomainInput = CamelKeys<z.output<typeof createEmailDomainBody>>;
