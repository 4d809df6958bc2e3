import type { EntityManager } from 'typeorm';

const DAY_MS = 86_400_000;
const PARTITION_PREFIX = 'request_logs_p';
/** Serialises partition changes of all replicas (Postgres advisory lock key). */
const PARTITION_LOCK = `SELECT pg_advisory_xact_lock(hashtext('log_export.request_logs partitions'))`;

/** Midnight UTC of the day `at` falls in. */
export function dayOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** `request_logs_p20260314`: the partition holding the rows of that UTC day. */
export function partitionName(day: Date): string {
  return `${PARTITION_PREFIX}${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
}

function dayOfPartition(name: string): Date | undefined {
  const match = /^request_logs_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  return match ? new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00Z`) : undefined;
}

/**
 * `request_logs` is partitioned by day of `created_at` (UTC); a row of a day without its
 * partition lands in `request_logs_default`. Partitions are made ahead of time and dropped
 * whole once older than the retention, which costs no deletes and leaves no bloat.
 */
export class RequestLogPartitions {
  constructor(private readonly manager: EntityManager) {}

  /** Makes the partitions of the day before `now` up to `daysAhead` days after it; returns those made. */
  async prepare(now: Date, daysAhead = 7): Promise<string[]> {
    const today = dayOf(now).getTime();
    const made: string[] = [];
    for (let d = -1; d <= daysAhead; d++) {
      const day = new Date(today + d * DAY_MS);
      if (await this.create(day)) made.push(partitionName(day));
    }
    return made;
  }

  /**
   * Makes the partition of one day unless it exists. Rows of that day waiting in the default
   * partition move into it first: Postgres refuses a partition whose rows the default holds.
   */
  async create(day: Date): Promise<boolean> {
    const name = partitionName(day);
    return this.manager.transaction(async (m) => {
      await m.query(PARTITION_LOCK);
      const [existing] = await m.query(`SELECT to_regclass($1) AS oid`, [`log_export.${name}`]);
      if (existing.oid !== null) return false;
      const from = day.toISOString();
      const to = new Date(day.getTime() + DAY_MS).toISOString();
      await m.query(
        `CREATE TABLE log_export.${name} (LIKE log_export.request_logs INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
      );
      await m.query(
        `WITH moved AS (
           DELETE FROM log_export.request_logs_default WHERE created_at >= $1 AND created_at < $2 RETURNING *
         )
         INSERT INTO log_export.${name} SELECT * FROM moved`,
        [from, to],
      );
      await m.query(
        `ALTER TABLE log_export.request_logs ATTACH PARTITION log_export.${name} FOR VALUES FROM ('${from}') TO ('${to}')`,
      );
      return true;
    });
  }

  /** The daily partitions, oldest first. */
  async list(): Promise<string[]> {
    const rows: Array<{ name: string }> = await this.manager.query(
      `SELECT c.relname AS name
         FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace
        WHERE n.nspname = 'log_export' AND p.relname = 'request_logs'`,
    );
    return rows
      .map((r) => r.name)
      .filter((name) => dayOfPartition(name) !== undefined)
      .sort();
  }

  /**
   * Drops the partitions whose every row is older than `cutoff`, and deletes such rows from
   * the default partition; returns the partitions dropped.
   */
  async dropOlderThan(cutoff: Date): Promise<string[]> {
    const dropped: string[] = [];
    for (const name of await this.list()) {
      const day = dayOfPartition(name)!;
      if (day.getTime() + DAY_MS > cutoff.getTime()) continue;
      await this.manager.transaction(async (m) => {
        await m.query(PARTITION_LOCK);
        await m.query(`DROP TABLE IF EXISTS log_export.${name}`);
      });
      dropped.push(name);
    }
    await this.manager.query(`DELETE FROM log_export.request_logs_default WHERE created_at < $1`, [
      cutoff.toISOString(),
    ]);
    return dropped;
  }

  /** What is due at `now`: the coming days' partitions, and those past `retentionDays` dropped. */
  async maintain(now: Date, retentionDays: number): Promise<{ made: string[]; dropped: string[] }> {
    const made = await this.prepare(now);
    const dropped = await this.dropOlderThan(new Date(now.getTime() - retentionDays * DAY_MS));
    return { made, dropped };
  }
}
