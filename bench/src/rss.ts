import { readFileSync } from 'node:fs';

/** Resident set size of a process in KiB, from /proc/<pid>/status (undefined once it is gone). */
export function readRssKiB(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time a process has used so far (user + system), in ms, from /proc/<pid>/stat. */
export function readCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which is in parentheses and may contain spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/**
 * A process's main thread from /proc/<pid>/task/<pid>/schedstat: the CPU time it has used and
 * the time it has spent runnable but waiting for a CPU (run-queue wait), both in ms.
 */
export function readMainThreadSched(pid: number): { cpuMs: number; waitMs: number } | undefined {
  try {
    const [cpuNs, waitNs] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    return Number.isFinite(cpuNs) && Number.isFinite(waitNs)
      ? { cpuMs: cpuNs! / 1e6, waitMs: waitNs! / 1e6 }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Time one CPU has spent busy (not idle or waiting for I/O) so far, and the part of it that was
 * steal, in ms, from /proc/stat.
 */
export function readCpuBusyMs(cpu: number): { busyMs: number; stealMs: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`cpu${cpu} `));
    if (!line) return undefined;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const ticks = user! + nice! + system! + irq! + softirq! + steal!;
    // USER_HZ is 100 on Linux. Steal: time the hypervisor gave this virtual CPU's host core to others.
    return Number.isFinite(ticks) ? { busyMs: ticks * 10, stealMs: steal! * 10 } : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time several processes have used so far, in ms (those already gone count as 0). */
export function readCpuMsOfAll(pids: number[]): number {
  let total = 0;
  for (const pid of pids) total += readCpuMs(pid) ?? 0;
  return total;
}

/**
 * Waits until a process (or a group of processes, listed anew at each reading) uses less than
 * `maxShare` of one core over `windowMs` (its deferred work, such as storing request logs, has
 * drained), or `maxMs` has passed. Returns the ms waited.
 */
export async function waitUntilIdle(
  pids: number | (() => number[]),
  options: { maxMs?: number; windowMs?: number; maxShare?: number } = {},
): Promise<number> {
  const { maxMs = 30_000, windowMs = 500, maxShare = 0.05 } = options;
  const read = typeof pids === 'number' ? () => readCpuMs(pids) : () => readCpuMsOfAll(pids());
  const started = Date.now();
  let before = read();
  while (before !== undefined && Date.now() - started < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const after = read();
    if (after === undefined || after - before <= windowMs * maxShare) break;
    before = after;
  }
  return Date.now() - started;
}

/** Samples a process's RSS periodically and keeps the peak overall and per phase. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  private phase = 'startup';
  peakKiB = 0;
  samples = 0;
  readonly phasePeakKiB: Record<string, number> = {};

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 100,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  setPhase(phase: string): void {
    this.phase = phase;
    this.sample();
  }

  /** The median of a few readings over `ms`, for a steady value such as the idle RSS. */
  async settle(ms: number): Promise<number> {
    const readings: number[] = [];
    const end = Date.now() + ms;
    while (Date.now() < end && readings.length < 100) {
      const value = this.sample();
      if (value !== undefined) readings.push(value);
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
    readings.sort((a, b) => a - b);
    return readings[Math.floor(readings.length / 2)] ?? 0;
  }

  private sample(): number | undefined {
    const value = readRssKiB(this.pid);
    if (value === undefined) return undefined;
    this.samples++;
    if (value > this.peakKiB) this.peakKiB = value;
    if (value > (this.phasePeakKiB[this.phase] ?? 0)) this.phasePeakKiB[this.phase] = value;
    return value;
  }
}

export function toMiB(kib: number): number {
  return Math.round((kib / 1024) * 10) / 10;
}
