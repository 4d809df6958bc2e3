/** Counters and cache entries with expiry: Redis in production, memory in all-in-one. */
export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Adds to a counter; a counter created by this call expires after ttlMs. */
  increment(key: string, amount: number, ttlMs: number): Promise<number>;
  check(): Promise<void>;
  close(): Promise<void>;
}
