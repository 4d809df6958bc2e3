// Direct access to the run's Kafka topics and consumer groups (offsets, replay, clean-up).
import { Kafka, logLevel, type Admin } from 'kafkajs';

export class KafkaProbe {
  private readonly kafka: Kafka;

  constructor(
    brokers: string[],
    private readonly prefix: string,
  ) {
    this.kafka = new Kafka({
      clientId: 'switchyard-e2e',
      brokers,
      connectionTimeout: 3_000,
      requestTimeout: 10_000,
      retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2_000 },
      logLevel: logLevel.NOTHING,
    });
  }

  private async withAdmin<T>(action: (admin: Admin) => Promise<T>): Promise<T> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      return await action(admin);
    } finally {
      await admin.disconnect();
    }
  }

  /** The run's full name of a topic or group. */
  name(unprefixed: string): string {
    return this.prefix + unprefixed;
  }

  /** Moves an idle consumer group back to the oldest retained message of a topic. */
  resetToEarliest(groupId: string, topic: string): Promise<void> {
    return this.withAdmin((admin) =>
      admin.resetOffsets({ groupId: this.name(groupId), topic: this.name(topic), earliest: true }),
    );
  }

  /**
   * Per partition: the group's committed offset and the topic's end offset. A committed
   * offset of -1 means the group has none (yet) for that partition.
   */
  lag(groupId: string, topic: string): Promise<Array<{ partition: number; committed: number; end: number }>> {
    return this.withAdmin(async (admin) => {
      const ends = await admin.fetchTopicOffsets(this.name(topic));
      const [committed] = await admin.fetchOffsets({
        groupId: this.name(groupId),
        topics: [this.name(topic)],
      });
      return ends.map((end) => {
        const mine = committed?.partitions.find((p) => p.partition === end.partition);
        return { partition: end.partition, committed: Number(mine?.offset ?? -1), end: Number(end.high) };
      });
    });
  }

  /** The run's consumer groups whose (unprefixed) id starts with `startsWith`, with their state. */
  groups(startsWith: string): Promise<Array<{ groupId: string; state: string; members: number }>> {
    return this.withAdmin(async (admin) => {
      const ids = (await admin.listGroups()).groups
        .map((g) => g.groupId)
        .filter((id) => id.startsWith(this.name(startsWith)));
      if (ids.length === 0) return [];
      const { groups } = await admin.describeGroups(ids);
      return groups.map((g) => ({ groupId: g.groupId, state: g.state, members: g.members.length }));
    });
  }

  /** Best-effort removal of every topic this run created. */
  async deleteRunTopics(): Promise<void> {
    await this.withAdmin(async (admin) => {
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(this.prefix));
      if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 10_000 });
    });
  }
}
