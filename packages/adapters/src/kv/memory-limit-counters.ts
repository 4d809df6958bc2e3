import {
  leaseGrant,
  pageUsage,
  type CounterAdjustment,
  type CounterField,
  type CounterTake,
  type LimitCounterStore,
  type TakeOutcome,
  type TakeResult,
  type UsagePage,
  type UsageQuery,
} from './limit-counter-store.ts';

interface Counter {
  fields: Map<string, number>;
  expiresAt: number;
}

/**
 * Limit counters in this process: all-in-one mode, and the local limiter a service decides
 * with while Redis is away. Each call runs to the end without yielding, so it is atomic.
 */
export class MemoryLimitCounterStore implements LimitCounterStore {
  private readonly counters = new Map<string, Counter>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  async take(takes: readonly CounterTake[]): Promise<TakeResult> {
    const outcomes: TakeOutcome[] = [];
    const used: number[] = [];
    const granted = takes.map(() => 0);
    let admitted = true;
    for (const take of takes) {
      const counter = this.live(take.key);
      if (take.existingOnly && !counter) {
        outcomes.push('skipped');
        used.push(0);
        continue;
      }
      const current = counter?.fields.get(take.field) ?? 0;
      const allowed = take.rule === 'count' ? current + take.amount <= take.limit : current < take.limit;
      if (!allowed) admitted = false;
      outcomes.push(allowed ? 'taken' : 'refused');
      used.push(current);
    }
    if (!admitted) {
      for (let i = 0; i < outcomes.length; i++) if (outcomes[i] === 'taken') outcomes[i] = 'unchecked';
      return { admitted, outcomes, used, granted };
    }
    const now = this.now();
    takes.forEach((take, i) => {
      if (outcomes[i] === 'skipped') return;
      let counter = this.live(take.key);
      if (!counter) {
        counter = { fields: new Map(), expiresAt: Infinity };
        this.counters.set(take.key, counter);
      }
      if (counter.expiresAt === Infinity && take.ttlMs > 0) counter.expiresAt = now + take.ttlMs;
      const next = (counter.fields.get(take.field) ?? 0) + take.amount;
      granted[i] = leaseGrant(take, next);
      counter.fields.set(take.field, next + granted[i]);
      used[i] = next + granted[i];
    });
    return { admitted, outcomes, used, granted };
  }

  async settle(adjustments: readonly CounterAdjustment[]): Promise<void> {
    for (const { key, field, delta } of adjustments) {
      const counter = this.live(key);
      if (!counter) continue;
      counter.fields.set(field, Math.max(0, (counter.fields.get(field) ?? 0) + delta));
    }
  }

  async read(counters: readonly CounterField[]): Promise<number[]> {
    return counters.map(({ key, field }) => this.live(key)?.fields.get(field) ?? 0);
  }

  async list(key: string, query: UsageQuery): Promise<UsagePage> {
    return pageUsage(this.live(key)?.fields ?? [], query);
  }

  async reset(key: string, field: string): Promise<boolean> {
    const counter = this.live(key);
    if (!counter?.fields.delete(field)) return false;
    // As in Redis, a hash without fields is no more.
    if (counter.fields.size === 0) this.counters.delete(key);
    return true;
  }

  async check(): Promise<void> {}

  close(): void {
    clearInterval(this.sweeper);
  }

  private live(key: string): Counter | undefined {
    const counter = this.counters.get(key);
    if (counter && counter.expiresAt <= this.now()) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, counter] of this.counters) if (counter.expiresAt <= now) this.counters.delete(key);
  }
}
