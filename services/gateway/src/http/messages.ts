import type { NextFunction, Request, Response } from 'express';
import { AppError, parseInput, toAppError, type Logger, type Metrics } from '@switchyard/core';
import { REQUEST_ID_HEADER } from '@switchyard/http';
import type { AnswerFormat, ChatCompletions, ChatReply, ChatRequest } from '../domain/chat-completions.ts';
import { LOG_COPY_LIMIT, type Relayed } from '../domain/gateway-request.ts';
import type { AnthropicHeaders, MessagesPassthrough } from '../domain/messages-passthrough.ts';
import { errorType, fromChatCompletion, messagesError } from '../messages/from-chat.ts';
import { MessagesStreamTranslator } from '../messages/stream.ts';
import { forProvider, toChatBody } from '../messages/to-chat.ts';
import type { ChatCompletion } from '../providers/openai-format.ts';
import { chatBodyJson } from './chat-body.ts';
import { answerChat, logUpstreamFailure, sendAsIs } from './chat-completions.ts';
import { readCacheHeaders } from './gateway-headers.ts';
import { attachToConnection, readIncomingCall, type ClosedRequestReport } from './incoming-call.ts';
import { messagesRequest, type MessagesEnvelope } from './messages-request.schema.ts';
import { dropConnection, relay, startStream } from './respond.ts';

const MESSAGES_FORMAT: AnswerFormat = { name: 'messages', forProvider };

/**
 * POST /v1/messages over HTTP: Anthropic's Messages interface on every provider. A request every
 * target of which serves the Messages API (Anthropic) is passed through, and the provider's
 * answer written as it came (MessagesPassthrough). Any other is translated into a chat
 * completion request and answered as one (routing, policies, guardrails, cache, logs), and the
 * chat answer translated back: a message, or Anthropic's event stream chunk by chunk as the
 * chat stream arrives; its log and cache keep the chat answer. The gateway's errors take
 * Anthropic's shape.
 */
export class MessagesRoute {
  private readonly closed: ClosedRequestReport;

  constructor(
    private readonly chat: ChatCompletions,
    private readonly passthrough: MessagesPassthrough,
    private readonly headerPrefix: string,
    private readonly logger: Logger,
    metrics?: Metrics | undefined,
  ) {
    this.closed = { logger, metrics };
  }

  /**
   * Runs before authentication. Anthropic's SDKs send their key in `x-api-key`: it is read as
   * the gateway key when the request carries no other (no `Authorization`, no
   * `<prefix>api-key`). And every error of this route, authentication's included, is
   * answered in Anthropic's error shape with its status.
   */
  prepare(req: Request, res: Response, next: NextFunction): void {
    const key = req.headers['x-api-key'];
    if (
      typeof key === 'string' &&
      key.trim() &&
      req.headers.authorization === undefined &&
      req.headers[`${this.headerPrefix}api-key`] === undefined
    ) {
      req.headers.authorization = `Bearer ${key.trim()}`;
    }
    const json = res.json.bind(res);
    res.json = ((body: unknown) =>
      json(
        res.statusCode >= 400
          ? messagesError(res.statusCode, body, String(res.getHeader(REQUEST_ID_HEADER) ?? ''))
          : body,
      )) as Response['json'];
    next();
  }

  /** `validate` is the route's parser of the body: its declared schema (messagesEnvelope). */
  async handle(
    req: Request,
    res: Response,
    validate: (req: Request, body: unknown) => MessagesEnvelope,
  ): Promise<void> {
    const call = readIncomingCall(req, res, this.headerPrefix);
    const request = this.chat.open(call);
    attachToConnection(request, req, res, this.closed);
    const raw = req.body as Buffer;
    const requestBody = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
    let passedThrough = false;
    await answerChat(
      this.chat,
      request,
      res,
      this.headerPrefix,
      requestBody,
      async () => {
        const envelope = validate(req, chatBodyJson(raw, requestBody));
        const cacheHeaders = readCacheHeaders(req, this.headerPrefix);
        passedThrough = await this.passthrough.passesThrough(request, call, envelope.model);
        if (passedThrough) {
          return this.passthrough.answer(request, envelope, raw, anthropicHeaders(req), cacheHeaders);
        }
        const parsed = parseInput(messagesRequest, envelope);
        return this.chat.answer(request, toChatBody(parsed), undefined, cacheHeaders, MESSAGES_FORMAT);
      },
      (reply) => (passedThrough ? this.sendAsIs(request, res, reply) : this.send(request, res, reply)),
    );
  }

  /** Writes the provider's answer as it came; an upstream failure mid-stream ends with Anthropic's error event. */
  private sendAsIs(request: ChatRequest, res: Response, reply: ChatReply): Promise<Relayed> {
    return sendAsIs(
      request,
      res,
      reply,
      this.logger,
      (error, status) => `event: error\ndata: ${JSON.stringify(messagesError(status, error))}\n\n`,
    );
  }

  /** Writes the reply translated; what it returns (for the log and the cache) is the chat answer. */
  private async send(request: ChatRequest, res: Response, reply: ChatReply): Promise<Relayed> {
    res.status(reply.status);
    if (!reply.stream) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(translatedJson(reply.status, reply.body, res)));
      return { copy: reply.body, complete: true };
    }
    res.setHeader('content-type', 'text/event-stream');
    startStream(res);
    const translator = new MessagesStreamTranslator();
    const copy: Buffer[] = [];
    let copied = 0;
    let whole = true;
    const source = reply.body;
    async function* translated(): AsyncGenerator<Uint8Array> {
      for await (const chunk of source) {
        if (copied < LOG_COPY_LIMIT) copy.push(Buffer.from(chunk));
        else whole = false;
        copied += chunk.length;
        const events = translator.push(chunk);
        if (events.length) yield events;
      }
      const last = translator.end();
      if (last.length) yield last;
    }
    const relayed = await relay(res, translated(), (err) => {
      // A replayed answer that fails drops the connection.
      if (reply.fromCache) {
        dropConnection(res);
        return;
      }
      // An upstream failure mid-stream ends the stream with an error event, never a hang.
      const appError = toAppError(err);
      const message = err instanceof AppError ? appError.message : 'The upstream stream failed.';
      res.write(translator.fail(errorType(appError.status), message));
      logUpstreamFailure(this.logger, request, res, err);
    });
    return { copy: Buffer.concat(copy), complete: relayed.complete && whole };
  }
}

/** The client's `anthropic-version` and `anthropic-beta` (repeated, its flags joined). */
function anthropicHeaders(req: Request): AnthropicHeaders {
  const value = (name: string) => {
    const header = req.headers[name];
    const joined = Array.isArray(header) ? header.join(',') : header;
    return joined?.trim() || undefined;
  };
  return { version: value('anthropic-version'), beta: value('anthropic-beta') };
}

/** A chat JSON answer as Anthropic's: a message, or an error body for a status of 400 or more. */
function translatedJson(status: number, body: Buffer, res: Response): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const requestId = String(res.getHeader(REQUEST_ID_HEADER) ?? '');
  if (status >= 400) return messagesError(status, parsed, requestId);
  if (!parsed || typeof parsed !== 'object' || !Array.isArray((parsed as ChatCompletion).choices)) {
    // Not a chat completion: nothing to translate, and no success to claim.
    res.status(502);
    return messagesError(
      502,
      {
        error: {
          message: 'The provider’s answer is not a chat completion.',
          code: 'upstream_invalid_answer',
        },
      },
      requestId,
    );
  }
  return fromChatCompletion(parsed as ChatCompletion);
}
