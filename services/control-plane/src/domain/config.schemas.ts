import { z } from 'zod';
import { isUuid } from './ids.ts';

/** A field clients often send empty or null when they mean "not given". */
const absentWhenEmpty = <S extends z.ZodType>(schema: S) =>
  z.preprocess((value) => (value === '' || value === null ? undefined : value), schema);

const configName = z.string().trim().min(1).max(255);

/** An object or its JSON text; what it may hold is checked by parseSavedConfig. */
const configDocument = z.union([z.string(), z.record(z.string(), z.unknown())], {
  error: 'expected a config object or its JSON text',
});

const workspaceReference = absentWhenEmpty(z.string().min(1).max(255).optional());

export const createConfigBody = z.strictObject({
  name: configName,
  config: configDocument,
  slug: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _, up to 63 characters')
    // A config is named by id or slug in the same places: a slug must not read as an id.
    .refine((slug) => !isUuid(slug), 'a slug cannot have the form of a UUID')
    .optional(),
  workspace_id: workspaceReference,
  isDefault: absentWhenEmpty(z.union([z.literal(0), z.literal(1), z.boolean()]).optional()).transform(
    (value) => value === 1 || value === true,
  ),
});

export const updateConfigBody = z
  .strictObject({
    name: configName.optional(),
    config: configDocument.optional(),
    status: z.enum(['active', 'archived']).optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, config or status',
  });

/** Page parameters are read by parsePage. */
export const listConfigsQuery = z.object({ workspace_id: workspaceReference });
