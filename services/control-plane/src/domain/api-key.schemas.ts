import { z } from 'zod';
import { isScope } from '@switchyard/access';
import { ROTATION_PERIOD_DAYS, type RotationPolicy } from './api-keys.ts';
import { isUuid } from './ids.ts';

/**
 * The wire form of API key requests (snake_case, as the API spells them): the one definition
 * of what the routes accept and of the domain inputs derived from them (see api-key.service.ts).
 */

export const apiKeyPathParams = z.object({
  type: z.enum(['organisation', 'workspace']),
  'sub-type': z.enum(['service', 'user']),
});

const apiKeyName = z.string().trim().min(1).max(255);
const apiKeyDescription = z.string().max(1024);
/** Names are checked against the catalogue here; what a key's kind and user may hold, by the service. */
const apiKeyScopes = z
  .array(z.string().refine(isScope, { error: (issue) => `unknown scope '${String(issue.input)}'` }))
  .max(256);
/** Whether it lies in the future is checked by the service, against one clock. */
const instant = z.iso.datetime({ offset: true }).transform((v) => new Date(v));

/**
 * `rotation_period_days` (1 to 365) or `rotation_period` (weekly = 7, monthly = 30 days),
 * and/or the date of the next rotation. Null fields count as absent, as reference clients send
 * them. The reference's `key_transition_period_ms` is refused: a rotated secret stops at once.
 */
const rotationPolicy = z
  .strictObject({
    rotation_period_days: z.int().min(1).max(365).nullish(),
    rotation_period: z.enum(['weekly', 'monthly']).nullish(),
    next_rotation_at: instant.nullish(),
  })
  .superRefine((policy, ctx) => {
    if (policy.rotation_period_days != null && policy.rotation_period != null) {
      ctx.addIssue({
        code: 'custom',
        path: ['rotation_period'],
        message: 'rotation_period_days and rotation_period are mutually exclusive: give one of them',
      });
    } else if (Object.values(policy).every((value) => value == null)) {
      ctx.addIssue({
        code: 'custom',
        message: 'give rotation_period_days, rotation_period or next_rotation_at',
      });
    }
  })
  .transform((policy): RotationPolicy => ({
    periodDays:
      policy.rotation_period_days ??
      (policy.rotation_period ? ROTATION_PERIOD_DAYS[policy.rotation_period] : null),
    nextRotationAt: policy.next_rotation_at ?? null,
  }));

/** Bounds of a key's default metadata: what a request's `<prefix>metadata` header may hold too. */
const MAX_METADATA_ENTRIES = 64;
const MAX_METADATA_BYTES = 8_192;

/**
 * `defaults`, as the reference API spells them: `config_id` a saved config of the key's
 * workspace by id or slug (checked by the service), `metadata` strings merged under each
 * request's own metadata, `allow_config_override: false` refusing a request's own config.
 * Null clears a field (allow_config_override: back to true).
 */
const apiKeyDefaults = z.strictObject({
  config_id: z.string().trim().min(1).max(255).nullable().optional(),
  metadata: z
    .record(z.string().min(1).max(128), z.string().max(1024))
    .refine((metadata) => Object.keys(metadata).length <= MAX_METADATA_ENTRIES, {
      error: `at most ${MAX_METADATA_ENTRIES} entries`,
    })
    .refine((metadata) => Buffer.byteLength(JSON.stringify(metadata)) <= MAX_METADATA_BYTES, {
      error: `at most ${MAX_METADATA_BYTES} bytes as JSON`,
    })
    .nullable()
    .optional(),
  allow_config_override: z.boolean({ error: 'must be true, false or null' }).nullable().optional(),
});

export const createApiKeyBody = z.object({
  name: apiKeyName,
  description: apiKeyDescription.optional(),
  workspace_id: z.string().min(1).max(255).optional(),
  user_id: z.uuid().optional(),
  scopes: apiKeyScopes.optional(),
  expires_at: instant.optional(),
  rotation_policy: rotationPolicy.nullish(),
  defaults: apiKeyDefaults.nullish(),
});

/** A key's type, workspace and user are fixed at creation. Null clears a field. */
export const updateApiKeyBody = z
  .strictObject({
    name: apiKeyName.optional(),
    description: apiKeyDescription.nullable().optional(),
    scopes: apiKeyScopes.optional(),
    expires_at: instant.nullable().optional(),
    rotation_policy: rotationPolicy.nullable().optional(),
    /** Absent fields stay; null clears one, and a null `defaults` clears them all. */
    defaults: apiKeyDefaults.nullable().optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, description, scopes, expires_at, rotation_policy or defaults',
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

/**
 * Nothing to give. The reference's `key_transition_period_ms` is refused: the old secret stops
 * working at once, as a revocation would.
 */
export const rotateApiKeyBody = z.strictObject({});
