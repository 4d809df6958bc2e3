import { z } from 'zod';

/** The query and path parameters of the provider details and model pricing routes. */

export const providerDetailsQuery = z.object({
  include_configurations: z
    .enum(['true', 'false'], { message: 'expected true or false' })
    .default('false')
    .transform((value) => value === 'true'),
  organisation_id: z.uuid().optional().meta({
    description:
      'With include_configurations=true: the organisation whose integrations are included, each with its configurations (secrets masked). Required then.',
  }),
});

/** A provider id as integrations name it: lowercase letters, digits and hyphens. */
export const providerIdParam = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a provider id: lowercase letters, digits and -, up to 64 characters');

/**
 * A model name as requests give it: provider model ids hold letters, digits and `.-_:@/`
 * (`gpt-4o-2024-08-06`, `anthropic.claude-3-5-sonnet-20240620-v1:0`, `openai/gpt-4o`).
 */
export const modelParam = z
  .string()
  .regex(
    /^[A-Za-z0-9][\w.:@/-]{0,255}$/,
    'a model name: letters, digits and . _ - : @ /, up to 256 characters',
  );
