import { activeTraceCarrier } from '@switchyard/core';
import type {
  BatchHandler,
  BusMessage,
  EventBus,
  OutgoingMessage,
  PublishStats,
  SubscribeBatchOptions,
  SubscribeOptions,
  Subscription,
} from './event-bus.ts';
import type { EventJournal, JournalContent } from './event-journal.ts';

interface Group {
  offsets: Map<string, number>;
}

/** What a pump delivers to: a single-message subscription is one with batches of one. */
interface PumpTarget {
  groupId: string;
  topics: string[];
  maxMessages: number;
  handler: BatchHandler;
}

/** One topic's retained messages: `messages[0]` has offset `base`. */
interface TopicLog {
  base: number;
  messages: BusMessage[];
}

/** Messages kept for a topic nobody consumes, for a later subscriber that reads from the beginning. */
const UNCONSUMED_RETENTION = 10_000;
/** Consumed messages are dropped in chunks of at least this many (or half the log), keeping trims cheap. */
const TRIM_CHUNK = 1_024;

/**
 * In-process stand-in for Kafka: one partition per topic, consumer groups with committed
 * offsets, at-least-once delivery (a failing handler is retried with backoff). Messages every
 * active group has handled are dropped, so memory does not grow with traffic; a group that
 * comes back after its messages were dropped resumes at the oldest one retained.
 *
 * With a journal, what was published and each group's place survive the process: a message
 * is written to the journal before publish returns, and on the next start every group resumes
 * where it had committed, so what it had not handled is delivered then.
 */
export class MemoryEventBus implements EventBus {
  private readonly topics = new Map<string, TopicLog>();
  private readonly groups = new Map<string, Group>();
  private readonly pumps = new Set<Pump>();
  private published = 0;

  /** `retainAll` keeps every message, for tests that inspect what was published. */
  constructor(private readonly options: { retainAll?: boolean; journal?: EventJournal } = {}) {
    if (options.journal) this.recover(options.journal.takeRecovered());
  }

  publish(message: OutgoingMessage): void {
    const log = this.topicLog(message.topic);
    const offset = log.base + log.messages.length;
    const { topic, key, value } = message;
    const traceContext = message.traceContext ?? activeTraceCarrier();
    const kept: BusMessage = traceContext
      ? { topic, key, value, partition: 0, offset: String(offset), traceContext }
      : { topic, key, value, partition: 0, offset: String(offset) };
    this.options.journal?.append(
      traceContext ? { topic, offset, key, value, traceContext } : { topic, offset, key, value },
    );
    log.messages.push(kept);
    this.published++;
    this.trim(message.topic);
    for (const pump of this.pumps) pump.wake();
  }

  subscribe(options: SubscribeOptions): Promise<Subscription> {
    const handler = options.handler;
    return this.start(options, {
      groupId: options.groupId,
      topics: options.topics,
      maxMessages: 1,
      handler: (messages) => handler(messages[0]!),
    });
  }

  subscribeBatches(options: SubscribeBatchOptions): Promise<Subscription> {
    return this.start(options, {
      groupId: options.groupId,
      topics: options.topics,
      maxMessages: Math.max(1, Math.floor(options.maxMessages)),
      handler: options.handler,
    });
  }

  private async start(
    options: { groupId: string; topics: string[]; fromBeginning?: boolean },
    target: PumpTarget,
  ): Promise<Subscription> {
    let group = this.groups.get(options.groupId);
    if (!group) {
      group = { offsets: new Map() };
      this.groups.set(options.groupId, group);
    }
    for (const topic of options.topics) {
      const { base } = this.topicLog(topic);
      const committed = group.offsets.get(topic);
      if (committed === undefined)
        this.commit(options.groupId, topic, options.fromBeginning ? base : this.end(topic));
      else if (committed < base) this.commit(options.groupId, topic, base);
    }
    // A new group's starting place is durable before anything it must read can be published.
    this.options.journal?.flushCommits();
    const pump = new Pump(this, group, target);
    this.pumps.add(pump);
    pump.wake();
    return {
      stop: async () => {
        this.pumps.delete(pump);
        await pump.stop();
      },
    };
  }

  /** The offset the next message published to the topic will get. */
  end(topic: string): number {
    const log = this.topicLog(topic);
    return log.base + log.messages.length;
  }

  read(topic: string, offset: number): BusMessage | undefined {
    const log = this.topicLog(topic);
    return log.messages[offset - log.base];
  }

  /** The messages of the topic held in memory, oldest first. */
  log(topic: string): readonly BusMessage[] {
    return this.topicLog(topic).messages;
  }

  /** How many messages of the topic are held in memory. */
  retained(topic: string): number {
    return this.topics.get(topic)?.messages.length ?? 0;
  }

  /** The group will read the topic from `offset` on. */
  commit(groupId: string, topic: string, offset: number): void {
    this.groups.get(groupId)?.offsets.set(topic, offset);
    this.options.journal?.commit({ groupId, topic, offset });
  }

  /** Drops what every active group of the topic has handled (or, unconsumed, the oldest past the cap). */
  trim(topic: string): void {
    if (this.options.retainAll) return;
    const log = this.topicLog(topic);
    const keepFrom = this.keepFrom(topic);
    const drop = keepFrom - log.base;
    if (drop >= TRIM_CHUNK || (drop > 0 && drop * 2 >= log.messages.length)) {
      log.messages.splice(0, drop);
      log.base = keepFrom;
    }
    this.options.journal?.compactIfDue(() => this.needed());
  }

  /** The oldest message of the topic that an active group has yet to handle (or, unconsumed, that is within the cap). */
  private keepFrom(topic: string): number {
    const log = this.topicLog(topic);
    const active = [...this.pumps].filter((p) => p.consumes(topic));
    if (active.length > 0) return Math.min(...active.map((p) => p.committed(topic)));
    return log.base + Math.max(0, log.messages.length - UNCONSUMED_RETENTION);
  }

  /** What the journal must keep: the messages not to be dropped yet, and the places of groups that have not lost theirs. */
  private needed(): JournalContent {
    const content: JournalContent = { messages: [], commits: [] };
    const keepFrom = new Map<string, number>();
    for (const [topic, log] of this.topics) {
      const from = Math.max(log.base, this.keepFrom(topic));
      keepFrom.set(topic, from);
      for (const message of log.messages.slice(from - log.base)) {
        content.messages.push({
          topic,
          offset: Number(message.offset),
          key: message.key,
          value: message.value,
          ...(message.traceContext ? { traceContext: message.traceContext } : {}),
        });
      }
    }
    for (const [groupId, group] of this.groups) {
      for (const [topic, offset] of group.offsets) {
        // A group behind what is kept resumes at the oldest message kept, as it would without its place.
        if (offset >= (keepFrom.get(topic) ?? 0)) content.commits.push({ groupId, topic, offset });
      }
    }
    return content;
  }

  /** Takes up where the journal's last writer left off: its messages, at their offsets, and the groups' places. */
  private recover(content: JournalContent): void {
    for (const message of content.messages) {
      const log = this.topicLog(message.topic);
      if (log.messages.length === 0) log.base = message.offset;
      else if (message.offset !== log.base + log.messages.length) {
        throw new Error(
          `event journal: ${message.topic} jumps from ${this.end(message.topic)} to ${message.offset}`,
        );
      }
      log.messages.push({
        topic: message.topic,
        key: message.key,
        value: message.value,
        partition: 0,
        offset: String(message.offset),
        ...(message.traceContext ? { traceContext: message.traceContext } : {}),
      });
    }
    for (const { groupId, topic, offset } of content.commits) {
      let group = this.groups.get(groupId);
      if (!group) {
        group = { offsets: new Map() };
        this.groups.set(groupId, group);
      }
      group.offsets.set(topic, offset);
      // Everything of a topic was handled and compacted away: its offsets go on from there.
      const log = this.topicLog(topic);
      if (log.messages.length === 0 && offset > log.base) log.base = offset;
    }
  }

  private topicLog(topic: string): TopicLog {
    let log = this.topics.get(topic);
    if (!log) {
      log = { base: 0, messages: [] };
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
    return { buffered: 0, spilled: 0, published: this.published, dropped: 0, failedAttempts: 0 };
  }

  async close(): Promise<void> {
    await Promise.all([...this.pumps].map((p) => p.stop()));
    this.pumps.clear();
    this.options.journal?.close();
  }
}

class Pump {
  private running: Promise<void> | undefined;
  private stopped = false;
  private wakeAgain = false;

  constructor(
    private readonly bus: MemoryEventBus,
    private readonly group: Group,
    private readonly options: PumpTarget,
  ) {}

  consumes(topic: string): boolean {
    return !this.stopped && this.options.topics.includes(topic);
  }

  committed(topic: string): number {
    return this.group.offsets.get(topic) ?? 0;
  }

  pending(): boolean {
    return this.running !== undefined || this.options.topics.some((t) => this.committed(t) < this.bus.end(t));
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
      let offset = this.committed(topic);
      let attempt = 0;
      while (offset < this.bus.end(topic) && !this.stopped) {
        const message = this.bus.read(topic, offset);
        if (!message) {
          // Dropped while this group was away: resume at the oldest message retained.
          offset = this.bus.end(topic) - this.bus.retained(topic);
          this.bus.commit(this.options.groupId, topic, offset);
          continue;
        }
        // What has arrived, up to the batch bound: nothing waits for more.
        const batch = [message];
        while (batch.length < this.options.maxMessages) {
          const next = this.bus.read(topic, offset + batch.length);
          if (!next) break;
          batch.push(next);
        }
        try {
          await this.options.handler(batch);
          offset += batch.length;
          attempt = 0;
          this.bus.commit(this.options.groupId, topic, offset);
        } catch {
          attempt++;
          await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 20 * 2 ** attempt)));
        }
      }
      this.bus.trim(topic);
    }
  }
}
