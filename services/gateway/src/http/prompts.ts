import type { Request, Response } from 'express';
import type { Logger, Metrics } from '@switchyard/core';
import { requireWorkspacePrincipal } from '@switchyard/access';
import type { ChatCompletions, ChatReply, ChatRequest } from '../domain/chat-completions.ts';
import type { Relayed } from '../domain/gateway-request.ts';
import { promptHeaders, type PromptRunBody, type PromptRuns } from '../domain/prompt-runs.ts';
import type { ChatBody } from '../providers/types.ts';
import { answerChat, sendAsIs } from './chat-completions.ts';
import { readCacheHeaders } from './gateway-headers.ts';
import { attachToConnection, readIncomingCall, type ClosedRequestReport } from './incoming-call.ts';

/**
 * POST /v1/prompts/:promptId/completions and /render over HTTP. A completion is the chat
 * completion request the prompt renders to, answered by the same chat completions as
 * /v1/chat/completions (its validation, routing, limits, guardrails, cache, log and streams),
 * so its answer is a chat completion or a chat completion chunk stream.
 */
export class PromptsRoute {
  private readonly closed: ClosedRequestReport;

  constructor(
    private readonly chat: ChatCompletions,
    private readonly prompts: PromptRuns,
    /** Checks a built request as /v1/chat/completions checks the client's (validChatBody). */
    private readonly validate: (body: Record<string, unknown>) => ChatBody,
    private readonly headerPrefix: string,
    private readonly logger: Logger,
    metrics?: Metrics | undefined,
  ) {
    this.closed = { logger, metrics };
  }

  async completions(req: Request, res: Response, input: PromptRunBody): Promise<void> {
    const call = readIncomingCall(req, res, this.headerPrefix);
    const prepared = await this.prompts.prepare(call.principal, String(req.params.promptId), input);
    const request: ChatRequest = this.chat.open({
      ...call,
      headers: promptHeaders(call.headers, prepared.prompt),
      prompt: prepared.run,
    });
    attachToConnection(request, req, res, this.closed);
    // The log keeps the chat completion request the prompt became.
    const requestBody = JSON.stringify(prepared.body);
    await answerChat(
      this.chat,
      request,
      res,
      this.headerPrefix,
      requestBody,
      async () => {
        const parsed = this.validate(prepared.body);
        return this.chat.answer(request, parsed, undefined, readCacheHeaders(req, this.headerPrefix));
      },
      (reply) => this.send(request, res, reply),
    );
  }

  async render(req: Request, res: Response, input: PromptRunBody): Promise<void> {
    const principal = requireWorkspacePrincipal(req);
    const prepared = await this.prompts.prepare(principal, String(req.params.promptId), input);
    res.json({ success: true, data: prepared.body });
  }

  private send(request: ChatRequest, res: Response, reply: ChatReply): Promise<Relayed> {
    return sendAsIs(request, res, reply, this.logger, (error) => `data: ${JSON.stringify(error)}\n\n`);
  }
}
