import { AppError } from '@switchyard/core';

/**
 * Rate and usage limits as the request path sees them: what a request is expected to use
 * (the estimate sent with the policy check), what it holds once admitted, the refusals a
 * check gives, and the `x-ratelimit-*` headers. The policy service decides; the gRPC client
 * (clients/policy-gate.ts) implements the hold.
 */

/** Tokens and USD: an estimate, or what a request used. */
export interface UsageAmount {
  tokens: number;
  cost: number;
}

export const NOTHING_USED: Readonly<UsageAmount> = Object.freeze({ tokens: 0, cost: 0 });

/** What rate and usage limits did with a request, as the request log records it. */
export type PolicyDecision = 'allowed' | 'denied' | 'exhausted' | 'skipped' | 'failed_open' | 'failed_closed';

export interface PolicyAdjustmentFields {
  policyId: string;
  /** "requests", "tokens" or "cost". */
  type: string;
  held: number;
  used: number;
}

export interface PolicyOutcomeFields {
  decision: PolicyDecision;
  policyId: string;
  code: string;
  adjustments: PolicyAdjustmentFields[];
}

/** What Accrue answered about a request that has used more than it holds. */
export interface AccrueVerdict {
  allowed: boolean;
  policyId: string;
  code: string;
  message: string;
}

/**
 * What an admitted request holds under the policies that apply to it, until it settles.
 * A hold with nothing to meter (no tokens or cost held) has `metered` false.
 */
export interface PolicyHold {
  readonly decision: PolicyDecision;
  /** The policy that ended the request's stream, and its code (set with decision "exhausted"). */
  readonly policyId: string;
  readonly code: string;
  /** Response headers for an admitted request: the `x-ratelimit-*` of its tightest rate limits. */
  readonly headers: Readonly<Record<string, string>>;
  readonly metered: boolean;
  /** The least any tokens hold holds; Infinity when none is held. */
  readonly heldTokens: number;
  /** The least any cost hold holds; Infinity when none is held. */
  readonly heldCost: number;
  /**
   * Reports what the request has used so far (a stream): takes more of the limits, or
   * answers allowed=false when one has none left. Never throws; a policy service that does
   * not answer lets the stream go on.
   */
  accrue(used: UsageAmount): Promise<AccrueVerdict>;
  /**
   * Settles the hold to what the request used in the end, giving back the rest; once (later
   * calls do nothing), never waiting. `undefined`: the usage is not known, keep what is held.
   */
  settle(used: UsageAmount | undefined): void;
  /** One entry per hold: what it held and what was finally used. */
  adjustments(): PolicyAdjustmentFields[];
}

/** A hold with nothing held: no policy applies, or the policy service said to skip the check. */
export const SKIPPED_HOLD: PolicyHold = Object.freeze({
  decision: 'skipped' as const,
  policyId: '',
  code: '',
  headers: Object.freeze({}),
  metered: false,
  heldTokens: Infinity,
  heldCost: Infinity,
  accrue: () => Promise.resolve({ allowed: true, policyId: '', code: '', message: '' }),
  settle: () => undefined,
  adjustments: () => [],
});

/**
 * Why policy refused a request (or ended its stream), as the metrics count it: a rate limit,
 * a usage limit, a usage limit of cost (a budget), or a limit that fails closed while the
 * policy store cannot answer.
 */
export type RefusalReason = 'rate_limit' | 'usage_limit' | 'budget' | 'policy_unavailable';

/** The reason a denial code names (`usage_limit_exceeded`, else a rate limit). */
export const refusalReasonOf = (code: string): RefusalReason =>
  code === 'usage_limit_exceeded' ? 'usage_limit' : code === 'policy_unavailable' ? code : 'rate_limit';

/** A request refused by policy: 429 for a limit, 503 when a limit's failure mode is closed. */
export class PolicyRefusal extends AppError {
  private constructor(
    status: number,
    type: string,
    message: string,
    readonly decision: 'denied' | 'failed_closed',
    readonly policyId: string,
    code: string,
    headers: Record<string, string>,
    readonly reason: RefusalReason,
  ) {
    super(status, type, message, { code, headers });
  }

  /**
   * A limit denied the request. `retry-after` is omitted when there is nothing to wait for
   * (a usage limit that never resets); the official SDKs raise their rate-limit error for any
   * 429, and `x-should-retry: false` tells them not to retry it on their own.
   */
  static denied(
    message: string,
    code: string,
    policyId: string,
    retryAfterSeconds: number | undefined,
    headers: Record<string, string>,
    reason: RefusalReason = refusalReasonOf(code),
  ): PolicyRefusal {
    const all =
      retryAfterSeconds === undefined
        ? { ...headers, 'x-should-retry': 'false' }
        : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))), ...headers };
    return new PolicyRefusal(429, 'rate_limit_error', message, 'denied', policyId, code, all, reason);
  }

  /** The policy store (or service) could not be reached and a limit's failure mode is closed. */
  static unavailable(message: string, policyId: string, headers: Record<string, string>): PolicyRefusal {
    return new PolicyRefusal(
      503,
      'service_unavailable_error',
      message,
      'failed_closed',
      policyId,
      'policy_unavailable',
      headers,
      'policy_unavailable',
    );
  }
}

/** What a chat request is expected to use before the provider is called, in tokens. */
export interface TokenEstimate {
  promptTokens: number;
  completionTokens: number;
}

/** Characters of the text a message holds: its content (a string or text parts) and tool call arguments. */
function messageChars(message: unknown): number {
  if (!message || typeof message !== 'object') return 0;
  const m = message as { content?: unknown; tool_calls?: unknown };
  let chars = 0;
  const content = m.content;
  if (typeof content === 'string') chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content) {
      const text = (part as { text?: unknown } | null)?.text;
      if (typeof text === 'string') chars += text.length;
    }
  }
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) {
      const args = (call as { function?: { arguments?: unknown } } | null)?.function?.arguments;
      if (typeof args === 'string') chars += args.length;
    }
  }
  return chars;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.ceil(value) : undefined;
}

/**
 * A chat request's estimate: the characters of its messages / 4, rounded up, and
 * `max_completion_tokens`, else `max_tokens`, else the configured default.
 */
export function estimateChat(body: Record<string, unknown>, defaultCompletionTokens: number): TokenEstimate {
  let chars = 0;
  const messages = body.messages;
  if (Array.isArray(messages)) for (const message of messages) chars += messageChars(message);
  return {
    promptTokens: Math.ceil(chars / 4),
    completionTokens:
      positive(body.max_completion_tokens) ?? positive(body.max_tokens) ?? defaultCompletionTokens,
  };
}

/** Operations that produce no completion. */
const NO_COMPLETION = /^\/(embeddings|moderations)\b/;

/**
 * A forwarded operation's estimate: the text of its `messages`, `input` or `prompt` / 4, and
 * its output limit (the default when it names none), none for embeddings and moderations.
 */
export function estimateOperation(
  pathname: string,
  body: Record<string, unknown> | undefined,
  defaultCompletionTokens: number,
): TokenEstimate {
  if (!body) return { promptTokens: 0, completionTokens: 0 };
  let chars = 0;
  if (Array.isArray(body.messages)) for (const message of body.messages) chars += messageChars(message);
  for (const field of [body.input, body.prompt]) {
    if (typeof field === 'string') chars += field.length;
    else if (Array.isArray(field)) {
      for (const item of field) {
        if (typeof item === 'string') chars += item.length;
        else chars += messageChars(item);
      }
    }
  }
  const completionTokens = NO_COMPLETION.test(pathname)
    ? 0
    : (positive(body.max_output_tokens) ??
      positive(body.max_completion_tokens) ??
      positive(body.max_tokens) ??
      defaultCompletionTokens);
  return { promptTokens: Math.ceil(chars / 4), completionTokens };
}

/** Where a request stands under one rate limit, for its `x-ratelimit-*` headers. */
export interface RateLimitStanding {
  /** "requests" or "tokens". */
  type: string;
  limit: number;
  remaining: number;
  /** Unix epoch ms. */
  resetAtMs: number;
}

/** A duration as OpenAI writes it in `x-ratelimit-reset-*`: `250ms`, `17s`, `6m0s`, `1h2m3s`. */
export function openAiDuration(ms: number): string {
  if (!(ms > 0)) return '0s';
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  let seconds = Math.ceil(ms / 1000);
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/**
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` from the tightest rate limit of
 * each type (the first of each, the standings being tightest first); into `headers`.
 */
export function addRateLimitHeaders(
  headers: Record<string, string>,
  standings: Iterable<RateLimitStanding>,
  nowMs: number,
): Record<string, string> {
  let requests = false;
  let tokens = false;
  for (const s of standings) {
    if (s.type === 'requests' ? requests : s.type === 'tokens' ? tokens : true) continue;
    if (s.type === 'requests') requests = true;
    else tokens = true;
    headers[`x-ratelimit-limit-${s.type}`] = String(Math.floor(s.limit));
    headers[`x-ratelimit-remaining-${s.type}`] = String(Math.max(0, Math.floor(s.remaining)));
    headers[`x-ratelimit-reset-${s.type}`] = openAiDuration(s.resetAtMs - nowMs);
    if (requests && tokens) break;
  }
  return headers;
}
