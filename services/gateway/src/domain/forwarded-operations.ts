import type { Request, Response } from 'express';
import { z } from 'zod';
import {
  BadRequest,
  NotFound,
  NotImplemented,
  UpstreamError,
  integrationSlugs,
  parseInput,
  pathParameters,
  providerKinds,
  type PatternOperation,
} from '@switchyard/platform';
import { parseJsonObject } from '../http/request-body.ts';
import type { ForwardCall } from '../providers/types.ts';
import { GatewayRequest, type GatewayContext } from './gateway-request.ts';
import type { ModelCatalog } from './model-catalog.ts';
import { refuseBlockedInlineChoices } from './provider-routing.ts';

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
const forwardedId = z.string().regex(/^[\w.:-]{1,256}$/);

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

/** A specified operation as the handler matches it: its path after `/v1` as a pattern. */
const specified = SPECIFIED_OPERATIONS.map((operation) => ({
  method: operation.method,
  pattern: new RegExp(`^${operation.path.replace(/^\/v1/, '').replace(/:\w+/g, '([^/]+)')}$`),
  params: pathParameters(operation.path).map((name) => ({
    name,
    schema: (operation.params.shape as Record<string, z.ZodType>)[name]!,
  })),
  body: 'body' in operation && operation.body !== 'none' ? operation.body.schema : undefined,
  noBody: 'body' in operation && operation.body === 'none',
}));

const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'openai-beta'];

/**
 * Every other `/v1` operation: authenticated, routed, policy-checked, logged, and forwarded
 * to the provider with its credentials; the answer is streamed back as it arrives.
 */
export class ForwardedOperations {
  constructor(
    private readonly context: GatewayContext,
    private readonly catalog: ModelCatalog,
  ) {}

  async handle(req: Request, res: Response): Promise<void> {
    const request = new GatewayRequest(this.context, req, res);
    const json = Buffer.isBuffer(req.body) ? (req.body as Buffer) : undefined;
    const requestBody = json ? json.toString('utf8') : '';
    try {
      const path = upstreamPath(req);
      if (req.method === 'GET' && path.pathname === '/models') {
        const integrated = await this.integratedModels(request, req);
        if (integrated) {
          const answer = JSON.stringify(integrated);
          res.type('application/json').send(answer);
          request.finish(200, requestBody, answer);
          return;
        }
      }
      let parsed = json && json.length > 0 ? parseJsonObject(json, requestBody) : undefined;
      const rule = specified.find((r) => r.method === req.method && r.pattern.test(path.pathname));
      if (rule) {
        const values = rule.pattern.exec(path.pathname)!.slice(1);
        rule.params.forEach(({ name, schema }, i) => {
          if (!schema.safeParse(decodeURIComponent(values[i]!)).success) {
            throw new BadRequest(`Invalid path parameter '${name}'.`, { param: name });
          }
        });
        if (rule.body) parsed = parseInput(rule.body, parsed ?? {}) as Record<string, unknown>;
      }
      const model = typeof parsed?.model === 'string' ? parsed.model : undefined;
      request.markStream(parsed?.stream === true);
      const headers: Record<string, string> = {};
      for (const name of FORWARDED_REQUEST_HEADERS) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      let uploadSent = false;
      const response = await request.dispatch(model, parsed, async (routed, attempt) => {
        const forward = routed.provider.forward;
        if (!forward) {
          throw new NotImplemented(
            `The '${routed.target.provider}' provider supports chat completions only; ${req.method} /v1${path.pathname} is not available for it.`,
            { code: 'operation_not_supported' },
          );
        }
        let body: ForwardCall['body'];
        if (rule?.noBody || (!json && (req.method === 'GET' || req.method === 'DELETE'))) {
          body = undefined;
        } else if (json) {
          const changed = routed.modelRewritten || attempt.overrideParams !== undefined;
          body = changed
            ? Buffer.from(
                JSON.stringify({
                  ...parsed,
                  ...attempt.overrideParams,
                  ...(routed.modelRewritten ? { model: routed.model } : {}),
                }),
              )
            : json;
        } else {
          // An upload streams through once; it is not kept for a retry or a fallback target.
          if (uploadSent) {
            throw new UpstreamError(
              502,
              'A streamed upload is sent once; it cannot be retried on another target.',
              {
                code: 'upload_not_retryable',
              },
            );
          }
          uploadSent = true;
          body = req;
        }
        const answer = await forward({
          method: req.method,
          path: `${path.pathname}${path.search}`,
          headers,
          body,
          target: routed.target,
          signal: attempt.signal,
          timeoutMs: attempt.timeoutMs,
        });
        return { ...answer, discard: () => drain(answer.body) };
      });
      res.status(response.status);
      for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
      const { copy } = await request.relay(response.body, () => res.destroy());
      const textual = /json|text/.test(response.headers['content-type'] ?? '');
      request.finish(res.statusCode, requestBody, textual ? copy.toString('utf8') : `[${copy.length} bytes]`);
    } catch (err) {
      request.fail(err, requestBody);
    }
  }

  /**
   * GET /v1/models answers from the integrated catalog unless the request names a provider
   * (header or config); `<prefix>models-endpoint: true` or a config's
   * `fetch_integrated_models` asks for the catalog anyway, narrowed to the providers named.
   * Undefined means: forward to the provider.
   */
  private async integratedModels(request: GatewayRequest, req: Request) {
    const prefix = this.context.headerPrefix;
    const wanted = booleanHeader(req, `${prefix}models-endpoint`);
    const provider = request.headers.provider;
    if (provider === undefined && request.headers.config === undefined) {
      return wanted === false ? undefined : this.catalog.list(req);
    }
    await refuseBlockedInlineChoices(request.principal, request.headers, this.context.inline, prefix);
    const config = (await request.config())?.config;
    const named = new Set<string>(provider === undefined ? [] : [provider]);
    if (config) {
      for (const slug of integrationSlugs(config)) named.add(`@${slug}`);
      for (const kind of providerKinds(config)) named.add(kind);
    }
    if (named.size === 0) return wanted === false ? undefined : this.catalog.list(req);
    if (!(wanted ?? config?.fetch_integrated_models ?? false)) return undefined;
    return this.catalog.list(req, named);
  }
}

/** `<prefix>models-endpoint: true|false`. */
function booleanHeader(req: Request, name: string): boolean | undefined {
  const value = req.headers[name];
  if (value === undefined || value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new BadRequest(`Header ${name} must be true or false.`, { param: name });
}

/** Reads and drops an answer that will not be used, so its connection can be reused. */
function drain(body: AsyncIterable<Uint8Array>): void {
  void (async () => {
    for await (const chunk of body) void chunk;
  })().catch(() => undefined);
}

/** The path after `/v1`, refusing anything that could climb out of the provider's API root. */
function upstreamPath(req: Request): URL {
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

/** Matches the paths this handler serves. */
export const FORWARDED_PATH = new RegExp(`^/v1/(${FORWARDED_PREFIXES.join('|')})(/|$)`);
