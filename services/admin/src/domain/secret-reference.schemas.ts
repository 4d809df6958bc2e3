import { z } from 'zod';
import { httpUrl, type CamelKeys } from '@switchyard/core';
import type { ExternalManagerType, SecretManagerType } from '../store/entities.ts';
import { isJsonPointer } from './secret-reference.values.ts';

/**
 * The secret reference bodies as the API takes them (snake_case, as sent), and the auth config
 * of each manager. Unknown fields are refused and every string and map is bounded.
 */

/** How many tags a secret reference holds at most. */
export const MAX_TAGS = 64;
/** How many workspaces a secret reference names at most (each is looked up in the directory). */
export const MAX_WORKSPACES = 100;
/** How many secret mappings one integration holds at most. */
export const MAX_SECRET_MAPPINGS = 16;

/** The fields of an auth config that are credentials: stored encrypted, shown only masked. */
export const SECRET_AUTH_FIELDS = [
  'aws_secret_access_key',
  'aws_session_token',
  'vault_token',
  'vault_secret_id',
  'azure_entra_client_secret',
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a secret reference is named by its id rather than its slug. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** A secret reference's slug, as the body names it. */
export const secretReferenceSlug = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,255}$/, 'letters, digits, - and _, up to 255 characters')
  .refine((slug) => !isUuid(slug), 'not a UUID: the path names a secret reference by its id or its slug');

/** The path's (or a mapping's) secret reference: its id or its slug. */
export const secretReferenceRef = z.string().regex(/^[a-zA-Z0-9_-]{1,255}$/, 'a secret reference id or slug');

const text = (max = 1024) => z.string().min(1).max(max);
const secret = text(8192);
const awsRegion = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as us-east-1');

/** AWS Secrets Manager with an access key (and, for temporary credentials, a session token). */
const awsAccessKey = z.strictObject({
  aws_auth_type: z.literal('accessKey'),
  aws_access_key_id: z.string().regex(/^[A-Z0-9]{16,128}$/, 'an AWS access key id'),
  aws_secret_access_key: text(256),
  aws_session_token: text(4096).optional(),
  aws_region: awsRegion,
  /** Another Secrets Manager endpoint (a VPC endpoint) instead of the region's public one. */
  aws_endpoint: httpUrl().optional(),
});
const awsAssumedRole = z.strictObject({
  aws_auth_type: z.literal('assumedRole'),
  aws_role_arn: text(2048),
  aws_external_id: text(1224).nullable().optional(),
  aws_region: awsRegion,
});
const awsServiceRole = z.strictObject({
  aws_auth_type: z.literal('serviceRole'),
  aws_region: awsRegion.optional(),
});

const azureVaultUrl = httpUrl();
const azureEntra = z.strictObject({
  azure_auth_mode: z.literal('entra'),
  azure_entra_tenant_id: z.string().regex(/^[a-zA-Z0-9.-]{1,255}$/, 'an Entra tenant id or domain'),
  azure_entra_client_id: text(255),
  azure_entra_client_secret: secret,
  azure_vault_url: azureVaultUrl,
  /** Another Entra authority (a national cloud) instead of https://login.microsoftonline.com. */
  azure_authority_host: httpUrl().optional(),
});
const azureManaged = z.strictObject({
  azure_auth_mode: z.literal('managed'),
  azure_managed_client_id: text(255).optional(),
  azure_vault_url: azureVaultUrl,
});
const azureDefault = z.strictObject({
  azure_auth_mode: z.literal('default'),
  azure_vault_url: azureVaultUrl,
});

const vaultAddr = httpUrl();
const vaultNamespace = z
  .string()
  .regex(/^[\w./-]{1,255}$/, 'a Vault namespace')
  .optional();
const vaultToken = z.strictObject({
  vault_auth_type: z.literal('token'),
  vault_addr: vaultAddr,
  vault_token: secret,
  vault_namespace: vaultNamespace,
});
const vaultAppRole = z.strictObject({
  vault_auth_type: z.literal('approle'),
  vault_addr: vaultAddr,
  vault_role_id: text(255),
  vault_secret_id: secret,
  vault_namespace: vaultNamespace,
});
const vaultKubernetes = z.strictObject({
  vault_auth_type: z.literal('kubernetes'),
  vault_addr: vaultAddr,
  vault_role: text(255),
  vault_namespace: vaultNamespace,
});

/** Each manager's auth configs, told apart by their auth type field. */
export const authConfigSchemas = {
  aws_sm: z.discriminatedUnion('aws_auth_type', [awsAccessKey, awsAssumedRole, awsServiceRole]),
  azure_kv: z.discriminatedUnion('azure_auth_mode', [azureEntra, azureManaged, azureDefault]),
  hashicorp_vault: z.discriminatedUnion('vault_auth_type', [vaultToken, vaultAppRole, vaultKubernetes]),
} satisfies Record<ExternalManagerType, z.ZodType>;

/** The field that names an auth config's kind, per manager. */
export const AUTH_KIND_FIELD: Record<ExternalManagerType, string> = {
  aws_sm: 'aws_auth_type',
  azure_kv: 'azure_auth_mode',
  hashicorp_vault: 'vault_auth_type',
};

export type AwsAccessKeyAuth = z.output<typeof awsAccessKey>;
export type AzureEntraAuth = z.output<typeof azureEntra>;
export type VaultTokenAuth = z.output<typeof vaultToken>;
export type VaultAppRoleAuth = z.output<typeof vaultAppRole>;
export type AuthConfig = z.output<(typeof authConfigSchemas)[ExternalManagerType]>;

/** Where the secret is: `<mount>/<path>` in Vault, the secret's name (or ARN) elsewhere. */
const secretPath = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[\w./:+=@-]+$/, 'a secret name or path: letters, digits and _ . / : + = @ -');
const secretKey = z.string().min(1).max(255);

const tags = z
  .record(text(255), z.string().max(1024))
  .refine((value) => Object.keys(value).length <= MAX_TAGS, `at most ${MAX_TAGS} tags`);

const workspaces = z.array(text(255)).min(1).max(MAX_WORKSPACES, `at most ${MAX_WORKSPACES} workspaces`);

const managerType = z.enum([
  'internal',
  'aws_sm',
  'azure_kv',
  'hashicorp_vault',
]) satisfies z.ZodType<SecretManagerType>;

/** The largest secret Switchyard keeps itself (`internal`), in bytes of its JSON. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

/**
 * An `internal` reference's secret: a string, or a JSON object whose values are strings,
 * numbers or booleans (a mapping's `secret_key` takes one), at most 64 KB.
 */
export const secretValue = z
  .union([
    z.string().min(1),
    z
      .record(
        z.string().min(1).max(255),
        z.union([z.string(), z.number(), z.boolean()], { error: 'a string, number or boolean' }),
      )
      .refine((value) => Object.keys(value).length > 0, 'an object of at least one field'),
  ])
  .refine(
    (value) =>
      Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value)) <= MAX_SECRET_VALUE_BYTES,
    `at most ${MAX_SECRET_VALUE_BYTES / 1024} KB`,
  );

/** A secret reference's `secret_uri` (see secret-reference.uri.ts); its rules are checked on create. */
const secretUri = z.string().min(1).max(2048);

/** An auth config given as is; checked against its manager's schemas (create) or merged first (update). */
const looseAuthConfig = z
  .record(z.string().max(64), z.unknown())
  .refine((value) => Object.keys(value).length <= 16, 'at most 16 fields');

const exclusiveWorkspaces = (
  body: { allow_all_workspaces?: boolean | undefined; allowed_workspaces?: string[] | undefined },
  ctx: z.RefinementCtx,
) => {
  if (body.allow_all_workspaces === true && body.allowed_workspaces !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['allowed_workspaces'],
      message: 'not taken with allow_all_workspaces true: give one or the other',
    });
  }
};

export const createSecretReferenceBody = z
  .strictObject({
    organisation_id: z.uuid().optional(),
    name: z.string().trim().min(1).max(255),
    slug: secretReferenceSlug.optional(),
    description: z.string().max(1024).nullable().optional(),
    /** With secret_path, or else secret_uri. */
    manager_type: managerType.optional(),
    /** Where the secret is, as a URI: instead of manager_type and secret_path (both given: they must agree). */
    secret_uri: secretUri.optional(),
    /** External managers only. */
    auth_config: looseAuthConfig.optional(),
    /** External managers only. */
    secret_path: secretPath.optional(),
    /** `internal` only: the secret itself, stored encrypted and never answered. */
    secret_value: secretValue.optional(),
    secret_key: secretKey.nullable().optional(),
    allow_all_workspaces: z.boolean().optional(),
    allowed_workspaces: workspaces.optional(),
    tags: tags.nullable().optional(),
  })
  .superRefine(exclusiveWorkspaces);

/** Fields left out are kept; `auth_config` given is merged with the stored one. */
export const updateSecretReferenceBody = z
  .strictObject({
    name: z.string().trim().min(1).max(255).optional(),
    description: z.string().max(1024).nullable().optional(),
    auth_config: looseAuthConfig.optional(),
    secret_path: secretPath.optional(),
    /** `internal` only: a new value rotates the secret. */
    secret_value: secretValue.optional(),
    secret_key: secretKey.nullable().optional(),
    allow_all_workspaces: z.boolean().optional(),
    allowed_workspaces: workspaces.optional(),
    tags: tags.nullable().optional(),
  })
  .superRefine(exclusiveWorkspaces);

export const listSecretReferencesQuery = z.strictObject({
  manager_type: managerType.optional(),
  tags: z
    .string()
    .max(4096)
    .optional()
    .meta({ description: 'A JSON object of tags: references holding all of them.' }),
  search: z.string().min(1).max(255).optional().meta({ description: 'Part of the name.' }),
  current_page: z.string().optional(),
  page_size: z.string().optional(),
});

/** The tags filter: a JSON object of strings. */
export const tagsFilter = tags;

/** An RFC 6901 JSON pointer. */
export const jsonPointer = z
  .string()
  .max(1024)
  .refine(isJsonPointer, "an RFC 6901 JSON pointer: '' or '/'-separated tokens, '~' only as ~0 or ~1");

/** A json_pointer is taken only with value_format json. */
export function pointerNeedsJson(
  mapping: { value_format?: string | null | undefined; json_pointer?: string | null | undefined },
  ctx: z.RefinementCtx,
): void {
  if (mapping.json_pointer != null && mapping.value_format !== 'json') {
    ctx.addIssue({
      code: 'custom',
      path: ['json_pointer'],
      message: "taken only with value_format 'json'",
    });
  }
}

/** One of an integration's secret mappings, as the integration bodies take it. */
export const secretMapping = z
  .strictObject({
    target_field: z
      .string()
      .regex(/^(key|configurations\.[a-z0-9_]{1,64})$/, "'key' or 'configurations.<field>'"),
    secret_reference_id: secretReferenceRef,
    secret_key: secretKey.nullable().optional(),
    value_format: z.enum(['string', 'json']).nullable().optional(),
    /** With value_format json: an RFC 6901 pointer into the parsed value ("" the whole value). */
    json_pointer: jsonPointer.nullable().optional(),
  })
  .superRefine(pointerNeedsJson);

/** An integration's secret mappings: each target once. */
export const secretMappings = z
  .array(secretMapping)
  .max(MAX_SECRET_MAPPINGS, `at most ${MAX_SECRET_MAPPINGS} mappings`)
  .superRefine((mappings, ctx) => {
    const seen = new Set<string>();
    mappings.forEach((mapping, i) => {
      if (seen.has(mapping.target_field))
        ctx.addIssue({
          code: 'custom',
          path: [i, 'target_field'],
          message: `'${mapping.target_field}' is mapped twice`,
        });
      seen.add(mapping.target_field);
    });
  });

export type CreateSecretReferenceInput = CamelKeys<z.output<typeof createSecretReferenceBody>>;
export type UpdateSecretReferenceInput = CamelKeys<z.output<typeof updateSecretReferenceBody>>;
export type SecretMappingInput = z.output<typeof secretMapping>;

/** How many mappings one ResolveSecretMappings call checks at most. */
export const MAX_RESOLVED_MAPPINGS = 64;

/** One of control-plane's mappings (ResolveSecretMappings): its target fields are its own. */
const resolvedMapping = z
  .object({
    target_field: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'letters, digits and _ . : -, up to 128 characters'),
    secret_reference_id: secretReferenceRef,
    secret_key: z.string().max(255),
    value_format: z.enum(['', 'string', 'json']),
    json_pointer: z.union([z.literal(''), jsonPointer]),
  })
  .superRefine((mapping, ctx) => {
    if (mapping.json_pointer !== '' && mapping.value_format !== 'json')
      ctx.addIssue({
        code: 'custom',
        path: ['json_pointer'],
        message: "taken only with value_format 'json'",
      });
  });

/** A ResolveSecretMappings request, as the service-to-service channel brings it. */
export const resolveMappingsRequest = z.object({
  organisation_id: z.uuid(),
  workspace_id: z.union([z.literal(''), z.uuid()]),
  mappings: z
    .array(resolvedMapping)
    .max(MAX_RESOLVED_MAPPINGS, `at most ${MAX_RESOLVED_MAPPINGS} mappings`)
    .superRefine((mappings, ctx) => {
      const seen = new Set<string>();
      mappings.forEach((mapping, i) => {
        if (seen.has(mapping.target_field))
          ctx.addIssue({
            code: 'custom',
            path: [i, 'target_field'],
            message: `'${mapping.target_field}' is mapped twice`,
          });
        seen.add(mapping.target_field);
      });
    }),
});
