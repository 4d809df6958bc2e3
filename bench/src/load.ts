import autocannon from 'autocannon';
import { Samples, type Summary } from './stats.ts';

/** One HTTP request the load generator repeats. */
export interface Target {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  connections: number;
  durationS: number;
  /** 2xx responses completed within the measured window. */
  requests: number;
  reqPerSec: number;
  /** Latency of 2xx responses in µs (exact percentiles over every response). */
  latencyUs: Summary;
  non2xx: number;
  /** The non-2xx answers by HTTP status. */
  non2xxByStatus?: Record<string, number> | undefined;
  errors: number;
  timeouts: number;
  droppedSamples: number;
}

/**
 * When each 2xx response of a run was read (CLOCK_MONOTONIC µs) and its latency, in order, to
 * set the slow ones against what the gateway did at the time (bounded like the samples).
 */
export class Timeline {
  readonly endsUs: Float64Array;
  readonly latenciesUs: Float64Array;
  count = 0;

  constructor(capacity = 4_000_000) {
    this.endsUs = new Float64Array(capacity);
    this.latenciesUs = new Float64Array(capacity);
  }

  add(endUs: number, latencyUs: number): void {
    if (this.count >= this.endsUs.length) return;
    this.endsUs[this.count] = endUs;
    this.latenciesUs[this.count++] = latencyUs;
  }

  /** The recorded part of the arrays. */
  view(): { endsUs: Float64Array; latenciesUs: Float64Array } {
    return {
      endsUs: this.endsUs.subarray(0, this.count),
      latenciesUs: this.latenciesUs.subarray(0, this.count),
    };
  }
}

let active: autocannon.Instance | undefined;

/** Stops the load run in progress, if any (for Ctrl-C). */
export function stopActiveLoad(): void {
  active?.stop();
}

/**
 * Keeps `connections` requests in flight for `durationS` seconds with autocannon and records
 * every 2xx response's latency at microsecond resolution from its `response` event
 * (autocannon's own histogram has a resolution of 1 ms, too coarse for sub-millisecond overheads).
 */
export async function runLoad(
  target: Target,
  connections: number,
  durationS: number,
  timeline?: Timeline,
): Promise<LoadResult> {
  const samples = new Samples(4_000_000);
  let non2xx = 0;
  const non2xxByStatus: Record<string, number> = {};
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...target.headers },
        body: target.body,
        connections,
        pipelining: 1,
        duration: durationS,
        timeout: 10,
      },
      (err, res) => {
        clearTimeout(guard);
        active = undefined;
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve(res);
      },
    );
    active = instance;
    // autocannon ends a run at its duration; this only guards against a run that never ends.
    const guard = setTimeout(() => instance.stop(), (durationS + 30) * 1000);
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) {
        samples.add(responseTimeMs * 1000);
        timeline?.add(Number(process.hrtime.bigint() / 1000n), responseTimeMs * 1000);
      } else {
        non2xx++;
        non2xxByStatus[statusCode] = (non2xxByStatus[statusCode] ?? 0) + 1;
      }
    });
  });
  const elapsedS = (performance.now() - started) / 1000;
  const durationSMeasured = result.duration > 0 ? result.duration : elapsedS;
  return {
    connections,
    durationS: round2(durationSMeasured),
    requests: samples.count + samples.dropped,
    reqPerSec: round2((samples.count + samples.dropped) / durationSMeasured),
    latencyUs: samples.summary(),
    non2xx,
    non2xxByStatus,
    errors: result.errors,
    timeouts: result.timeouts,
    droppedSamples: samples.dropped,
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
