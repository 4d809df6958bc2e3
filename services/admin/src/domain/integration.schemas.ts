import { z } from 'zod';
import { headerNameProblem, type CamelKeys } from '@switchyard/core';
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
export const SECRET_SETTINGS = ['aws_secret_access_key', 'aws_session_token'] as const;

/** An integration's slug, as the path and the body name it. */
export const integrationSlug = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,63}$/, 'letters, digits, - and _, up to 63 characters');

const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'a valid HTTP header name');

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
  /** Replaces the integration's secret mappings; [] removes them. */
  secret_mappings: secretMappings.optional(),
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
