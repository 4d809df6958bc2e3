import { z } from 'zod';

/*
 * The wire form of feedback requests (snake_case, as the API spells them): the bounds the
 * reference gives (a value from -10 to 10, a weight from 0 to 1) and ours for the rest.
 */

/** How many feedback entries one POST may carry. */
export const MAX_FEEDBACK_PER_REQUEST = 100;
/** The longest trace id the gateway takes in its trace-id header. */
const MAX_TRACE_ID = 1024;
/** Metadata: at most this many keys, each this long, and this many bytes as JSON. */
const MAX_METADATA_KEYS = 64;
const MAX_METADATA_KEY = 128;
export const MAX_METADATA_BYTES = 16_384;

const value = z.int().min(-10).max(10).meta({ description: 'The feedback: an integer from -10 to 10.' });

/** Null reads as absent: some SDKs send null for an argument not given. */
const weight = z
  .number()
  .min(0)
  .max(1)
  .nullish()
  .meta({ description: 'How much the feedback counts, from 0 to 1; 1 when not given.' });

const metadata = z
  .record(z.string().min(1).max(MAX_METADATA_KEY), z.unknown())
  .nullish()
  .refine((object) => !object || Object.keys(object).length <= MAX_METADATA_KEYS, {
    error: `at most ${MAX_METADATA_KEYS} keys`,
  })
  .refine((object) => !object || Buffer.byteLength(JSON.stringify(object)) <= MAX_METADATA_BYTES, {
    error: `at most ${MAX_METADATA_BYTES} bytes as JSON`,
  })
  .meta({ description: 'Anything else to keep with the feedback, as an object.' });

const feedbackEntry = z.strictObject({
  trace_id: z
    .string()
    .min(1)
    .max(MAX_TRACE_ID)
    .meta({ description: 'The trace id of the request the feedback is on (its trace-id header).' }),
  value,
  weight,
  metadata,
  workspace_id: z.string().min(1).max(255).optional().meta({
    description:
      "The workspace (id or slug) the request ran in. A workspace key's feedback goes to its own workspace; an organisation admin key's, without one, to the organisation.",
  }),
});

/** One entry, or up to MAX_FEEDBACK_PER_REQUEST of them answered in the same order. */
export const createFeedbackBody = z.union([
  feedbackEntry,
  z.array(feedbackEntry).min(1).max(MAX_FEEDBACK_PER_REQUEST),
]);

/** A new value; weight and metadata when given (absent, they stay as they are). */
export const updateFeedbackBody = z.strictObject({ value, weight, metadata });

/** What both routes answer. */
export const feedbackResponse = z.object({
  status: z.literal('success'),
  message: z.string(),
  feedback_ids: z
    .array(z.string())
    .meta({ description: 'The ids of the feedback written, in request order.' }),
});

export type FeedbackEntryInput = z.output<typeof feedbackEntry>;
export type FeedbackUpdateInput = z.output<typeof updateFeedbackBody>;
