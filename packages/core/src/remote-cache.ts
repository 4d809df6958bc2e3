export interface RemoteCacheOptions {
  /** How long a found value is served from memory. */
  ttlMs?: number;
  /** How long an absent value (null) is remembered. */
  negativeTtlMs?: number;
  /** Oldest entries are dropped beyond this many. */
  maxEntries?: number;
}

interface Entry<V> {
  value: V | null;
  expiresAt: number;
}

interface Pending<V> {
  promise: Promise<V | null>;
  stale: boolean;
}

/**
 * Values owned by another service, fetched once and then served from memory: concurrent
 * misses share one fetch, entries expire after a short TTL, and an invalidation (a change
 * event) drops an entry at once — including an answer still under way, which may carry the
 * old state.
 */
export class RemoteCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Pending<V>>();

  constructor(private readonly options: RemoteCacheOptions = {}) {}

  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.value;
    let pending = this.inflight.get(key);
    if (!pending) {
      const started = { stale: false } as Pending<V>;
      started.promise = load().finally(() => {
        if (this.inflight.get(key) === started) this.inflight.delete(key);
      });
      this.inflight.set(key, started);
      pending = started;
    }
    const value = await pending.promise;
    if (!pending.stale) this.remember(key, value);
    return value;
  }

  invalidate(key: string): void {
    this.invalidateWhere((candidate) => candidate === key);
  }

  /** Drops every entry whose key starts with `prefix`. */
  invalidatePrefix(prefix: string): void {
    this.invalidateWhere((candidate) => candidate.startsWith(prefix));
  }

  clear(): void {
    this.invalidateWhere(() => true);
  }

  /**
   * Drops every entry whose value matches, and every load under way (its value is not known
   * yet, so it may match): what it answers is not kept.
   */
  invalidateValues(matches: (value: V | null) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
    for (const [key, pending] of this.inflight) {
      pending.stale = true;
      this.inflight.delete(key);
    }
  }

  private invalidateWhere(matches: (key: string) => boolean): void {
    for (const key of this.entries.keys()) if (matches(key)) this.entries.delete(key);
    for (const [key, pending] of this.inflight) {
      if (!matches(key)) continue;
      pending.stale = true;
      this.inflight.delete(key);
    }
  }

  private remember(key: string, value: V | null): void {
    const max = this.options.maxEntries ?? 50_000;
    if (!this.entries.has(key) && this.entries.size >= max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const ttl = value === null ? (this.options.negativeTtlMs ?? 2_000) : (this.options.ttlMs ?? 30_000);
    this.entries.set(key, { value, expiresAt: Date.now() + ttl });
  }
}
