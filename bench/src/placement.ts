/**
 * Which CPUs each process of a run may use. Left to the scheduler, the load generator, the fake
 * upstream, the gateway and the platform behind it (the other four services, Kafka, PostgreSQL,
 * Redis, which work through every request's events after the answer) land on the machine's few
 * cores at random, so one run measures the load generator competing with the gateway and the
 * next does not. The placement makes that deliberate and the same for both paths:
 *
 * - the load generator (this process) gets CPU 0;
 * - the system under test gets CPU 1: the fake upstream alone in the direct runs, the upstream
 *   and the gateway together in the gateway runs (the gateway pays for sharing its core with
 *   the upstream, so the comparison is not flattering);
 * - the platform gets CPUs 2… when there are any, otherwise CPU 0 beside the load generator as
 *   background work (SCHED_IDLE: it runs only when the load generator does not need the CPU,
 *   and gives it up at once when the load generator wakes), so that neither the load
 *   generator nor the gateway waits for it. As deployed, the platform runs on other machines
 *   than the gateway. (A nice level is not enough: a lower-priority task that is running may
 *   finish its time slice, around a millisecond, before the load generator gets the CPU back,
 *   and only the gateway runs keep the platform busy, consuming their events.)
 *
 * The policy service and Redis are the exception: a request with policies waits for them (one
 * check before the upstream call), so as background work they would make it wait for the load
 * generator. They run on the platform's CPUs at normal priority: sharing CPU 0 with the load
 * generator on a 2-core machine, as they would share a node's CPU with its other pods.
 *
 * Kafka, PostgreSQL and Redis are shared with other runs on this machine: their CPUs and
 * priorities are put back when the run ends.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

export interface PlacementPlan {
  loadGenerator: string;
  systemUnderTest: string;
  platform: string;
  /** The platform runs as SCHED_IDLE background work (when it shares the load generator's CPU). */
  platformIdle: boolean;
}

export interface PlacedProcesses {
  loadGenerator: number[];
  systemUnderTest: number[];
  /** Started for this run; nothing to restore. */
  platform: number[];
  /** Shared with other runs (Kafka, PostgreSQL, Redis); put back at the end, children included. */
  shared: number[];
  /**
   * Of the platform and shared processes, those a request waits for (the policy service,
   * Redis): on the platform's CPUs at normal priority, never as background work.
   */
  hotPath?: number[];
}

/** The plan for this machine, or undefined when it has a single CPU (nothing to separate). */
export function planPlacement(cpuCount = cpus().length): PlacementPlan | undefined {
  if (cpuCount < 2) return undefined;
  return {
    loadGenerator: '0',
    systemUnderTest: '1',
    platform: cpuCount > 2 ? `2-${cpuCount - 1}` : '0',
    platformIdle: cpuCount <= 2,
  };
}

export function describePlacement(plan: PlacementPlan | undefined): string {
  if (!plan) return 'processes placed by the scheduler';
  const idle = plan.platformIdle ? ' as idle-priority background work' : '';
  return (
    `load generator on CPU ${plan.loadGenerator}; fake upstream and gateway on CPU ${plan.systemUnderTest}; ` +
    `other services, Kafka, PostgreSQL and Redis on CPU ${plan.platform}${idle}` +
    (plan.platformIdle ? `, except the policy service and Redis at normal priority` : '')
  );
}

interface Saved {
  pid: number;
  affinity: string;
  /** chrt's name of the scheduling policy, e.g. "other". */
  policy: string;
  priority: string;
}

function affinityOf(pid: number): string {
  // "pid 123's current affinity list: 0,1"
  return execFileSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' })
    .split(':')
    .pop()!
    .trim();
}

function schedulingOf(pid: number): { policy: string; priority: string } {
  // "pid 123's current scheduling policy: SCHED_OTHER" / "...priority: 0"
  const out = execFileSync('chrt', ['-p', String(pid)], { encoding: 'utf8' });
  const policy = /policy: SCHED_(\w+)/.exec(out)?.[1]?.toLowerCase() ?? 'other';
  const priority = /priority: (\d+)/.exec(out)?.[1] ?? '0';
  return { policy: policy === 'normal' ? 'other' : policy, priority };
}

/**
 * Sets the CPUs (and optionally the scheduling policy) of every thread of a process, and
 * optionally of its children (PostgreSQL's backends; later ones inherit from the postmaster).
 */
function setProcess(
  pid: number,
  affinity: string,
  scheduling: { policy: string; priority: string } | undefined,
  withChildren = false,
): void {
  for (const target of withChildren ? [pid, ...childrenOf(pid)] : [pid]) {
    try {
      execFileSync('taskset', ['-a', '-c', '-p', affinity, String(target)], { stdio: 'ignore' });
      if (scheduling)
        execFileSync('chrt', ['-a', `--${scheduling.policy}`, '-p', scheduling.priority, String(target)], {
          stdio: 'ignore',
        });
    } catch {
      // A process that ended meanwhile.
    }
  }
}

/** Child processes of a process (PostgreSQL's backends), from /proc. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/**
 * Applies the plan; returns a function that puts the shared processes back as they were.
 * Fails soft: without `taskset`/`chrt` (or the right to use them) the run goes on unplaced.
 */
export function applyPlacement(
  plan: PlacementPlan,
  processes: PlacedProcesses,
  log: (message: string) => void,
): () => void {
  const saved: Saved[] = [];
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    for (const pid of processes.shared) saved.push({ pid, affinity: affinityOf(pid), ...schedulingOf(pid) });
    const background = plan.platformIdle ? { policy: 'idle', priority: '0' } : undefined;
    const hotPath = new Set(processes.hotPath ?? []);
    const scheduling = (pid: number) => (hotPath.has(pid) ? { policy: 'other', priority: '0' } : background);
    for (const pid of processes.loadGenerator) setProcess(pid, plan.loadGenerator, undefined);
    for (const pid of processes.systemUnderTest) setProcess(pid, plan.systemUnderTest, undefined);
    for (const pid of processes.platform) setProcess(pid, plan.platform, scheduling(pid));
    for (const pid of processes.shared) setProcess(pid, plan.platform, scheduling(pid), true);
  } catch (err) {
    log(`could not place processes on CPUs (${err instanceof Error ? err.message : String(err)})`);
  }
  return () => {
    for (const { pid, affinity, policy, priority } of saved.splice(0))
      setProcess(pid, affinity, { policy, priority }, true);
  };
}
