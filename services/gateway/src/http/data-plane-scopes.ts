import type { Scope } from '@switchyard/access';
import type { BodyContent, PatternOperation, ScopedExample } from '@switchyard/runtime';
import { BATCH_OUTPUT_OPERATION, FORWARDED_PREFIXES, SPECIFIED_OPERATIONS } from './forwarded-routes.ts';

type Family = (typeof FORWARDED_PREFIXES)[number];

/** Generating calls need `completions.write` whatever the method; stored resources split reads from writes. */
const generation = { read: 'completions.write', write: 'completions.write' } as const;

const FAMILY_SCOPES: Record<Family, { read: Scope; write: Scope }> = {
  completions: generation,
  embeddings: generation,
  images: generation,
  audio: generation,
  moderations: generation,
  responses: generation,
  rerank: generation,
  models: { read: 'models.read', write: 'models.write' },
  files: { read: 'files.read', write: 'files.write' },
  uploads: { read: 'files.read', write: 'files.write' },
  batches: { read: 'batches.read', write: 'batches.write' },
  fine_tuning: { read: 'fine_tuning.read', write: 'fine_tuning.write' },
  assistants: { read: 'assistants.read', write: 'assistants.write' },
  threads: { read: 'assistants.read', write: 'assistants.write' },
  vector_stores: { read: 'vector_stores.read', write: 'vector_stores.write' },
};

/** The scope a forwarded `/v1/<family>/…` operation needs: GET reads, anything else writes. */
export function forwardedScope(method: string, path: string): Scope {
  const end = path.indexOf('/', 4);
  const family = (end === -1 ? path.slice(4) : path.slice(4, end)) as Family;
  const scopes = FAMILY_SCOPES[family] ?? generation;
  return method === 'GET' || method === 'HEAD' ? scopes.read : scopes.write;
}

/** Requests of every forwarded family, reads and writes, and the interface's operations 2–4. */
export const FORWARDED_EXAMPLES: ScopedExample[] = [
  ...FORWARDED_PREFIXES.flatMap((family): ScopedExample[] => [
    { method: 'GET', path: `/v1/${family}`, scope: FAMILY_SCOPES[family].read },
    // POST /v1/responses is a route of its own (responses-routes.ts).
    ...(family === 'responses'
      ? []
      : [{ method: 'POST' as const, path: `/v1/${family}`, scope: FAMILY_SCOPES[family].write }]),
  ]),
  { method: 'POST', path: '/v1/threads/thread_1/runs/run_1', scope: 'assistants.write' },
  { method: 'POST', path: '/v1/fine_tuning/jobs/ftjob_1/cancel', scope: 'fine_tuning.write' },
  { method: 'GET', path: '/v1/files/file_1/content', scope: 'files.read' },
  { method: 'GET', path: '/v1/batches/batch_1/output', scope: 'batches.read' },
  { method: 'DELETE', path: '/v1/files/file_1', scope: 'files.write' },
];

/** What each forwarded family serves, for the reference. */
const FAMILY_NOUNS: Record<Family, string> = {
  completions: 'text completions (the legacy completions API)',
  embeddings: 'embeddings',
  images: 'images',
  audio: 'speech, transcriptions and translations',
  moderations: 'moderations',
  models: 'models',
  files: 'files',
  uploads: 'uploads in parts',
  batches: 'batches',
  fine_tuning: 'fine-tuning jobs',
  assistants: 'assistants',
  threads: 'threads, their messages and runs',
  responses: 'responses',
  rerank: 'reranked documents',
  vector_stores: 'vector stores and their files',
};

/** A forwarded body: routed by its `model`, passed on as it came. */
const FORWARDED_BODY: BodyContent = {
  contentTypes: ['application/json', 'multipart/form-data'],
  description:
    'Forwarded to the provider as sent. A JSON body is read for its `model` (which routes the request) and `stream`; any other body, such as a multipart upload, streams through unread.',
};

const DEEPER = 'Deeper paths under it are forwarded alike, with any method.';

/**
 * The forwarded operations as the reference describes them: each family's own path, read and
 * written, and the interface's specified operations (checked before they are forwarded).
 */
export const FORWARDED_OPERATIONS: PatternOperation[] = [
  ...FORWARDED_PREFIXES.flatMap((family): PatternOperation[] => [
    {
      method: 'GET',
      path: `/v1/${family}`,
      summary:
        family === 'models'
          ? 'Lists models: the integrated catalog, unless a header or config names a provider to ask.'
          : `Lists ${FAMILY_NOUNS[family]} at the provider the request routes to.`,
      description: DEEPER,
      query: 'none',
      forwarded: true,
    },
    // POST /v1/responses is a route of its own (responses-routes.ts).
    ...(family === 'responses'
      ? []
      : [
          {
            method: 'POST',
            path: `/v1/${family}`,
            summary: `Creates ${FAMILY_NOUNS[family]} at the provider the request routes to.`,
            description: DEEPER,
            query: 'none',
            body: FORWARDED_BODY,
            forwarded: true,
          } as const,
        ]),
  ]),
  ...SPECIFIED_OPERATIONS,
  BATCH_OUTPUT_OPERATION,
];
