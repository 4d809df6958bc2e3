/**
 * Loading synthetic request logs in bulk, for `pnpm bench:logs` and `pnpm bench:console`: the
 * day partitions they fall in, then `logs` logs spread evenly over the `hours` hours from
 * `firstHourMs`, each hour's rows stored by `bulkStore` (COPY), several hours at once, and the
 * feedback on some of their traces stored one at a time, as the feedback consumer stores it.
 */
import type { ScratchDatabase } from '@switchyard/adapters';
import { requestLogFromEvent } from '../../../services/log-export/src/domain/request-logs.ts';
import type { RequestLog } from '../../../services/log-export/src/store/entities.ts';
import {
  FeedbackRepository,
  type Feedback,
} from '../../../services/log-export/src/store/feedback.repository.ts';
import {
  RequestLogPartitions,
  dayOf,
} from '../../../services/log-export/src/store/request-log-partitions.ts';
import { bulkStore } from './bulk-store.ts';
import { syntheticEvent, syntheticFeedback, type World } from './synthetic.ts';

/** A whole-number command-line option within its range, or an error naming it. */
export function count(name: string, raw: string | undefined, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`--${name} must be a whole number from ${min} to ${max}, got ${raw}`);
  }
  return value;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

type DataSource = ScratchDatabase['ds'];

export interface LoadOptions {
  world: World;
  /** How many logs, numbered from 0. */
  logs: number;
  /** The start of the oldest hour. */
  firstHourMs: number;
  /** Hours the logs are spread over. */
  hours: number;
  /** Hours stored at once (COPY on one connection while the next hour's rows are built). */
  writers: number;
  /** Called after every `progressEvery` hours stored. */
  onProgress?: (hoursDone: number, logsStored: number, seconds: number) => void;
  progressEvery?: number;
}

/** The partitions of every day from `firstHourMs`'s to `now`'s, and the days ahead the service makes. */
export async function preparePartitions(ds: DataSource, firstHourMs: number, now: Date): Promise<void> {
  const partitions = new RequestLogPartitions(ds.manager);
  for (let day = dayOf(new Date(firstHourMs)).getTime(); day < now.getTime(); day += DAY_MS) {
    await partitions.create(new Date(day));
  }
  await partitions.prepare(now);
}

/** The logs of hour `h` of the load (0 is the oldest): log numbers spread evenly over the hours. */
function hourOf(options: LoadOptions, h: number, feedback: Feedback[]): RequestLog[] {
  const { world, logs: total, hours, firstHourMs } = options;
  const from = Math.floor((h * total) / hours);
  const to = Math.floor(((h + 1) * total) / hours);
  const start = firstHourMs + h * HOUR_MS;
  const logs: RequestLog[] = [];
  for (let i = from; i < to; i++) {
    const at = start + Math.floor(((i - from) * HOUR_MS) / (to - from));
    const event = syntheticEvent(world, i, at);
    logs.push(requestLogFromEvent(event));
    const fb = syntheticFeedback(event, i, new Date(at + 60_000));
    if (fb) feedback.push(fb);
  }
  return logs;
}

/** Stores the logs and their feedback; answers the seconds it took and the feedback stored. */
export async function loadLogs(
  ds: DataSource,
  options: LoadOptions,
): Promise<{ seconds: number; feedback: number }> {
  const { hours, logs, writers, onProgress, progressEvery = 24 } = options;
  const feedback: Feedback[] = [];
  let next = 0;
  let done = 0;
  const started = performance.now();
  const write = async () => {
    while (next < hours) {
      const h = next++;
      await bulkStore(ds, hourOf(options, h, feedback));
      if (++done % progressEvery === 0) {
        onProgress?.(done, Math.floor((done * logs) / hours), (performance.now() - started) / 1_000);
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, write));
  // Feedback arrives as the feedback consumer stores it, one at a time.
  const repo = new FeedbackRepository(ds.manager);
  for (const fb of feedback) await repo.upsertNewest(fb);
  return { seconds: (performance.now() - started) / 1_000, feedback: feedback.length };
}
