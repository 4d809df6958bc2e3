import type { OutgoingMessage, PublishStats } from './event-bus.ts';

export interface PublishBufferOptions {
  /** Sends one batch; throws when nothing of it was accepted. */
  send: (batch: OutgoingMessage[]) => Promise<void>;
  onError: (err: unknown, attempt: number) => void;
  onDrop: (message: OutgoingMessage) => void;
  maxBuffered?: number;
  maxBatch?: number;
  lingerMs?: number;
}

/**
 * Bounded, non-blocking outbox in front of a broker. A failed send keeps the batch and
 * retries with capped exponential backoff, so a broker that is away loses nothing until
 * the buffer is full; beyond that, new messages are dropped and counted.
 */
export class PublishBuffer {
  private queue: OutgoingMessage[] = [];
  private sending = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly waiters = new Set<() => void>();
  private readonly counters = { published: 0, dropped: 0, failedAttempts: 0 };
  private readonly maxBuffered: number;
  private readonly maxBatch: number;
  private readonly lingerMs: number;

  constructor(private readonly options: PublishBufferOptions) {
    this.maxBuffered = options.maxBuffered ?? 100_000;
    this.maxBatch = options.maxBatch ?? 500;
    // Events never wait on the client's path; a longer linger makes fewer, larger batches.
    this.lingerMs = options.lingerMs ?? 50;
  }

  push(message: OutgoingMessage): void {
    if (this.queue.length >= this.maxBuffered || this.closed) {
      this.counters.dropped++;
      this.options.onDrop(message);
      return;
    }
    this.queue.push(message);
    this.schedule(this.lingerMs);
  }

  stats(): PublishStats {
    return { buffered: this.queue.length, ...this.counters };
  }

  /** Waits until the buffer is empty or the timeout passes. */
  async flush(timeoutMs = 10_000): Promise<void> {
    if (this.queue.length === 0 && !this.sending) return;
    this.schedule(0);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const waiters = this.waiters;
      function done() {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      }
      waiters.add(done);
    });
  }

  async close(timeoutMs: number): Promise<void> {
    await this.flush(timeoutMs);
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    if (this.sending || this.closed) return;
    if (this.timer && delayMs > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.drain(), delayMs);
    this.timer.unref?.();
  }

  private async drain(): Promise<void> {
    this.timer = undefined;
    if (this.sending) return;
    this.sending = true;
    let attempt = 0;
    while (this.queue.length > 0 && !this.closed) {
      const batch = this.queue.slice(0, this.maxBatch);
      try {
        await this.options.send(batch);
        this.queue.splice(0, batch.length);
        this.counters.published += batch.length;
        attempt = 0;
        // What arrived while the batch was in flight waits for the linger like any other event,
        // so that under steady load batches stay few and large (one per linger, not one per
        // broker round trip); a full batch, or a flush, goes at once.
        if (this.queue.length < this.maxBatch && this.waiters.size === 0) break;
      } catch (err) {
        attempt++;
        this.counters.failedAttempts++;
        this.options.onError(err, attempt);
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 50 * 2 ** Math.min(attempt, 7))));
      }
    }
    this.sending = false;
    if (this.queue.length === 0) for (const waiter of [...this.waiters]) waiter();
    else this.schedule(this.lingerMs);
  }
}
