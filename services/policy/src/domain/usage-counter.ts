import type { KeyValueStore } from '@switchyard/adapters';
import type { events } from '@switchyard/proto';

const DAY_MS = 86_400_000;
const SEEN_TTL_MS = 7 * DAY_MS;

/**
 * Per-key daily request and token counters, fed by usage events. An event id is
 * remembered for a week, so a redelivered event is not counted twice.
 */
export class UsageCounter {
  constructor(private readonly kv: KeyValueStore) {}

  async record(event: events.UsageEvent): Promise<boolean> {
    if (!event.apiKeyId) return false;
    if (!(await this.kv.setIfAbsent(`usage:seen:${event.id}`, '1', SEEN_TTL_MS))) return false;
    const day = dayOf(Number(event.occurredAtMs) || Date.now());
    await Promise.all([
      this.kv.increment(`usage:${event.apiKeyId}:${day}:requests`, 1, 2 * DAY_MS),
      this.kv.increment(`usage:${event.apiKeyId}:${day}:tokens`, event.usage?.totalTokens ?? 0, 2 * DAY_MS),
    ]);
    return true;
  }
}

function dayOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
