/** Counters and cache entries with expiry: Redis in production, memory in all-in-one. */
export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets the key only if it does not exist; true when this call set it. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Adds to a counter; a counter created by this call expires after ttlMs. */
  increment(key: string, amount: number, ttlMs: number): Promise<number>;
  check(): Promise<void>;
  close(): Promise<void>;
}
