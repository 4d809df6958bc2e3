import { z } from 'zod';

/** The wire form of the batch record routes (snake_case, as the API spells them). */

/** A file id as the gateway forwards one (the same rule as a forwarded operation's path ids). */
export const fileId = z
  .string()
  .regex(/^[\w.:-]{1,256}$/, { error: 'a file id: 1 to 256 letters, digits, _ . : or -' });

export const listBatchesQuery = z.object({
  status: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: 'Only batches the provider last reported in this status, e.g. `completed`.' }),
  provider: z.string().min(1).max(255).optional().meta({
    description: 'Only batches of this provider family (`openai`) or, with a leading @, integration.',
  }),
  integration: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Only batches sent to this integration (its slug, with or without @).' }),
});
export type ListBatchesInput = z.infer<typeof listBatchesQuery>;

export const updateBatchBody = z.strictObject({
  internal_output_file_id: fileId.nullable().meta({
    description:
      "The gateway's own id of the batch's output file; results are then fetched by it instead of the provider's output file. Null clears it.",
  }),
});
export type UpdateBatchInput = z.infer<typeof updateBatchBody>;
