/**
 * Counters of rate and usage limits: each counter is a hash (one window or period of one
 * policy) whose fields are the counted entities. Redis in production, memory in all-in-one
 * and as the local limiter a service falls back on while Redis is away.
 */
export interface LimitCounterStore {
  /**
   * Checks every take against its limit and, only when all are admitted, adds every amount:
   * all or nothing, atomically. A counter gets its expiry (ttlMs from now) when it has none.
   * All keys of one call belong to one organisation (they share a Redis hash tag).
   */
  take(takes: readonly CounterTake[]): Promise<TakeResult>;
  /** Adds each delta to its counter, never below 0; counters that no longer exist are skipped. */
  settle(adjustments: readonly CounterAdjustment[]): Promise<void>;
  /** The usage of each counted entity (0 when it has none). */
  read(counters: readonly CounterField[]): Promise<number[]>;
  /** The entities of one counter, filtered, ordered by usage (highest first) and paged. */
  list(key: string, query: UsageQuery): Promise<UsagePage>;
  /** Forgets an entity's usage in one counter; false when it had none. */
  reset(key: string, field: string): Promise<boolean>;
  check(): Promise<void>;
}

export interface CounterField {
  /** The counter's storage key, e.g. `{<orgId>}:ul:<policyId>:<periodStartMs>`. */
  key: string;
  /** The counted entity (its value_key). */
  field: string;
}

export interface CounterTake extends CounterField {
  amount: number;
  limit: number;
  /**
   * `count`: admitted when used + amount ≤ limit (requests). `below`: admitted when
   * used < limit, then the amount is held even if it passes the limit (tokens, cost).
   */
  rule: 'count' | 'below';
  /** How long the counter lives from now, set when it has no expiry; 0: it never expires. */
  ttlMs: number;
  /** Only take from a counter that exists (one that expired is skipped, not made again). */
  existingOnly?: boolean;
  /**
   * A lease: once the take is admitted, take up to this much more, but no more than `share`
   * (0–1) of what the limit then has left (whole units for `count`). 0 or absent: none.
   */
  extra?: number;
  share?: number;
}

export interface CounterAdjustment extends CounterField {
  delta: number;
}

export type TakeOutcome = 'taken' | 'refused' | 'skipped' | 'unchecked';

export interface TakeResult {
  admitted: boolean;
  /**
   * Per take, in order: `taken` (admitted), `refused` (its limit has none left), `unchecked`
   * (its own limit held, but another refused, so nothing was taken), `skipped` (existingOnly
   * and the counter is gone).
   */
  outcomes: TakeOutcome[];
  /** Per take: the usage after the take when admitted, else the usage as it stands. */
  used: number[];
  /** Per take: how much of its `extra` was taken (0 unless admitted). */
  granted: number[];
}

export interface UsageQuery {
  /** The limit of the counter's policy: an entity whose usage reached it is exhausted. */
  limit: number;
  status?: 'active' | 'exhausted' | undefined;
  /** A substring of the entity (case-insensitive). */
  search?: string | undefined;
  offset: number;
  count: number;
}

export interface EntityUsage {
  field: string;
  used: number;
  exhausted: boolean;
}

export interface UsagePage {
  entities: EntityUsage[];
  /** How many entities match the query, over all pages. */
  total: number;
}

/** How much of a take's `extra` a counter grants when, after the take, `used` of `limit` is used. */
export function leaseGrant(take: CounterTake, used: number): number {
  const extra = take.extra ?? 0;
  if (!(extra > 0) || !Number.isFinite(take.limit)) return extra > 0 ? extra : 0;
  const share = Math.max(0, (take.limit - used) * Math.min(1, Math.max(0, take.share ?? 1)));
  const granted = Math.min(extra, share);
  return take.rule === 'count' ? Math.floor(granted) : granted;
}

/** Filters, orders and pages one counter's entities: the same for every implementation. */
export function pageUsage(fields: Iterable<[string, number]>, query: UsageQuery): UsagePage {
  const search = query.search?.toLowerCase();
  const matching: EntityUsage[] = [];
  for (const [field, used] of fields) {
    const exhausted = used >= query.limit;
    if (query.status === 'active' && exhausted) continue;
    if (query.status === 'exhausted' && !exhausted) continue;
    if (search && !field.toLowerCase().includes(search)) continue;
    matching.push({ field, used, exhausted });
  }
  matching.sort((a, b) => b.used - a.used || (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  return { entities: matching.slice(query.offset, query.offset + query.count), total: matching.length };
}
