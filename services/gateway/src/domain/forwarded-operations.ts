import type { Readable } from 'node:stream';
import { NotImplemented, UpstreamError } from '@switchyard/core';
import { integrationSlugs, providerKinds } from '@switchyard/rules';
import type { ForwardCall, ForwardResponse } from '../providers/types.ts';
import { GatewayRequest, type GatewayContext, type IncomingCall } from './gateway-request.ts';
import type { ModelCatalog } from './model-catalog.ts';
import { estimateOperation } from './policy.ts';
import { refuseBlockedInlineChoices } from './provider-routing.ts';

/** A forwarded operation as the HTTP layer read and checked it. */
export interface ForwardedOperation {
  method: string;
  /** The path after `/v1`, and its query string (empty or starting with `?`). */
  pathname: string;
  search: string;
  /** Content headers of the client's request (content-type, accept, openai-beta). */
  headers: Record<string, string>;
  /** A JSON body as the client sent it; undefined for any other body. */
  json: Buffer | undefined;
  /** The JSON body as an object (checked where the operation is specified); routes by its `model`. */
  parsed: Record<string, unknown> | undefined;
  /** The operation forwards no body, whatever was sent. */
  noBody: boolean;
  /** Any other body (an upload), streamed through once as it arrives. */
  upload: Readable;
}

export type ForwardedAnswer = ForwardResponse & { discard(): void };

/**
 * Every other `/v1` operation: authenticated, routed, policy-checked, logged, and forwarded
 * to the provider with its credentials; the answer is streamed back as it arrives.
 */
export class ForwardedOperations {
  constructor(
    private readonly context: GatewayContext,
    private readonly catalog: ModelCatalog,
  ) {}

  open(call: IncomingCall): GatewayRequest {
    return new GatewayRequest(this.context, call);
  }

  /**
   * GET /v1/models answers from the integrated catalog unless the request names a provider
   * (header or config); `<prefix>models-endpoint: true` (`wanted`) or a config's
   * `fetch_integrated_models` asks for the catalog anyway, narrowed to the providers named.
   * Undefined means: forward to the provider.
   */
  async integratedModels(request: GatewayRequest, wanted: boolean | undefined) {
    const prefix = this.context.headerPrefix;
    const provider = request.headers.provider;
    if (provider === undefined && request.headers.config === undefined) {
      return wanted === false ? undefined : this.catalog.list(request.principal);
    }
    await refuseBlockedInlineChoices(request.principal, request.headers, this.context.inline, prefix);
    const config = (await request.config())?.config;
    const named = new Set<string>(provider === undefined ? [] : [provider]);
    if (config) {
      for (const slug of integrationSlugs(config)) named.add(`@${slug}`);
      for (const kind of providerKinds(config)) named.add(kind);
    }
    if (named.size === 0) return wanted === false ? undefined : this.catalog.list(request.principal);
    if (!(wanted ?? config?.fetch_integrated_models ?? false)) return undefined;
    return this.catalog.list(request.principal, named);
  }

  /** Routes the operation and forwards it; the answer's body is to be relayed as it arrives. */
  forward(request: GatewayRequest, operation: ForwardedOperation): Promise<ForwardedAnswer> {
    const { method, pathname, json, parsed } = operation;
    const model = typeof parsed?.model === 'string' ? parsed.model : undefined;
    request.markStream(parsed?.stream === true);
    let uploadSent = false;
    return request.dispatch(
      model,
      parsed,
      async (routed, attempt) => {
        const forward = routed.provider.forward;
        if (!forward) {
          throw new NotImplemented(
            `The '${routed.target.provider}' provider supports chat completions only; ${method} /v1${pathname} is not available for it.`,
            { code: 'operation_not_supported' },
          );
        }
        let body: ForwardCall['body'];
        if (operation.noBody || (!json && (method === 'GET' || method === 'DELETE'))) {
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
          body = operation.upload;
        }
        const answer = await forward({
          method,
          path: `${pathname}${operation.search}`,
          headers: operation.headers,
          body,
          target: routed.target,
          signal: attempt.signal,
          timeoutMs: attempt.timeoutMs,
        });
        return { ...answer, discard: () => drain(answer.body) };
      },
      (_routed, attempt) =>
        estimateOperation(
          pathname,
          attempt.overrideParams ? { ...parsed, ...attempt.overrideParams } : parsed,
          this.context.defaultCompletionTokens,
        ),
    );
  }

  /** The answer was relayed with `status`: the request's events go out, with a textual body as sent. */
  complete(
    request: GatewayRequest,
    answer: ForwardResponse,
    status: number,
    copy: Buffer,
    requestBody: string,
  ): void {
    const textual = /json|text/.test(answer.headers['content-type'] ?? '');
    request.finish(status, requestBody, textual ? copy.toString('utf8') : `[${copy.length} bytes]`);
  }
}

/** Reads and drops an answer that will not be used, so its connection can be reused. */
function drain(body: AsyncIterable<Uint8Array>): void {
  void (async () => {
    for await (const chunk of body) void chunk;
  })().catch(() => undefined);
}
