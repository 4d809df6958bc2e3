/**
 * What the gateway process did besides answering during a measured run: its garbage-collection
 * pauses and event-loop delay, recorded inside the process by `gateway-probe.mjs` (preloaded),
 * and which of the slowest responses overlapped a pause. Both sides stamp times with
 * CLOCK_MONOTONIC (process.hrtime), so the load generator's responses and the gateway's pauses
 * are on one clock.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants } from 'node:perf_hooks';
import { readCpuBusyMs, readCpuMs, readMainThreadSched } from './rss.ts';

/** What the probe writes on each SIGUSR2. */
interface Snapshot {
  seq: number;
  fromUs: number;
  toUs: number;
  /** [start µs, duration µs, perf_hooks kind] */
  gc: Array<[number, number, number]>;
  eventLoopDelayUs: { resolutionMs: number; count: number; p50: number; p99: number; max: number };
}

export interface PauseStats {
  count: number;
  totalMs: number;
  maxMs: number;
}

export interface GatewayRuntime {
  /** Pauses that started within the measured window, all kinds together and by kind. */
  gc: PauseStats & { byKind: Record<string, PauseStats> };
  /** Event-loop delay over the window (µs beyond the 10 ms timer it is sampled with). */
  eventLoopDelayUs: { p50: number; p99: number; max: number; samples: number };
  /**
   * Responses at or above the run's p99 latency, and how many of them were in flight while
   * the gateway paused for GC (the pause overlaps the response's [request written, response
   * read] interval); for comparison, the share of all responses that did.
   */
  slowest: {
    thresholdUs: number;
    count: number;
    withGc: number;
    /** GC pause time inside those slow responses' intervals, summed, ms. */
    gcMsInThem: number;
    allWithGcShare: number;
  };
}

/**
 * Who used the system-under-test CPU during a run, and how long the gateway's and the upstream's
 * main threads were runnable but waited for it (from /proc; ms over the whole run).
 */
export interface CpuUse {
  cpu: number;
  gatewayMainMs: number;
  gatewayMainWaitMs: number;
  /** The gateway's other threads (V8's GC helpers, libuv's pool): all their CPU time. */
  gatewayOtherThreadsMs: number;
  upstreamMs: number;
  upstreamMainWaitMs: number;
  /** Busy time of that CPU used neither by the gateway nor the upstream: other processes, interrupts. */
  othersMs: number;
  /**
   * That CPU's steal time: the hypervisor ran something else on its host core. Part of the CPU's
   * busy time; the kernel may charge some of it to the processes running, so it can exceed `othersMs`.
   */
  stealMs: number;
}

interface CpuReading {
  busyMs: number;
  stealMs: number;
  gatewayMs: number;
  gatewayMain: { cpuMs: number; waitMs: number };
  upstreamMs: number;
  upstreamMain: { cpuMs: number; waitMs: number };
}

/** Reads what `cpuUse` compares (undefined when /proc does not give it). */
export function readCpuUse(cpu: number, gatewayPid: number, upstreamPid: number): CpuReading | undefined {
  const busy = readCpuBusyMs(cpu);
  const gatewayMs = readCpuMs(gatewayPid);
  const gatewayMain = readMainThreadSched(gatewayPid);
  const upstreamMs = readCpuMs(upstreamPid);
  const upstreamMain = readMainThreadSched(upstreamPid);
  if (busy === undefined || gatewayMs === undefined || upstreamMs === undefined) return undefined;
  if (!gatewayMain || !upstreamMain) return undefined;
  return { ...busy, gatewayMs, gatewayMain, upstreamMs, upstreamMain };
}

export function cpuUse(cpu: number, before: CpuReading, after: CpuReading): CpuUse {
  const gatewayMs = after.gatewayMs - before.gatewayMs;
  const upstreamMs = after.upstreamMs - before.upstreamMs;
  const gatewayMainMs = after.gatewayMain.cpuMs - before.gatewayMain.cpuMs;
  return {
    cpu,
    gatewayMainMs: Math.round(gatewayMainMs),
    gatewayMainWaitMs: Math.round(after.gatewayMain.waitMs - before.gatewayMain.waitMs),
    // Process CPU is counted in 10 ms ticks, the main thread's in ns.
    gatewayOtherThreadsMs: Math.max(0, Math.round(gatewayMs - gatewayMainMs)),
    upstreamMs: Math.round(upstreamMs),
    upstreamMainWaitMs: Math.round(after.upstreamMain.waitMs - before.upstreamMain.waitMs),
    othersMs: Math.max(0, Math.round(after.busyMs - before.busyMs - gatewayMs - upstreamMs)),
    stealMs: Math.round(after.stealMs - before.stealMs),
  };
}

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

/** Talks to the probe in one gateway process. */
export class GatewayProbe {
  private seq = 0;
  private readonly file: string;

  constructor(
    private readonly pid: number,
    dir: string,
  ) {
    this.file = join(dir, `probe-${pid}.json`);
  }

  /**
   * Ends the probe's current recording and returns it (undefined when the probe does not
   * answer within 3 s, e.g. a gateway started without it).
   */
  async take(): Promise<Snapshot | undefined> {
    try {
      process.kill(this.pid, 'SIGUSR2');
    } catch {
      return undefined;
    }
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      if (existsSync(this.file)) {
        try {
          const snapshot = JSON.parse(readFileSync(this.file, 'utf8')) as Snapshot;
          if (snapshot.seq > this.seq) {
            this.seq = snapshot.seq;
            return snapshot;
          }
        } catch {
          // Being replaced; read again.
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return undefined;
  }
}

function stats(durationsUs: number[]): PauseStats {
  let total = 0;
  let max = 0;
  for (const d of durationsUs) {
    total += d;
    if (d > max) max = d;
  }
  return { count: durationsUs.length, totalMs: round2(total / 1000), maxMs: round2(max / 1000) };
}

/**
 * The gateway's pauses during a run [startUs, endUs], set against the run's responses
 * (each given by the time its response was read and its latency).
 */
export function runtimeOf(
  snapshot: Snapshot,
  startUs: number,
  endUs: number,
  responseEndsUs: Float64Array,
  latenciesUs: Float64Array,
  p99Us: number,
): GatewayRuntime {
  const pauses = snapshot.gc.filter(([start]) => start >= startUs && start <= endUs);
  const byKind: Record<string, number[]> = {};
  for (const [, duration, kind] of pauses) (byKind[KINDS[kind] ?? `kind ${kind}`] ??= []).push(duration);
  // Pauses in start order, to find those overlapping an interval.
  const sorted = [...pauses].sort((a, b) => a[0] - b[0]);
  const gcWithin = (from: number, to: number): number => {
    let inside = 0;
    for (const [start, duration] of sorted) {
      if (start >= to) break;
      const end = start + duration;
      if (end > from) inside += Math.min(end, to) - Math.max(start, from);
    }
    return inside;
  };
  let slow = 0;
  let slowWithGc = 0;
  let gcInSlowUs = 0;
  let allWithGc = 0;
  for (let i = 0; i < latenciesUs.length; i++) {
    const to = responseEndsUs[i]!;
    const from = to - latenciesUs[i]!;
    const inside = gcWithin(from, to);
    if (inside > 0) allWithGc++;
    if (latenciesUs[i]! >= p99Us) {
      slow++;
      if (inside > 0) {
        slowWithGc++;
        gcInSlowUs += inside;
      }
    }
  }
  const eld = snapshot.eventLoopDelayUs;
  return {
    gc: {
      ...stats(pauses.map(([, duration]) => duration)),
      byKind: Object.fromEntries(Object.entries(byKind).map(([kind, ds]) => [kind, stats(ds)])),
    },
    eventLoopDelayUs: { p50: eld.p50, p99: eld.p99, max: eld.max, samples: eld.count },
    slowest: {
      thresholdUs: p99Us,
      count: slow,
      withGc: slowWithGc,
      gcMsInThem: round2(gcInSlowUs / 1000),
      allWithGcShare: latenciesUs.length > 0 ? Math.round((allWithGc / latenciesUs.length) * 1000) / 1000 : 0,
    },
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
