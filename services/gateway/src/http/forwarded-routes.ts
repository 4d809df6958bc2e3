import type { Request } from 'express';
import { z } from 'zod';
import { BadRequest, NotFound } from '@switchyard/core';
import { pathParameters, type PatternOperation } from '@switchyard/runtime';

/** The OpenAI API surface forwarded as it came to providers that speak the OpenAI format. */
export const FORWARDED_PREFIXES = [
  'completions',
  'embeddings',
  'images',
  'audio',
  'moderations',
  'models',
  'files',
  'uploads',
  'batches',
  'fine_tuning',
  'assistants',
  'threads',
  'responses',
  'rerank',
  'vector_stores',
] as const;

/** An id in a specified operation's path, checked (decoded) before the request is forwarded. */
export const forwardedId = z.string().regex(/^[\w.:-]{1,256}$/);

/**
 * Operations the interface specifies in detail (its operations 2 to 4): their path parameters
 * and body are checked with these schemas before they are forwarded; the router describes them
 * from the same declarations (`body: 'none'`: none is forwarded).
 */
export const SPECIFIED_OPERATIONS = [
  {
    method: 'POST',
    path: '/v1/threads/:thread_id/runs/:run_id',
    summary: "Modifies a run's metadata (the interface's operation 2).",
    params: z.object({ thread_id: forwardedId, run_id: forwardedId }),
    query: 'none',
    body: {
      contentTypes: ['application/json'],
      schema: z.looseObject({ metadata: z.record(z.string(), z.unknown()).nullable().optional() }),
      optional: true,
    },
    forwarded: true,
  },
  {
    method: 'POST',
    path: '/v1/fine_tuning/jobs/:fine_tuning_job_id/cancel',
    summary: "Cancels a fine-tuning job (the interface's operation 3).",
    params: z.object({ fine_tuning_job_id: forwardedId }),
    query: 'none',
    body: 'none',
    forwarded: true,
  },
  {
    method: 'GET',
    path: '/v1/files/:file_id/content',
    summary: "A file's content (the interface's operation 4).",
    params: z.object({ file_id: forwardedId }),
    query: 'none',
    forwarded: true,
  },
] as const satisfies readonly PatternOperation[];

/** Results of a batch created through the gateway, fetched from the provider its record names. */
export const BATCH_OUTPUT_OPERATION = {
  method: 'GET',
  path: '/v1/batches/:batch_id/output',
  summary:
    'Streams the output file of a batch created through the gateway, from the provider and integration its record names (the request need not name one).',
  description:
    "The file is the record's `internal_output_file_id` when set (PUT /v2/batches/:id), else the provider's `output_file_id`. A record without an output file yet has the provider asked for the batch first. 404 `batch_not_found` when the workspace has no record of the batch; 409 `batch_not_completed`, naming the status, while it runs.",
  params: z.object({ batch_id: forwardedId }),
  query: 'none',
} as const satisfies PatternOperation;

/** A specified operation as the handler matches it: its path after `/v1` as a pattern. */
export const specified = SPECIFIED_OPERATIONS.map((operation) => ({
  method: operation.method,
  pattern: new RegExp(`^${operation.path.replace(/^\/v1/, '').replace(/:\w+/g, '([^/]+)')}$`),
  params: pathParameters(operation.path).map((name) => ({
    name,
    schema: (operation.params.shape as Record<string, z.ZodType>)[name]!,
  })),
  body: 'body' in operation && operation.body !== 'none' ? operation.body.schema : undefined,
  noBody: 'body' in operation && operation.body === 'none',
}));

/** The path after `/v1`, refusing anything that could climb out of the provider's API root. */
export function upstreamPath(req: Request): URL {
  const original = req.originalUrl;
  if (/%2f|%5c|%2e/i.test(original.split('?')[0]!)) {
    throw new BadRequest('Encoded path separators are not allowed.', { code: 'invalid_path' });
  }
  const url = new URL(original.replace(/^\/v1/, ''), 'http://upstream.invalid');
  const first = url.pathname.split('/')[1] ?? '';
  if (!(FORWARDED_PREFIXES as readonly string[]).includes(first) || url.pathname.includes('/../')) {
    throw new NotFound(`No route for ${req.method} /v1${url.pathname}.`);
  }
  return url;
}

/** Matches the paths the forwarded operations serve. */
export const FORWARDED_PATH = new RegExp(`^/v1/(${FORWARDED_PREFIXES.join('|')})(/|$)`);
