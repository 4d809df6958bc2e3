import type { Request, Response } from 'express';
import { AppError, toAppError, type Logger, type Metrics } from '@switchyard/core';
import { REQUEST_ID_HEADER } from '@switchyard/http';
import type { ChatCompletions, ChatReply, ChatRequest } from '../domain/chat-completions.ts';
import type { Relayed } from '../domain/gateway-request.ts';
import type { ChatBody } from '../providers/types.ts';
import { chatBodyJson } from './chat-body.ts';
import { upstreamHeadersOf } from '../upstream/http-client.ts';
import { readCacheHeaders } from './gateway-headers.ts';
import { providerHeaders } from './provider-headers.ts';
import { attachToConnection, readIncomingCall, type ClosedRequestReport } from './incoming-call.ts';
import { dropConnection, relay, setHeaders, startStream } from './respond.ts';

/**
 * POST /v1/chat/completions over HTTP: parses the request (body, gateway headers, caller),
 * asks the domain for the reply, and writes it: one body, or a stream chunk by chunk as it
 * arrives.
 */
export class ChatCompletionsRoute {
  /** Where a request whose client went away is reported. */
  private readonly closed: ClosedRequestReport;

  constructor(
    private readonly chat: ChatCompletions,
    private readonly headerPrefix: string,
    private readonly logger: Logger,
    metrics?: Metrics | undefined,
  ) {
    this.closed = { logger, metrics };
  }

  /** `validate` is the route's parser of the body: its declared schema (chatCompletionRequest). */
  async handle(
    req: Request,
    res: Response,
    validate: (req: Request, body: unknown) => ChatBody,
  ): Promise<void> {
    const request = this.chat.open(readIncomingCall(req, res, this.headerPrefix));
    attachToConnection(request, req, res, this.closed);
    const raw = req.body as Buffer;
    const requestBody = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
    await answerChat(
      this.chat,
      request,
      res,
      this.headerPrefix,
      requestBody,
      async () => {
        const parsed = validate(req, chatBodyJson(raw, requestBody));
        return this.chat.answer(request, parsed, raw, readCacheHeaders(req, this.headerPrefix));
      },
      (reply) => this.send(request, res, reply),
    );
  }

  private send(request: ChatRequest, res: Response, reply: ChatReply): Promise<Relayed> {
    return sendAsIs(request, res, reply, this.logger, (error) => `data: ${JSON.stringify(error)}\n\n`);
  }
}

/**
 * Writes a reply as the provider (or the cache) gave it, a stream chunk by chunk; what it sent
 * is what the log and the cache keep. A replayed stream that fails drops the connection; an
 * upstream failure mid-stream ends the stream with the route's error event (`errorEvent` of the
 * failure in the one error shape), never a hang.
 */
export async function sendAsIs(
  request: ChatRequest,
  res: Response,
  reply: ChatReply,
  logger: Logger,
  errorEvent: (error: ReturnType<AppError['toBody']>, status: number) => string,
): Promise<Relayed> {
  res.status(reply.status);
  res.setHeader('content-type', reply.contentType);
  if (!reply.stream) {
    res.end(reply.body);
    return { copy: reply.body, complete: true };
  }
  startStream(res);
  const firstChunk = () => request.firstChunkSent(request.cacheStatus);
  if (reply.fromCache) return relay(res, reply.body, () => dropConnection(res), firstChunk);
  return relay(
    res,
    reply.body,
    (err) => {
      const appError = toAppError(err);
      const message = err instanceof AppError ? appError.message : 'The upstream stream failed.';
      res.write(errorEvent({ error: { ...appError.toBody().error, message } }, appError.status));
      logUpstreamFailure(logger, request, res, err);
    },
    firstChunk,
  );
}

/** A stream that failed upstream, logged with the request's ids. */
export function logUpstreamFailure(logger: Logger, request: ChatRequest, res: Response, err: unknown): void {
  logger.warn('upstream stream failed', {
    request_id: res.getHeader(REQUEST_ID_HEADER),
    trace_id: request.headers.traceId,
    error: String(err),
  });
}

/**
 * A chat completion answered on a route of any format (chat, Messages, Responses): `reply`
 * checks the request and asks for the answer, `send` writes it in the route's format and
 * returns what it sent of the chat answer. The gateway's headers and the provider's go with
 * the answer's head, or the failure's; the outcome is reported for the cache and the log.
 */
export async function answerChat(
  chat: ChatCompletions,
  request: ChatRequest,
  res: Response,
  headerPrefix: string,
  requestBody: string,
  reply: () => Promise<ChatReply>,
  send: (reply: ChatReply) => Promise<Relayed>,
): Promise<void> {
  try {
    const answer = await reply();
    const settled = request.settledHeaders();
    setHeaders(res, settled);
    // Sent with the answer's head, a stream's included: they came with the provider's.
    setHeaders(res, providerHeaders(answer.upstreamHeaders, headerPrefix, settled));
    const sent = await send(answer);
    chat.complete(request, answer, res.statusCode, sent, requestBody);
  } catch (err) {
    if (!res.headersSent) {
      const settled = request.settledHeaders();
      setHeaders(res, settled);
      setHeaders(res, providerHeaders(upstreamHeadersOf(err), headerPrefix, settled));
    }
    request.fail(err, requestBody, request.cacheStatus);
  }
}
