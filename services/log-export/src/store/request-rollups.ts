import type { RequestLog } from './entities.ts';

/**
 * Upper bounds (inclusive, in ms) of the latency histogram of every rollup; a last bucket
 * counts what is slower. Fixed, so that buckets add up across rows and percentiles can be
 * estimated from them.
 */
export const LATENCY_BUCKETS_MS = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;

/**
 * One hour of requests of one API key, provider, model, status and cache status: what
 * analytics graphs read instead of the logs. Missing provider, model or cache status is ''.
 */
export interface RequestRollup {
  bucket: string;
  organisation_id: string;
  workspace_id: string;
  api_key_id: string;
  provider: string;
  model: string;
  status: number;
  cache_status: string;
  requests: number;
  errors: number;
  cost: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  latency_ms_sum: number;
  /** Counts per LATENCY_BUCKETS_MS bound, then the count above the last. */
  latency_ms_histogram: number[];
}

const HOUR_MS = 3_600_000;

export function latencyBucket(latencyMs: number): number {
  const index = LATENCY_BUCKETS_MS.findIndex((bound) => latencyMs <= bound);
  return index === -1 ? LATENCY_BUCKETS_MS.length : index;
}

/** The logs summed per rollup row, in the order of the rollups' key (so concurrent upserts lock alike). */
export function rollupsOf(logs: RequestLog[]): RequestRollup[] {
  const rollups = new Map<string, RequestRollup>();
  for (const log of logs) {
    const bucket = new Date(Math.floor(log.createdAt.getTime() / HOUR_MS) * HOUR_MS).toISOString();
    const provider = log.provider ?? '';
    const model = log.model ?? '';
    const cacheStatus = log.cacheStatus ?? '';
    const key = JSON.stringify([
      log.organisationId,
      log.workspaceId,
      bucket,
      log.apiKeyId,
      provider,
      model,
      log.status,
      cacheStatus,
    ]);
    let rollup = rollups.get(key);
    if (!rollup) {
      rollup = {
        bucket,
        organisation_id: log.organisationId,
        workspace_id: log.workspaceId,
        api_key_id: log.apiKeyId,
        provider,
        model,
        status: log.status,
        cache_status: cacheStatus,
        requests: 0,
        errors: 0,
        cost: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        cached_tokens: 0,
        reasoning_tokens: 0,
        latency_ms_sum: 0,
        latency_ms_histogram: new Array<number>(LATENCY_BUCKETS_MS.length + 1).fill(0),
      };
      rollups.set(key, rollup);
    }
    rollup.requests++;
    if (log.status >= 400) rollup.errors++;
    rollup.cost += log.cost;
    rollup.prompt_tokens += log.usage.prompt_tokens;
    rollup.completion_tokens += log.usage.completion_tokens;
    rollup.total_tokens += log.usage.total_tokens;
    rollup.cached_tokens += log.usage.cached_tokens;
    rollup.reasoning_tokens += log.usage.reasoning_tokens;
    rollup.latency_ms_sum += log.latencyMs;
    rollup.latency_ms_histogram[latencyBucket(log.latencyMs)]!++;
  }
  return [...rollups.keys()].sort().map((key) => rollups.get(key)!);
}
