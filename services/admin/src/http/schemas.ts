import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { z } from 'zod';
import { DATA_PLANE_SCOPES, httpUrl } from '@switchyard/platform';
import { normaliseDomain } from '../domain/email-domains.ts';
import { MAX_CREDENTIALS } from '../domain/integration.service.ts';
import { providerIds } from '../domain/providers.ts';
import { DEFAULT_SSO_SCOPES } from '../domain/sso.service.ts';

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

/** A legacy plugin provider id, such as `my-plugin`. */
const pluginProviderId = z
  .string()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/, 'letters, digits, ., - and _, up to 64 characters');

const credentialName = z
  .string()
  .regex(
    /^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/,
    'a credential name: letters, digits, ., - and _, up to 64 characters',
  );
const credentialValue = z.string().min(1).max(8192);

/** A legacy plugin integration's credentials: named strings, stored encrypted. */
const credentials = z
  .record(credentialName, credentialValue)
  .refine((value) => Object.keys(value).length >= 1, 'must hold at least one credential')
  .refine(
    (value) => Object.keys(value).length <= MAX_CREDENTIALS,
    `must hold at most ${MAX_CREDENTIALS} credentials`,
  );

export const createIntegrationBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    slug: slug.optional(),
    ai_provider_id: z.enum(providerIds).optional(),
    plugin_provider_id: pluginProviderId.optional(),
    credentials: credentials.optional(),
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
  })
  .superRefine((body, ctx) => {
    const plugin = body.plugin_provider_id !== undefined;
    if (plugin === (body.ai_provider_id !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [plugin ? 'plugin_provider_id' : 'ai_provider_id'],
        message: 'give exactly one of ai_provider_id or plugin_provider_id',
      });
      return;
    }
    if (plugin) {
      if (body.credentials === undefined)
        ctx.addIssue({ code: 'custom', path: ['credentials'], message: 'required with plugin_provider_id' });
      if (body.key !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['key'],
          message: 'not used with plugin_provider_id: send credentials',
        });
      if (Object.keys(body.configurations).length > 0)
        ctx.addIssue({
          code: 'custom',
          path: ['configurations'],
          message: 'not used with plugin_provider_id',
        });
    } else if (body.credentials !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['credentials'], message: 'taken only with plugin_provider_id' });
    }
  });

/** A credential set to null is removed; the others given are set; those left out are kept. */
export const updateIntegrationBody = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  description: z.string().max(1024).nullable().optional(),
  key: z.string().min(1).max(8192).optional(),
  credentials: z
    .record(credentialName, credentialValue.nullable())
    .refine(
      (value) => Object.keys(value).length <= MAX_CREDENTIALS,
      `must hold at most ${MAX_CREDENTIALS} credentials`,
    )
    .optional(),
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
  /** Sections of a workspace's security_settings that workspaces may set for themselves. */
  workspace_security_settings_override: z
    .array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a section name: lower-case letters, digits and _'))
    .max(32)
    .nullable()
    .optional(),
});

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
