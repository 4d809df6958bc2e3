import { Forbidden, NotImplemented, toAppError, type Logger } from '@switchyard/core';
import { customHostRefused } from '@switchyard/rules';
import type { Principal } from '@switchyard/access';
import type { EventBus } from '@switchyard/adapters';
import {
  CLIENT_CLOSED_MESSAGE,
  CLIENT_CLOSED_STATUS,
  measureRequest,
  publishRequestEvents,
  type CompletedRequest,
  type MeasuredUsage,
} from '../events/request-events.ts';
import { costOf } from '../pricing/cost.ts';
import type { GatewayMetrics, PolicyLabel } from '../metrics/gateway-metrics.ts';
import {
  guardrailsOf,
  type GuardrailDefaults,
  type GuardrailRun,
  type GuardrailSource,
  type RequestGuardrails,
} from './guardrails.ts';
import type { ChatProvider } from '../providers/types.ts';
import type { PromptRunFields } from '../events/encoding.ts';
import { NonPublicAddress } from '@switchyard/rules';
import { resolveConfig, type ResolvedConfig, type SavedConfigs } from '../routing/config-source.ts';
import { Cancellation } from '../routing/cancellation.ts';
import { runRoutePlan, type AttemptContext, type AttemptResult } from '../routing/route-plan.ts';
import { headerNames, type GatewayHeaders, type HeaderNames } from './gateway-headers.ts';
import type { GuardrailWebhookClient, IntegrationSource, PolicyCheck } from './ports.ts';
import type { WebhookContext } from './guardrail-webhook.ts';
import {
  NOTHING_USED,
  PolicyRefusal,
  refusalReasonOf,
  type PolicyHold,
  type PolicyOutcomeFields,
  type TokenEstimate,
  type UsageAmount,
} from './policy.ts';
import type { ResponseStore } from './response-cache.ts';
import {
  refuseBlockedInlineChoices,
  routeRequest,
  type InlinePolicy,
  type RoutedTarget,
} from './provider-routing.ts';

export interface GatewayContext {
  providers: Map<string, ChatProvider>;
  /** The same adapters, connecting only to public addresses: for custom hosts that are not trusted. */
  customHostProviders: Map<string, ChatProvider>;
  inline: InlinePolicy;
  integrations: IntegrationSource;
  /** Saved configs; absent where control-plane is not reachable (a saved config is then not found). */
  configs?: SavedConfigs | undefined;
  policy: PolicyCheck;
  /** Guardrail definitions; absent where control-plane is not reachable (a named guardrail is then refused). */
  guardrails?: GuardrailSource | undefined;
  /** Calls webhook checks; absent, a webhook check cannot run and decides by its failure mode. */
  webhooks?: GuardrailWebhookClient | undefined;
  /** The organisation's default guardrails as they apply to the caller; none when absent. */
  guardrailDefaults?: ((principal: Principal) => Promise<GuardrailDefaults>) | undefined;
  /** Where a default guardrail that no longer exists is reported. */
  logger?: Pick<Logger, 'warn'> | undefined;
  /** The completion tokens a request that names no output limit is expected to use. */
  defaultCompletionTokens: number;
  bus: EventBus;
  headerPrefix: string;
  requestTimeoutMs: number;
  cache?: ResponseStore;
  /** The gateway's series (see gateway-metrics.ts); none are recorded without it. */
  metrics?: GatewayMetrics | undefined;
}

/** What the HTTP layer read of a data-plane request before handing it over. */
export interface IncomingCall {
  principal: Principal & { workspaceId: string };
  headers: GatewayHeaders;
  /**
   * The provider key a request may bring for a provider it chooses inline: the
   * `Authorization` bearer token, when the gateway key travels in `<prefix>api-key`.
   */
  providerKey: string | undefined;
  /** The request id the server gave the request (x-request-id). */
  requestId: string;
  /** The W3C trace the request belongs to, when it has one (see requestTraceId). */
  w3cTraceId?: string | undefined;
  method: string;
  /** The path as the client sent it, without the query. */
  path: string;
  /** The route template the request is counted under in the metrics (see dataPlaneRouteTemplate). */
  route?: string | undefined;
  /** A header of the client's request by lower-case name (the first value of a repeated one). */
  clientHeader?(name: string): string | undefined;
  /** The saved prompt the request runs (POST /v1/prompts/:id/completions), for its log. */
  prompt?: PromptRunFields | undefined;
}

/** What was sent of a body: a bounded copy (for the log and the cache), and whether it holds the whole body, delivered in full. */
export interface Relayed {
  copy: Buffer;
  complete: boolean;
}

export interface Routed extends RoutedTarget {
  provider: ChatProvider;
}

/** How much of a relayed body is kept for the request log and the cache. */
export const LOG_COPY_LIMIT = 1_000_000;

/**
 * One data-plane request from authentication to its events: everything chat completions
 * and forwarded operations share. The response headers it decides on the way (trace id,
 * provider, route taken) are collected in `responseHeaders`, in the order decided, for the
 * HTTP layer to set before it answers, whether with a result or an error.
 */
export class GatewayRequest {
  readonly principal: Principal & { workspaceId: string };
  readonly headers: GatewayHeaders;
  readonly abort = new Cancellation();
  /** Response headers by name, in the order they were decided; a later value replaces an earlier one in place. */
  readonly responseHeaders: Record<string, string> = {};
  private readonly started = performance.now();
  private readonly createdAtMs = Date.now();
  private routed: Routed | undefined;
  private stream = false;
  private resolvedConfig: Promise<ResolvedConfig | undefined> | undefined;
  /** The model the request's body names (noteModel), for deciding whether a default config applies. */
  private model: string | undefined;
  private configSlug: string | undefined;
  private routePath: string | undefined;
  private retries = 0;
  /** What each checked attempt held, in order; the last one's is the answer's. */
  private readonly holds: PolicyHold[] = [];
  /** What the request's guardrails did with it, for its log. */
  readonly guardrailRuns: GuardrailRun[] = [];
  /** The policy refusal of the last attempt, when it was refused. */
  private refusal: PolicyRefusal | undefined;
  /** Whether the request's outcome was recorded (`finish`). */
  private finished = false;
  /** Whether its client went away before that. */
  private closedByClient = false;
  /** Whether a stream's first chunk was counted (firstChunkSent). */
  private firstChunkCounted = false;
  /** The route template the request is counted under. */
  readonly route: string;
  protected readonly names: HeaderNames;

  constructor(
    private readonly context: GatewayContext,
    private readonly call: IncomingCall,
  ) {
    this.principal = call.principal;
    this.headers = withDefaultMetadata(call.headers, call.principal);
    this.names = headerNames(context.headerPrefix);
    this.responseHeaders[this.names['trace-id']] = this.headers.traceId;
    this.route = call.route ?? 'unmatched';
  }

  /** The target the request was last routed to (after `dispatch`); undefined before. */
  get target(): Routed['target'] | undefined {
    return this.routed?.target;
  }

  /**
   * Calls the provider for the attempt `routed` is, counting the time waited on it by the
   * status it answered or failed with.
   */
  async upstream<T extends { status: number }>(routed: Routed, call: () => Promise<T>): Promise<T> {
    const metrics = this.context.metrics;
    if (!metrics) return call();
    const started = performance.now();
    let status = 500;
    try {
      const answer = await call();
      status = answer.status;
      return answer;
    } catch (err) {
      status = toAppError(err).status;
      throw err;
    } finally {
      metrics.upstream(
        this.route,
        routed.target.provider,
        routed.model,
        status,
        (performance.now() - started) / 1000,
      );
    }
  }

  /** A stream's first chunk is on its way to the client: its time to first token, once. */
  firstChunkSent(cacheStatus?: string): void {
    if (this.firstChunkCounted) return;
    this.firstChunkCounted = true;
    const routed = this.routed;
    this.context.metrics?.firstChunk(
      this.route,
      routed?.target.provider,
      routed?.model,
      cacheStatus,
      (performance.now() - this.started) / 1000,
    );
  }

  /**
   * The request's guardrails: the organisation's defaults as they apply to the caller, then
   * those its config names (see guardrailsOf); undefined when none apply.
   */
  async guardrails(): Promise<RequestGuardrails | undefined> {
    const resolved = await this.config();
    const { principal, context } = this;
    return guardrailsOf(
      resolved?.config,
      principal.organisationId,
      principal.workspaceId,
      context.guardrails,
      await context.guardrailDefaults?.(principal),
      context.logger,
    );
  }

  /** What webhook checks need of this request; undefined where no webhook client is wired. */
  webhookContext(): WebhookContext | undefined {
    const client = this.context.webhooks;
    if (!client) return undefined;
    return { client, header: (name) => this.call.clientHeader?.(name) };
  }

  markStream(stream: boolean): void {
    this.stream = stream;
  }

  /**
   * The client went away before the answer was sent: the request is cancelled, upstream call
   * included. Unless its outcome was recorded already, it is recorded as 499 "client closed
   * request" however it ends; returns whether it will be.
   */
  clientClosed(): boolean {
    if (!this.finished) this.closedByClient = true;
    this.abort.abort();
    return this.closedByClient;
  }

  /** The model the request's body names, before its config is resolved: a `@slug/model` is the request's own choice of provider. */
  noteModel(model: unknown): void {
    if (this.resolvedConfig === undefined && typeof model === 'string') this.model = model;
  }

  /**
   * The request's config (`<prefix>config`): inline JSON or a saved config's id or slug. A key
   * whose defaults refuse overrides refuses the header (403). Without the header, the key's
   * default config (see PrincipalDefaults) applies exactly as if the request had named it,
   * unless the request chose its provider itself (`<prefix>provider`, `<prefix>virtual-key`
   * or a `@slug/model`).
   */
  config(): Promise<ResolvedConfig | undefined> {
    const param = `${this.context.headerPrefix}config`;
    const defaults = this.principal.defaults;
    const header = this.headers.config;
    if (header !== undefined && defaults?.allowConfigOverride === false) {
      return Promise.reject(
        new Forbidden(`This API key does not allow a request's own config: leave out the ${param} header.`, {
          param,
          code: 'config_override_not_allowed',
        }),
      );
    }
    const reference = header ?? (this.choosesOwnProvider() ? undefined : (defaults?.config ?? undefined));
    if (reference === undefined) return Promise.resolve(undefined);
    this.resolvedConfig ??= resolveConfig(reference, {
      organisationId: this.principal.organisationId,
      workspaceId: this.principal.workspaceId,
      param,
      saved: this.context.configs,
    });
    return this.resolvedConfig;
  }

  /** Whether the request names its provider itself: then a default config does not apply. */
  private choosesOwnProvider(): boolean {
    return this.headers.provider !== undefined || this.model?.startsWith('@') === true;
  }

  /** What the request's answer holds under rate and usage limits (after `dispatch`). */
  get policyHold(): PolicyHold | undefined {
    return this.refusal ? undefined : this.holds.at(-1);
  }

  /**
   * Routes the request: refuses inline choices an organisation has blocked, then runs the
   * config's route plan (or one attempt without a config). Each attempt is given its
   * provider and credentials, checked with policy (with what `estimate` expects it to use),
   * and handed to `call` with what it holds. An attempt that fails gives back what it held.
   * Response headers name the target that answered and the retries it took.
   */
  async dispatch<T extends AttemptResult>(
    model: string | undefined,
    params: Record<string, unknown> | undefined,
    call: (routed: Routed, attempt: AttemptContext, hold: PolicyHold) => Promise<T>,
    estimate: (routed: Routed, attempt: AttemptContext) => TokenEstimate,
  ): Promise<T> {
    const prefix = this.context.headerPrefix;
    await refuseBlockedInlineChoices(this.principal, this.headers, this.context.inline, prefix);
    this.noteModel(model);
    const resolved = await this.config();
    this.configSlug = resolved?.slug;
    const outcome = await runRoutePlan(
      resolved?.config,
      {
        subject: { metadata: this.headers.metadata, params },
        signal: this.abort.signal,
        defaultTimeoutMs: this.context.requestTimeoutMs,
        retrying: () =>
          this.context.metrics?.retried(this.route, this.routed?.target.provider, this.routed?.model),
        fallingBack: () =>
          this.context.metrics?.fellBack(this.route, this.routed?.target.provider, this.routed?.model),
        settled: (path, retries) => {
          this.routePath = path;
          this.retries = retries;
          if (!resolved) return;
          this.responseHeaders[`${prefix}last-used-option-index`] = path;
          this.responseHeaders[`${prefix}retry-attempt-count`] = String(retries);
        },
      },
      async (attempt) => {
        const overridden = attempt.overrideParams?.model;
        const routed = await routeRequest(
          {
            principal: this.principal,
            model: typeof overridden === 'string' ? overridden : model,
            headers: this.headers,
            inline: this.context.inline,
            providerKey: this.call.providerKey,
            integrations: this.context.integrations,
            headerPrefix: prefix,
            directProviders: this.context.providers,
          },
          attempt.leaf,
          attempt.path,
        );
        const hostParam = routed.target.untrustedHostParam;
        const providers = hostParam === undefined ? this.context.providers : this.context.customHostProviders;
        const provider = providers.get(routed.target.provider);
        if (!provider) {
          throw new NotImplemented(
            `The '${routed.target.provider}' provider adapter is not available in this release.`,
            { code: 'provider_not_supported' },
          );
        }
        this.routed = { ...routed, provider };
        const routedNow = this.routed;
        const hold = await this.checkPolicy(routedNow, () => estimate(routedNow, attempt));
        this.responseHeaders[this.names.provider] = routed.target.provider;
        try {
          const result = await call(this.routed, attempt, hold);
          if (result.status >= 400) hold.settle(NOTHING_USED);
          return result;
        } catch (err) {
          hold.settle(NOTHING_USED);
          throw hostParam !== undefined && err instanceof NonPublicAddress
            ? customHostRefused(err.message, hostParam)
            : err;
        }
      },
    );
    return outcome.value;
  }

  /** One attempt's policy check, with its estimate priced for the target; a refusal is recorded for the log. */
  private async checkPolicy(routed: Routed, estimateTokens: () => TokenEstimate): Promise<PolicyHold> {
    const { target } = routed;
    const model = routed.model ?? '';
    const estimate = (): UsageAmount => {
      const tokens = estimateTokens();
      return {
        tokens: tokens.promptTokens + tokens.completionTokens,
        cost: costOf(
          target.provider,
          model,
          {
            promptTokens: tokens.promptTokens,
            completionTokens: tokens.completionTokens,
            cachedTokens: 0,
            reasoningTokens: 0,
          },
          target.pricing,
        ),
      };
    };
    let hold: PolicyHold;
    try {
      hold = await this.context.policy.check({
        principal: this.principal,
        provider: target.provider,
        model,
        metadata: this.headers.metadata,
        requestId: this.call.requestId,
        estimate,
      });
    } catch (err) {
      if (err instanceof PolicyRefusal) {
        this.refusal = err;
        this.context.metrics?.policyDenied(this.route, err.reason);
      }
      throw err;
    }
    this.refusal = undefined;
    this.holds.push(hold);
    const headers = hold.headers;
    for (const name in headers) this.responseHeaders[name] = headers[name]!;
    return hold;
  }

  /**
   * Settles what the answer held to what it used (a stream's meter has done so already) and
   * tells what policies did with the request, for its log. A failed or cached answer used nothing;
   * a successful one without usage keeps what it held.
   */
  private settlePolicy(
    done: CompletedRequest,
    usage: UsageAmount | undefined,
  ): PolicyOutcomeFields | undefined {
    const refusal = this.refusal;
    const holds = this.holds;
    const last = holds.at(-1);
    if (!refusal && last) {
      last.settle(done.status >= 400 || done.cacheStatus === 'HIT' ? NOTHING_USED : usage);
    }
    if (!refusal && !last) return undefined;
    const adjustments = holds.length === 1 ? last!.adjustments() : holds.flatMap((h) => h.adjustments());
    return refusal
      ? { decision: refusal.decision, policyId: refusal.policyId, code: refusal.code ?? '', adjustments }
      : { decision: last!.decision, policyId: last!.policyId, code: last!.code, adjustments };
  }

  /**
   * Publishes the request's events once the response is on its way; the client never waits for
   * them. A request whose client went away is recorded as such (see `clientClosed`); what it
   * used is still counted by `status`, the status of the answer it was given.
   */
  finish(
    status: number,
    requestBody: string,
    responseBody: string,
    error?: unknown,
    cacheStatus?: string,
  ): void {
    const latencyMs = performance.now() - this.started;
    const { requestId, method, path } = this.call;
    const routed = this.routed;
    const clientClosed = this.closedByClient;
    this.finished = true;
    const errorMessage = clientClosed
      ? CLIENT_CLOSED_MESSAGE
      : error === undefined
        ? undefined
        : toAppError(error).message;
    setImmediate(() => {
      const done: CompletedRequest = {
        requestId,
        w3cTraceId: this.call.w3cTraceId,
        principal: this.principal,
        headers: this.headers,
        method,
        path,
        provider: routed?.target.provider ?? '',
        model: routed?.model ?? '',
        integrationSlug: routed?.target.integrationSlug,
        stream: this.stream,
        status,
        clientClosed,
        createdAtMs: this.createdAtMs,
        latencyMs,
        requestBody,
        responseBody,
        errorMessage,
        cacheStatus,
        pricing: routed?.target.pricing,
        configSlug: this.configSlug,
        routePath: this.routePath,
        retries: this.retries,
        guardrails: this.guardrailRuns,
        prompt: this.call.prompt,
      };
      const measured = measureRequest(done);
      const used = measured.usage ? { tokens: measured.tokens, cost: measured.cost } : undefined;
      done.policy = this.settlePolicy(done, used);
      publishRequestEvents(this.context.bus, done, measured);
      if (this.context.metrics) this.count(this.context.metrics, done, measured);
    });
  }

  /** The request's series: its duration, usage and cost, guardrail verdicts, and a stream a limit ended. */
  private count(metrics: GatewayMetrics, done: CompletedRequest, measured: MeasuredUsage): void {
    const route = this.route;
    const last = this.holds.at(-1);
    const exhausted = !this.refusal && last?.decision === 'exhausted';
    if (exhausted) metrics.policyDenied(route, refusalReasonOf(last.code));
    const policy: PolicyLabel =
      this.refusal || exhausted ? 'denied' : this.holds.length > 0 ? 'allowed' : 'none';
    metrics.finished({
      route,
      status: done.clientClosed ? CLIENT_CLOSED_STATUS : done.status,
      provider: done.provider,
      model: done.model,
      cacheStatus: done.cacheStatus,
      policy,
      seconds: done.latencyMs / 1000,
      inputTokens: measured.usage?.promptTokens ?? 0,
      outputTokens: measured.usage?.completionTokens ?? 0,
      cost: measured.cost,
    });
    for (const run of this.guardrailRuns) metrics.guardrailVerdict(route, run.phase, run.action);
  }

  /**
   * Records a failure and throws it on, for the HTTP layer's error handling to answer. Once the
   * client has gone there is no one to answer: the failure (most often the cancellation its
   * leaving caused) is recorded as the client's closing, and nothing is thrown.
   */
  fail(err: unknown, requestBody: string, cacheStatus?: string): void {
    const appError = toAppError(err);
    if (this.closedByClient) {
      this.finish(appError.status, requestBody, '', err, cacheStatus);
      return;
    }
    this.finish(appError.status, requestBody, JSON.stringify(appError.toBody()), err, cacheStatus);
    throw err;
  }
}

/** The request's metadata over the key's default metadata: the request's values win. */
function withDefaultMetadata(headers: GatewayHeaders, principal: Principal): GatewayHeaders {
  const defaults = principal.defaults?.metadata;
  if (!defaults || Object.keys(defaults).length === 0) return headers;
  return { ...headers, metadata: { ...defaults, ...headers.metadata } };
}
