import type { Request, Response } from 'express';
import {
  AppError,
  BadRequest,
  REQUEST_ID_HEADER,
  parseInput,
  toAppError,
  type Logger,
} from '@switchyard/platform';
import { chatCompletionRequest } from '../http/chat-request.schema.ts';
import { chatBodyJson } from '../http/chat-body.ts';
import { headerNames } from '../http/gateway-headers.ts';
import type { ChatBody, ProviderResponse } from '../providers/types.ts';
import { GatewayRequest, type GatewayContext, type Relayed } from './gateway-request.ts';
import { cacheDirectives, type CacheStatus, type CachedResponse } from './response-cache.ts';

export interface ChatCompletionsOptions extends GatewayContext {
  logger: Logger;
}

/** One attempt's answer: from the cache or from the provider. */
interface Answer {
  status: number;
  cached?: CachedResponse;
  response?: ProviderResponse;
  cacheKey?: string | undefined;
}

/**
 * A config's override_params laid over the client's request. The result is checked like
 * any request; since the client's own part already passed, a problem is the config's.
 */
function withOverrides(body: ChatBody, overrides: Record<string, unknown>, path: string): ChatBody {
  try {
    return parseInput(chatCompletionRequest, { ...body, ...overrides });
  } catch (err) {
    if (!(err instanceof AppError) || err.status !== 400) throw err;
    const param = `${path}.override_params${err.param ? `.${err.param}` : ''}`;
    throw new BadRequest(`The config's override_params make an invalid request: ${err.message}`, {
      param,
      code: 'invalid_config',
    });
  }
}

/** POST /v1/chat/completions: validate, route, check policy, answer from cache or provider, then publish events. */
export class ChatCompletions {
  private readonly cacheStatusHeader: string;

  constructor(private readonly options: ChatCompletionsOptions) {
    this.cacheStatusHeader = headerNames(options.headerPrefix)['cache-status'];
  }

  /** `validate` is the route's parser of the body: its declared schema (chatCompletionRequest). */
  async handle(
    req: Request,
    res: Response,
    validate: (req: Request, body: unknown) => ChatBody,
  ): Promise<void> {
    const request = new GatewayRequest(this.options, req, res);
    const raw = req.body as Buffer;
    const requestBody = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
    let cacheStatus: CacheStatus = 'DISABLED';
    try {
      const parsed = validate(req, chatBodyJson(raw, requestBody));
      request.markStream(parsed.stream === true);
      const resolved = await request.config();
      const directives = cacheDirectives(req.headers, this.options.headerPrefix, resolved?.config.cache);
      const cache = directives.enabled ? this.options.cache : undefined;
      const answer = await request.dispatch(
        parsed.model,
        parsed,
        async (routed, attempt): Promise<Answer> => {
          let body = attempt.overrideParams
            ? withOverrides(parsed, attempt.overrideParams, attempt.path)
            : parsed;
          if (routed.modelRewritten) body = { ...body, model: routed.model! };
          const cacheKey = cache?.key(request.principal.workspaceId, directives, routed.target, body);
          if (cache && cacheKey) {
            const hit = directives.forceRefresh ? undefined : await cache.get(cacheKey);
            cacheStatus = directives.forceRefresh ? 'REFRESH' : hit ? 'HIT' : 'MISS';
            if (hit) return { status: hit.status, cached: hit };
          }
          const response = await routed.provider.chatCompletions({
            body,
            rawBody: body === parsed ? raw : undefined,
            target: routed.target,
            signal: attempt.signal,
            timeoutMs: attempt.timeoutMs,
          });
          return { status: response.status, response, cacheKey };
        },
      );
      res.setHeader(this.cacheStatusHeader, cacheStatus);
      if (answer.cached) {
        const replayed = await this.replay(request, res, answer.cached);
        request.finish(res.statusCode, requestBody, replayed, undefined, cacheStatus);
        return;
      }
      const response = answer.response!;
      const sent = await this.send(request, res, response);
      if (cache && answer.cacheKey && sent.complete) {
        const stored: CachedResponse = {
          status: res.statusCode,
          contentType: response.contentType,
          body: sent.copy,
          stream: response.kind === 'stream',
        };
        cache.put(answer.cacheKey, stored, directives.maxAgeSeconds);
      }
      request.finish(res.statusCode, requestBody, sent.copy.toString('utf8'), undefined, cacheStatus);
    } catch (err) {
      if (!res.headersSent) res.setHeader(this.cacheStatusHeader, cacheStatus);
      request.fail(err, requestBody, cacheStatus);
    }
  }

  private async send(request: GatewayRequest, res: Response, response: ProviderResponse): Promise<Relayed> {
    res.status(response.status);
    res.setHeader('content-type', response.contentType);
    if (response.kind === 'json') {
      res.end(response.body);
      return { copy: response.body, complete: true };
    }
    this.startStream(res);
    // An upstream failure mid-stream ends the stream with an error event, never a hang.
    return request.relay(response.body, (err) => {
      const appError = toAppError(err);
      const message = err instanceof AppError ? appError.message : 'The upstream stream failed.';
      res.write(`data: ${JSON.stringify({ error: { ...appError.toBody().error, message } })}\n\n`);
      this.options.logger.warn('upstream stream failed', {
        request_id: res.getHeader(REQUEST_ID_HEADER),
        trace_id: request.headers.traceId,
        error: String(err),
      });
    });
  }

  /** A cached answer in the form it was given: a stream is replayed event by event. */
  private async replay(request: GatewayRequest, res: Response, cached: CachedResponse): Promise<string> {
    res.status(cached.status);
    res.setHeader('content-type', cached.contentType);
    if (!cached.stream) {
      res.end(cached.body);
      return cached.body.toString('utf8');
    }
    this.startStream(res);
    const events = cached.body.toString('utf8').split(/(?<=\n\n)/);
    async function* chunks() {
      for (const event of events) yield Buffer.from(event);
    }
    const { copy } = await request.relay(chunks(), () => res.destroy());
    return copy.toString('utf8');
  }

  private startStream(res: Response): void {
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
  }
}
