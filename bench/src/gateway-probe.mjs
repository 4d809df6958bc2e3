// Preloaded into the gateway process by `pnpm bench` (NODE_OPTIONS=--import …, or node's
// --import in all-in-one mode). In the process whose command is BENCH_PROBE (e.g. `gateway`)
// it records every garbage-collection pause (perf_hooks 'gc' entries) and the event-loop delay
// (perf_hooks.monitorEventLoopDelay, a timer every 10 ms), and when the benchmark sends it
// SIGUSR2 (between runs, never during one) writes what it recorded since the previous signal
// to BENCH_PROBE_DIR/probe-<pid>.json and starts afresh. Times are CLOCK_MONOTONIC µs
// (process.hrtime), the clock the load generator stamps its responses with.
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';

const dir = process.env.BENCH_PROBE_DIR;
const ELD_RESOLUTION_MS = 10;

if (dir && process.argv[2] === process.env.BENCH_PROBE) {
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  // performance.now() (what gc entries are stamped with) to CLOCK_MONOTONIC µs.
  const originUs = nowUs() - Math.round(performance.now() * 1000);
  /** [start µs, duration µs, kind] of each pause since the last dump. */
  let pauses = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      pauses.push([
        Math.round(originUs + entry.startTime * 1000),
        Math.round(entry.duration * 1000),
        entry.detail?.kind ?? 0,
      ]);
  }).observe({ entryTypes: ['gc'] });
  const eld = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  eld.enable();
  let seq = 0;
  let sinceUs = nowUs();
  process.on('SIGUSR2', () => {
    // The histogram holds whole timer intervals (ns); the delay is what exceeds the resolution.
    const delayUs = (ns) => Math.max(0, Math.round(ns / 1000 - ELD_RESOLUTION_MS * 1000));
    const snapshot = {
      seq: ++seq,
      fromUs: sinceUs,
      toUs: nowUs(),
      gc: pauses,
      eventLoopDelayUs: {
        resolutionMs: ELD_RESOLUTION_MS,
        count: eld.count,
        p50: eld.count ? delayUs(eld.percentile(50)) : 0,
        p99: eld.count ? delayUs(eld.percentile(99)) : 0,
        max: eld.count ? delayUs(eld.max) : 0,
      },
    };
    pauses = [];
    eld.reset();
    sinceUs = snapshot.toUs;
    const file = join(dir, `probe-${process.pid}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(snapshot));
    renameSync(`${file}.tmp`, file);
  });
}
