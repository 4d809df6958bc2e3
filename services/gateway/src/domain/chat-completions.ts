import type { Request, Response } from 'express';
import { AppError, toAppError, type Logger } from '@switchyard/platform';
import { parseChatBody } from '../http/chat-body.ts';
import type { ProviderResponse } from '../providers/types.ts';
import { GatewayRequest, type GatewayContext, type Relayed } from './gateway-request.ts';
import { cacheDirectives, type CacheStatus, type CachedResponse } from './response-cache.ts';

export interface ChatCompletionsOptions extends GatewayContext {
  logger: Logger;
}

/** POST /v1/chat/completions: validate, route, check policy, answer from cache or provider, then publish events. */
export class ChatCompletions {
  constructor(private readonly options: ChatCompletionsOptions) {}

  async handle(req: Request, res: Response): Promise<void> {
    const request = new GatewayRequest(this.options, req, res);
    const raw = req.body as Buffer;
    const requestBody = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
    const prefix = this.options.headerPrefix;
    let cacheStatus: CacheStatus = 'DISABLED';
    try {
      const directives = cacheDirectives(req.headers, prefix);
      const parsed = parseChatBody(raw);
      request.markStream(parsed.stream === true);
      const routed = await request.route(parsed.model);
      const body = routed.modelRewritten ? { ...parsed, model: routed.model! } : parsed;
      const cache = this.options.cache;
      const cacheKey =
        cache && directives.enabled
          ? cache.key(request.principal.workspaceId, directives, routed.target, body)
          : undefined;
      if (cache && cacheKey) {
        const hit = directives.forceRefresh ? undefined : await cache.get(cacheKey);
        cacheStatus = directives.forceRefresh ? 'REFRESH' : hit ? 'HIT' : 'MISS';
        res.setHeader(`${prefix}cache-status`, cacheStatus);
        if (hit) {
          const replayed = await this.replay(request, res, hit);
          request.finish(res.statusCode, requestBody, replayed, undefined, cacheStatus);
          return;
        }
      } else {
        res.setHeader(`${prefix}cache-status`, cacheStatus);
      }
      const response = await routed.provider.chatCompletions({
        body,
        rawBody: routed.modelRewritten ? undefined : raw,
        target: routed.target,
        signal: request.abort.signal,
        timeoutMs: this.options.requestTimeoutMs,
      });
      const sent = await this.send(request, res, response);
      if (cache && cacheKey && sent.complete) {
        const stored: CachedResponse = {
          status: res.statusCode,
          contentType: response.contentType,
          body: sent.copy,
          stream: response.kind === 'stream',
        };
        cache.put(cacheKey, stored, directives.maxAgeSeconds);
      }
      request.finish(res.statusCode, requestBody, sent.copy.toString('utf8'), undefined, cacheStatus);
    } catch (err) {
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
      this.options.logger.warn('upstream stream failed', { error: String(err) });
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
