import { z } from 'zod';

/*
 * `secret_mappings`: fields of a resource whose values come from admin's secret references
 * instead of being stored here. Only the mappings are kept; values are fetched from admin
 * when a gateway (or this service) needs them, and never shown.
 */

export const MAX_SECRET_MAPPINGS = 16;

/** A mapping as stored and shown: the reference named by its id. */
export interface StoredSecretMapping {
  target_field: string;
  secret_reference_id: string;
  secret_key: string | null;
  value_format: 'string' | 'json' | null;
  json_pointer: string | null;
}

/**
 * The `secret_mappings` a resource takes: `target` says which fields may be mapped (and how
 * it reads to a user); each target once (header names compared without case).
 */
export function secretMappingsSchema(target: z.ZodType<string>, targets: string) {
  const mapping = z
    .strictObject({
      target_field: target,
      secret_reference_id: z.string().trim().min(1).max(255).meta({
        description: 'The secret reference, by id or slug (answered as its id).',
      }),
      secret_key: z.string().min(1).max(255).nullable().optional().meta({
        description: "The field of a secret holding several; absent: the reference's own secret_key.",
      }),
      value_format: z.enum(['string', 'json']).nullable().optional().meta({
        description: '`string` (as it is, the default) or `json` (must parse as JSON).',
      }),
      json_pointer: z
        .string()
        .max(1024)
        .regex(/^(\/.*)?$/, 'an RFC 6901 JSON pointer ("" or starting with "/")')
        .nullable()
        .optional()
        .meta({ description: 'With value_format `json`: the value inside the parsed JSON.' }),
    })
    .superRefine((value, ctx) => {
      if (value.json_pointer && value.value_format !== 'json') {
        ctx.addIssue({
          code: 'custom',
          path: ['json_pointer'],
          message: 'json_pointer needs value_format `json`',
        });
      }
    });
  return z
    .array(mapping)
    .max(MAX_SECRET_MAPPINGS, `at most ${MAX_SECRET_MAPPINGS} mappings`)
    .superRefine((mappings, ctx) => {
      const seen = new Set<string>();
      mappings.forEach((entry, i) => {
        const key = entry.target_field.toLowerCase();
        if (seen.has(key)) {
          ctx.addIssue({
            code: 'custom',
            path: [i, 'target_field'],
            message: `'${entry.target_field}' is mapped twice`,
          });
        }
        seen.add(key);
      });
    })
    .meta({
      description: `Fields whose values come from secret references, resolved when the resource is used (never stored here, never shown). Targets: ${targets}.`,
    });
}

export type SecretMappingInput = z.output<ReturnType<typeof secretMappingsSchema>>[number];

/** Where a resource's mappings apply: its organisation, and its workspace (null for an organisation-level one). */
export interface SecretMappingScope {
  organisationId: string;
  workspaceId: string | null;
}

/** What this service asks of admin's secret references (a stand-in in tests). */
export interface SecretMappingSource {
  /** The mappings checked (each reference exists and is open to the workspace), each reference named by its id; a 4xx naming the mapping when one is not. */
  check(
    scope: SecretMappingScope,
    mappings: readonly SecretMappingInput[],
    param: string,
  ): Promise<StoredSecretMapping[]>;
  /** The value of each mapping, by target_field. Throws when one cannot be had. */
  resolve(
    scope: SecretMappingScope,
    mappings: readonly StoredSecretMapping[],
  ): Promise<Record<string, string>>;
}
