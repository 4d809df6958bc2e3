import type { EntityManager } from 'typeorm';

/*
 * Rollups are made from the stored logs by a background job, an hour at a time once the hour
 * is over, rather than by every batch of logs stored: storing stays cheap, and the job can
 * afford rollups of several shapes (hourly per API key, daily per workspace, hourly per
 * metadata value). Each hour has a version, raised whenever something it was made from
 * changes after it was made (a late log, feedback on one of its traces); an hour whose
 * rollups are of its current version is clean and read from them, any other part of a range
 * is read from the logs. Answers are the same either way, only faster from rollups.
 *
 * Consistency: the job holds an hour's advisory lock exclusively while it makes the hour;
 * whatever changes an hour's sources holds the lock shared while it does, so a change either
 * lands before the job reads the hour or raises the version the job just wrote.
 */

/**
 * Upper bounds (inclusive, in ms) of the latency histogram of every rollup; a last bucket
 * counts what is slower. Fixed, so that buckets add up across rows and percentiles can be
 * estimated from them.
 */
export const LATENCY_BUCKETS_MS = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** An hour is made this long after it ends, when the logs of its last moments have arrived. */
export const ROLLUP_GRACE_MS = 120_000;
/** Metadata keys and values longer than these are not grouped (nor indexed). */
export const METADATA_KEY_MAX = 256;
export const METADATA_VALUE_MAX = 512;

export const floorHour = (at: Date) => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

/** The hour's number, its advisory lock's second key. */
const hourNumber = (bucket: Date) => Math.floor(bucket.getTime() / HOUR_MS);

const HOUR_LOCK_CLASS = `hashtext('log_export.rollup_hours')`;

/** The distinct hours of these times, oldest first. */
export function hoursOf(times: Iterable<Date>): Date[] {
  const hours = new Set<number>();
  for (const at of times) hours.add(hourNumber(at));
  return [...hours].sort((a, b) => a - b).map((n) => new Date(n * HOUR_MS));
}

/** Holds the hours' locks shared until the transaction ends: the job does not make them meanwhile. */
export async function lockHoursShared(m: EntityManager, hours: Date[]): Promise<void> {
  if (hours.length === 0) return;
  await m.query(
    `SELECT count(pg_advisory_xact_lock_shared(${HOUR_LOCK_CLASS}, h)) FROM unnest($1::int[]) h`,
    [hours.map(hourNumber)],
  );
}

/**
 * Raises the version of the hours already made (so that they are read from the logs until
 * made again), and of hours before the newest one made that the job has not seen (a log far
 * older than the rest). Hours not reached yet need nothing: the job makes them in turn.
 */
export async function touchHours(m: EntityManager, hours: Date[]): Promise<void> {
  if (hours.length === 0) return;
  await m.query(
    `INSERT INTO log_export.rollup_hours AS h (bucket)
     SELECT b FROM unnest($1::timestamptz[]) b
      WHERE b <= (SELECT max(bucket) FROM log_export.rollup_hours)
     ON CONFLICT (bucket) DO UPDATE SET version = h.version + 1`,
    [hours.map((h) => h.toISOString())],
  );
}

const HISTOGRAM = `ARRAY[${[
  ...LATENCY_BUCKETS_MS.map(
    (bound, i) =>
      `count(*) FILTER (WHERE latency_ms ${i === 0 ? '' : `> ${LATENCY_BUCKETS_MS[i - 1]} AND latency_ms `}<= ${bound})`,
  ),
  `count(*) FILTER (WHERE latency_ms > ${LATENCY_BUCKETS_MS.at(-1)})`,
].join(', ')}]`;
/** The element-wise sums of rollups' histograms. */
export const HISTOGRAM_SUMS = `ARRAY[${LATENCY_BUCKETS_MS.map((_, i) => `sum(latency_ms_histogram[${i + 1}])`)
  .concat(`sum(latency_ms_histogram[${LATENCY_BUCKETS_MS.length + 1}])`)
  .join(', ')}]`;
const TOKENS = (field: string) => `sum(coalesce((usage->>'${field}')::bigint, 0))`;
const SUMS = [
  'requests',
  'errors',
  'cost',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'latency_ms_sum',
];
const DAILY_KEY = 'organisation_id, workspace_id, provider, model, status, cache_status';

/** What a run of the job did. */
export interface MaterialiseRun {
  /** The hours made (new ones and those made again), oldest first. */
  hours: Date[];
  /** False when another replica was running the job, so this one did nothing. */
  ran: boolean;
}

export class RollupMaterialiser {
  constructor(private readonly manager: EntityManager) {}

  /**
   * Makes every hour over at least ROLLUP_GRACE_MS before `now` that is not made or not
   * clean, up to `maxHours` of them (oldest first). One replica at a time runs it.
   */
  async run(now: Date, maxHours = 10_000): Promise<MaterialiseRun> {
    const made: Date[] = [];
    const lastHour = new Date(floorHour(new Date(now.getTime() - ROLLUP_GRACE_MS)).getTime() - HOUR_MS);
    while (made.length < maxHours) {
      const next = await this.nextHour(lastHour);
      if (!next) break;
      const outcome = await this.makeHour(next);
      if (outcome === 'busy') return { hours: made, ran: made.length > 0 };
      made.push(next);
    }
    return { hours: made, ran: true };
  }

  /**
   * The oldest hour not clean, else the hour after the newest made (at the start, the first
   * hour of the day of the oldest log, so that its day can be whole), up to `lastHour`.
   */
  private async nextHour(lastHour: Date): Promise<Date | null> {
    const [dirty] = (await this.manager.query(
      `SELECT bucket FROM log_export.rollup_hours
        WHERE version <> materialised_version AND bucket <= $1 ORDER BY bucket LIMIT 1`,
      [lastHour.toISOString()],
    )) as Array<{ bucket: Date }>;
    if (dirty) return dirty.bucket;
    const [newest] = (await this.manager.query(
      `SELECT max(bucket) AS bucket FROM log_export.rollup_hours`,
    )) as Array<{ bucket: Date | null }>;
    let next: Date | null;
    if (newest?.bucket) {
      next = new Date(newest.bucket.getTime() + HOUR_MS);
    } else {
      const [first] = (await this.manager.query(
        `SELECT date_trunc('day', min(created_at), 'UTC') AS bucket FROM log_export.request_logs`,
      )) as Array<{ bucket: Date | null }>;
      next = first?.bucket ?? null;
    }
    return next && next <= lastHour ? next : null;
  }

  /**
   * Makes one hour: its rollups per API key and per metadata value from its logs, and, once
   * every hour of its day is clean, the daily rollups of the day from them. An hour whose logs
   * are gone (past retention) keeps the rollups it has.
   */
  async makeHour(bucket: Date): Promise<'made' | 'busy'> {
    const from = bucket.toISOString();
    const to = new Date(bucket.getTime() + HOUR_MS).toISOString();
    const day = new Date(Math.floor(bucket.getTime() / DAY_MS) * DAY_MS);
    return this.manager.transaction(async (m) => {
      const [job] = (await m.query(
        `SELECT pg_try_advisory_xact_lock(hashtext('log_export.rollup job')) AS mine`,
      )) as Array<{ mine: boolean }>;
      if (!job?.mine) return 'busy';
      await m.query(`SELECT pg_advisory_xact_lock(${HOUR_LOCK_CLASS}, $1)`, [hourNumber(bucket)]);
      await m.query(
        `INSERT INTO log_export.rollup_hours (bucket) VALUES ($1) ON CONFLICT (bucket) DO NOTHING`,
        [from],
      );
      const [hasLogs] = (await m.query(
        `SELECT EXISTS (SELECT 1 FROM log_export.request_logs WHERE created_at >= $1 AND created_at < $2) AS yes`,
        [from, to],
      )) as Array<{ yes: boolean }>;
      const [hasRollups] = (await m.query(
        `SELECT EXISTS (SELECT 1 FROM log_export.request_rollups WHERE bucket = $1) AS yes`,
        [from],
      )) as Array<{ yes: boolean }>;
      const remake = Boolean(hasLogs?.yes) || !hasRollups?.yes;
      if (remake) {
        await this.requestRollups(m, from, to);
        await this.metadataRollups(m, from, to);
      }
      await m.query(`UPDATE log_export.rollup_hours SET materialised_version = version WHERE bucket = $1`, [
        from,
      ]);
      // A day's rollups are read only once all its hours are clean: made then, not every hour.
      const [whole] = (await m.query(
        `SELECT count(*) = 24 AS yes FROM log_export.rollup_hours
          WHERE bucket >= $1 AND bucket < $2 AND version = materialised_version`,
        [day.toISOString(), new Date(day.getTime() + DAY_MS).toISOString()],
      )) as Array<{ yes: boolean }>;
      if (remake && whole?.yes) await this.dailyRollups(m, day);
      return 'made';
    });
  }

  private async requestRollups(m: EntityManager, from: string, to: string): Promise<void> {
    await m.query(`DELETE FROM log_export.request_rollups WHERE bucket = $1`, [from]);
    await m.query(
      `INSERT INTO log_export.request_rollups
         (bucket, organisation_id, workspace_id, api_key_id, provider, model, status, cache_status,
          ${SUMS.join(', ')}, latency_ms_histogram)
       SELECT $1::timestamptz, organisation_id, workspace_id, api_key_id,
              coalesce(provider, ''), coalesce(model, ''), status, coalesce(cache_status, ''),
              count(*), count(*) FILTER (WHERE status >= 400), sum(cost),
              ${TOKENS('prompt_tokens')}, ${TOKENS('completion_tokens')}, ${TOKENS('total_tokens')},
              ${TOKENS('cached_tokens')}, ${TOKENS('reasoning_tokens')},
              sum(latency_ms), ${HISTOGRAM}
         FROM log_export.request_logs
        WHERE created_at >= $1 AND created_at < $2
        GROUP BY 2, 3, 4, 5, 6, 7, 8`,
      [from, to],
    );
  }

  /** The day's rollups without the API key: the sums of its hours' rollups. */
  private async dailyRollups(m: EntityManager, day: Date): Promise<void> {
    const from = day.toISOString();
    const to = new Date(day.getTime() + DAY_MS).toISOString();
    await m.query(`DELETE FROM log_export.request_rollups_daily WHERE bucket = $1`, [from]);
    await m.query(
      `INSERT INTO log_export.request_rollups_daily
         (bucket, ${DAILY_KEY}, ${SUMS.join(', ')}, latency_ms_histogram)
       SELECT $1::timestamptz, ${DAILY_KEY}, ${SUMS.map((c) => `sum(${c})`).join(', ')}, ${HISTOGRAM_SUMS}
         FROM log_export.request_rollups
        WHERE bucket >= $1 AND bucket < $2
        GROUP BY ${DAILY_KEY}`,
      [from, to],
    );
  }

  /**
   * The hour's requests per metadata key and value, with the feedback on their traces: of
   * the log's own workspace, and of the whole organisation (each request weighs the average
   * weighted feedback of its trace, as metadata groups count it).
   */
  private async metadataRollups(m: EntityManager, from: string, to: string): Promise<void> {
    await m.query(`DELETE FROM log_export.metadata_rollups WHERE bucket = $1`, [from]);
    await m.query(
      `WITH logs AS (
         SELECT organisation_id, workspace_id, trace_id, cost, created_at, metadata,
                coalesce((usage->>'total_tokens')::bigint, 0) AS tokens
           FROM log_export.request_logs
          WHERE created_at >= $1 AND created_at < $2 AND jsonb_typeof(metadata) = 'object' AND metadata <> '{}'
       ), fb AS (
         SELECT f.organisation_id, f.trace_id, f.workspace_id, sum(f.value * f.weight) AS s, count(*) AS n
           FROM log_export.feedback f
          WHERE (f.organisation_id, f.trace_id) IN (
                  SELECT organisation_id, trace_id FROM logs WHERE trace_id IS NOT NULL)
          GROUP BY 1, 2, 3
       ), org_fb AS (
         SELECT organisation_id, trace_id, sum(s) / sum(n) AS avg FROM fb GROUP BY 1, 2
       )
       INSERT INTO log_export.metadata_rollups
       SELECT $1::timestamptz, l.organisation_id, l.workspace_id, kv.key, kv.value,
              count(*), sum(l.cost), sum(l.tokens), max(l.created_at),
              count(w.n), coalesce(sum(w.s / w.n), 0), count(o.avg), coalesce(sum(o.avg), 0)
         FROM logs l
         CROSS JOIN LATERAL jsonb_each_text(l.metadata) kv
         LEFT JOIN fb w ON w.organisation_id = l.organisation_id AND w.trace_id = l.trace_id
                       AND w.workspace_id = l.workspace_id
         LEFT JOIN org_fb o ON o.organisation_id = l.organisation_id AND o.trace_id = l.trace_id
        WHERE kv.value IS NOT NULL AND length(kv.key) <= ${METADATA_KEY_MAX}
          AND length(kv.value) <= ${METADATA_VALUE_MAX}
        GROUP BY 2, 3, 4, 5`,
      [from, to],
    );
  }
}
