import { AppError, BadRequest, RequestTimeout } from '@switchyard/core';
import {
  DEFAULT_RETRY_STATUS_CODES,
  nodePath,
  type RetrySettings,
  type RoutingConfig,
  type RoutingTarget,
} from '@switchyard/rules';
import { Cancellation, type CancelSignal } from './cancellation.ts';
import { matchesQuery, type ConditionSubject } from './conditions.ts';

/** One call to one target, as the route plan asks for it. */
export interface AttemptContext {
  /** The leaf: where to send the request (no provider means the request's own choice). */
  leaf: RoutingTarget;
  /** Where the leaf sits in the config, e.g. `config.targets[1]`. */
  path: string;
  /** override_params of the leaf and its ancestors, the nearest winning. */
  overrideParams: Record<string, unknown> | undefined;
  /** Aborts when the client goes away or the attempt's deadline passes. */
  signal: CancelSignal;
  timeoutMs: number;
  /** 0 for the first try of this leaf, then 1, 2, ... */
  retry: number;
}

/** What an attempt gives back; a status of 400 or more is a failure the plan may act on. */
export interface AttemptResult {
  status: number;
  headers?: Record<string, string | string[] | undefined> | undefined;
  /** Releases an answer that will not be used (e.g. drains its body). */
  discard?(): void;
}

export interface RouteOutcome<T> {
  value: T;
  /** The leaf that answered. */
  path: string;
  /** Retries the answering leaf took. */
  retries: number;
}

export interface RoutePlanOptions {
  subject: ConditionSubject;
  /** The client's signal: once aborted, nothing more is tried. */
  signal: CancelSignal;
  defaultTimeoutMs: number;
  random?: () => number;
  sleep?: (ms: number, signal: CancelSignal) => Promise<void>;
  /** Told which leaf answered (or failed last) and after how many retries. */
  settled?: (path: string, retries: number) => void;
  /** Told when a leaf that failed is about to be tried again (for the metrics). */
  retrying?: () => void;
  /** Told when a fallback moves on from a target that failed to its next one (for the metrics). */
  fallingBack?: () => void;
  /** First retry delay; doubles each retry. */
  backoffBaseMs?: number;
}

/** A provider asking for a longer wait than this is answered as it is instead of retried. */
export const MAX_RETRY_WAIT_MS = 30_000;
const MAX_BACKOFF_MS = 10_000;

type Tried<T> =
  | { ok: true; value: T; path: string; retries: number }
  | {
      ok: false;
      status: number;
      value?: T | undefined;
      error?: unknown;
      retryAfter?: string | undefined;
      path: string;
      retries: number;
    };

interface Inherited {
  retry: RetrySettings | undefined;
  timeoutMs: number;
  overrideParams: Record<string, unknown> | undefined;
}

/**
 * Runs a request through a config's routing tree: single, fallback (on listed statuses),
 * weighted load-balance and conditional strategies, nested to any allowed depth; retries
 * with exponential backoff honouring `retry-after`; a deadline per attempt. Settings are
 * inherited down the tree, the nearest winning. Without a config the request makes one
 * attempt with its own provider choice.
 */
export async function runRoutePlan<T extends AttemptResult>(
  config: RoutingConfig | undefined,
  options: RoutePlanOptions,
  attempt: (context: AttemptContext) => Promise<T>,
): Promise<RouteOutcome<T>> {
  const plan = new RoutePlan(options, attempt);
  const tried = await plan.walk(config ?? {}, 'config', {
    retry: undefined,
    timeoutMs: options.defaultTimeoutMs,
    overrideParams: undefined,
  });
  options.settled?.(tried.path, tried.retries);
  // A failure the provider answered with (a forwarded operation) goes to the client as it is.
  if (tried.ok || tried.value !== undefined) {
    return { value: tried.value!, path: tried.path, retries: tried.retries };
  }
  throw tried.error;
}

class RoutePlan<T extends AttemptResult> {
  private readonly random: () => number;
  private readonly sleep: (ms: number, signal: CancelSignal) => Promise<void>;

  constructor(
    private readonly options: RoutePlanOptions,
    private readonly attempt: (context: AttemptContext) => Promise<T>,
  ) {
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? abortableSleep;
  }

  async walk(node: RoutingTarget, path: string, parent: Inherited): Promise<Tried<T>> {
    const inherited: Inherited = {
      retry: node.retry ?? parent.retry,
      timeoutMs: node.request_timeout ?? parent.timeoutMs,
      overrideParams: node.override_params
        ? { ...parent.overrideParams, ...node.override_params }
        : parent.overrideParams,
    };
    const targets = node.targets;
    if (!targets) return this.leaf(node, path, inherited);
    const mode = node.strategy?.mode ?? 'single';
    if (mode === 'single') return this.walk(targets[0]!, nodePath(path, 0), inherited);
    if (mode === 'loadbalance') {
      const i = this.pickWeighted(targets);
      return this.walk(targets[i]!, nodePath(path, i), inherited);
    }
    if (mode === 'conditional') {
      const i = this.pickConditional(node, path);
      return this.walk(targets[i]!, nodePath(path, i), inherited);
    }
    const onStatus = node.strategy?.on_status_codes;
    let last: Tried<T> | undefined;
    for (let i = 0; i < targets.length; i += 1) {
      last = await this.walk(targets[i]!, nodePath(path, i), inherited);
      if (last.ok || this.options.signal.aborted) return last;
      const movesOn = !onStatus || onStatus.includes(last.status);
      if (!movesOn || i === targets.length - 1) return last;
      this.options.fallingBack?.();
      last.value?.discard?.();
    }
    return last!;
  }

  private async leaf(leaf: RoutingTarget, path: string, inherited: Inherited): Promise<Tried<T>> {
    const attempts = inherited.retry?.attempts ?? 0;
    const retryOn = inherited.retry?.on_status_codes ?? DEFAULT_RETRY_STATUS_CODES;
    const honourRetryAfter = inherited.retry?.use_retry_after_headers ?? true;
    for (let retry = 0; ; retry += 1) {
      const tried = await this.once(leaf, path, inherited, retry);
      if (tried.ok || this.options.signal.aborted) return tried;
      if (retry >= attempts || !retryOn.includes(tried.status)) return tried;
      const asked = honourRetryAfter ? retryAfterMs(tried.retryAfter) : undefined;
      const wait = asked ?? this.backoff(retry);
      if (wait > MAX_RETRY_WAIT_MS) return tried;
      tried.value?.discard?.();
      try {
        await this.sleep(wait, this.options.signal);
      } catch {
        return tried;
      }
      this.options.retrying?.();
    }
  }

  private async once(
    leaf: RoutingTarget,
    path: string,
    inherited: Inherited,
    retry: number,
  ): Promise<Tried<T>> {
    const controller = new Cancellation();
    const client = this.options.signal;
    const onClientAbort = () => controller.abort(client.reason);
    if (client.aborted) onClientAbort();
    else client.addEventListener('abort', onClientAbort, { once: true });
    // The error is made only when the deadline passes: an Error captures a stack, which is not free.
    let deadline: RequestTimeout | undefined;
    const timer = setTimeout(() => {
      deadline = new RequestTimeout(`The provider did not answer within ${inherited.timeoutMs} ms.`);
      controller.abort(deadline);
    }, inherited.timeoutMs);
    try {
      const value = await this.attempt({
        leaf,
        path,
        overrideParams: inherited.overrideParams,
        signal: controller.signal,
        timeoutMs: inherited.timeoutMs,
        retry,
      });
      if (value.status < 400) return { ok: true, value, path, retries: retry };
      client.removeEventListener('abort', onClientAbort);
      return {
        ok: false,
        status: value.status,
        value,
        retryAfter: header(value.headers),
        path,
        retries: retry,
      };
    } catch (err) {
      client.removeEventListener('abort', onClientAbort);
      const error = deadline ?? err;
      if (!(error instanceof AppError)) throw error;
      return {
        ok: false,
        status: error.status,
        error,
        retryAfter: error.headers['retry-after'],
        path,
        retries: retry,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  private pickWeighted(targets: RoutingTarget[]): number {
    const weights = targets.map((t) => t.weight ?? 1);
    const total = weights.reduce((a, b) => a + b, 0);
    let point = this.random() * total;
    for (let i = 0; i < weights.length; i += 1) {
      if (weights[i]! <= 0) continue;
      if (point < weights[i]!) return i;
      point -= weights[i]!;
    }
    // Rounding at the top end: the last target that has weight.
    return weights.findLastIndex((w) => w > 0);
  }

  private pickConditional(node: RoutingTarget, path: string): number {
    const strategy = node.strategy!;
    const targets = node.targets!;
    const chosen =
      strategy.conditions?.find((condition) => matchesQuery(condition.query, this.options.subject))?.then ??
      strategy.default;
    const index = chosen === undefined ? -1 : targets.findIndex((t) => t.name === chosen);
    if (index < 0) {
      throw new BadRequest('No condition of the config matches this request and the config has no default.', {
        param: `${path}.strategy.conditions`,
        code: 'no_matching_target',
      });
    }
    return index;
  }

  private backoff(retry: number): number {
    const base = (this.options.backoffBaseMs ?? 200) * 2 ** retry;
    // ±20% jitter so many clients do not retry in step.
    return Math.min(MAX_BACKOFF_MS, Math.round(base * (0.8 + 0.4 * this.random())));
  }
}

function header(headers: AttemptResult['headers']): string | undefined {
  const value = headers?.['retry-after'];
  return Array.isArray(value) ? value[0] : value;
}

/** `retry-after` as seconds or an HTTP date, in milliseconds. */
export function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function abortableSleep(ms: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
