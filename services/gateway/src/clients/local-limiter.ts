import type { RateLimitStanding } from '../domain/policy.ts';

/** A rate limit as the gateway last saw it for a key, to apply on its own while the policy service is away. */
export interface RememberedRateLimit {
  policyId: string;
  /** "requests" or "tokens". */
  type: string;
  /** The limit per window. */
  limit: number;
  /** The counted entity, e.g. `api_key:4f0c…`. */
  valueKey: string;
  /** The window's length: 60 s, 1 h or 1 day. */
  windowMs: number;
}

const WINDOWS_MS = [60_000, 3_600_000, 86_400_000];

/**
 * For a state that does not say its window length (a policy service older than window_ms):
 * the window a rate limit counts in, from when its window ended as seen at `seenAtMs`:
 * windows are aligned to the Unix epoch, so the shortest window whose boundary that end is
 * and that was not yet over when seen. A state seen just before a longer window ends can
 * look like a shorter one; the limiter is then more lenient, never stricter.
 */
export function windowOf(resetAtMs: number, seenAtMs: number): number {
  for (const windowMs of WINDOWS_MS) {
    if (resetAtMs % windowMs === 0 && resetAtMs - seenAtMs <= windowMs) return windowMs;
  }
  return WINDOWS_MS[0]!;
}

interface Counter {
  windowStartMs: number;
  used: number;
}

/** What a request took of the local counters, to settle when it is over. */
export interface LocalTaking {
  limit: RememberedRateLimit;
  counter: Counter;
  held: number;
}

export type LocalDecision =
  | { admitted: true; taken: LocalTaking[]; standings: RateLimitStanding[] }
  | { admitted: false; limit: RememberedRateLimit; resetAtMs: number; standings: RateLimitStanding[] };

/**
 * Fixed windows aligned to the Unix epoch, counted in this process only, with the rules of
 * the policy service: requests are admitted while count + 1 ≤ limit, tokens while the tokens
 * used in the window are under the limit (then the estimate is held). All of a request's
 * limits are checked before any is taken. At most `maxCounters` counters are kept: the
 * oldest go first.
 */
export class LocalRateLimiter {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly maxCounters = 10_000) {}

  take(limits: readonly RememberedRateLimit[], estimateTokens: number, nowMs: number): LocalDecision {
    const current: Counter[] = [];
    const standings: RateLimitStanding[] = [];
    for (const limit of limits) {
      const windowStartMs = Math.floor(nowMs / limit.windowMs) * limit.windowMs;
      const key = `${limit.policyId}\u0000${limit.type}\u0000${limit.valueKey}`;
      let counter = this.counters.get(key);
      if (counter === undefined || counter.windowStartMs !== windowStartMs) {
        counter = { windowStartMs, used: 0 };
        if (this.counters.size >= this.maxCounters) this.counters.delete(this.counters.keys().next().value!);
        this.counters.set(key, counter);
      }
      current.push(counter);
      const admitted =
        limit.type === 'requests' ? counter.used + 1 <= limit.limit : counter.used < limit.limit;
      if (!admitted) {
        const resetAtMs = windowStartMs + limit.windowMs;
        standings.push({ type: limit.type, limit: limit.limit, remaining: 0, resetAtMs });
        return { admitted: false, limit, resetAtMs, standings };
      }
    }
    const taken: LocalTaking[] = [];
    limits.forEach((limit, i) => {
      const counter = current[i]!;
      const held = limit.type === 'requests' ? 1 : estimateTokens;
      counter.used += held;
      taken.push({ limit, counter, held });
      standings.push({
        type: limit.type,
        limit: limit.limit,
        remaining: limit.limit - counter.used,
        resetAtMs: counter.windowStartMs + limit.windowMs,
      });
    });
    standings.sort((a, b) => a.remaining / a.limit - b.remaining / b.limit);
    return { admitted: true, taken, standings };
  }

  /** A tokens counter gets what the request used beyond (or short of) what it held, in the same window. */
  settle(taking: LocalTaking, usedTokens: number): void {
    if (taking.limit.type !== 'tokens') return;
    taking.counter.used = Math.max(0, taking.counter.used + usedTokens - taking.held);
  }
}
