import type { Request, Response } from 'express';
import { UpstreamError, type Logger, type Metrics } from '@switchyard/core';
import { REQUEST_ID_HEADER } from '@switchyard/http';
import type { ChatCompletions, ChatReply, ChatRequest } from '../domain/chat-completions.ts';
import { LOG_COPY_LIMIT, type Relayed } from '../domain/gateway-request.ts';
import type { Responses, TranslatedResponses } from '../domain/responses.ts';
import {
  includesEncryptedReasoning,
  responseOfChat,
  responsesEvents,
  shownResponse,
} from '../domain/responses-answer.ts';
import type { ResponsesBody } from '../domain/responses-request.ts';
import { chatBodyJson } from './chat-body.ts';
import { answerChat } from './chat-completions.ts';
import type { ForwardedOperationsRoute } from './forwarded-operations.ts';
import { readCacheHeaders } from './gateway-headers.ts';
import { attachToConnection, readIncomingCall, type ClosedRequestReport } from './incoming-call.ts';
import { parseJsonObject } from './request-body.ts';
import { dropConnection, relay, startStream } from './respond.ts';

/**
 * The Responses API over HTTP. A request every target of which speaks the OpenAI format goes
 * to the provider as it came (a forwarded operation); any other is translated into a chat
 * completion, answered by ChatCompletions as /v1/chat/completions is, and its answer
 * translated back, a stream event by event. GET and DELETE of a response the gateway
 * translated (and keeps) are answered here; of any other, forwarded.
 */
export class ResponsesRoute {
  private readonly closed: ClosedRequestReport;

  constructor(
    private readonly chat: ChatCompletions,
    private readonly responses: Responses,
    private readonly forwarded: ForwardedOperationsRoute,
    private readonly headerPrefix: string,
    private readonly logger: Logger,
    metrics?: Metrics | undefined,
  ) {
    this.closed = { logger, metrics };
  }

  /** POST /v1/responses; `validate` is the route's parser of the body (responsesRequest). */
  async create(
    req: Request,
    res: Response,
    validate: (req: Request, body: unknown) => unknown,
  ): Promise<void> {
    const raw = req.body as Buffer;
    const requestBody = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
    const call = readIncomingCall(req, res, this.headerPrefix);
    const request = this.chat.open(call);
    if (await this.responses.forwardsAsIs(request, call, modelOf(raw, requestBody))) {
      return this.forwarded.handle(req, res);
    }
    attachToConnection(request, req, res, this.closed);
    let translated: TranslatedResponses | undefined;
    await answerChat(
      this.chat,
      request,
      res,
      this.headerPrefix,
      requestBody,
      async () => {
        const body = validate(req, chatBodyJson(raw, requestBody)) as ResponsesBody;
        translated = await this.responses.translate(request.principal.workspaceId, body);
        const chatRaw = Buffer.from(JSON.stringify(translated.chat));
        return this.chat.answer(request, translated.chat, chatRaw, readCacheHeaders(req, this.headerPrefix));
      },
      (reply) => this.send(request, res, reply, translated!),
    );
  }

  /** GET /v1/responses/{id}: a response the gateway translated and keeps; any other is forwarded. */
  async retrieve(req: Request, res: Response, id: string): Promise<void> {
    const call = readIncomingCall(req, res, this.headerPrefix);
    const stored = await this.responses.stored(call.principal.workspaceId, id);
    if (!stored) return this.forwarded.handle(req, res);
    res.json(stored);
  }

  /** DELETE /v1/responses/{id}: forgets a response the gateway translated and keeps; any other is forwarded. */
  async delete(req: Request, res: Response, id: string): Promise<void> {
    const call = readIncomingCall(req, res, this.headerPrefix);
    if (!(await this.responses.forget(call.principal.workspaceId, id)))
      return this.forwarded.handle(req, res);
    res.json({ id, object: 'response', deleted: true });
  }

  /**
   * Writes the chat answer as a Responses answer: a failure as it is (already in the OpenAI error
   * shape), a whole answer as a response object, a stream event by event. Returns what was sent
   * of the chat answer itself, for its cache entry and its log.
   */
  private async send(
    request: ChatRequest,
    res: Response,
    reply: ChatReply,
    translated: TranslatedResponses,
  ): Promise<Relayed> {
    if (reply.status >= 300) {
      res.status(reply.status);
      res.setHeader('content-type', reply.contentType);
      if (!reply.stream) {
        res.end(reply.body);
        return { copy: reply.body, complete: true };
      }
      return relay(res, reply.body, () => dropConnection(res));
    }
    if (!reply.stream) {
      const response = responseOfChat(translated.shell, chatJson(reply.body));
      translated.remember(response);
      res.status(reply.status);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      const encrypted = includesEncryptedReasoning(translated.shell.body);
      res.end(JSON.stringify(shownResponse(response, encrypted)));
      return { copy: reply.body, complete: true };
    }
    res.status(reply.status);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    startStream(res);
    const tap = copied(reply.body);
    const logFailure = (what: string, err: unknown) =>
      this.logger.warn(what, {
        request_id: res.getHeader(REQUEST_ID_HEADER),
        trace_id: request.headers.traceId,
        error: String(err),
      });
    // An upstream failure mid-stream ends the stream with an error event, never a hang.
    const events = responsesEvents(tap.body, translated.shell, {
      completed: translated.remember,
      failed: (err) => logFailure('upstream stream failed', err),
    });
    // Anything else that fails once the stream has begun drops the connection.
    const onError = (err: unknown) => {
      logFailure('translated responses stream failed', err);
      dropConnection(res);
    };
    const relayed = await relay(res, events, onError);
    return { copy: tap.copy(), complete: relayed.complete && tap.complete() };
  }
}

/** A body's `model`, read only to route it; undefined for anything that is not a JSON object with one. */
function modelOf(raw: unknown, text: string): string | undefined {
  if (!Buffer.isBuffer(raw) || raw.length === 0) return undefined;
  try {
    const model = parseJsonObject(raw, text).model;
    return typeof model === 'string' ? model : undefined;
  } catch {
    return undefined;
  }
}

/** A whole chat completion as sent by the provider (or the cache). */
function chatJson(body: Buffer): Record<string, unknown> {
  try {
    const json: unknown = JSON.parse(body.toString('utf8'));
    if (json && typeof json === 'object' && !Array.isArray(json)) return json as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new UpstreamError(502, 'The provider answered with a chat completion that could not be read.', {
    code: 'upstream_invalid_response',
  });
}

/**
 * The chat stream passed on as it is read, with a bounded copy of it (for the cache and the
 * log) and whether it was read whole, without failing.
 */
function copied(body: AsyncIterable<Uint8Array>) {
  const chunks: Buffer[] = [];
  let size = 0;
  let whole = false;
  async function* read(): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      if (size < LOG_COPY_LIMIT) chunks.push(Buffer.from(chunk));
      size += chunk.length;
      yield chunk;
    }
    whole = true;
  }
  return {
    body: read(),
    copy: () => Buffer.concat(chunks),
    complete: () => whole && size <= LOG_COPY_LIMIT,
  };
}
