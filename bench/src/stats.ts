/** Latency samples in microseconds, kept in a preallocated buffer so a run's memory is bounded. */
export class Samples {
  private readonly values: Float64Array;
  private size = 0;
  /** Samples that arrived after the buffer was full (reported, never silently dropped). */
  dropped = 0;

  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
  }

  get count(): number {
    return this.size;
  }

  add(valueUs: number): void {
    if (this.size < this.values.length) this.values[this.size++] = valueUs;
    else this.dropped++;
  }

  summary(): Summary {
    return summarize(this.values.subarray(0, this.size));
  }
}

export interface Summary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The nearest-rank `p`th percentile (0–100) of values sorted ascending (not empty). */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  return sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!;
}

/** Exact nearest-rank percentiles of the given values (µs, rounded to whole µs). */
export function summarize(values: Float64Array): Summary {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return { count: 0, min: NaN, mean: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN };
  let sum = 0;
  for (const v of sorted) sum += v;
  const at = (p: number) => nearestRank(sorted, p);
  const round = (v: number) => Math.round(v);
  return {
    count: n,
    min: round(sorted[0]!),
    mean: round(sum / n),
    p50: round(at(50)),
    p90: round(at(90)),
    p99: round(at(99)),
    max: round(sorted[n - 1]!),
  };
}
