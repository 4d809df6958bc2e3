import { NotImplemented } from '@switchyard/core';
import { costOf } from '../pricing/cost.ts';
import type { UpstreamHeaders } from '../providers/types.ts';
import type { AttemptContext } from '../routing/route-plan.ts';
import { cachedReply, type ChatReply, type ChatRequest } from './chat-completions.ts';
import { drain, gather } from './forwarded-operations.ts';
import type { CacheHeaders } from './gateway-headers.ts';
import type { GatewayContext, GatewayRequest, IncomingCall, Routed } from './gateway-request.ts';
import { guardMessagesStream } from './guardrail-event-streams.ts';
import { guardAnswer } from './answer-guardrails.ts';
import { estimateOperation, type PolicyHold } from './policy.ts';
import { cacheDirectives, responseCacheKey } from './response-cache.ts';
import { everyTargetServes } from './route-targets.ts';
import { meterStream } from './stream-meter.ts';

/** The client's Anthropic headers, passed on with its request. */
export interface AnthropicHeaders {
  version: string | undefined;
  beta: string | undefined;
}

/** A passed-through answer as the route plan weighs it: a failure's head tells its retry-after. */
type PassedReply = ChatReply & { headers?: UpstreamHeaders | undefined; discard?(): void };

/**
 * POST /v1/messages passed through to providers that serve Anthropic's Messages API: the
 * client's request goes as it came (the target's model in it, the integration's key), and the
 * provider's answer comes back as it is, a failure too, a stream piped event by event. The
 * gateway's part is a chat completion's: routing (retries, fallbacks, load balance), rate and
 * usage limits (a stream metered by its Messages events), input and output guardrails on the
 * Messages texts, the cache (its entries apart from chat's and from translated messages') and
 * the request's log, with the usage Anthropic reports.
 */
export class MessagesPassthrough {
  constructor(private readonly context: GatewayContext) {}

  /** Whether every target the request may route to serves the Messages API itself. */
  passesThrough(request: GatewayRequest, call: IncomingCall, model: string | undefined): Promise<boolean> {
    return everyTargetServes(
      this.context,
      request,
      call,
      model,
      (provider) => provider.messages !== undefined,
    );
  }

  /**
   * The reply to a Messages request: from the cache when it holds one, else from the provider the
   * request routes to. `raw` is the client's bytes, sent as they are when nothing had to change.
   */
  async answer(
    request: ChatRequest,
    parsed: Record<string, unknown>,
    raw: Buffer,
    anthropic: AnthropicHeaders,
    cacheHeaders: CacheHeaders,
  ): Promise<ChatReply> {
    const stream = parsed.stream === true;
    request.markStream(stream);
    request.noteModel(parsed.model);
    const resolved = await request.config();
    const facts = {
      model: typeof parsed.model === 'string' ? parsed.model : '',
      metadata: request.headers.metadata,
      requestType: 'messages',
      stream,
    };
    const guarded = await guardAnswer(request, 'messages', parsed, raw, facts, guardMessagesStream);
    const { body, raw: bytes, output: outputGuardrails, checkAnswer, checkStream } = guarded;
    const directives = cacheDirectives(cacheHeaders, this.context.headerPrefix, resolved?.config.cache);
    const cache = directives.enabled ? this.context.cache : undefined;
    // The Anthropic headers change the answer: entries are kept by them too.
    const format = `messages:native;version=${anthropic.version ?? ''};beta=${anthropic.beta ?? ''}`;
    const defaultCompletion = this.context.defaultCompletionTokens;
    const sentBody = (routed: Routed, attempt: AttemptContext): Record<string, unknown> =>
      routed.modelRewritten || attempt.overrideParams !== undefined
        ? { ...body, ...attempt.overrideParams, ...(routed.modelRewritten ? { model: routed.model } : {}) }
        : body;
    let estimated:
      { attempt: AttemptContext; body: Record<string, unknown>; promptTokens: number } | undefined;
    const estimate = (routed: Routed, attempt: AttemptContext) => {
      const sent = sentBody(routed, attempt);
      const tokens = estimateOperation('/messages', sent, defaultCompletion);
      estimated = { attempt, body: sent, promptTokens: tokens.promptTokens };
      return tokens;
    };
    const answer = async (
      routed: Routed,
      attempt: AttemptContext,
      hold: PolicyHold,
    ): Promise<PassedReply> => {
      const known = estimated?.attempt === attempt ? estimated : undefined;
      const sent = known?.body ?? sentBody(routed, attempt);
      const cacheKey = cache
        ? responseCacheKey(
            request.principal.workspaceId,
            directives,
            routed.target,
            sent,
            outputGuardrails.map((g) => `${g.id}@${g.versionId}`),
            format,
          )
        : undefined;
      if (cache && cacheKey) {
        const hit = await cachedReply(request, cache, cacheKey, directives, hold, guarded);
        if (hit) return hit;
      }
      const messages = routed.provider.messages;
      if (!messages) {
        // Only when a target changed between the walk of the routes and this attempt.
        throw new NotImplemented(
          `The '${routed.target.provider}' provider does not serve the Messages API as it is.`,
          { code: 'operation_not_supported' },
        );
      }
      const response = await request.upstream(routed, () =>
        messages({
          body: sent === body && bytes ? bytes : Buffer.from(JSON.stringify(sent)),
          version: anthropic.version,
          beta: anthropic.beta,
          target: routed.target,
          signal: attempt.signal,
          timeoutMs: attempt.timeoutMs,
        }),
      );
      const contentType = response.headers['content-type'] ?? 'application/json';
      const reply = {
        status: response.status,
        contentType,
        fromCache: false,
        cacheKey,
        maxAgeSeconds: directives.maxAgeSeconds,
        upstreamHeaders: response.upstreamHeaders,
        headers: response.upstreamHeaders,
      };
      if (!/text\/event-stream/i.test(contentType)) {
        const whole = await gather(response.body);
        return { ...reply, stream: false, body: await checkAnswer(whole, response.status) };
      }
      // A failure is read only if the plan gives up on it; otherwise its connection is released.
      const discard = () => drain(response.body);
      if (!hold.metered || response.status >= 300) {
        return { ...reply, stream: true, body: checkStream(response.body, response.status), discard };
      }
      const { provider, pricing } = routed.target;
      const model = routed.model ?? '';
      const metered = meterStream(response.body, {
        hold,
        promptTokens:
          known?.promptTokens ?? estimateOperation('/messages', sent, defaultCompletion).promptTokens,
        price: (tokens) => costOf(provider, model, tokens, pricing),
        onExhausted: () => {
          request.exhausted = true;
        },
        format: 'messages',
      });
      // The meter counts what the provider sent; the guardrails check what goes on to the client.
      return { ...reply, stream: true, body: checkStream(metered, response.status) };
    };
    return request.dispatch(
      typeof parsed.model === 'string' ? parsed.model : undefined,
      parsed,
      answer,
      estimate,
    );
  }
}
