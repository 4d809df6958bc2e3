import { once } from 'node:events';
import type { Request, Response } from 'express';
import {
  NotImplemented,
  bearerToken,
  customHostRefused,
  REQUEST_ID_HEADER,
  requestContext,
  requireWorkspacePrincipal,
  toAppError,
  type EventBus,
  type Principal,
} from '@switchyard/platform';
import { publishRequestEvents } from '../events/request-events.ts';
import {
  headerNames,
  readGatewayHeaders,
  type GatewayHeaders,
  type HeaderNames,
} from '../http/gateway-headers.ts';
import type { ChatProvider } from '../providers/types.ts';
import { NonPublicAddress } from '../upstream/public-address-lookup.ts';
import type { IntegrationCache } from './integration-cache.ts';
import type { PolicyGate } from './policy-gate.ts';
import type { ResponseCache } from './response-cache.ts';
import { resolveConfig, type ConfigCache, type ResolvedConfig } from '../routing/config-source.ts';
import { Cancellation } from '../routing/cancellation.ts';
import { runRoutePlan, type AttemptContext, type AttemptResult } from '../routing/route-plan.ts';
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
  integrations: IntegrationCache;
  /** Saved configs; absent where control-plane is not reachable (a saved config is then not found). */
  configs?: ConfigCache | undefined;
  policy: PolicyGate;
  bus: EventBus;
  headerPrefix: string;
  requestTimeoutMs: number;
  cache?: ResponseCache;
}

export interface Relayed {
  copy: Buffer;
  complete: boolean;
}

export interface Routed extends RoutedTarget {
  provider: ChatProvider;
}

const LOG_COPY_LIMIT = 1_000_000;

/**
 * One data-plane request from authentication to its events: everything chat completions
 * and forwarded operations share.
 */
export class GatewayRequest {
  readonly principal: Principal & { workspaceId: string };
  readonly headers: GatewayHeaders;
  readonly abort = new Cancellation();
  private readonly started = performance.now();
  private readonly createdAtMs = Date.now();
  private routed: Routed | undefined;
  private stream = false;
  private resolvedConfig: Promise<ResolvedConfig | undefined> | undefined;
  private configSlug: string | undefined;
  private routePath: string | undefined;
  private retries = 0;
  private readonly names: HeaderNames;

  constructor(
    private readonly context: GatewayContext,
    private readonly req: Request,
    private readonly res: Response,
  ) {
    this.principal = requireWorkspacePrincipal(req);
    this.names = headerNames(context.headerPrefix);
    this.headers = readGatewayHeaders(req, context.headerPrefix);
    res.setHeader(this.names['trace-id'], this.headers.traceId);
    const store = requestContext.getStore();
    if (store) store.traceId = this.headers.traceId;
    res.once('close', () => {
      if (!res.writableFinished) this.abort.abort();
    });
  }

  markStream(stream: boolean): void {
    this.stream = stream;
  }

  /** The request's config (`<prefix>config`): inline JSON or a saved config's id or slug. */
  config(): Promise<ResolvedConfig | undefined> {
    const header = this.headers.config;
    if (header === undefined) return Promise.resolve(undefined);
    this.resolvedConfig ??= resolveConfig(header, {
      organisationId: this.principal.organisationId,
      workspaceId: this.principal.workspaceId,
      param: `${this.context.headerPrefix}config`,
      saved: this.context.configs,
    });
    return this.resolvedConfig;
  }

  /**
   * Routes the request: refuses inline choices an organisation has blocked, then runs the
   * config's route plan (or one attempt without a config). Each attempt is given its
   * provider and credentials, checked with policy, and handed to `call`. Response headers
   * name the target that answered and the retries it took.
   */
  async dispatch<T extends AttemptResult>(
    model: string | undefined,
    params: Record<string, unknown> | undefined,
    call: (routed: Routed, attempt: AttemptContext) => Promise<T>,
  ): Promise<T> {
    const prefix = this.context.headerPrefix;
    await refuseBlockedInlineChoices(this.principal, this.headers, this.context.inline, prefix);
    const resolved = await this.config();
    this.configSlug = resolved?.slug;
    const outcome = await runRoutePlan(
      resolved?.config,
      {
        subject: { metadata: this.headers.metadata, params },
        signal: this.abort.signal,
        defaultTimeoutMs: this.context.requestTimeoutMs,
        settled: (path, retries) => {
          this.routePath = path;
          this.retries = retries;
          if (!resolved) return;
          this.res.setHeader(`${prefix}last-used-option-index`, path);
          this.res.setHeader(`${prefix}retry-attempt-count`, String(retries));
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
            providerKey: this.req.headers[this.names['api-key']]
              ? bearerToken(this.req.headers.authorization)
              : undefined,
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
        await this.context.policy.check(
          this.principal,
          routed.target.provider,
          routed.model ?? '',
          this.headers.metadata,
        );
        this.res.setHeader(this.names.provider, routed.target.provider);
        if (hostParam === undefined) return call(this.routed, attempt);
        return call(this.routed, attempt).catch((err: unknown) => {
          throw err instanceof NonPublicAddress ? customHostRefused(err.message, hostParam) : err;
        });
      },
    );
    return outcome.value;
  }

  /**
   * Sends a body chunk by chunk with backpressure. Returns a bounded copy (for the log and
   * the cache) and whether it holds the whole body, delivered in full.
   */
  async relay(body: AsyncIterable<Uint8Array>, onError: (err: unknown) => void): Promise<Relayed> {
    const copy: Buffer[] = [];
    let copied = 0;
    let complete = true;
    try {
      for await (const chunk of body) {
        if (this.res.destroyed) {
          complete = false;
          break;
        }
        if (copied < LOG_COPY_LIMIT) copy.push(Buffer.from(chunk));
        else complete = false;
        copied += chunk.length;
        if (!this.res.write(chunk)) await once(this.res, 'drain');
      }
    } catch (err) {
      complete = false;
      if (!this.res.destroyed) onError(err);
    }
    this.res.end();
    return { copy: Buffer.concat(copy), complete };
  }

  /** Publishes the request's events once the response is on its way; the client never waits for them. */
  finish(
    status: number,
    requestBody: string,
    responseBody: string,
    error?: unknown,
    cacheStatus?: string,
  ): void {
    const latencyMs = performance.now() - this.started;
    const requestId = String(this.res.getHeader(REQUEST_ID_HEADER) ?? '');
    const routed = this.routed;
    const errorMessage = error === undefined ? undefined : toAppError(error).message;
    setImmediate(() =>
      publishRequestEvents(this.context.bus, {
        requestId,
        principal: this.principal,
        headers: this.headers,
        method: this.req.method,
        path: this.req.originalUrl.split('?')[0] ?? this.req.path,
        provider: routed?.target.provider ?? '',
        model: routed?.model ?? '',
        integrationSlug: routed?.target.integrationSlug,
        stream: this.stream,
        status,
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
      }),
    );
  }

  /** Records a failure and lets the error middleware answer it. */
  fail(err: unknown, requestBody: string, cacheStatus?: string): never {
    const appError = toAppError(err);
    this.finish(appError.status, requestBody, JSON.stringify(appError.toBody()), err, cacheStatus);
    throw err;
  }
}
