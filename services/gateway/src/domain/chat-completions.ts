import { once } from 'node:events';
import type { Request, Response } from 'express';
import {
  AppError,
  NotImplemented,
  REQUEST_ID_HEADER,
  requestContext,
  requireWorkspacePrincipal,
  toAppError,
  type EventBus,
  type Logger,
  type Principal,
} from '@switchyard/platform';
import { publishRequestEvents } from '../events/request-events.ts';
import { parseChatBody } from '../http/chat-body.ts';
import { readGatewayHeaders, type GatewayHeaders } from '../http/gateway-headers.ts';
import type { ChatProvider, ProviderResponse } from '../providers/types.ts';
import type { IntegrationCache } from './integration-cache.ts';
import type { PolicyGate } from './policy-gate.ts';
import { routeRequest } from './provider-routing.ts';

export interface ChatCompletionsOptions {
  providers: Map<string, ChatProvider>;
  integrations: IntegrationCache;
  policy: PolicyGate;
  bus: EventBus;
  logger: Logger;
  headerPrefix: string;
  requestTimeoutMs: number;
}

const LOG_COPY_LIMIT = 1_000_000;

/** POST /v1/chat/completions: authenticate, route, check policy, call the provider, respond, then publish events. */
export class ChatCompletions {
  private readonly directProviders: ReadonlySet<string>;

  constructor(private readonly options: ChatCompletionsOptions) {
    this.directProviders = new Set(options.providers.keys());
  }

  async handle(req: Request, res: Response): Promise<void> {
    const principal = requireWorkspacePrincipal(req);
    const started = performance.now();
    const createdAtMs = Date.now();
    const prefix = this.options.headerPrefix;
    const headers = readGatewayHeaders(req, prefix);
    res.setHeader(`${prefix}trace-id`, headers.traceId);
    const context = requestContext.getStore();
    if (context) context.traceId = headers.traceId;
    const raw = req.body as Buffer;
    const record = {
      provider: '',
      model: '',
      integrationSlug: undefined as string | undefined,
      stream: false,
    };
    try {
      const parsed = parseChatBody(raw);
      record.stream = parsed.stream === true;
      const routed = await routeRequest({
        principal,
        body: parsed,
        providerHeader: headers.provider,
        providerKey: req.headers[`${prefix}api-key`] ? bearer(req.headers.authorization) : undefined,
        integrations: this.options.integrations,
        headerPrefix: prefix,
        directProviders: this.directProviders,
      });
      Object.assign(record, {
        provider: routed.target.provider,
        model: routed.body.model,
        integrationSlug: routed.target.integrationSlug,
      });
      const provider = this.options.providers.get(routed.target.provider);
      if (!provider) {
        throw new NotImplemented(
          `The '${routed.target.provider}' provider adapter is not available in this release.`,
          {
            code: 'provider_not_supported',
          },
        );
      }
      await this.options.policy.check(principal, routed.target.provider, routed.body.model, headers.metadata);

      const abort = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      const response = await provider.chatCompletions({
        body: routed.body,
        rawBody: routed.bodyUnchanged ? raw : undefined,
        target: routed.target,
        signal: abort.signal,
        timeoutMs: this.options.requestTimeoutMs,
      });
      res.setHeader(`${prefix}provider`, routed.target.provider);
      const responseBody = await this.send(res, response);
      this.publish(
        req,
        principal,
        headers,
        raw,
        record,
        res.statusCode,
        responseBody,
        undefined,
        started,
        createdAtMs,
      );
    } catch (err) {
      const appError = toAppError(err);
      this.publish(
        req,
        principal,
        headers,
        raw,
        record,
        appError.status,
        JSON.stringify(appError.toBody()),
        appError.message,
        started,
        createdAtMs,
      );
      throw err;
    }
  }

  /** Sends the provider's answer; a stream is forwarded chunk by chunk with backpressure. Returns a copy for the log. */
  private async send(res: Response, response: ProviderResponse): Promise<string> {
    res.status(response.status);
    res.setHeader('content-type', response.contentType);
    if (response.kind === 'json') {
      res.end(response.body);
      return response.body.toString('utf8');
    }
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    const copy: Buffer[] = [];
    let copied = 0;
    try {
      for await (const chunk of response.body) {
        if (res.destroyed) break;
        if (copied < LOG_COPY_LIMIT) {
          copy.push(Buffer.from(chunk));
          copied += chunk.length;
        }
        if (!res.write(chunk)) await once(res, 'drain');
      }
    } catch (err) {
      if (!res.destroyed) {
        const appError = err instanceof AppError ? err : toAppError(err);
        const message =
          appError.status >= 500 && !(err instanceof AppError)
            ? 'The upstream stream failed.'
            : appError.message;
        res.write(`data: ${JSON.stringify({ error: { ...appError.toBody().error, message } })}\n\n`);
        this.options.logger.warn('upstream stream failed', { error: String(err) });
      }
    }
    res.end();
    return Buffer.concat(copy).toString('utf8');
  }

  private publish(
    req: Request,
    principal: Principal,
    headers: GatewayHeaders,
    raw: Buffer,
    record: { provider: string; model: string; integrationSlug: string | undefined; stream: boolean },
    status: number,
    responseBody: string,
    errorMessage: string | undefined,
    started: number,
    createdAtMs: number,
  ): void {
    const latencyMs = performance.now() - started;
    const requestId = String(req.res?.getHeader(REQUEST_ID_HEADER) ?? '');
    // Built after the response is on its way, so the client never waits for it.
    setImmediate(() =>
      publishRequestEvents(this.options.bus, {
        requestId,
        principal,
        headers,
        method: req.method,
        path: req.originalUrl.split('?')[0] ?? req.path,
        ...record,
        status,
        createdAtMs,
        latencyMs,
        requestBody: Buffer.isBuffer(raw) ? raw.toString('utf8') : '',
        responseBody,
        errorMessage,
      }),
    );
  }
}

function bearer(authorization: string | undefined): string | undefined {
  if (!authorization || !/^bearer\s+/i.test(authorization)) return undefined;
  return authorization.replace(/^bearer\s+/i, '').trim() || undefined;
}
