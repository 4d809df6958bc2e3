import type { OutgoingMessage, PublishStats } from './event-bus.ts';
import type { SpillFile } from './spill-file.ts';

export interface PublishBufferOptions {
  /** Sends one batch; throws when nothing of it was accepted. */
  send: (batch: OutgoingMessage[]) => Promise<void>;
  onError: (err: unknown, attempt: number) => void;
  onDrop: (message: OutgoingMessage) => void;
  maxBuffered?: number;
  maxBatch?: number;
  lingerMs?: number;
  /**
   * Where messages go while the memory queue is full, instead of being dropped; what it holds
   * (also what a previous process left) is read back in order as the queue drains. The buffer
   * closes it when it closes.
   */
  spill?: SpillFile;
  /** The wait before retrying a failed send, by attempt (1, 2, …). */
  retryDelayMs?: (attempt: number) => number;
}

const defaultRetryDelayMs = (attempt: number) => Math.min(5_000, 50 * 2 ** Math.min(attempt, 7));

/**
 * Bounded, non-blocking outbox in front of a broker. A failed send keeps the batch and
 * retries with capped exponential backoff, so a broker that is away loses nothing until
 * the buffer is full; beyond that, new messages go to the spill file (while it holds
 * anything, every new message does, so that order is kept) or, without one or past its
 * bound, are dropped and counted.
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
  private readonly retryDelayMs: (attempt: number) => number;

  constructor(private readonly options: PublishBufferOptions) {
    this.maxBuffered = options.maxBuffered ?? 100_000;
    this.maxBatch = options.maxBatch ?? 500;
    // Events never wait on the client's path; a longer linger makes fewer, larger batches.
    this.lingerMs = options.lingerMs ?? 50;
    this.retryDelayMs = options.retryDelayMs ?? defaultRetryDelayMs;
    // What a previous process left on disk goes first.
    this.refill();
    if (this.queue.length > 0) this.schedule(0);
  }

  push(message: OutgoingMessage): void {
    const spill = this.options.spill;
    if (this.closed) return this.drop(message);
    if (spill && (spill.count > 0 || this.queue.length >= this.maxBuffered)) {
      if (!spill.append(message)) return this.drop(message);
      this.schedule(this.lingerMs);
      return;
    }
    if (this.queue.length >= this.maxBuffered) return this.drop(message);
    this.queue.push(message);
    this.schedule(this.lingerMs);
  }

  stats(): PublishStats {
    return { buffered: this.queue.length, spilled: this.options.spill?.count ?? 0, ...this.counters };
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

  /** Flushes; what is still on disk then stays there for the next process, what is in memory is lost. */
  async close(timeoutMs: number): Promise<void> {
    await this.flush(timeoutMs);
    this.closed = true;
    clearTimeout(this.timer);
    this.options.spill?.close();
  }

  private drop(message: OutgoingMessage): void {
    this.counters.dropped++;
    this.options.onDrop(message);
  }

  /** Moves the oldest messages on disk into the memory queue, as far as it has room. */
  private refill(): void {
    const spill = this.options.spill;
    if (!spill || spill.count === 0 || this.queue.length >= this.maxBuffered) return;
    const { messages, lost } = spill.take(this.maxBuffered - this.queue.length);
    for (const message of messages) this.queue.push(message);
    this.counters.dropped += lost;
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
    // A failed batch is retried exactly as it was, even when more messages have arrived since:
    // the broker may have stored it and lost only its answer, and the idempotent producer's
    // retry is recognised as that batch by its sequence numbers alone. A retry that packed
    // more events under the same numbers would be acknowledged as the stored batch, and the
    // events added to it would be lost.
    let batch: OutgoingMessage[] | undefined;
    while (this.queue.length > 0 && !this.closed) {
      batch ??= this.queue.slice(0, this.maxBatch);
      try {
        await this.options.send(batch);
        this.queue.splice(0, batch.length);
        this.counters.published += batch.length;
        batch = undefined;
        this.refill();
        attempt = 0;
        // What arrived while the batch was in flight waits for the linger like any other event,
        // so that under steady load batches stay few and large (one per linger, not one per
        // broker round trip); a full batch, or a flush, goes at once.
        if (this.queue.length < this.maxBatch && this.waiters.size === 0) break;
      } catch (err) {
        attempt++;
        this.counters.failedAttempts++;
        this.options.onError(err, attempt);
        await new Promise((resolve) => setTimeout(resolve, this.retryDelayMs(attempt)));
      }
    }
    this.sending = false;
    if (this.queue.length === 0) for (const waiter of [...this.waiters]) waiter();
    else this.schedule(this.lingerMs);
  }
}
