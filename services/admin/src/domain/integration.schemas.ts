import { z } from 'zod';
import { headerNameProblem, httpUrl, parseInput, type CamelKeys } from '@switchyard/core';
import { providerIds } from './providers.ts';
import { secretMappings } from './secret-reference.schemas.ts';

/**
 * The integration bodies as the API takes them (snake_case, as sent): the one definition of
 * what an integration's create and update take. The routes pass these schemas; the service's
 * inputs are derived from them.
 */

/** How many credentials a plugin integration holds at most. */
export const MAX_CREDENTIALS = 32;

/** Settings that are credentials: stored encrypted, shown only masked. */
export const SECRET_SETTINGS = [
  'aws_secret_access_key',
  'aws_session_token',
  'oauth_client_secret',
  'azure_entra_client_secret',
] as const;

/**
 * How an AI provider integration authenticates upstream (`configurations.provider_auth_type`):
 * `apiKey` (the default) sends its key; `oauthClientCredentials` sends a bearer token the
 * gateway gets from the integration's token endpoint with its client id and secret; `wif`
 * sends one the gateway gets by exchanging its own workload identity token at the
 * integration's security token service.
 */
export const PROVIDER_AUTH_TYPES = ['apiKey', 'oauthClientCredentials', 'wif'] as const;
export type ProviderAuthType = (typeof PROVIDER_AUTH_TYPES)[number];

/** The scope asked for when the integration names none: Azure OpenAI's. */
export const DEFAULT_OAUTH_SCOPE = 'https://cognitiveservices.azure.com/.default';

/**
 * How an Azure OpenAI integration authenticates, as the reference names it
 * (`configurations.azure_auth_mode`): `default` sends the key (or follows provider_auth_type);
 * `entra` sends a bearer token the gateway gets from Entra ID with the integration's tenant,
 * client id and secret; `managed` (a managed identity) is not offered, since it needs the
 * cloud's instance metadata endpoint, which the gateway does not call.
 */
export const AZURE_AUTH_MODES = ['default', 'entra', 'managed'] as const;
export type AzureAuthMode = (typeof AZURE_AUTH_MODES)[number];

/** Where Entra tokens come from when the integration names no other authority. */
export const DEFAULT_AZURE_AUTHORITY_HOST = 'https://login.microsoftonline.com';

/** The settings of azure_auth_mode entra, required ones first. */
const ENTRA_SETTINGS = {
  required: ['azure_entra_tenant_id', 'azure_entra_client_id', 'azure_entra_client_secret'],
  optional: ['azure_authority_host'],
} as const;

/** The settings only Azure OpenAI integrations take. */
const AZURE_SETTINGS = ['azure_auth_mode', ...ENTRA_SETTINGS.required, ...ENTRA_SETTINGS.optional] as const;

/** The provider kinds whose adapter sends a bearer token in place of its key. */
const TOKEN_AUTH_PROVIDERS: readonly string[] = ['azure-openai'];

/** The auth types an integration of this provider kind may name. */
export function providerAuthTypes(provider: string): readonly ProviderAuthType[] {
  return TOKEN_AUTH_PROVIDERS.includes(provider) ? PROVIDER_AUTH_TYPES : ['apiKey'];
}

/** The settings each token auth type takes, required ones first. */
const AUTH_TYPE_SETTINGS = {
  oauthClientCredentials: {
    required: ['oauth_token_endpoint', 'oauth_client_id', 'oauth_client_secret'],
    optional: ['oauth_scope'],
  },
  wif: { required: ['wif_token_endpoint', 'wif_audience'], optional: ['wif_scope'] },
} as const;

/** An integration's slug, as the path and the body name it. */
export const integrationSlug = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,63}$/, 'letters, digits, - and _, up to 63 characters');

const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a valid HTTP header name');

/** A token endpoint: checked by the unsafe-host check as custom hosts are, at save and at each connection. */
const tokenEndpoint = z.url({ protocol: /^https?$/, message: 'an http(s) URL' }).max(2048);
/** Printable ASCII, as RFC 6749 allows in client ids and secrets. */
const oauthValue = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[\x20-\x7e]+$/, 'printable ASCII characters');
/** An Entra tenant: its id (a GUID) or one of its domain names, such as contoso.onmicrosoft.com. */
const entraTenant = z
  .string()
  .max(253)
  .regex(
    /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$/i,
    'an Entra tenant id (a GUID) or domain name such as contoso.onmicrosoft.com',
  );
/**
 * An Entra authority: the token endpoint is `{authority}/{tenant}/oauth2/v2.0/token`, so it
 * holds no query or fragment. Checked by the unsafe-host check as token endpoints are.
 */
const authorityHost = httpUrl()
  .max(2048)
  .refine((value) => {
    const url = new URL(value);
    return url.search === '' && url.hash === '';
  }, 'an http(s) URL without query or fragment, such as https://login.microsoftonline.us');
/** Space-separated scope tokens (RFC 6749, section 3.3). */
const oauthScope = z
  .string()
  .max(1024)
  .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'space-separated scope tokens');

const multiplier = z.number().min(0).max(1000).nullable().optional();

const pricingAdjustments = z.strictObject({
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

/**
 * The settings an AI provider integration's `configurations` take, each checked as given: the
 * one definition create and update share (update takes each as a change, see
 * configurationChanges).
 */
const configurationFields = {
  custom_host: z.url({ protocol: /^https?$/, message: 'an http(s) URL' }),
  headers: z.record(headerName, z.string().max(8192)),
  api_version: z.string().regex(/^[\w.-]{1,64}$/, 'an API version such as 2024-10-21'),
  resource_name: z.string().regex(/^[a-zA-Z0-9-]{1,64}$/, 'an Azure resource name'),
  deployment: z.string().regex(/^[\w.-]{1,128}$/, 'a deployment name'),
  aws_region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as us-east-1'),
  aws_access_key_id: z.string().regex(/^[A-Z0-9]{16,128}$/, 'an AWS access key id'),
  aws_secret_access_key: z.string().min(1).max(256),
  aws_session_token: z.string().min(1).max(4096),
  provider_auth_type: z.enum(PROVIDER_AUTH_TYPES),
  oauth_token_endpoint: tokenEndpoint,
  oauth_client_id: oauthValue(256),
  oauth_client_secret: oauthValue(4096),
  oauth_scope: oauthScope,
  wif_token_endpoint: tokenEndpoint,
  wif_audience: oauthValue(1024),
  wif_scope: oauthScope,
  azure_auth_mode: z.enum(AZURE_AUTH_MODES),
  azure_entra_tenant_id: entraTenant,
  azure_entra_client_id: oauthValue(256),
  azure_entra_client_secret: oauthValue(1024),
  azure_authority_host: authorityHost,
};

/** An AI provider integration's settings on create: any of them, unknown ones dropped. */
const integrationConfigurations = z.object(configurationFields).partial();

/** Each setting given as a change: a value replaces the stored one, null removes it, one left out is kept. */
function nullableChanges<T extends Record<string, z.ZodType>>(
  fields: T,
): { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> } {
  return Object.fromEntries(
    Object.entries(fields).map(([name, field]) => [name, field.nullable().optional()]),
  ) as { [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>> };
}

/**
 * An AI provider integration's settings on update: the same settings as on create, each a
 * change (`headers` given replaces the whole header map); an unknown setting is refused.
 */
const configurationChanges = z.strictObject(nullableChanges(configurationFields));

export const createIntegrationBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    slug: integrationSlug.optional(),
    ai_provider_id: z.enum(providerIds).optional(),
    plugin_provider_id: pluginProviderId.optional(),
    credentials: credentials.optional(),
    key: z.string().min(1).max(8192).optional(),
    description: z.string().max(1024).optional(),
    workspace_id: z.uuid().optional(),
    pricing_adjustments: pricingAdjustments.nullable().optional(),
    /** Fields whose value comes from a secret reference; with `key` mapped, `key` may be left out. */
    secret_mappings: secretMappings.optional(),
    configurations: integrationConfigurations.default({}),
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
    if (body.ai_provider_id !== undefined) checkProviderAuth(body.ai_provider_id, body, ctx);
  });

/**
 * An auth type other than `apiKey` is taken only by the provider kinds that offer it, with
 * all of its required settings and without a key; its settings are taken only with it. The
 * same holds for `azure_auth_mode` entra, of Azure OpenAI integrations only, which is a way
 * of its own and so is not combined with another provider_auth_type. A required setting
 * mapped from a secret reference (`secret_mappings`) may be left out.
 */
function checkProviderAuth(
  provider: string,
  body: {
    key?: string | undefined;
    configurations: Partial<Record<string, unknown>>;
    secret_mappings?: ReadonlyArray<{ target_field: string }> | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  const mapped = new Set((body.secret_mappings ?? []).map((mapping) => mapping.target_field));
  const refuse = (name: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: name === 'key' ? ['key'] : ['configurations', name], message });
  const requireAll = (names: readonly string[], message: string) => {
    for (const name of names) {
      if (body.configurations[name] === undefined && !mapped.has(`configurations.${name}`))
        refuse(name, message);
    }
  };

  const authType = (body.configurations.provider_auth_type as ProviderAuthType | undefined) ?? 'apiKey';
  for (const [type, settings] of Object.entries(AUTH_TYPE_SETTINGS)) {
    if (type === authType) continue;
    for (const name of [...settings.required, ...settings.optional]) {
      if (body.configurations[name] !== undefined) refuse(name, `taken only with provider_auth_type ${type}`);
    }
  }

  if (provider !== 'azure-openai') {
    for (const name of AZURE_SETTINGS) {
      if (body.configurations[name] !== undefined) refuse(name, 'taken only by azure-openai integrations');
    }
  } else {
    const mode = (body.configurations.azure_auth_mode as AzureAuthMode | undefined) ?? 'default';
    if (mode !== 'entra') {
      for (const name of [...ENTRA_SETTINGS.required, ...ENTRA_SETTINGS.optional]) {
        if (body.configurations[name] !== undefined) refuse(name, 'taken only with azure_auth_mode entra');
      }
    } else {
      if (authType !== 'apiKey') {
        refuse(
          'azure_auth_mode',
          `entra is not combined with provider_auth_type ${authType}: give one way to authenticate`,
        );
        return;
      }
      requireAll(ENTRA_SETTINGS.required, 'required with azure_auth_mode entra');
      if (body.key !== undefined)
        refuse('key', 'not used with azure_auth_mode entra: the gateway sends a bearer token instead');
      return;
    }
  }

  if (authType === 'apiKey') return;
  if (!providerAuthTypes(provider).includes(authType)) {
    refuse(
      'provider_auth_type',
      `${authType} is offered only for ${TOKEN_AUTH_PROVIDERS.join(', ')} integrations`,
    );
    return;
  }
  requireAll(AUTH_TYPE_SETTINGS[authType].required, `required with provider_auth_type ${authType}`);
  if (body.key !== undefined)
    refuse('key', `not used with provider_auth_type ${authType}: the gateway sends a bearer token instead`);
}

/**
 * Whether an AI provider integration with these settings sends a bearer token in place of a
 * key: provider_auth_type oauthClientCredentials or wif, or azure_auth_mode entra.
 */
export function sendsBearerToken(configurations: {
  provider_auth_type?: string | undefined;
  azure_auth_mode?: string | undefined;
}): boolean {
  return (
    (configurations.provider_auth_type ?? 'apiKey') !== 'apiKey' || configurations.azure_auth_mode === 'entra'
  );
}

/**
 * The rules create applies to an AI provider integration's key and settings (see
 * checkProviderAuth), for a body made elsewhere: an update merged with what is stored. The
 * first one broken is a 400 naming the field, as on create.
 */
export function checkProviderAuthOf(
  provider: string,
  body: {
    key?: string | undefined;
    configurations: object;
    secret_mappings?: ReadonlyArray<{ target_field: string }> | undefined;
  },
): void {
  parseInput(
    z
      .unknown()
      .superRefine((_, ctx) =>
        checkProviderAuth(provider, { ...body, configurations: { ...body.configurations } }, ctx),
      ),
    body,
  );
}

/**
 * A credential set to null is removed; the others given are set; those left out are kept. So
 * with `configurations`: each setting given replaces the stored one, null removes it.
 */
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
  /** Replaces the integration's pricing adjustments; null clears them. */
  pricing_adjustments: pricingAdjustments.nullable().optional(),
  /** Replaces the integration's secret mappings; [] removes them. */
  secret_mappings: secretMappings.optional(),
  /**
   * Changes an AI provider integration's settings: those given replace the stored ones, null
   * removes one, the others are kept. The result must pass the rules create applies.
   */
  configurations: configurationChanges.optional(),
});

/** An AI provider integration (`ai_provider_id`) or a legacy plugin integration (`plugin_provider_id` and `credentials`). */
export type CreateIntegrationInput = CamelKeys<z.output<typeof createIntegrationBody>>;

/** What may change; a credential set to null is removed, the others given are set, the rest kept. */
export type UpdateIntegrationInput = CamelKeys<z.output<typeof updateIntegrationBody>>;

/** How many models one integration may have set. */
export const MAX_INTEGRATION_MODELS = 1000;

/** How many custom headers one model may have. */
export const MAX_MODEL_HEADERS = 50;

/** A model as requests name it after the `@integration/` prefix, e.g. `gpt-4o` or `ft:gpt-4o:acme::id`. */
const modelSlug = z
  .string()
  .regex(/^[\w.:/@+-]{1,256}$/, 'a model name: letters, digits and . : / @ + - _, up to 256 characters');

/**
 * A model's custom headers: names are HTTP tokens the gateway does not reserve for itself or
 * for framing and credentials (the rule webhook checks' headers follow); values hold no CR,
 * LF or control characters.
 */
function customHeaders(headerPrefix: string | undefined) {
  return z
    .record(
      z.string(),
      z
        .string()
        .max(8192)
        .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'header values hold no CR, LF or control characters'),
    )
    .superRefine((headers, ctx) => {
      const names = Object.keys(headers);
      if (names.length > MAX_MODEL_HEADERS)
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_MODEL_HEADERS} headers` });
      const seen = new Set<string>();
      for (const name of names) {
        const problem = headerNameProblem(name, headerPrefix);
        if (problem !== undefined)
          ctx.addIssue({ code: 'custom', path: [name], message: `'${name}' ${problem}` });
        else if (seen.has(name.toLowerCase()))
          ctx.addIssue({ code: 'custom', path: [name], message: `'${name}' is given twice` });
        seen.add(name.toLowerCase());
      }
    });
}

/** `headerPrefix`: the gateway's own header prefix, refused as a custom header name too. */
export function setIntegrationModelsBody(headerPrefix?: string) {
  return z.strictObject({
    models: z
      .array(
        z.strictObject({
          slug: modelSlug,
          enabled: z.boolean().default(true),
          is_custom: z.boolean().nullable().optional(),
          is_finetune: z.boolean().nullable().optional(),
          base_model_slug: modelSlug.nullable().optional(),
          /** The model's own settings; when given, at least one. */
          configurations: z
            .strictObject({
              custom_host: z.url({ protocol: /^https?$/, message: 'an http(s) URL' }).optional(),
            })
            .refine((value) => Object.keys(value).length > 0, 'must hold at least one setting')
            .optional(),
          custom_headers: customHeaders(headerPrefix).default({}),
        }),
      )
      .max(MAX_INTEGRATION_MODELS)
      .superRefine((models, ctx) => {
        const seen = new Set<string>();
        models.forEach((model, i) => {
          if (seen.has(model.slug))
            ctx.addIssue({ code: 'custom', path: [i, 'slug'], message: `'${model.slug}' is given twice` });
          seen.add(model.slug);
        });
      }),
  });
}

/** The whole list of an integration's models, replacing the one it had. */
export type SetIntegrationModelsInput = z.output<ReturnType<typeof setIntegrationModelsBody>>;

/** How many workspaces one PUT .../workspaces may name. */
export const MAX_ACCESS_WORKSPACES = 1000;

/**
 * Per-workspace usage and rate limits of an integration, as the reference takes them (at most
 * one each). Their shape is not checked further: the service refuses any that are not null or
 * empty, since policies cannot name an integration (see IntegrationService.setWorkspaceAccess).
 */
const accessLimits = z.array(z.record(z.string(), z.unknown())).max(1).nullable().optional();

/**
 * Which workspaces of the organisation may use an organisation-level integration. `id` is a
 * workspace's id or slug; `override_existing_workspace_access` drops every workspace's own
 * setting before these are applied.
 */
export const updateIntegrationWorkspacesBody = z.strictObject({
  workspaces: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(255),
        enabled: z.boolean(),
        usage_limits: accessLimits,
        rate_limits: accessLimits,
        reset_usage: z.boolean().optional(),
      }),
    )
    .max(MAX_ACCESS_WORKSPACES)
    .default([]),
  global_workspace_access: z
    .strictObject({ enabled: z.boolean(), usage_limits: accessLimits, rate_limits: accessLimits })
    .optional(),
  override_existing_workspace_access: z.boolean().default(false),
});

export type UpdateIntegrationWorkspacesInput = z.output<typeof updateIntegrationWorkspacesBody>;
