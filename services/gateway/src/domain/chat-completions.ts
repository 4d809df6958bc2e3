import { AppError, BadRequest } from '@switchyard/core';
import { costOf } from '../pricing/cost.ts';
import type { ChatBody, UpstreamHeaders } from '../providers/types.ts';
import type { CacheHeaders } from './gateway-headers.ts';
import {
  GatewayRequest,
  type GatewayContext,
  type IncomingCall,
  type Relayed,
  type Routed,
} from './gateway-request.ts';
import type { AttemptContext } from '../routing/route-plan.ts';
import {
  cacheDirectives,
  isCacheable,
  responseCacheKey,
  type CacheDirectives,
  type CacheStatus,
  type CachedResponse,
  type ResponseStore,
} from './response-cache.ts';
import { NOTHING_USED, estimateChat, type PolicyHold } from './policy.ts';
import { reasoningForProvider } from './reasoning-effort.ts';
import { meterStream } from './stream-meter.ts';
import { tracedChatCall } from './model-span.ts';
import { guardAnswer, type AnswerGuardrails } from './answer-guardrails.ts';
import { guardStream } from './guardrail-stream.ts';

export interface ChatCompletionsOptions extends GatewayContext {
  /**
   * Checks a body as the route checks the client's (the chat completion request schema): a
   * config's override_params laid over the request are checked with it.
   */
  validate: (body: Record<string, unknown>) => ChatBody;
}

/**
 * What to answer: one body to send as it is, or an event stream's chunks, to be written as
 * they arrive, never gathered first.
 */
export type ChatReply = (
  { stream: false; body: Buffer } | { stream: true; body: AsyncIterable<Uint8Array> }
) & {
  status: number;
  contentType: string;
  /**
   * Replayed from the cache. A replay that fails mid-stream drops the connection; a
   * provider's stream that fails ends with an error event instead.
   */
  fromCache: boolean;
  /** Where a complete answer is cached; undefined when it is not to be. */
  cacheKey: string | undefined;
  maxAgeSeconds: number;
  /** The head of the provider's answer; none on an answer from the cache. */
  upstreamHeaders?: UpstreamHeaders | undefined;
};

/**
 * How a route that speaks another format (POST /v1/messages) has its chat body answered: the
 * body it translated is adjusted per provider, and its answers are cached apart from chat's.
 */
export interface AnswerFormat {
  /**
   * Names the format in the cache key: an answer is replayed only to requests of its format.
   * None for a route that answers in chat's (its answers are chat answers, translated as sent).
   */
  name?: string | undefined;
  /** The body as it goes to `provider` (the registry's provider id); the same object when unchanged. */
  forProvider?: ((body: ChatBody, provider: string) => ChatBody) | undefined;
}

/** A chat completion request: a gateway request with the cache's verdict on it. */
export class ChatRequest extends GatewayRequest {
  cacheStatus: CacheStatus = 'DISABLED';
  /** A limit ran out while the answer streamed: it ended early and is not to be cached. */
  exhausted = false;

  /**
   * The response headers with the cache's verdict last, as it stands once the answer (or
   * the failure) is known.
   */
  settledHeaders(): Record<string, string> {
    this.responseHeaders[this.names['cache-status']] = this.cacheStatus;
    return this.responseHeaders;
  }
}

/**
 * POST /v1/chat/completions: route, check policy, answer from cache or provider, then
 * publish events. The HTTP layer parses the request, asks `answer` for the reply, writes it,
 * and reports what it sent to `complete`.
 */
export class ChatCompletions {
  constructor(private readonly options: ChatCompletionsOptions) {}

  open(call: IncomingCall): ChatRequest {
    return new ChatRequest(this.options, call);
  }

  /**
   * The reply to a validated request: from the cache when it holds one, else from the
   * provider the request routes to. `raw` is the client's bytes, forwarded as they are
   * when nothing in the body had to change (none when the body was translated from another
   * format, see `format`).
   */
  async answer(
    request: ChatRequest,
    parsed: ChatBody,
    raw: Buffer | undefined,
    cacheHeaders: CacheHeaders,
    format?: AnswerFormat,
  ): Promise<ChatReply> {
    request.markStream(parsed.stream === true);
    request.noteModel(parsed.model);
    const resolved = await request.config();
    const facts = {
      model: parsed.model,
      metadata: request.headers.metadata,
      requestType: 'chat',
      stream: parsed.stream === true,
    };
    const guarded = await guardAnswer(request, 'chat', parsed, raw, facts, guardStream);
    parsed = guarded.body;
    const forwardRaw = guarded.raw;
    const { output: outputGuardrails, checkAnswer } = guarded;
    const directives = cacheDirectives(cacheHeaders, this.options.headerPrefix, resolved?.config.cache);
    const cache = directives.enabled ? this.options.cache : undefined;
    const defaultCompletion = this.options.defaultCompletionTokens;
    const bodyOf = (routed: Routed, attempt: AttemptContext): ChatBody => {
      const overridden = attempt.overrideParams
        ? this.withOverrides(parsed, attempt.overrideParams, attempt.path)
        : parsed;
      const shaped = format?.forProvider
        ? format.forProvider(overridden, routed.target.provider)
        : overridden;
      // reasoning_effort becomes a thinking budget for providers that think by one.
      const body = reasoningForProvider(shaped, routed.target.provider);
      return routed.modelRewritten ? { ...body, model: routed.model! } : body;
    };
    let estimated: { attempt: AttemptContext; body: ChatBody; promptTokens: number } | undefined;
    const estimate = (routed: Routed, attempt: AttemptContext) => {
      const body = bodyOf(routed, attempt);
      const tokens = estimateChat(body, defaultCompletion);
      estimated = { attempt, body, promptTokens: tokens.promptTokens };
      return tokens;
    };
    const answer = async (routed: Routed, attempt: AttemptContext, hold: PolicyHold): Promise<ChatReply> => {
      const known = estimated?.attempt === attempt ? estimated : undefined;
      const body = known?.body ?? bodyOf(routed, attempt);
      const cacheKey = cache
        ? responseCacheKey(
            request.principal.workspaceId,
            directives,
            routed.target,
            body,
            outputGuardrails.map((g) => `${g.id}@${g.versionId}`),
            format?.name,
          )
        : undefined;
      if (cache && cacheKey) {
        const hit = await cachedReply(request, cache, cacheKey, directives, hold, guarded);
        if (hit) return hit;
      }
      const response = await request.upstream(routed, () =>
        tracedChatCall(routed.target.provider, body, () =>
          routed.provider.chatCompletions({
            body,
            rawBody: body === parsed ? forwardRaw : undefined,
            target: routed.target,
            signal: attempt.signal,
            timeoutMs: attempt.timeoutMs,
          }),
        ),
      );
      const reply = {
        status: response.status,
        contentType: response.contentType,
        fromCache: false,
        cacheKey,
        maxAgeSeconds: directives.maxAgeSeconds,
        upstreamHeaders: response.upstreamHeaders,
      };
      if (response.kind === 'json') {
        const answered = await checkAnswer(response.body, response.status);
        return { ...reply, stream: false, body: answered };
      }
      const checked = (body: AsyncIterable<Uint8Array>) => guarded.checkStream(body, response.status);
      if (!hold.metered) return { ...reply, stream: true, body: checked(response.body) };
      const { provider, pricing } = routed.target;
      const model = routed.model ?? '';
      const metered = meterStream(response.body, {
        hold,
        promptTokens: known?.promptTokens ?? estimateChat(body, defaultCompletion).promptTokens,
        price: (tokens) => costOf(provider, model, tokens, pricing),
        onExhausted: () => {
          request.exhausted = true;
        },
      });
      // The meter counts what the provider sent; the guardrails check what goes on to the client.
      return { ...reply, stream: true, body: checked(metered) };
    };
    return request.dispatch(parsed.model, parsed, answer, estimate);
  }

  /** The reply was written with `status`: a complete answer from the provider is cached, and the request's events go out. */
  complete(request: ChatRequest, reply: ChatReply, status: number, sent: Relayed, requestBody: string): void {
    const cache = this.options.cache;
    if (!reply.fromCache && cache && reply.cacheKey && sent.complete && !request.exhausted) {
      const stored: CachedResponse = {
        status,
        contentType: reply.contentType,
        body: sent.copy,
        stream: reply.stream,
      };
      if (isCacheable(stored)) cache.put(reply.cacheKey, stored, reply.maxAgeSeconds);
    }
    request.finish(status, requestBody, sent.copy.toString('utf8'), undefined, request.cacheStatus);
  }

  /**
   * A config's override_params laid over the client's request. The result is checked like
   * any request; since the client's own part already passed, a problem is the config's.
   */
  private withOverrides(body: ChatBody, overrides: Record<string, unknown>, path: string): ChatBody {
    try {
      return this.options.validate({ ...body, ...overrides });
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      const param = `${path}.override_params${err.param ? `.${err.param}` : ''}`;
      throw new BadRequest(`The config's override_params make an invalid request: ${err.message}`, {
        param,
        code: 'invalid_config',
      });
    }
  }
}

/**
 * The answer the cache holds for `key`, checked by the request's output guardrails as a fresh
 * one would be (they may differ from those it was stored under); none on a miss or a refresh.
 * Sets the request's cache status, and settles the hold on a hit: nothing was used.
 */
export async function cachedReply(
  request: ChatRequest,
  cache: ResponseStore,
  key: string,
  directives: CacheDirectives,
  hold: PolicyHold,
  guarded: Pick<AnswerGuardrails<unknown>, 'checkAnswer' | 'checkStream'>,
): Promise<ChatReply | undefined> {
  const hit = directives.forceRefresh ? undefined : await cache.get(key);
  request.cacheStatus = directives.forceRefresh ? 'REFRESH' : hit ? 'HIT' : 'MISS';
  if (!hit) return undefined;
  hold.settle(NOTHING_USED);
  const replayed = replay(
    hit.stream ? hit : { ...hit, body: await guarded.checkAnswer(hit.body, hit.status) },
    directives.maxAgeSeconds,
  );
  return replayed.stream
    ? { ...replayed, body: guarded.checkStream(replayed.body, replayed.status) }
    : replayed;
}

/** A cached answer in the form it was given: a stream is replayed event by event. */
export function replay(cached: CachedResponse, maxAgeSeconds: number): ChatReply {
  const common = {
    status: cached.status,
    contentType: cached.contentType,
    fromCache: true,
    cacheKey: undefined,
    maxAgeSeconds,
  };
  if (!cached.stream) return { stream: false, body: cached.body, ...common };
  const events = cached.body.toString('utf8').split(/(?<=\n\n)/);
  async function* chunks() {
    for (const event of events) yield Buffer.from(event);
  }
  return { stream: true, body: chunks(), ...common };
}
