import type { Readable } from 'node:stream';
import { NotImplemented, UpstreamError } from '@switchyard/core';
import { integrationSlugs, providerKinds } from '@switchyard/rules';
import type { ForwardCall, ForwardResponse } from '../providers/types.ts';
import { GatewayRequest, type GatewayContext, type IncomingCall } from './gateway-request.ts';
import type { ModelCatalog } from './model-catalog.ts';
import { estimateOperation } from './policy.ts';
import { refuseBlockedInlineChoices } from './provider-routing.ts';
import { checkInput, checkOutput, checkProxy } from './guardrails.ts';
import { guardStream } from './guardrail-stream.ts';
import { guardMessagesStream, guardResponsesStream } from './guardrail-event-streams.ts';
import { answerUnits, requestTexts, textOperation } from './operation-texts.ts';

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
   * (header or config) or the caller's default config applies (as if the request had named
   * it); `<prefix>models-endpoint: true` (`wanted`) or a config's `fetch_integrated_models`
   * asks for the catalog anyway, narrowed to the providers named. Undefined means: forward to
   * the provider.
   */
  async integratedModels(request: GatewayRequest, wanted: boolean | undefined) {
    const prefix = this.context.headerPrefix;
    const provider = request.headers.provider;
    const defaultConfig = request.principal.defaults?.config ?? null;
    if (provider === undefined && request.headers.config === undefined && defaultConfig === null) {
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

  /**
   * Routes the operation and forwards it; the answer's body is to be relayed as it arrives.
   * The request's guardrails apply first: on the texts of a model operation (completions,
   * embeddings, messages, responses) as on a chat completion's, input before the provider sees
   * them and output on the answer, whole or streamed; on any other request only their webhook
   * checks with `executeOnProxy` run.
   */
  async forward(request: GatewayRequest, operation: ForwardedOperation): Promise<ForwardedAnswer> {
    request.markStream(operation.parsed?.stream === true);
    request.noteModel(operation.parsed?.model);
    const guardrails = await request.guardrails();
    if (!guardrails) return this.send(request, operation);
    const { method, pathname } = operation;
    const kind = textOperation(method, pathname);
    const webhooks = request.webhookContext();
    const { metadata } = request.headers;
    const model = typeof operation.parsed?.model === 'string' ? operation.parsed.model : '';
    if (kind === undefined || operation.parsed === undefined) {
      const told = {
        requestType: 'proxy',
        request: { method, path: `/v1${pathname}`, contentType: operation.headers['content-type'] ?? '' },
        model,
        metadata,
      };
      await checkProxy(
        guardrails.input,
        { eventType: 'beforeRequestHook', ...told },
        { model, metadata },
        request.guardrailRuns,
        webhooks,
      );
      const answer = await this.send(request, operation);
      try {
        await checkProxy(
          guardrails.output,
          {
            eventType: 'afterRequestHook',
            ...told,
            response: {
              json: null,
              text: '',
              statusCode: answer.status,
              contentType: answer.headers['content-type'] ?? '',
            },
          },
          { model, metadata },
          request.guardrailRuns,
          webhooks,
        );
      } catch (err) {
        answer.discard();
        throw err;
      }
      return answer;
    }
    const facts = { model, metadata, requestType: kind, stream: operation.parsed.stream === true };
    let sent = operation;
    if (guardrails.input.length > 0) {
      const checked = await checkInput(
        guardrails.input,
        operation.parsed,
        (body) => requestTexts(kind, body),
        facts,
        request.guardrailRuns,
        webhooks,
      );
      // The provider gets the redacted texts, never the client's bytes.
      if (checked.redacted)
        sent = { ...operation, parsed: checked.body, json: Buffer.from(JSON.stringify(checked.body)) };
    }
    const answer = await this.send(request, sent);
    if (guardrails.output.length === 0 || answer.status >= 300) return answer;
    const contentType = answer.headers['content-type'] ?? '';
    if (/text\/event-stream/i.test(contentType)) {
      const options = {
        guardrails: guardrails.output,
        request: facts,
        runs: request.guardrailRuns,
        webhooks,
      };
      const guard =
        kind === 'messages'
          ? guardMessagesStream
          : kind === 'responses'
            ? guardResponsesStream
            : (body: AsyncIterable<Uint8Array>) => guardStream(body, { ...options, completions: true });
      return { ...answer, body: guard(answer.body, options) };
    }
    if (!/json/i.test(contentType)) return answer;
    const whole = await gather(answer.body);
    const checked = await checkOutput(
      guardrails.output,
      whole,
      (json) => answerUnits(kind, json),
      facts,
      answer.status,
      webhooks,
    );
    request.guardrailRuns.push(...checked.runs);
    return { ...answer, body: once(checked.body), discard: () => undefined };
  }

  /** Routes the operation and sends it to the provider. */
  private send(request: GatewayRequest, operation: ForwardedOperation): Promise<ForwardedAnswer> {
    const { method, pathname, json, parsed } = operation;
    const model = typeof parsed?.model === 'string' ? parsed.model : undefined;
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
        const answer = await request.upstream(routed, () =>
          forward({
            method,
            path: `${pathname}${operation.search}`,
            headers: operation.headers,
            body,
            model: routed.model || undefined,
            target: routed.target,
            signal: attempt.signal,
            timeoutMs: attempt.timeoutMs,
          }),
        );
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

/** A whole answer, read as it arrives. */
export async function gather(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function* once(body: Buffer): AsyncIterable<Uint8Array> {
  yield body;
}

/** Reads and drops an answer that will not be used, so its connection can be reused. */
export function drain(body: AsyncIterable<Uint8Array>): void {
  void (async () => {
    for await (const chunk of body) void chunk;
  })().catch(() => undefined);
}
