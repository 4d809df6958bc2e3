import { z } from 'zod';

/*
 * The wire form of the prompt and prompt partial requests (snake_case, as the API spells
 * them). Unknown fields are refused (400) everywhere but in a render's hyperparameters.
 */

/** The longest template a prompt or partial may hold, in characters. */
export const MAX_TEMPLATE_CHARS = 1_000_000;
/** The largest JSON (parameters, tools, functions, metadata) a version may hold, serialised. */
export const MAX_JSON_CHARS = 256_000;

const name = z.string().trim().min(1).max(255);
const slug = z
  .string()
  .min(3)
  .max(100)
  .regex(/^[a-zA-Z0-9_-]+$/, 'letters, digits, "_" and "-" only');
const ref = z.string().min(1).max(255);
const template = z.string().min(1).max(MAX_TEMPLATE_CHARS).meta({
  description:
    'The Mustache template: a JSON array of chat messages, or text that becomes one user message. `{{variable}}` inserts a value, `{{> partial-slug}}` a partial.',
});

const bounded = <T extends z.ZodType>(schema: T, what: string) =>
  schema.refine((value) => JSON.stringify(value).length <= MAX_JSON_CHARS, {
    error: `${what} is larger than ${MAX_JSON_CHARS} characters of JSON`,
  });

const jsonObject = z.record(z.string().max(255), z.unknown());

const collection = z
  .string()
  .max(255)
  .optional()
  .meta({ description: 'Prompt collections are not built: giving one answers 501.' });

const versionDescription = z.string().max(2000).nullable().optional();

/** What a prompt version holds besides its template. */
const promptContent = {
  model: z.string().min(1).max(255).nullable().optional().meta({
    description: 'The model the completion asks for; absent leaves it to the request’s routing.',
  }),
  virtual_key: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^@]+$/, 'an integration slug, without "@"')
    .nullable()
    .optional()
    .meta({ description: 'The integration (provider slug, without "@") the completion goes to.' }),
  parameters: bounded(jsonObject, 'parameters').optional().meta({
    description: 'Chat completion parameters (temperature, max_completion_tokens, response_format, ...).',
  }),
  functions: bounded(z.array(jsonObject).max(128), 'functions').nullable().optional(),
  tools: bounded(z.array(jsonObject).max(128), 'tools').nullable().optional(),
  tool_choice: bounded(z.union([z.string().max(255), jsonObject]), 'tool_choice')
    .nullable()
    .optional(),
  template_metadata: bounded(jsonObject, 'template_metadata').nullable().optional(),
};

export const createPromptBody = z.strictObject({
  name,
  slug: slug.optional().meta({
    description: 'Unique among the organisation’s live prompts; generated from the name when absent.',
  }),
  workspace_id: ref.optional().meta({
    description: 'The owning workspace (id or slug): an organisation admin key must give it.',
  }),
  collection_id: collection,
  string: template,
  version_description: versionDescription,
  ...promptContent,
});

export const updatePromptBody = z
  .strictObject({
    name: name.optional(),
    collection_id: collection,
    string: template.optional(),
    version_description: versionDescription,
    ...promptContent,
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one field to change',
  });

export const createPartialBody = z.strictObject({
  name,
  slug: slug.optional().meta({
    description: 'Unique among the organisation’s live partials; generated from the name when absent.',
  }),
  workspace_id: ref.optional(),
  collection_id: collection,
  string: template,
  version_description: versionDescription,
});

export const updatePartialBody = z
  .strictObject({
    name: name.optional(),
    collection_id: collection,
    string: template.optional(),
    version_description: versionDescription,
    description: versionDescription,
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one field to change',
  });

export const listPromptsQuery = z.object({
  workspace_id: ref.optional(),
  collection_id: collection,
  search: z.string().max(255).optional(),
  type: z.enum(['own', 'shared']).optional().meta({
    description:
      '`shared`: the prompts of other workspaces shared with the workspace (a workspace key’s own, or `workspace_id`).',
  }),
  show_prompt_share: z
    .enum(['true', 'false'])
    .optional()
    .transform((value) => value === 'true')
    .meta({ description: '`true`: each item says which workspaces it is shared with, and which owns it.' }),
});

export const getPromptQuery = z.strictObject({
  version: z
    .string()
    .regex(/^([1-9][0-9]{0,8}|latest)$/, 'a version number or "latest"')
    .optional()
    .meta({ description: 'A version number or `latest`; the default version when absent.' }),
});

export const updateVersionBody = z
  .strictObject({
    label_id: z.uuid().nullable().optional(),
    description: versionDescription,
    version_description: versionDescription,
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give label_id or description',
  });

export const makeDefaultBody = z.strictObject({
  version: z.number().int().min(1).max(1_000_000_000),
});

export const shareBody = z.strictObject({
  workspace_ids: z
    .array(ref)
    .min(1)
    .max(500)
    .meta({ description: 'Workspaces of the organisation, by id or slug.' }),
});

export const replaceSharesBody = z.strictObject({
  workspace_ids: z.array(ref).max(500),
});

export const forkBody = z.strictObject({
  workspace_id: ref.meta({ description: 'The workspace the copy belongs to.' }),
  name: name.optional(),
  slug: slug.optional(),
});

/** Variables and, at the root, chat parameters that win over the prompt's (`stream` is ignored: render answers JSON). */
export const renderBody = z
  .looseObject({
    variables: z.record(z.string().max(255), z.unknown()).default({}),
    stream: z.boolean().optional(),
    messages: z.never({ error: 'messages come from the prompt: they cannot be given' }).optional(),
  })
  .refine((body) => JSON.stringify(body).length <= MAX_TEMPLATE_CHARS, {
    error: 'the render body is larger than the template limit',
  });

export const versionRef = z
  .string()
  .regex(/^([1-9][0-9]{0,8}|[0-9a-fA-F-]{36})$/, 'a version number or a version id')
  .meta({ description: 'A version number or a version id.' });
