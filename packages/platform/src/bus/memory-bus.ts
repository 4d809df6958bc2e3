import type {
  BusMessage,
  EventBus,
  OutgoingMessage,
  PublishStats,
  SubscribeOptions,
  Subscription,
} from './event-bus.ts';

interface Group {
  offsets: Map<string, number>;
}

/**
 * In-process stand-in for Kafka: one partition per topic, consumer groups with committed
 * offsets, at-least-once delivery (a failing handler is retried with backoff).
 */
export class MemoryEventBus implements EventBus {
  private readonly topics = new Map<string, BusMessage[]>();
  private readonly groups = new Map<string, Group>();
  private readonly pumps = new Set<Pump>();
  private published = 0;

  publish(message: OutgoingMessage): void {
    const log = this.log(message.topic);
    log.push({ ...message, partition: 0, offset: String(log.length) });
    this.published++;
    for (const pump of this.pumps) pump.wake();
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    let group = this.groups.get(options.groupId);
    if (!group) {
      group = { offsets: new Map() };
      this.groups.set(options.groupId, group);
    }
    for (const topic of options.topics) {
      if (!group.offsets.has(topic))
        group.offsets.set(topic, options.fromBeginning ? 0 : this.log(topic).length);
    }
    const pump = new Pump(this, group, options);
    this.pumps.add(pump);
    pump.wake();
    return {
      stop: async () => {
        this.pumps.delete(pump);
        await pump.stop();
      },
    };
  }

  log(topic: string): BusMessage[] {
    let log = this.topics.get(topic);
    if (!log) {
      log = [];
      this.topics.set(topic, log);
    }
    return log;
  }

  /** Resolves when every subscription has handled everything published so far. */
  async flush(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && [...this.pumps].some((p) => p.pending())) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async check(): Promise<void> {}

  stats(): PublishStats {
    return { buffered: 0, published: this.published, dropped: 0, failedAttempts: 0 };
  }

  async close(): Promise<void> {
    await Promise.all([...this.pumps].map((p) => p.stop()));
    this.pumps.clear();
  }
}

class Pump {
  private running: Promise<void> | undefined;
  private stopped = false;
  private wakeAgain = false;

  constructor(
    private readonly bus: MemoryEventBus,
    private readonly group: Group,
    private readonly options: SubscribeOptions,
  ) {}

  pending(): boolean {
    return (
      this.running !== undefined ||
      this.options.topics.some((t) => (this.group.offsets.get(t) ?? 0) < this.bus.log(t).length)
    );
  }

  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async run(): Promise<void> {
    await Promise.resolve();
    for (const topic of this.options.topics) {
      const log = this.bus.log(topic);
      let offset = this.group.offsets.get(topic) ?? 0;
      let attempt = 0;
      while (offset < log.length && !this.stopped) {
        try {
          await this.options.handler(log[offset]!);
          offset++;
          attempt = 0;
          this.group.offsets.set(topic, offset);
        } catch {
          attempt++;
          await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 20 * 2 ** attempt)));
        }
      }
    }
  }
}
