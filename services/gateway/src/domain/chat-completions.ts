import type { Request, Response } from 'express';
import { AppError, toAppError, type Logger } from '@switchyard/platform';
import { parseChatBody } from '../http/chat-body.ts';
import type { ProviderResponse } from '../providers/types.ts';
import { GatewayRequest, type GatewayContext } from './gateway-request.ts';

export interface ChatCompletionsOptions extends GatewayContext {
  logger: Logger;
}

/** POST /v1/chat/completions: validate, route, check policy, call the provider, respond, then publish events. */
export class ChatCompletions {
  constructor(private readonly options: ChatCompletionsOptions) {}

  async handle(req: Request, res: Response): Promise<void> {
    const request = new GatewayRequest(this.options, req, res);
    const raw = req.body as Buffer;
    const requestBody = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
    try {
      const body = parseChatBody(raw);
      request.markStream(body.stream === true);
      const routed = await request.route(body.model);
      const response = await routed.provider.chatCompletions({
        body: routed.modelRewritten ? { ...body, model: routed.model! } : body,
        rawBody: routed.modelRewritten ? undefined : raw,
        target: routed.target,
        signal: request.abort.signal,
        timeoutMs: this.options.requestTimeoutMs,
      });
      const responseBody = await this.send(request, res, response);
      request.finish(res.statusCode, requestBody, responseBody);
    } catch (err) {
      request.fail(err, requestBody);
    }
  }

  private async send(request: GatewayRequest, res: Response, response: ProviderResponse): Promise<string> {
    res.status(response.status);
    res.setHeader('content-type', response.contentType);
    if (response.kind === 'json') {
      res.end(response.body);
      return response.body.toString('utf8');
    }
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    // An upstream failure mid-stream ends the stream with an error event, never a hang.
    return request.relay(response.body, (err) => {
      const appError = toAppError(err);
      const message = err instanceof AppError ? appError.message : 'The upstream stream failed.';
      res.write(`data: ${JSON.stringify({ error: { ...appError.toBody().error, message } })}\n\n`);
      this.options.logger.warn('upstream stream failed', { error: String(err) });
    });
  }
}
